"""Issue 20, item 8: lower(stage="llvmir") and stage="asm" show what LLVM
makes of a kernel for this CPU, as the JIT compiles it; PK_PERF=1 registers
LLVM's perf (jitdump) and GDB JIT listeners so that profilers and debuggers
see kernels by name."""

import glob
import os
import platform
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
