"""Regression tests for kernels that once disagreed with NumPy (issue 14),
each on every backend: the reproducer, NumPy 2's answer, and its
neighbours."""

import warnings

import numpy as np
import pytest

import picokernel

BACKENDS = ["cpu"]
if picokernel.vulkan_available()[0]:
    BACKENDS.append("vulkan")

try:
    import ml_dtypes

    bfloat16 = ml_dtypes.bfloat16
except ImportError:
    bfloat16 = None


def quietly(function, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return function(*args)


def run(fn, *arrays, backend="cpu"):
    picokernel.kernel(fn, backend=backend)(*arrays)
    return arrays


#===-----------------------------------------------------------------------===#
# 1. A loaded value keeps the contents it read, whatever is stored later
#===-----------------------------------------------------------------------===#


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("expression", [
    "t", "t + 0", "t * 1.0", "np.maximum(t, t)", "np.where(t > 0, t, t)",
    "t + False", "t.astype(np.float64)", "t[...]", "t[::-1][::-1]", "+t"])
def test_a_load_keeps_its_value_after_a_store(backend, expression):
    namespace = {"np": np}
    exec(f"def kernel(r, o):\n    t = r[...]\n    r[...] = 7\n    o[...] = {expression}\n",
         namespace)
    r, o = np.array([1.0, 2.0]), np.zeros(2)
    run(namespace["kernel"], r, o, backend=backend)
    np.testing.assert_array_equal(r, [7.0, 7.0])
    np.testing.assert_array_equal(o, [1.0, 2.0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_swapping_two_refs(backend):
    def swap(a, b):
        x, y = a[...], b[...]
        a[...] = y
        b[...] = x

    a, b = np.arange(4.0), -np.arange(4.0)
    run(swap, a, b, backend=backend)
    np.testing.assert_array_equal(a, -np.arange(4.0))
    np.testing.assert_array_equal(b, np.arange(4.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_slice_read_before_the_ref_is_overwritten(backend):
    def kernel(r, o):
        head = r[:2]
        r[...] = 0
        r[1:] = 5
        o[...] = head

    r, o = np.array([1.0, 2.0, 3.0]), np.zeros(2)
    run(kernel, r, o, backend=backend)
    np.testing.assert_array_equal(r, [0.0, 5.0, 5.0])
    np.testing.assert_array_equal(o, [1.0, 2.0])


#===-----------------------------------------------------------------------===#
# 2. where with Python numbers on both sides
#===-----------------------------------------------------------------------===#


@pytest.mark.parametrize("backend", BACKENDS)
def test_where_of_two_python_numbers_has_numpys_dtype(backend):
    def mixed(c, o):
        o[...] = picokernel.where(c[...], 1, 0.5)

    def as_numpy(a, o):
        o[...] = np.where(a[...] > 0, 1, 2.5)

    def ints(c, o):
        o[...] = np.where(c[...], 1, 2)

    c = np.array([True, False])
    for fn, arg, want in [(mixed, c, [1.0, 0.5]),
                          (as_numpy, np.array([1.0, -1.0]), [1.0, 2.5]),
                          (ints, c, [1, 2])]:
        traced = picokernel.trace_kernel(fn, [(2,), (2,)], [arg.dtype, np.float64])
        o = np.zeros(2)
        run(fn, arg, o, backend=backend)
        np.testing.assert_array_equal(o, want)
        assert ("f64" in traced.mlir) or fn is ints


def test_where_wraps_python_integers_the_dtype_cannot_hold():
    """np.where converts with a C cast (where arithmetic raises)."""
    def kernel(a, o):
        o[...] = np.where(a[...] > 0, a[...], 2147483647)

    a = np.array([1, -1], np.int8)
    o = np.zeros(2, np.int8)
    run(kernel, a, o)
    np.testing.assert_array_equal(o, quietly(np.where, a > 0, a, 2147483647))


#===-----------------------------------------------------------------------===#
# 3, 10, 15. Reductions: 0-d, axis=(), empty axes
#===-----------------------------------------------------------------------===#


@pytest.mark.parametrize("backend", BACKENDS)
def test_reductions_of_a_0d_value_broadcast_as_values(backend):
    def kernel(a, o, p, q):
        o[...] = a[...].sum()
        p[...] = a[...].mean()
        q[...] = a[...].max(axis=0) + a[...].sum(axis=-1)

    a = np.array(1.0)
    o, p, q = np.zeros(3), np.zeros(3), np.zeros(())
    run(kernel, a, o, p, q, backend=backend)
    np.testing.assert_array_equal(o, [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(p, [1.0, 1.0, 1.0])
    assert q == 2.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_axis_empty_tuple_reduces_nothing(backend):
    def kernel(a, s, m, x):
        s[...] = a[...].sum(axis=())
        m[...] = a[...].mean(axis=())
        x[...] = a[...].max(axis=())

    a = np.array([1, -2, 3], np.int32)
    s, m, x = np.zeros(3, np.int64), np.zeros(3), np.zeros(3, np.int32)
    run(kernel, a, s, m, x, backend=backend)
    np.testing.assert_array_equal(s, a.sum(axis=()))
    np.testing.assert_array_equal(m, a.mean(axis=()))
    np.testing.assert_array_equal(x, a.max(axis=()))
    assert a.sum(axis=()).dtype == np.int64


def test_mean_of_a_0d_value_over_axis_minus_one_raises_as_numpy():
    def kernel(a, o):
        o[...] = a[...].mean(axis=-1)

    with pytest.raises(np.exceptions.AxisError):
        np.array(1.0).mean(axis=-1)
    with pytest.raises(np.exceptions.AxisError, match="out of bounds"):
        run(kernel, np.array(1.0), np.zeros(()))


@pytest.mark.parametrize("function", ["max", "min"])
def test_max_and_min_of_an_empty_axis_raise_numpys_error(function):
    namespace = {}
    exec(f"def kernel(a, o):\n    o[...] = a[...].{function}(axis=0)\n", namespace)
    a = np.zeros((0, 3))
    with pytest.raises(ValueError) as numpy_error:
        getattr(a, function)(axis=0)
    with pytest.raises(ValueError, match="zero-size array to reduction operation"):
        run(namespace["kernel"], a, np.zeros(3))
    assert "which has no identity" in str(numpy_error.value)
    # Over a non-empty axis of an empty array: an empty result, no error.
    namespace2 = {}
    exec(f"def kernel(a, o):\n    o[...] = a[...].{function}(axis=1)\n", namespace2)
    run(namespace2["kernel"], a, np.zeros(0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_float16_sums_accumulate_in_float32(backend):
    def kernel(a, o):
        o[...] = a[...].sum()

    a = np.full(4096, 1.0, np.float16)  # 4096 ones: float16 steps are 4 there
    o = np.zeros((), np.float16)
    run(kernel, a, o, backend=backend)
    assert o == a.sum() == 4096


#===-----------------------------------------------------------------------===#
# 4. Partially overlapping arguments
#===-----------------------------------------------------------------------===#


@pytest.mark.parametrize("backend", BACKENDS)
def test_partially_overlapping_arguments_keep_program_order(backend):
    def kernel(r, o):
        o[...] = 1
        r[...] = 2

    base = np.zeros(4)
    run(kernel, base[1:], base[:-1], backend=backend)
    np.testing.assert_array_equal(base, [1.0, 2.0, 2.0, 2.0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_read_through_one_view_sees_a_write_through_another(backend):
    def kernel(a, b, o):
        a[...] = 5
        o[...] = b[...]

    base = np.zeros(3)
    out = np.ones(2)
    run(kernel, base[:2], base[1:], out, backend=backend)
    np.testing.assert_array_equal(base, [5.0, 5.0, 0.0])
    np.testing.assert_array_equal(out, [5.0, 0.0])


def test_identical_views_that_are_different_objects_are_one_array():
    def kernel(a, b, o):
        a[...] = 3
        o[...] = b[...]

    base = np.zeros(6)
    out = np.zeros(3)
    run(kernel, base[::2], base[::2], out)
    np.testing.assert_array_equal(out, [3.0, 3.0, 3.0])


def test_overlapping_read_only_views_run_compiled():
    def kernel(a, b, o):
        o[...] = a[...] + b[...]

    base = np.arange(5.0)
    o = np.zeros(4)
    run(kernel, base[1:], base[:-1], o)
    np.testing.assert_array_equal(o, base[1:] + base[:-1])


#===-----------------------------------------------------------------------===#
# 5. Byte order and alignment
#===-----------------------------------------------------------------------===#


@pytest.mark.parametrize("backend", BACKENDS)
def test_big_endian_arrays_are_read_and_written_as_numbers(backend):
    def fma(a, b, c, o):
        o[...] = a[...] * b[...] + c[...]

    x = np.arange(1, 5).astype(">f4")
    o = np.zeros(4, ">f4")
    run(fma, x, x, x, o, backend=backend)
    np.testing.assert_array_equal(o, [2.0, 6.0, 12.0, 20.0])
    assert o.dtype.byteorder == ">"


# name: (expression, the views of a and b it takes)
BOOL_KERNELS = {
    "where": (lambda a, b: np.where(a, 1.5, -1.0), None),
    "sum": (lambda a, b: np.sum(a, axis=-1), None),
    "any": (lambda a, b: np.max(a, axis=0), None),
    "all": (lambda a, b: np.min(a, axis=0), None),
    "compare": (lambda a, b: a == b, None),
    "cast": (lambda a, b: a.astype(np.int32) + b, None),
    "select": (lambda a, b: np.where(b, a, False), None),
    "matmul": (lambda a, b: a @ b, lambda a, b: (a, b.T)),
    "broadcast matmul": (lambda a, b: a @ b,
                         lambda a, b: (a.reshape(1, 3, 1, 4), b.reshape(3, 4, 1))),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("name", BOOL_KERNELS)
def test_bools_are_true_for_every_nonzero_byte(backend, dynamic, name):
    # A uint8 array viewed as bool holds bytes other than 0 and 1, all of
    # them true to NumPy: a kernel read a 2 as false (an i1's low bit) and
    # summed the bytes.
    expression, views = BOOL_KERNELS[name]
    raw = np.array([[0, 1, 2, 128], [255, 4, 0, 3], [16, 0, 64, 1]], np.uint8)
    a = raw.view(np.bool_)
    b = np.array([[1, 0, 1, 1], [0, 1, 1, 0], [1, 1, 0, 0]], np.bool_)
    if views:
        a, b = views(a, b)
    want = expression(a, b)

    def kernel(a, b, o):
        o[...] = expression(a[...], b[...])

    o = np.zeros_like(want)
    picokernel.kernel(kernel, backend=backend, dynamic=dynamic)(a, b, o)
    np.testing.assert_array_equal(o, want)


def test_big_endian_and_misaligned_constants_and_arguments():
    constant = np.arange(3).astype(">i4")

    def kernel(a, o):
        o[...] = a[...] + constant

    raw = np.zeros(3 * 8 + 1, np.uint8)
    misaligned = raw[1:].view(np.float64)
    misaligned[...] = [1.0, 2.0, 3.0]
    o = np.zeros(3)
    run(kernel, misaligned, o)
    np.testing.assert_array_equal(o, [1.0, 3.0, 5.0])


#===-----------------------------------------------------------------------===#
# 6, 9, 12, 16. Vulkan
#===-----------------------------------------------------------------------===#


@pytest.mark.skipif(bfloat16 is None, reason="ml_dtypes is not installed")
@pytest.mark.parametrize("backend", BACKENDS)
def test_bfloat16_arrays(backend):
    def vfma(a, o):
        v = a[...]
        o[...] = v * v + v

    a = np.arange(1, 9).astype(bfloat16)
    o = np.zeros(8, bfloat16)
    run(vfma, a, o, backend=backend)
    np.testing.assert_array_equal(o, a * a + a)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_special_values_follow_ieee(backend, dtype):
    """NaN, infinities and signed zeros through the operations a GPU driver
    likes to simplify (lavapipe returned garbage for a / 0.0 and folded
    a * 0.0 to 0)."""
    x = np.array([1.0, -1.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 2.5, -3.0],
                 dtype)
    expressions = ["v / 0.0", "0.0 / v", "v * 0.0", "v + 0.0", "v % 0.0",
                   "v // 0.0", "v / (v < v)", "v * (v < v)", "v ** 2.5",
                   "(-2.0) ** v", "0.0 ** v", "v ** -0.5", "v ** v",
                   "np.sqrt(v)", "np.log(v)"]
    for expression in expressions:
        namespace = {"np": np}
        exec(f"def kernel(a, o):\n    v = a[...]\n    o[...] = {expression}\n",
             namespace)
        want = quietly(lambda: eval(expression, {"np": np, "v": x}))
        o = np.zeros_like(want)
        run(namespace["kernel"], x, o, backend=backend)
        if expression.startswith("np.log") or "**" in expression:
            np.testing.assert_allclose(o, want, rtol=4e-3 if dtype == np.float16
                                       else 2e-6, err_msg=expression)
        else:
            np.testing.assert_array_equal(o, want, err_msg=expression)
        numbers = ~np.isnan(want)
        np.testing.assert_array_equal(np.signbit(o[numbers]), np.signbit(want[numbers]),
                                      err_msg=expression)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64]
                         + ([bfloat16] if bfloat16 is not None else []))
def test_maximum_and_minimum_of_signed_zeros_and_nans(backend, dtype):
    """np.maximum/np.minimum give the NaN of either operand, and of equal
    operands the second (the first for float16: NumPy's loops differ):
    maximum(0.0, -0.0) is -0.0, over every pair of special values, in both
    orders, and with a constant on either side (not reordered as if
    commutative)."""
    if backend == "vulkan" and dtype == np.float64:
        pytest.skip("float64 on Vulkan needs shaderFloat64")
    values = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan], dtype)
    x, y = (a.ravel() for a in np.meshgrid(values, values))

    def kernel(a, b, o1, o2, o3, o4):
        o1[...] = np.maximum(a[...], b[...])
        o2[...] = np.minimum(a[...], b[...])
        o3[...] = np.maximum(-0.0, a[...])
        o4[...] = np.minimum(a[...], -0.0)

    outputs = [np.zeros_like(x) for _ in range(4)]
    run(kernel, x, y, *outputs, backend=backend)
    wants = [np.maximum(x, y), np.minimum(x, y),
             np.maximum(dtype(-0.0), x), np.minimum(x, dtype(-0.0))]
    for o, want in zip(outputs, wants):  # as float32: exact, and NaN-aware
        o, want = o.astype(np.float32), want.astype(np.float32)
        np.testing.assert_array_equal(o, want)
        np.testing.assert_array_equal(np.signbit(o), np.signbit(want))


@pytest.mark.parametrize("backend", BACKENDS)
def test_mean_of_an_empty_array_is_nan(backend):
    def kernel(a, o):
        o[...] = a[...].mean()

    o = np.zeros((), np.float32)
    run(kernel, np.zeros(0, np.float32), o, backend=backend)
    assert np.isnan(o)


@pytest.mark.parametrize("backend", BACKENDS)
def test_comparisons_with_integers_of_another_width(backend):
    def kernel(a, o, p, q):
        o[...] = a[...] < np.int64(2)
        p[...] = a[...] < 2**40
        q[...] = a[...] < 1000

    a = np.array([1, 2, 3], np.int32)
    o, p, q = np.zeros(3, bool), np.zeros(3, bool), np.zeros(3, bool)
    run(kernel, a, o, p, q, backend=backend)
    np.testing.assert_array_equal(o, [True, False, False])
    np.testing.assert_array_equal(p, [True, True, True])
    i8 = np.array([1, 2], np.int8)

    def narrow(a, o):
        o[...] = a[...] < 1000

    o2 = np.zeros(2, bool)
    run(narrow, i8, o2, backend=backend)
    np.testing.assert_array_equal(o2, i8 < 1000)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_empty_slice_of_a_computed_value(backend):
    def kernel(a, o):
        o[...] = (a[...] * 2.0)[0:0]

    o = np.zeros(0, np.float32)
    run(kernel, np.ones(3, np.float32), o, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_reductions_over_leading_and_middle_axes(backend):
    def kernel(a, b, m, n, s, k):
        m[...] = b[...].max(axis=0)
        n[...] = a[...].min(axis=0).max(axis=-1)
        s[...] = a[...].sum(axis=0).sum()
        k[...] = a[...].max(axis=0, keepdims=True)

    a = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    b = np.array([[True, False], [False, False]])
    m, n, s, k = np.zeros(2, bool), np.zeros((), np.float32), \
        np.zeros((), np.float32), np.zeros((1, 4), np.float32)
    run(kernel, a, b, m, n, s, k, backend=backend)
    np.testing.assert_array_equal(m, b.max(axis=0))
    assert n == a.min(axis=0).max() and s == a.sum()
    np.testing.assert_array_equal(k, a.max(axis=0, keepdims=True))

    def middle(x, o):
        o[...] = x[...].max(axis=-2)

    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    o = np.zeros((2, 4), np.float32)
    run(middle, x, o, backend=backend)
    np.testing.assert_array_equal(o, x.max(axis=-2))


@pytest.mark.parametrize("backend", BACKENDS)
def test_arrays_of_rank_four_and_five(backend):
    def kernel(a, o):
        o[...] = a[...] * 2 + a[..., ::-1]

    a = np.arange(2 * 3 * 2 * 5 * 2, dtype=np.float32).reshape(2, 3, 2, 5, 2)
    o = np.zeros_like(a)
    run(kernel, a, o, backend=backend)
    np.testing.assert_array_equal(o, a * 2 + a[..., ::-1])


@pytest.mark.parametrize("backend", BACKENDS)
def test_sin_and_cos_of_huge_arguments(backend):
    def kernel(a, s, c):
        s[...] = np.sin(a[...])
        c[...] = np.cos(a[...])

    x = np.array([1e30, -1e10, 3e38, 1e5, 7.0, 1e-30, -0.0], np.float32)
    s, c = np.zeros_like(x), np.zeros_like(x)
    run(kernel, x, s, c, backend=backend)
    np.testing.assert_allclose(s, np.sin(x.astype(np.float64)), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(c, np.cos(x.astype(np.float64)), rtol=1e-6, atol=1e-7)
    assert np.signbit(s[-1])


def test_float64_transcendentals_on_vulkan_are_a_clear_error():
    if "vulkan" not in BACKENDS:
        pytest.skip("no Vulkan device")

    def kernel(a, o):
        o[...] = np.exp(a[...])

    with pytest.raises(RuntimeError, match="float64 exp is not available on Vulkan"):
        run(kernel, np.zeros(3), np.zeros(3), backend="vulkan")


def test_vulkan_grids_with_unit_dimensions():
    """A trailing unit dimension made one workgroup of 65536 threads (more
    than any device runs): the threads now tile the last dimension with
    more than one index."""
    if "vulkan" not in BACKENDS:
        pytest.skip("no Vulkan device")

    def double(a, o):
        o[...] = a[...] * 2

    for shape in [(65536, 1), (65536, 1, 1), (2, 65536, 1), (70000, 3)]:
        x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        o = np.zeros_like(x)
        run(double, x, o, backend="vulkan")
        np.testing.assert_array_equal(o, x * 2)
    a = np.arange(65536 * 2, dtype=np.float32).reshape(65536, 2) % 7
    b = np.arange(2, dtype=np.float32).reshape(2, 1)
    o = np.zeros((65536, 1), np.float32)

    def matmul(a_ref, b_ref, o_ref):
        o_ref[...] = a_ref[...] @ b_ref[...]

    run(matmul, a, b, o, backend="vulkan")
    np.testing.assert_array_equal(o, a @ b)


def test_reductions_longer_than_the_vulkan_device_loop_budget_run_in_blocks():
    """llvmpipe stops a thread after 65535 loop iterations and keeps what it
    computed (a sum of 70000 ones in one thread was 65535): long sums run
    as blocks of 1024 (a GPU thread each) and a pairwise combine, so no
    thread comes near the budget; the kernels that still would (a matmul's
    K) are refused at compile time (test_vulkan_matmul)."""
    if "vulkan" not in BACKENDS:
        pytest.skip("no Vulkan device")

    def total(a, o):
        o[...] = a[...].sum()

    o = np.zeros((), np.float32)
    for shape in [(65535,), (70000,), (255, 256), (3, 70001), (1_000_003,)]:
        run(total, np.ones(shape, np.float32), o, backend="vulkan")
        assert o == np.prod(shape), shape

    def row_max(a, o):
        o[...] = a[...].max(axis=1)

    x = np.random.default_rng(7).standard_normal((3, 100_000)).astype(np.float32)
    x[1, 99_999] = 50
    x[2, 12_345] = np.nan
    rows = np.zeros(3, np.float32)
    run(row_max, x, rows, backend="vulkan")
    np.testing.assert_array_equal(rows, x.max(axis=1))


#===-----------------------------------------------------------------------===#
# 7, 8, 13. Math functions, dtypes and conversions
#===-----------------------------------------------------------------------===#


@pytest.mark.parametrize("backend", BACKENDS)
def test_log1p_and_expm1_of_huge_values_and_float16(backend):
    def log1p(a, o):
        o[...] = np.log1p(a[...])

    def expm1(a, o):
        o[...] = np.expm1(a[...])

    x = np.array([1e37, 3e38, 1e-30], np.float32)
    o = np.zeros_like(x)
    run(log1p, x, o, backend=backend)
    np.testing.assert_allclose(o, np.log1p(x), rtol=1e-6)
    h = np.array([1e-3, -1e-3, 5e-5], np.float16)
    oh = np.zeros_like(h)
    run(expm1, h, oh, backend=backend)
    np.testing.assert_array_equal(oh, np.expm1(h))
    # Near the top of float32's exp: (exp(x) - 1) * x overflowed before the
    # division by log(exp(x)); float64 the same near 709.
    big = np.array([80.0, 85.0, 88.5, 88.72, 89.0, -100.0], np.float32)
    o = np.zeros_like(big)
    run(expm1, big, o, backend=backend)
    np.testing.assert_allclose(o, quietly(np.expm1, big), rtol=2e-6)
    if backend == "cpu":  # Vulkan has no float64 exp
        big64 = np.array([700.0, 709.0, 709.78, 710.0, 1e-300])
        o64 = np.zeros_like(big64)
        run(expm1, big64, o64, backend=backend)
        np.testing.assert_allclose(o64, quietly(np.expm1, big64), rtol=1e-14)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("function, ulps", [
    ("exp", 4), ("log", 4), ("log1p", 6), ("expm1", 6), ("power", 2)])
def test_float32_math_is_within_a_few_ulps(backend, function, ulps):
    """Against float64 NumPy rounded once, over the whole float32 range of
    each function (subnormals included). Vulkan's GLSL exp, log and pow were
    64, 278000 and 180 ulps off on lavapipe."""
    rng = np.random.default_rng(7)
    n = 200_000
    wide = np.abs(rng.standard_normal(n) * 10.0 ** rng.uniform(-44, 38, n))
    near_one = rng.uniform(0.5, 2, n)
    arguments = {
        "exp": [rng.uniform(-103, 88.7, n)],
        "log": [np.concatenate([wide, near_one])],
        "log1p": [np.concatenate([wide, near_one - 1])],
        "expm1": [rng.uniform(-20, 88.7, n)],
        "power": [rng.uniform(0, 10, n), rng.uniform(-40, 40, n)],
    }[function]
    arrays = [a.astype(np.float32) for a in arguments]
    ufunc = getattr(np, function)

    def unary(x, o):
        o[...] = ufunc(x[...])

    def binary(x, y, o):
        o[...] = ufunc(x[...], y[...])

    kernel = unary if len(arrays) == 1 else binary
    out = np.zeros_like(arrays[0])
    run(kernel, *arrays, out, backend=backend)
    want = quietly(ufunc, *(a.astype(np.float64) for a in arrays))
    finite = np.isfinite(want) & (np.abs(want) < np.finfo(np.float32).max)
    assert np.array_equal(np.isnan(out), np.isnan(want))
    spacing = np.spacing(np.abs(want[finite]).astype(np.float32)).astype(np.float64)
    error = np.abs(out[finite] - want[finite]) / spacing
    assert error.max() <= ulps, (error.max(), arrays[0][finite][error.argmax()])


@pytest.mark.parametrize("backend", BACKENDS)
def test_float16_matmul_accumulates_in_float32(backend):
    def kernel(a, b, o):
        o[...] = a[...] @ b[...]

    a = np.array([[1.338, -0.5]], np.float16)
    b = np.array([[65504], [np.inf]], np.float16)
    o = np.zeros((1, 1), np.float16)
    run(kernel, a, b, o, backend=backend)
    np.testing.assert_array_equal(o, quietly(np.matmul, a, b))
    assert o[0, 0] == -np.inf


@pytest.mark.parametrize("backend", BACKENDS)
def test_floor_and_ceil_keep_integer_dtypes(backend):
    def kernel(a, b, o, p, q):
        o[...] = np.floor(a[...])
        p[...] = np.ceil(b[...])
        q[...] = b[...] ** 2

    a = np.array([-3, 7], np.int32)
    b = np.array([True, False])
    o, p, q = np.zeros(2, np.int32), np.zeros(2, bool), np.zeros(2, np.int8)
    traced = picokernel.trace_kernel(kernel, [(2,), (2,), (2,), (2,), (2,)],
                                     [np.int32, bool, np.int32, bool, np.int8])
    assert "FLOOR" not in traced.listing and "CEIL" not in traced.listing
    run(kernel, a, b, o, p, q, backend=backend)
    np.testing.assert_array_equal(o, np.floor(a))
    np.testing.assert_array_equal(p, np.ceil(b))
    np.testing.assert_array_equal(q, b ** 2)
    assert (b ** 2).dtype == np.int8


@pytest.mark.parametrize("backend", BACKENDS)
def test_float64_to_float16_rounds_correctly(backend):
    """Once, to nearest even (NumPy's astype), never through float32."""
    def kernel(a, o, p):
        o[...] = a[...]
        p[...] = a[...].astype(np.float16)

    x = np.array([1 + 2**-11 + 2**-40, 1 + 2**-11, 1 + 3 * 2**-11, 65519.99,
                  65520.0, 2**-25, 2**-25 + 2**-60, -0.0, np.nan, 1e-3])
    o, p = np.zeros(len(x), np.float16), np.zeros(len(x), np.float16)
    run(kernel, x, o, p, backend=backend)
    want = quietly(x.astype, np.float16)
    np.testing.assert_array_equal(o.view(np.int16)[:-2], want.view(np.int16)[:-2])
    np.testing.assert_array_equal(p, want)


def test_float64_to_float16_objects_need_no_runtime_helper(tmp_path):
    """An ahead-of-time object for a generic x86-64 CPU (no F16C, no
    AVX-512 FP16 or BF16) calls none of the conversion helpers that libgcc
    12 lacks or that a JIT may not find (f32 -> f16 stays libgcc's
    __truncsfhf2 on such a CPU, as for any C compiler)."""
    import shutil
    import subprocess

    import os

    tools = os.environ.get("PK_BIN_DIR", "")
    translate = shutil.which("pk-translate", path=tools or None)
    nm = shutil.which("llvm-nm") or "/usr/lib/llvm-22/bin/llvm-nm"
    if translate is None:
        pytest.skip("pk-translate is not built (ctest sets PK_BIN_DIR)")
    source = tmp_path / "narrow.mlir"
    source.write_text("""
pk.kernel @narrow(%a: !pk.ref<8xf64>, %h: !pk.ref<8xf16>, %b: !pk.ref<8xbf16>) {
  %0 = pk.load %a : !pk.ref<8xf64> -> tensor<8xf64>
  %1 = pk.cast %0 : tensor<8xf64> -> tensor<8xf16>
  pk.store %1, %h : tensor<8xf16> -> !pk.ref<8xf16>
  %2 = pk.cast %0 : tensor<8xf64> -> tensor<8xbf16>
  %3 = pk.mul %2, %2 : tensor<8xbf16>
  pk.store %3, %b : tensor<8xbf16> -> !pk.ref<8xbf16>
  pk.return
}
""")
    obj = tmp_path / "narrow.o"
    subprocess.run([translate, "--pk-to-object", "--pk-object-cpu=x86-64",
                    str(source), "-o", str(obj)], check=True)
    symbols = subprocess.run([nm, "-u", str(obj)], capture_output=True, text=True,
                             check=True).stdout
    for helper in ("__truncdfhf2", "__truncdfbf2", "__truncsfbf2", "__extendbfsf2"):
        assert helper not in symbols, symbols


#===-----------------------------------------------------------------------===#
# 11, 14, 17. Indexing, and the traced values' attributes
#===-----------------------------------------------------------------------===#


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_integer_index_with_a_stepped_slice(backend):
    def load(a, o):
        o[...] = a[::2, 3]

    def store(o, a):
        o[0, ::2, :] = a[...]

    a = np.arange(16.0).reshape(2, 8)
    o = np.zeros(1)
    run(load, a, o, backend=backend)
    np.testing.assert_array_equal(o, a[::2, 3])
    target, value = np.zeros((1, 13, 1)), np.arange(7.0).reshape(7, 1)
    run(store, target, value, backend=backend)
    want = np.zeros((1, 13, 1))
    want[0, ::2, :] = value
    np.testing.assert_array_equal(target, want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_integer_index_into_an_empty_dimension(backend):
    def kernel(a, o):
        o[...] = a[1]

    a = np.zeros((2, 0))
    o = np.zeros(0)
    run(kernel, a, o, backend=backend)
    assert a[1].shape == o.shape


def test_dtype_of_refs_and_values():
    seen = []

    def kernel(a, o):
        seen.append((a.dtype, a[...].dtype, (a[...] > 0).dtype))
        o[...] = a[...]

    run(kernel, np.ones(2, np.float32), np.zeros(2, np.float32))
    assert seen == [(np.float32, np.float32, np.bool_)]


def test_storing_with_extra_leading_unit_dimensions():
    def kernel(a, o, p):
        o[...] = a[...]
        p[1] = a[0]

    a = np.arange(3.0).reshape(1, 1, 3)
    o, p = np.zeros(3), np.zeros((2, 3))
    run(kernel, a, o, p)
    np.testing.assert_array_equal(o, [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(p[1], [0.0, 1.0, 2.0])


def test_an_element_takes_no_array():
    def kernel(a, o):
        o[1] = a[...]

    with pytest.raises(ValueError):
        np.zeros(3)[1] = np.ones(1)
    with pytest.raises(ValueError, match="setting an array element with a sequence"):
        run(kernel, np.ones(1), np.zeros(3))


@pytest.mark.parametrize("backend", BACKENDS)
def test_in_place_operators_cast_back_like_numpy(backend):
    def kernel(a, o):
        x = a[...]
        x += 1
        x *= 3
        o[...] = x

    def unsafe(a, o):
        x = a[...]
        x /= 2
        o[...] = x

    a = np.array([1, 2], np.int8)
    o = np.zeros(2, np.int8)
    run(kernel, a, o, backend=backend)
    np.testing.assert_array_equal(o, (a + 1) * 3)
    with pytest.raises(TypeError, match="same_kind"):
        run(unsafe, a, o)


def test_unary_plus_of_booleans_is_numpys_type_error():
    def kernel(a, o):
        o[...] = +a[...]

    with pytest.raises(TypeError):
        +np.array([True])
    with pytest.raises(TypeError, match="positive"):
        run(kernel, np.array([True]), np.zeros(1, bool))


#===-----------------------------------------------------------------------===#
# Python integers beyond int64, axis arguments, and other edges of the
# language (found by adversarial review)
#===-----------------------------------------------------------------------===#


def agree_with_numpy(expression, *arrays, backend="cpu"):
    """`expression` (a function of loaded values) computed by picokernel
    equals NumPy's result, or raises the exception NumPy raises."""
    try:
        want = np.asarray(quietly(expression, *arrays))
    except Exception as error:  # NumPy's error, to be raised too
        def failing(a, o):
            o[...] = expression(a[...])

        def failing2(a, b, o):
            o[...] = expression(a[...], b[...])

        with pytest.raises(type(error)):
            run(failing if len(arrays) == 1 else failing2, *arrays,
                np.zeros(3, np.float64), backend=backend)
        return

    def unary(a, o):
        o[...] = expression(a[...])

    def binary(a, b, o):
        o[...] = expression(a[...], b[...])

    out = np.zeros(want.shape, want.dtype)
    run(unary if len(arrays) == 1 else binary, *arrays, out, backend=backend)
    np.testing.assert_array_equal(out, want)


BIG_INTEGER_CASES = [
    (lambda a: a + 2**64, np.float32),
    (lambda a: a * -2**70, np.float64),
    (lambda a: np.maximum(a, 2**65), np.float32),
    (lambda a: np.where(a > 1, a, 2**64), np.float32),
    (lambda a: a ** 2**64, np.float32),
    (lambda a: a < 2**64, np.int8),
    (lambda a: 2**64 > a, np.int8),
    (lambda a: a == 2**64, np.int64),
    (lambda a: a != -2**64, np.int32),
    (lambda a: a >= -2**64, np.int16),
    (lambda a: -2**64 >= a, np.int16),
    (lambda a: a + 2**64, np.int64),       # OverflowError
    (lambda a: a + 2**64, np.bool_),       # OverflowError
    (lambda a: a < 2**64, np.bool_),       # OverflowError
    (lambda a: a + 2**1100, np.float32),   # OverflowError (no float holds it)
    (lambda a: a ** 128, np.int8),         # OverflowError
    (lambda a: a ** 40000, np.int16),      # OverflowError
    (lambda a: a ** -200, np.int8),        # OverflowError before ValueError
    (lambda a: a ** -1, np.int8),          # ValueError
    (lambda a: a ** 2**64, np.int64),      # OverflowError
    (lambda a: a @ 2, np.float32),         # ValueError
    (lambda a: 2 @ a, np.float32),         # ValueError
    (lambda a: a[2**63], np.float32),      # OverflowError
    (lambda a: a[-2**63 - 1], np.float32), # IndexError
    (lambda a: a[2**62], np.float32),      # IndexError
    (lambda a: a[:2**70], np.float32),
    (lambda a: a[-2**70:], np.float32),
    # np.where converts Python integers below 2^64 with C's cast (wrapping).
    (lambda a: np.where(a > 1, a, 2**63 + 255), np.int8),
    (lambda a: np.where(a > 1, 2**63, 1), np.int8),
    (lambda a: np.where(a > 1, 2**64 - 1, a), np.int32),
    (lambda a: np.where(a > 1, a, 2**64), np.int8),     # OverflowError
    (lambda a: np.where(a > 1, a, -2**63 - 1), np.int8),  # OverflowError
    (lambda a: np.where(a > 1, a, 2**63 + 1), np.float32),
    # Beyond a double's range: integer arrays compare by its sign; floats
    # and integers cannot hold it.
    (lambda a: a < 2**1100, np.int32),
    (lambda a: -2**1100 >= a, np.int8),
    (lambda a: a == 2**1100, np.int64),
    (lambda a: a + 2**1100, np.int32),                   # OverflowError
    (lambda a: np.where(a > 1, a, 2**1100), np.float32),  # OverflowError
    (lambda a: a[2**64], np.float32),                    # IndexError
    (lambda a: a[-2**64], np.float32),                   # IndexError
    (lambda a: a[:1.5], np.float32),                     # TypeError
    (lambda a: a.sum(axis=0, keepdims=1), np.float32),
    (lambda a: a.sum(axis=0, keepdims=2), np.int8),
    (lambda a: a.sum(axis=0, keepdims=None), np.int8),   # TypeError
    (lambda a: np.max(a, 0, keepdims=1.0), np.int8),     # TypeError
    (lambda a: np.where(a > 1, a), np.float32),          # ValueError
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", range(len(BIG_INTEGER_CASES)))
def test_python_integers_beyond_int64_and_other_edges(backend, case):
    expression, dtype = BIG_INTEGER_CASES[case]
    a = np.array([1, 2, 3]).astype(dtype)
    agree_with_numpy(expression, a, backend=backend)


def test_storing_python_integers_beyond_int64():
    def floats(o):
        o[...] = 2**64

    def integers(o):
        o[...] = 2**64

    o = np.zeros(2, np.float32)
    run(floats, o)
    assert (o == np.float32(2**64)).all()
    with pytest.raises(OverflowError):
        np.zeros(2, np.int64)[...] = 2**64
    with pytest.raises(OverflowError, match="does not fit in int64"):
        run(integers, np.zeros(2, np.int64))


@pytest.mark.parametrize("axis", [
    0, -1, np.int64(0), np.array(1), (np.int64(1),), (0, 1), (), None,
    True, [0], 0.0, (0.0,), np.array([0]), (True,), "0", (0, 0), 2, (0, -3)])
def test_axis_arguments_as_numpy_takes_them(axis):
    x = np.arange(6.0).reshape(2, 3)
    agree_with_numpy(lambda a: a.sum(axis=axis), x)


@pytest.mark.parametrize("axis", [0, -1, (0,), (-1,), (), None, np.int64(0), 1])
def test_axis_arguments_of_0d_arrays(axis):
    x = np.array(5.0)
    for method in ("sum", "max", "min", "mean"):
        agree_with_numpy(lambda a: getattr(a, method)(axis=axis), x)


#===-----------------------------------------------------------------------===#
# NumPy's power loop and bfloat16 copies (found by the random-kernel test)
#===-----------------------------------------------------------------------===#


SPECIAL_BASES = [-np.inf, -0.0, 0.0, 4.0, -4.0, np.inf, np.nan, 2.0]


def assert_same_floats(got, want):
    """Equal values, NaNs (whatever their sign) and signs of zero."""
    np.testing.assert_array_equal(got, want)
    numbers = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[numbers]),
                                  np.signbit(want[numbers]))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("exponent_shape, base_size", [
    ((), 8), ((1,), 8), ((1, 1), 8), ((), 1), ((1,), 1), ((1, 1), 1)])
def test_a_one_element_exponent_takes_numpys_loop(backend, dtype,
                                                  exponent_shape, base_size):
    """NumPy's float32/float64 power takes sqrt for an exponent of 0.5 it
    sees with stride 0 (one element, outside its trivial loop): -inf ** 0.5
    is then nan and -0.0 ** 0.5 is -0.0."""
    def power(a, e, o):
        o[...] = a[...] ** e[...]

    def in_place(a, e):
        a[...] **= e[...]

    if backend == "vulkan" and dtype == np.float64:
        pytest.skip("GLSL has no float64 pow")
    for value in (0.5, 0.25, 2.0):
        base = np.array(SPECIAL_BASES[:base_size], dtype)
        e = np.full(exponent_shape, value, dtype)
        want = quietly(np.power, base, e)
        o = np.zeros(want.shape, dtype)
        run(power, base, e, o, backend=backend)
        assert_same_floats(o, want)
        if len(exponent_shape) > 1:
            continue  # a (1, 1) result does not fit back into the base
        want = base.copy()
        quietly(lambda: want.__ipow__(e))
        run(in_place, base, e, backend=backend)
        assert_same_floats(base, want)


INTEGER_DTYPES = [np.uint8, np.int8, np.uint16, np.int16, np.uint32,
                  np.int32, np.uint64, np.int64]


@pytest.mark.parametrize("dtype", INTEGER_DTYPES)
def test_in_place_integer_powers_raise_what_numpy_raises(dtype):
    """`t **= e` on integers: NumPy resolves the output's cast before it
    computes, so a result the base's dtype cannot take (uint8 ** int8 is
    int16) is its TypeError even for a negative exponent, whose ValueError
    comes only where the cast holds."""
    exponents = [2, -1, np.int8(-1), np.int8(3), np.uint8(2), np.int16(-2),
                 np.int64(-1), np.uint64(3), np.int32(2)]
    def raised_to(exponent):
        def kernel(a):
            t = a[...]
            t **= exponent
            a[...] = t
        return kernel

    for exponent in exponents:
        kernel = raised_to(exponent)

        want = np.arange(1, 5, dtype=dtype)
        try:
            with np.errstate(all="ignore"):
                want **= exponent
            expected = None
        except (TypeError, ValueError, OverflowError) as error:
            expected = type(error)
        a = np.arange(1, 5, dtype=dtype)
        try:
            picokernel.kernel(kernel)(a)
            got = None
        except (TypeError, ValueError, OverflowError) as error:
            got = type(error)
        assert (got is None) == (expected is None), (exponent, got, expected)
        if expected is None:
            np.testing.assert_array_equal(a, want, err_msg=repr(exponent))
        else:
            assert issubclass(expected, got), (exponent, got, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_numpy_scalar_exponent_takes_numpys_loop(backend):
    def kernel(a, o):
        o[...] = a[...] ** np.float32(0.5)

    a = np.array(SPECIAL_BASES, np.float32)
    o = np.zeros(len(a), np.float32)
    run(kernel, a, o, backend=backend)
    assert_same_floats(o, quietly(np.power, a, np.float32(0.5)))


@pytest.mark.skipif(bfloat16 is None, reason="needs ml_dtypes")
@pytest.mark.parametrize("backend", BACKENDS)
def test_bfloat16_subnormals_survive_copies_and_broadcasts(backend):
    """x86's float32 -> bfloat16 instruction flushes subnormals; a copied
    bfloat16 keeps its bits."""
    def kernel(r, o):
        r[...] = r[...].max()
        o[...] = r[0]

    values = np.array([-3e38, -0.5, -1.00101e-38], bfloat16)
    r, o = values.copy(), np.zeros(4, bfloat16)
    run(kernel, r, o, backend=backend)
    want = np.full(3, values.max(), bfloat16)
    np.testing.assert_array_equal(r.view(np.uint16), want.view(np.uint16))
    np.testing.assert_array_equal(o.view(np.uint16),
                                  np.full(4, want[0]).view(np.uint16))


def test_errors_through_numpy_functions_name_the_users_line():
    """np.maximum and picokernel.where reach the tracer through picokernel's
    own Python; the error names the kernel's line, not picokernel's."""
    def through_ufunc(a, o):
        o[...] = np.maximum(a[...], 2**64)

    def through_where(a, o):
        o[...] = picokernel.where(a[...] > 0, a[...], 2**64)

    def unsupported_operand(a, o):
        o[...] = np.maximum(a[...], "x")

    def where_without_y(a, o):
        o[...] = np.where(a[...] > 0, a[...])

    def unsupported_function(a, o):
        o[...] = np.arctan2(a[...], a[...])

    for kernel, kind in [(through_ufunc, OverflowError),
                         (through_where, OverflowError),
                         (unsupported_operand, TypeError),
                         (where_without_y, ValueError),
                         (unsupported_function, TypeError)]:
        line = kernel.__code__.co_firstlineno + 1
        with pytest.raises(kind, match=f"{__file__}:{line}: error"):
            run(kernel, np.zeros(2, np.int8), np.zeros(2, np.int8))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_value_stored_twice_then_updated_in_one_ref(backend):
    """Found by the random-kernel test: r2 got r1's update (empty-tensor
    elimination computed v into r1, whose later write r2's store read)."""
    def kernel(a, r1, r2):
        v = a[...] * 2.0
        r1[...] = v
        r2[...] = v
        r1[0] = -1.0

    a = np.array([1.0, 2.0, 3.0])
    r1, r2 = np.zeros(3), np.zeros(3)
    run(kernel, a, r1, r2[::-1], backend=backend)
    np.testing.assert_array_equal(r1, [-1.0, 4.0, 6.0])
    np.testing.assert_array_equal(r2[::-1], [2.0, 4.0, 6.0])


#===-----------------------------------------------------------------------===#
# Two reductions whose inits CSE merged each write their own result
#===-----------------------------------------------------------------------===#


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("dtype,first,second", [
    (np.int64, "(x * 2).sum(axis=1)", "x.sum(axis=1)"),
    (np.float64, "x.sum(axis=1)", "(x + 1).sum(axis=1)"),
    (np.float32, "x.sum()", "(x * x).sum()"),
    (np.uint64, "x.max(axis=1)", "x.sum(axis=1)"),
    (np.uint32, "x.sum(axis=0)", "x.max(axis=0).astype(np.uint64)"),
    (np.int32, "x.sum(axis=1) + 0", "x.sum(axis=1) * 3"),
    (np.float64, "x.max(axis=1)", "x.sum(axis=1)"),
    (np.int16, "x.min(axis=0)", "x.max(axis=0)"),
])
def test_reductions_with_equal_identities_keep_their_results(
        backend, dynamic, dtype, first, second):
    """Two sums (or a sum and an unsigned maximum) of one shape start from
    the same filled tensor after CSE: each must still write its own value
    (both outputs got the first result before pk-unshare-inits)."""
    namespace = {"np": np}
    exec(f"def body(a, o, p):\n    x = a[...]\n    o[...] = {first}\n"
         f"    p[...] = {second}\n", namespace)
    x = (np.arange(48) * 7 % 11).astype(dtype).reshape(6, 8)
    want_o, want_p = (quietly(eval, e, {"np": np, "x": x}) for e in (first, second))
    o, p = np.zeros_like(want_o), np.zeros_like(want_p)
    picokernel.kernel(namespace["body"], backend=backend, dynamic=dynamic)(x, o, p)
    np.testing.assert_allclose(o, want_o, rtol=1e-6)
    np.testing.assert_allclose(p, want_p, rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("shape,first,second", [
    ((64, 8), "a.sum(axis=0)", "x @ a"),
    ((64, 8), "x @ a", "y @ a"),
    ((1000, 4), "(x * 2) @ a", "a.sum(axis=0)"),
    ((33, 16), "b.sum(axis=1)", "b @ x"),
    ((33, 64), "b @ x", "b @ y"),
    ((1000, 17), "a.max(axis=0)", "x @ a"),
])
def test_products_and_reductions_with_equal_inits_keep_their_results(
        backend, dynamic, shape, first, second):
    """A vector-matrix or matrix-vector product vectorized into a loop
    starts that loop from the filled tensor CSE shares with a reduction or
    another product of the same shape: each output must still get its own
    value (static kernels gave both the first one's before pk-unshare-inits
    counted loops' uses)."""
    namespace = {"np": np}
    exec(f"def body(xs, ys, as_, bs, o, p):\n"
         f"    x, y, a, b = xs[...], ys[...], as_[...], bs[...]\n"
         f"    o[...] = {first}\n    p[...] = {second}\n", namespace)
    rng = np.random.default_rng(3)
    x, y = (rng.random(shape[0]).astype(np.float32) for _ in range(2))
    a = rng.random(shape).astype(np.float32)
    b = np.ascontiguousarray(a.T)  # (A @ x: rows of b)
    scope = {"np": np, "x": x.astype(np.float64), "y": y.astype(np.float64),
             "a": a.astype(np.float64), "b": b.astype(np.float64)}
    want_o, want_p = (eval(e, scope) for e in (first, second))
    o = np.full(want_o.shape, np.nan, np.float32)
    p = np.full(want_p.shape, np.nan, np.float32)
    picokernel.kernel(namespace["body"], backend=backend, dynamic=dynamic)(x, y, a, b, o, p)
    np.testing.assert_allclose(o, want_o, rtol=1e-5)
    np.testing.assert_allclose(p, want_p, rtol=1e-5)


#===-----------------------------------------------------------------------===#
# Conversions to bfloat16 round once, as ml_dtypes' do
#===-----------------------------------------------------------------------===#


@pytest.mark.skipif(bfloat16 is None, reason="ml_dtypes is not installed")
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("source", [np.int64, np.uint64, np.int32, np.uint32,
                                    np.float64, np.int16])
def test_conversions_to_bfloat16_near_ties(backend, source):
    """Values at, just above and just below a bfloat16 tie, from every
    magnitude: rounding through float32 to nearest (int64 2^40 + 2^32 + 1,
    float64 likewise) or through float64 (int64 past 2^53) landed on the
    tie first and rounded to even, one bfloat16 step off."""
    rng = np.random.default_rng(17)
    shift = rng.integers(8, 56, 2000).astype(np.uint64)
    odd = (rng.integers(128, 256, 2000) * 2 + 1).astype(np.uint64)
    ties = odd << (shift - np.uint64(1))
    x = np.concatenate([ties + np.uint64(1), ties - np.uint64(1), ties,
                        np.array([0, 1, 2**53 + 1, 2**63, 2**64 - 1], np.uint64)])
    if np.dtype(source).itemsize < 8:
        x = x % np.uint64(2**(8 * np.dtype(source).itemsize - 1))
    x = x.astype(source)
    if np.dtype(source).kind in "if":
        x = np.concatenate([x, -x])

    def body(a, o):
        o[...] = a[...].astype(bfloat16)

    o = np.zeros(len(x), bfloat16)
    picokernel.kernel(body, backend=backend)(x, o)
    np.testing.assert_array_equal(o.view(np.uint16), x.astype(bfloat16).view(np.uint16))
