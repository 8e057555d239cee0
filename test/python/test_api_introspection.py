"""Issue 20, item 8: lower(stage="llvmir") and stage="asm" show what LLVM
makes of a kernel for this CPU, as the JIT compiles it; PK_PERF=1 registers
LLVM's perf (jitdump) and GDB JIT listeners so that profilers and debuggers
see kernels by name."""

import ctypes
import glob
import math
import os
import platform
import re
import subprocess
import sys

import numpy as np
import pytest

import picokernel


@picokernel.kernel
def axpy(x, y, o):
    o[...] = 2 * x[...] + y[...]


def arrays(n=1000):
    x = np.ones(n, np.float32)
    return x, x.copy(), np.empty_like(x)


def test_the_stages_end_with_llvm_ir_and_assembly():
    assert picokernel.stages() == ["pk", "linalg", "fused", "tiled", "bufferized",
                                   "llvm", "llvmir", "asm"]


def test_llvm_ir_is_optimized_for_this_cpu():
    ir = axpy.lower(*arrays(), stage="llvmir")
    assert "define void @_mlir_ciface_axpy(" in ir
    assert "target triple" in ir and "x float>" in ir  # vectorized
    # The kernel's own function is inlined into its C interface and gone.
    assert "define void @axpy(" not in ir


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86 assembly")
def test_assembly_is_this_cpus():
    asm = axpy.lower(*arrays(), stage="asm")
    assert "_mlir_ciface_axpy:" in asm
    assert "%ymm" in asm or "%zmm" in asm or "%xmm" in asm
    # Without arrays: the most recent trace's.
    axpy(*arrays(8))
    assert "_mlir_ciface_axpy:" in axpy.lower(stage="asm")


def libmvec_exports(name):
    try:
        library = ctypes.CDLL("libmvec.so.1")
    except OSError:
        return False
    return hasattr(library, name)


def host_has_avx512():
    try:
        with open("/proc/cpuinfo") as f:
            return " avx512f" in f.read()
    except OSError:
        return False


@pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64"
                    or not libmvec_exports("_ZGVbN4v_sinf"), reason="glibc's libmvec")
def test_the_first_lowering_in_a_process_calls_libmvec_as_the_jit_does():
    # lower() before any compile once showed scalar libm calls: libmvec was
    # loaded only by the first compile.
    script = ("import numpy as np, picokernel\n"
              "@picokernel.kernel\n"
              "def wave(x, o):\n"
              "    o[...] = picokernel.sin(x[...])\n"
              "x = np.ones(1000, np.float32)\n"
              "print(wave.lower(x, x.copy(), stage='llvmir'))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=dict(os.environ, PK_CACHE="0"), timeout=300)
    assert done.returncode == 0, done.stderr
    assert re.search(r"call <\d+ x float> @_ZGV\w+_sinf\(", done.stdout)


@pytest.mark.skipif(platform.machine() != "x86_64" or not host_has_avx512(),
                    reason="an AVX-512 host")
def test_math_loops_use_512_bit_vectors_and_streaming_loops_256():
    @picokernel.kernel
    def gelu(x, o):
        v = x[...]
        o[...] = 0.5 * v * (1.0 + picokernel.erf(v * 0.7071067811865476))

    @picokernel.kernel
    def wave(x, o):
        o[...] = picokernel.sin(x[...])

    x = np.linspace(-5, 5, 1000, dtype=np.float32)
    assert "%zmm" in gelu.lower(x, x.copy(), stage="asm")
    # 2 * x + y streams memory: LLVM's 256-bit preference stays.
    assert "%zmm" not in axpy.lower(*arrays(), stage="asm")
    if platform.system() == "Linux" and libmvec_exports("_ZGVeN16v_sinf"):
        assert "@_ZGVeN16v_sinf(" in wave.lower(x, x.copy(), stage="llvmir")
    o = np.empty_like(x)
    wave(x, o)
    np.testing.assert_allclose(o, np.sin(x.astype(np.float64)), rtol=3e-7, atol=1e-38)
    gelu(x, o)
    x64 = x.astype(np.float64)
    want = 0.5 * x64 * (1 + np.array([math.erf(v / math.sqrt(2)) for v in x64]))
    np.testing.assert_allclose(o, want, rtol=1e-6, atol=1e-7)


def test_perf_sees_kernels_by_name(tmp_path):
    script = ("import numpy as np, picokernel\n"
              "@picokernel.kernel\n"
              "def profiled_kernel(x, o):\n"
              "    o[...] = x[...] * 2\n"
              "profiled_kernel(np.ones(10), np.zeros(10))\n")
    env = dict(os.environ, PK_PERF="1", PK_CACHE="0", JITDUMPDIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", script], env=env,
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr
    dumps = glob.glob(str(tmp_path / ".debug" / "jit" / "*" / "jit-*.dump"))
    assert dumps, "no jitdump file"
    assert b"profiled_kernel" in open(dumps[0], "rb").read()
    # Switched off (spelled as any switch), no listener.
    for off in ("0", "false", "off", "no"):
        env["PK_PERF"] = off
        env["JITDUMPDIR"] = str(tmp_path / off)
        subprocess.run([sys.executable, "-c", script], env=env, check=True, timeout=300)
        assert not os.path.exists(tmp_path / off), off
