"""Issue 20, item 2: show_ir(), lower(), trace() and .ir without arrays
give the kernel's most recent trace (a call that compiled, or show_ir or
trace with arrays), and a clear error before any."""

import numpy as np
import pytest

import picokernel


def make():
    @picokernel.kernel(dynamic=False)
    def double(x, o):
        o[...] = x[...] * 2

    return double


def test_before_any_trace():
    k = make()
    assert k.ir is None
    for method in (k.show_ir, k.lower, k.trace):
        with pytest.raises(RuntimeError, match="has not been traced yet"):
            method()


def test_the_most_recent_call_or_trace():
    k = make()
    a, b = np.ones(3, np.float32), np.ones((2, 2))
    k(a, np.empty_like(a))
    assert "v0<3:float32>" in k.show_ir() and k.show_ir() == k.ir.listing
    assert "pk.kernel @double" in k.lower(stage="pk")
    assert "memref<3xf32>" in k.lower(stage="bufferized")
    assert "llvm.func @kernel.double" in k.lower()
    # An explicit trace is now the most recent one...
    k.show_ir(b, b)
    assert "<2,2:float64>" in k.show_ir() and "memref<2x2xf64>" in k.lower(
        stage="bufferized")
    assert str(k.trace()) == k.show_ir()
    # ... until a call compiles another shape.
    c = np.ones(5, np.int32)
    k(c, np.empty_like(c))
    assert "<5:int32>" in k.show_ir() and "<5:int32>" in k.ir.listing
    # A call that hits the cache compiles nothing: the most recent trace
    # stays.
    k(a, np.empty_like(a))
    assert "<5:int32>" in k.show_ir()
    with pytest.raises(RuntimeError, match="unknown stage 'bogus'"):
        k.lower(stage="bogus")


def test_interpreted_kernels_trace_on_request():
    @picokernel.kernel(backend="numpy")
    def add(x, y, o):
        o[...] = x[...] + y[...]

    a = np.arange(4.0)
    add(a, a, np.empty_like(a))
    assert add.ir is None  # nothing traced: NumPy ran it
    add.show_ir(a, a, a.copy())
    assert "ADD(v0, v1)" in add.show_ir() and "arith.addf" in add.lower(stage="linalg")
