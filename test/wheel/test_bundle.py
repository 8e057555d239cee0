"""The installed wheel is self-contained (run by scripts/test-wheel, in a
fresh virtual environment with LLVM 22's directory hidden where the machine
allows it): the extension and every library it loads come from the wheel or
from the system libraries a manylinux wheel may use, and kernels run, the
threaded ones on the OpenMP runtime the package carries."""

import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig

import pytest

import picokernel

PACKAGE = pathlib.Path(picokernel.__file__).resolve().parent
LIBRARIES = PACKAGE.parent / "picokernel.libs"
LLVM = os.environ.get("PK_LLVM_PREFIX", "/usr/lib/llvm-22")
# What a manylinux wheel may take from the system (PEP 600's libraries that
# picokernel's need), and the kernel's own vDSO.
SYSTEM = {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1",
          "ld-linux-x86-64.so.2", "libpthread.so.0", "libdl.so.2",
          "librt.so.1", "libz.so.1", "linux-vdso.so.1"}


def shared_objects():
    return sorted(path for directory in (PACKAGE, LIBRARIES)
                  if directory.is_dir()
                  for path in directory.iterdir() if ".so" in path.name)


def test_picokernel_is_imported_from_a_fresh_environment_s_wheel():
    assert sys.prefix != sys.base_prefix, "not a virtual environment"
    assert PACKAGE.parent == pathlib.Path(
        sysconfig.get_paths()["purelib"]).resolve()
    assert (PACKAGE / "libomp.so.5").is_file()
    names = [path.name for path in shared_objects()]
    assert any(name.startswith("libMLIR") for name in names), names
    assert any(name.startswith("libLLVM") for name in names), names


def test_the_bundled_libraries_licences_come_with_them():
    from importlib import metadata
    distribution = metadata.distribution("picokernel")
    assert "License-File: LICENSES_bundled.txt" in \
        str(distribution.metadata).replace("\r", "")
    licences = [path for path in distribution.files
                if path.name == "LICENSES_bundled.txt"]
    assert len(licences) == 1, distribution.files
    text = licences[0].read_text()
    for library in shared_objects():
        if library.name.startswith("_picokernel"):
            continue
        assert f"{library.parent.name}/{library.name}" in text, library.name
    # LLVM's licence (libLLVM, libMLIR, libomp) is among them.
    assert "Apache License" in text and "LLVM Exceptions" in text


@pytest.mark.skipif(not shutil.which("ldd"), reason="needs ldd")
@pytest.mark.parametrize("library", shared_objects(), ids=lambda p: p.name)
def test_each_library_needs_only_the_wheel_s_and_the_system_s(library):
    listing = subprocess.run(["ldd", str(library)], capture_output=True,
                             text=True, check=True).stdout
    for line in listing.splitlines():
        if "statically linked" in line:  # (a library of data: no needs)
            continue
        name, _, where = line.strip().partition(" => ")
        name = name.split()[0]
        path = where.split(" (")[0].strip() if where else name
        assert "not found" not in line, f"{library.name}: {line.strip()}"
        inside = path.startswith((str(PACKAGE), str(LIBRARIES)))
        assert inside or os.path.basename(path) in SYSTEM, \
            f"{library.name} loads {path} from outside the wheel"
        assert not path.startswith(LLVM), f"{library.name}: {line.strip()}"


KERNELS = """
import numpy as np
import numpy.random, numpy.testing  # (their modules before the count)

def mapped():
    with open("/proc/self/maps") as maps:
        return {line.split()[-1] for line in maps
                if len(line.split()) == 6 and line.split()[-1][0] == "/"}

before = mapped()
import picokernel

# Threaded from the first iteration: the OpenMP runtime is loaded.
@picokernel.kernel(parallel_threshold=1)
def scaled(a, o):
    o[...] = np.exp(a[...]) * 2 + 1

@picokernel.kernel
def product(a, b, o):
    o[...] = np.tanh(a[...] @ b[...])

@picokernel.kernel
def total(a, o):
    o[...] = a[...].sum(axis=1)

rng = np.random.default_rng(0)
a = rng.standard_normal((300, 200)).astype(np.float32)
b = rng.standard_normal((200, 70)).astype(np.float32)
o = np.empty_like(a)
scaled(a, o)
np.testing.assert_allclose(o, np.exp(a) * 2 + 1, rtol=1e-6)
c = np.empty((300, 70), np.float32)
product(a, b, c)
np.testing.assert_allclose(c, np.tanh(a @ b), rtol=1e-4, atol=1e-5)
s = np.empty(300, np.float32)
total(a, s)
np.testing.assert_allclose(s, a.sum(axis=1), rtol=1e-4, atol=1e-4)
for path in sorted(mapped() - before):
    print(path)
"""


def test_kernels_load_only_the_wheel_s_libraries_and_the_system_s():
    """What importing picokernel and running kernels of every kind adds to
    a fresh process's memory map (a threaded one: the OpenMP runtime)."""
    result = subprocess.run([sys.executable, "-c", KERNELS],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    added = result.stdout.split()
    assert str(PACKAGE / "libomp.so.5") in added
    assert any(path.startswith(str(LIBRARIES)) and "libMLIR" in path
               for path in added)
    # Python's own modules (its standard library's extensions) may come
    # with it; glibc's vector math library is one kernels may call.
    allowed = SYSTEM | {"libmvec.so.1"}
    python = os.path.realpath(sys.base_prefix) + os.sep
    outside = [path for path in added
               if not path.startswith((str(PACKAGE), str(LIBRARIES), python))
               and os.path.basename(path) not in allowed]
    assert not outside, outside
