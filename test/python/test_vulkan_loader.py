"""picokernel opens the Vulkan loader (libvulkan.so.1) when a Vulkan kernel
first needs the device, instead of linking it: a machine without the loader
imports picokernel and runs CPU kernels, and a Vulkan kernel there raises an
error that names the loader."""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import picokernel

_, WHY = picokernel.vulkan_available()
BUILT = "built without the Vulkan runtime" not in WHY


@pytest.mark.skipif(not shutil.which("ldd"), reason="needs ldd")
def test_the_extension_does_not_link_the_vulkan_loader():
    extension = picokernel._picokernel.__file__
    needed = subprocess.run(["ldd", extension], capture_output=True,
                            text=True, check=True).stdout
    assert "libmlir" in needed.lower()  # (ldd lists what it links)
    assert "libvulkan" not in needed


@pytest.mark.skipif(not BUILT, reason="the Vulkan runtime is not built")
@pytest.mark.parametrize("loader", ["empty", "not-vulkan"])
def test_without_a_usable_loader_cpu_kernels_run_and_vulkan_ones_say_why(
        tmp_path, loader):
    # The loader is looked for on LD_LIBRARY_PATH first: a file of its name
    # there stands for a machine whose loader is missing or broken.
    fake = tmp_path / "libvulkan.so.1"
    if loader == "empty":
        fake.write_bytes(b"")
    else:  # a shared library that is not a Vulkan loader
        libc = subprocess.run(["ldd", sys.executable], capture_output=True,
                              text=True).stdout
        path = next((line.split("=>")[1].split()[0]
                     for line in libc.splitlines() if "libm.so" in line),
                    None)
        if path is None:
            pytest.skip("no libm to stand in for the loader")
        shutil.copy(path, fake)
    code = textwrap.dedent("""
        import numpy as np, picokernel

        def double(a, o):
            o[...] = a[...] * 2

        a = np.arange(4, dtype=np.float32)
        o = np.empty_like(a)
        picokernel.kernel(double)(a, o)
        assert (o == a * 2).all()
        available, why = picokernel.vulkan_available()
        print(available, why, sep="\\n")
        for attempt in range(2):  # (a second call says the same)
            try:
                picokernel.kernel(double, backend="vulkan")(a, o)
                print("ran")
            except RuntimeError as error:
                print(error)
    """)
    environment = dict(os.environ, LD_LIBRARY_PATH=str(tmp_path))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True,
                            text=True, timeout=120, env=environment)
    assert result.returncode == 0, result.stderr
    available, why, first, second = result.stdout.strip().split("\n")
    assert available == "False"
    assert "libvulkan.so.1" in why
    expected = ("cannot open the Vulkan loader" if loader == "empty"
                else "has no vkGetInstanceProcAddr: it is not a Vulkan loader")
    assert expected in why
    assert first == second and expected in first
