"""Issue 20, item 1: the IR listing exactly as the original picokernel
prints it: NumPy's dtype names, sizes separated by commas, scalar constants
with their own shape, TRUEDIV for `/`, no newline after the last line."""

import ml_dtypes
import numpy as np
import pytest

import picokernel

# The seed post's listing of its fma kernel, verbatim but for the parameter
# names: the post shortens `a_ref` to `a` (its kernel's parameters are
# a_ref, b_ref, c_ref, o_ref).
POST_LISTING = """kernel fma(a, b, c, o):
  v0<4:float32> = LOAD [a]()
  v1<4:float32> = LOAD [b]()
  v2<4:float32> = MUL(v0, v1)
  v3<4:float32> = LOAD [c]()
  v4<4:float32> = ADD(v2, v3)
  STORE [o](v4)"""


@picokernel.kernel
def fma(a_ref, b_ref, c_ref, o_ref):
    o_ref[...] = a_ref[...] * b_ref[...] + c_ref[...]


def test_the_posts_fma_listing():
    arrays = [np.ones(4, np.float32) for _ in range(4)]
    want = POST_LISTING
    for name in "abco":
        want = want.replace(f"[{name}]", f"[{name}_ref]").replace(
            f" {name},", f" {name}_ref,").replace(f"({name},", f"({name}_ref,")
    want = want.replace("o):", "o_ref):")
    assert fma.show_ir(*arrays) == want
    assert str(fma.trace(*arrays)) == want
    assert str(picokernel.trace_kernel(fma, [(4,)] * 4)) == want


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int16, np.int32, np.int64,
                                   np.float16, ml_dtypes.bfloat16, np.float32,
                                   np.float64])
def test_dtype_names_and_shapes(dtype):
    def copy(x, o):
        o[...] = x[...]

    for shape, tag in [((), ""), ((7,), "7"), ((3, 5), "3,5"), ((2, 1, 4), "2,1,4"),
                       ((0, 3), "0,3")]:
        name = np.dtype(dtype).name
        listing = str(picokernel.trace_kernel(copy, [shape, shape], [dtype, dtype]))
        assert listing == (f"kernel copy(x, o):\n  v0<{tag}:{name}> = LOAD [x]()\n"
                           "  STORE [o](v0)")


def test_constants_division_and_dynamic_sizes():
    @picokernel.kernel(dynamic=True)
    def scale(x, o):
        o[...] = x[...] / 2.0 + np.array([1.0, 2.0, 3.0], np.float32)

    x = np.ones((4, 3), np.float32)
    listing = scale.show_ir(x, x.copy())
    lines = listing.split("\n")
    # A Python number is a 0-d constant; an array constant has its shape.
    assert "= CONST(2.0)" in listing and "<:float32> = CONST(2.0)" in listing
    assert "<3:float32> = CONST([1.0, 2.0, 3.0])" in listing
    assert any("TRUEDIV(" in line for line in lines) and "= DIV(" not in listing
    assert not listing.endswith("\n") and lines[-1].startswith("  STORE [o]")
    # Called, it compiles for dynamic sizes: `?` for a size that varies.
    scale(x, x.copy())
    scale(np.ones((5, 3), np.float32), np.empty((5, 3), np.float32))
    assert "<?,3:float32> = LOAD [x]()" in scale.show_ir()


def test_float_constants_read_as_pythons_repr():
    def k(x, o):
        o[...] = x[...] * 1e-7 + 1.0014e-05 + np.array([np.inf, -np.inf, np.nan, 0.1,
                                                       123456789.0, 2.5], np.float64)

    listing = str(picokernel.trace_kernel(k, [(6,), (6,)], [np.float64] * 2))
    assert "CONST(1e-07)" in listing and "CONST(1.0014e-05)" in listing
    assert "CONST([inf, -inf, nan, 0.1, 123456789.0, 2.5])" in listing
    listing32 = str(picokernel.trace_kernel(k, [(6,), (6,)], [np.float32] * 2))
    assert "<:float32> = CONST(1e-07)" in listing32
    half = str(picokernel.trace_kernel(lambda x, o: o.__setitem__(..., x[...] * 1.5e-5),
                                       [(2,), (2,)], [np.float16] * 2))
    assert "CONST(1.5e-05)" in half, half
