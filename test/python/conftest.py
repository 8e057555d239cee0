import glob
import os
import shutil
import subprocess

import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(1234)

# Tests compile for real: no disk cache (Runtime/DiskCache.h) unless a test
# asks for one (test_disk_cache.py runs its own processes).
os.environ.setdefault("PK_CACHE", "0")


# Lines tests want shown after the run (the random-kernel agreement).
_reports = []


def report(line):
    _reports.append(line)


def pytest_terminal_summary(terminalreporter):
    for line in _reports:
        terminalreporter.write_line(line)


@pytest.fixture(scope="module")
def spirv_dump(tmp_path_factory):
    """Every SPIR-V module a test module compiles is kept, and validated at
    the end with spirv-val for Vulkan 1.1."""
    directory = tmp_path_factory.mktemp("spirv")
    os.environ["PK_SPIRV_DUMP_DIR"] = str(directory)
    yield directory
    del os.environ["PK_SPIRV_DUMP_DIR"]
    modules = sorted(glob.glob(str(directory / "*.spv")))
    assert modules, "no SPIR-V module was compiled"
    validator = shutil.which("spirv-val")
    assert validator, "spirv-val (Debian: spirv-tools) is needed"
    for module in modules:
        result = subprocess.run([validator, "--target-env", "vulkan1.1", module],
                                capture_output=True, text=True)
        assert result.returncode == 0, f"{module}: {result.stderr}"
