"""Issue 21, item 1: one version, written once in CMakeLists.txt's
project(VERSION): picokernel.__version__ (the C++ PICOKERNEL_VERSION), the
package's metadata where it is installed, and the tools' --version."""

import importlib.metadata
import os
import pathlib
import re
import subprocess

import pytest

import picokernel

ROOT = pathlib.Path(__file__).resolve().parents[2]


def project_version():
    cmake = (ROOT / "CMakeLists.txt").read_text()
    # Independently of pyproject.toml's regex: the project() call's VERSION.
    call = re.search(r"^project\(([^)]*)\)", cmake, re.M).group(1).split()
    assert call[0] == "picokernel"
    return call[call.index("VERSION") + 1]


def test_the_package_version_is_the_projects():
    assert re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", picokernel.__version__)
    assert picokernel.__version__ == project_version()


def test_the_installed_metadata_has_that_version_and_license():
    try:
        distribution = importlib.metadata.distribution("picokernel")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("picokernel is imported from a tree without its metadata")
    # Only the distribution that holds the imported package.
    files = [distribution.locate_file(f) for f in distribution.files or []]
    here = pathlib.Path(picokernel.__file__).resolve()
    if here not in {pathlib.Path(f).resolve() for f in files}:
        pytest.skip("the installed distribution is not the imported package")
    assert distribution.version == picokernel.__version__
    assert distribution.metadata["License-Expression"] == "Apache-2.0 WITH LLVM-exception"
    assert "numpy" in " ".join(distribution.requires or [])


@pytest.mark.parametrize("tool", ["pk-opt", "pk-translate"])
def test_the_tools_print_the_version(tool):
    if not os.environ.get("PK_BIN_DIR"):
        pytest.skip("the tools' directory is not given (ctest sets PK_BIN_DIR)")
    binary = pathlib.Path(os.environ["PK_BIN_DIR"]) / tool
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                         check=True).stdout
    assert f"picokernel version {picokernel.__version__}\n" in out
    assert "LLVM version 22" in out
