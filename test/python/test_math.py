"""NumPy-style math inside kernels: picokernel functions and NumPy's own
ufuncs on traced values, against NumPy."""

import re

import numpy as np
import pytest

import picokernel


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))


def softplus(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


@pytest.mark.parametrize("dtype, rtol", [(np.float32, 2e-6), (np.float64, 1e-13)])
@pytest.mark.parametrize("function", [gelu_tanh, softplus])
def test_numpy_style_kernels_trace_unchanged(function, dtype, rtol):
    @picokernel.kernel
    def kernel(x_ref, o_ref):
        o_ref[...] = function(x_ref[...])

    x = np.linspace(-6, 6, 2001).astype(dtype)
    o = np.empty_like(x)
    kernel(x, o)
    np.testing.assert_allclose(o, function(x), rtol=rtol, atol=rtol)


def test_every_math_function():
    names = ["exp", "log", "log1p", "expm1", "sqrt", "tanh", "sin", "cos",
             "floor", "ceil"]

    x = np.linspace(0.1, 3.0, 50)
    for name in names:
        namespace = {"picokernel": picokernel}
        exec(f"def k(x_ref, o_ref):\n    o_ref[...] = picokernel.{name}(x_ref[...])",
             namespace)
        kernel = picokernel.kernel(namespace["k"])
        o = np.empty_like(x)
        kernel(x, o)
        np.testing.assert_allclose(o, getattr(np, name)(x), rtol=1e-13, err_msg=name)

    @picokernel.kernel
    def extras(x_ref, s_ref, r_ref, p_ref):
        x = x_ref[...]
        s_ref[...] = picokernel.sigmoid(x)
        r_ref[...] = picokernel.rsqrt(x)
        p_ref[...] = x ** 2.5 + 2.0 ** x

    s, r, p = np.empty_like(x), np.empty_like(x), np.empty_like(x)
    extras(x, s, r, p)
    np.testing.assert_allclose(s, 1 / (1 + np.exp(-x)), rtol=1e-13)
    np.testing.assert_allclose(r, 1 / np.sqrt(x), rtol=1e-13)
    np.testing.assert_allclose(p, x ** 2.5 + 2.0 ** x, rtol=1e-13)


def test_integer_inputs_compute_in_float_like_numpy():
    @picokernel.kernel
    def k(i_ref, o_ref):
        o_ref[...] = np.sqrt(i_ref[...])

    i8 = np.arange(10, dtype=np.int8)
    o16 = np.empty(10, np.float16)  # NumPy: sqrt(int8) is float16
    k(i8, o16)
    np.testing.assert_array_equal(o16, np.sqrt(i8))
    i32 = np.arange(10, dtype=np.int32)
    o64 = np.empty(10)
    k(i32, o64)
    np.testing.assert_array_equal(o64, np.sqrt(i32))
    assert "float64" in k.show_ir(i32, o64)


def test_numpy_functions_that_are_not_supported():
    @picokernel.kernel
    def k(x_ref, o_ref):
        o_ref[...] = np.arctan2(x_ref[...], 1.0)

    with pytest.raises(TypeError, match="numpy.arctan2 is not supported inside kernels"):
        k(np.ones(3), np.ones(3))

    @picokernel.kernel
    def out_kwarg(x_ref, o_ref):
        o_ref[...] = np.exp(x_ref[...], where=True)

    with pytest.raises(TypeError, match="numpy.exp.__call__ with arguments"):
        out_kwarg(np.ones(3), np.ones(3))


def test_integer_powers_follow_numpy():
    @picokernel.kernel
    def k(x_ref, m_ref, o0, o1, o2, o3, o7, om):
        x = x_ref[...]
        o0[...] = x ** 0
        o1[...] = x ** 1
        o2[...] = x ** 2
        o3[...] = 3 ** 2 + x ** 3     # wraps like NumPy's int8
        o7[...] = x ** 7
        om[...] = m_ref[...] ** True  # bool ** bool is int8

    x = np.array([-128, -7, -1, 0, 1, 2, 5, 127], dtype=np.int8)
    m = np.array([True, False, True, False, True, True, False, True])
    expected = [x ** 0, x ** 1, x ** 2, 3 ** 2 + x ** 3, x ** 7, m ** True]
    outputs = [np.empty_like(e) for e in expected]
    k(x, m, *outputs)
    for output, want in zip(outputs, expected):
        assert output.dtype == want.dtype
        np.testing.assert_array_equal(output, want)


def test_integer_powers_need_a_known_nonnegative_exponent():
    @picokernel.kernel
    def negative(x_ref, o_ref):
        o_ref[...] = x_ref[...] ** -2

    with pytest.raises(ValueError, match="negative integer powers"):
        negative(np.arange(3), np.empty(3, np.int64))

    @picokernel.kernel
    def traced(x_ref, o_ref):
        o_ref[...] = x_ref[...] ** x_ref[...]

    with pytest.raises(TypeError, match="need a constant exponent"):
        traced(np.arange(3), np.empty(3, np.int64))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_powers_take_numpys_fast_paths_bit_for_bit(dtype):
    @picokernel.kernel
    def k(x_ref, fast_ref, pow_ref):
        x = x_ref[...]
        fast_ref[...] = x ** 2 + x ** 0.5 + x ** -1 + x ** 1 + x ** 0
        pow_ref[...] = x ** 3 + x ** 1.5

    x = np.array([0.1, 0.5, 1.0, 2.0, 3.3, 1e3, np.inf, np.nan, 0.0], dtype=dtype)
    with np.errstate(all="ignore"):
        fast = x ** 2 + x ** 0.5 + x ** -1 + x ** 1 + x ** 0
        powers = x ** 3 + x ** 1.5
    o_fast, o_pow = np.empty_like(x), np.empty_like(x)
    k(x, o_fast, o_pow)
    np.testing.assert_array_equal(o_fast, fast)
    # pow itself is the vector math library's (within an ulp or two), and
    # ** 3 multiplies (like jax.numpy and numexpr), within 2 ulp of pow.
    np.testing.assert_allclose(o_pow, powers, rtol=4 * np.finfo(dtype).eps)
    # Only ** 1.5 calls pow.
    assert k.lower(x, o_fast, o_pow, stage="pk").count("pk.pow") == 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cubes_and_fourth_powers_multiply_within_two_ulp_of_pow(dtype):
    @picokernel.kernel
    def k(x_ref, o3_ref, o4_ref):
        o3_ref[...] = x_ref[...] ** 3
        o4_ref[...] = x_ref[...] ** 4.0

    rng = np.random.default_rng(3)
    x = np.concatenate([rng.standard_normal(10000) * 10.0 ** rng.uniform(-10, 10, 10000),
                        [0.0, -0.0, np.inf, -np.inf, np.nan]]).astype(dtype)
    o3, o4 = np.empty_like(x), np.empty_like(x)
    k(x, o3, o4)
    with np.errstate(all="ignore"):
        for got, want in ((o3, x ** 3), (o4, x ** 4)):
            finite = np.isfinite(want)  # subnormals too: ulps of their spacing
            ulps = np.abs(got[finite] - want[finite]) / np.spacing(np.abs(want[finite]))
            assert ulps.max() <= 2
            np.testing.assert_array_equal(got[~finite], want[~finite])
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))




@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log1p_and_expm1_keep_small_arguments(dtype):
    """log(1 + x) and exp(x) - 1 would return 0 for x = 1e-10: the lowering
    divides out the rounding of 1 + x and exp(x) instead."""
    @picokernel.kernel
    def k(x_ref, e_ref, l_ref):
        e_ref[...] = np.expm1(x_ref[...])
        l_ref[...] = np.log1p(x_ref[...])

    rng = np.random.default_rng(7)
    tiny = 10.0 ** rng.uniform(-30, 0, 2000) * rng.choice([-1, 1], 2000)
    special = [0.0, -0.0, 1e-10, -1e-10, 0.5, -0.5, 30.0, 700.0, 1e30, -1e30,
               -1.0, -2.0, np.inf, -np.inf, np.nan]
    x = np.concatenate([tiny, special, rng.uniform(-20, 20, 2000)]).astype(dtype)
    e, l = np.empty_like(x), np.empty_like(x)
    k(x, e, l)
    with np.errstate(all="ignore"):
        want_e, want_l = np.expm1(x), np.log1p(x)
    for got, want in [(e, want_e), (l, want_l)]:
        finite = np.isfinite(want)
        np.testing.assert_array_equal(got[~finite], want[~finite])
        ulps = np.abs(got[finite] - want[finite]) / np.spacing(np.abs(want[finite]))
        assert ulps.max() <= 8, x[finite][np.argmax(ulps)]  # libm: ~1
    assert np.signbit(l[x == 0]).tolist() == np.signbit(x[x == 0]).tolist()


@pytest.mark.parametrize("dtype, atol", [(np.float32, 1e-7), (np.float64, 4.5e-16)])
def test_erf_matches_the_math_module(dtype, atol):
    """Within about two ulps of 1 (float32: pk-inline-cpu-math's; float64:
    glibc's vector erf, or its scalar one)."""
    import math

    @picokernel.kernel
    def gelu_exact(x_ref, e_ref, g_ref):
        x = x_ref[...]
        e_ref[...] = picokernel.erf(x)
        g_ref[...] = 0.5 * x * (1.0 + picokernel.erf(x * 0.7071067811865476))

    x = np.concatenate([np.linspace(-6, 6, 4001),
                        [0.0, -0.0, 1e-30, np.inf, -np.inf, np.nan]]).astype(dtype)
    e, g = np.empty_like(x), np.empty_like(x)
    gelu_exact(x, e, g)
    want = np.array([math.erf(v) for v in x.astype(np.float64)])
    np.testing.assert_allclose(e, want, rtol=0, atol=atol)
    assert np.signbit(e[x == 0]).tolist() == np.signbit(x[x == 0]).tolist()
    finite = np.isfinite(x)
    xf = x[finite].astype(np.float64)
    want_g = 0.5 * xf * (1.0 + np.array([math.erf(v * 0.7071067811865476) for v in xf]))
    # 1 + erf cancels for negative x: an ulp of erf near -1, times |x / 2|
    # up to 3, is absolute error that no erf can avoid.
    np.testing.assert_allclose(g[finite], want_g, rtol=4 * np.finfo(dtype).eps,
                               atol=atol + 3 * np.finfo(dtype).eps)


def ordered_bits(a):
    """float32 values as integers in the floats' order: the distance of two
    is their distance in ulps (subnormals and the zeros included)."""
    bits = a.view(np.int32).astype(np.int64)
    return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)


@pytest.mark.parametrize("name, max_ulps", [("exp", 2), ("log", 2), ("tanh", 2),
                                             ("sigmoid", 3), ("erf", 2)])
def test_float32_math_is_inline_and_within_a_few_ulp_everywhere(name, max_ulps):
    """pk-inline-cpu-math's polynomials against the correctly rounded result
    (float64 rounded to float32) over every 127th float32 bit pattern: both
    signs, subnormals, the ends of the range, NaN and the infinities (erf,
    whose reference is math.erf per element: every 2032nd)."""
    import math

    functions = {"exp": np.exp, "log": np.log, "tanh": np.tanh,
                 "sigmoid": picokernel.sigmoid, "erf": picokernel.erf}

    def body(x_ref, o_ref):
        o_ref[...] = functions[name](x_ref[...])

    body.__name__ = name
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 88.72, 88.73,
                        -87.33, -103.97, -104.0, 3.4e38, -3.4e38, 1.1754944e-38], np.float32)
    stride = 2032 if name == "erf" else 127
    x = np.concatenate([np.arange(0, 2**32, stride, dtype=np.uint64).astype(np.uint32)
                        .view(np.float32), special])
    o = np.empty_like(x)
    k = picokernel.kernel(body)
    k(x, o)
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        if name == "sigmoid":
            want = 1 / (1 + np.exp(-x64))
        elif name == "erf":
            want = np.vectorize(math.erf, otypes=[np.float64])(x64)
        else:
            want = functions[name](x64)
        want = want.astype(np.float32)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(o), nan)
    ulps = np.abs(ordered_bits(o[~nan]) - ordered_bits(want[~nan]))
    assert ulps.max() <= max_ulps, (x[~nan][np.argmax(ulps)], ulps.max())
    # Exact where libm is: the zeros keep their sign, the limits are exact.
    tail = o[-len(special):]
    np.testing.assert_array_equal(np.signbit(tail[:2]),
                                  [False, False] if name in ("exp", "sigmoid")
                                  else [False, True] if name in ("tanh", "erf")
                                  else [True, True])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(tail[2:5], want[-len(special) + 2:-len(special) + 5])
    # Arithmetic, no library call left.
    llvm = k.lower(x, o, stage="llvm")
    assert not re.search(r"llvm\.intr\.(exp|log)|@(exp|log|tanh|erf)f\b", llvm)


def test_float64_exp_is_inline_and_within_two_ulp():
    """Cephes' Pade form (libmvec's vector exp is 3 ulp off): against
    math.exp over the whole range, subnormal results and overflow included."""
    import math

    @picokernel.kernel
    def k(x_ref, o_ref):
        o_ref[...] = np.exp(x_ref[...])

    rng = np.random.default_rng(9)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 709.78, 709.79, -745.13, -745.14, -746.0]
    x = np.concatenate([np.sign(rng.standard_normal(100_000)) *
                        10.0 ** rng.uniform(-300, 2.9, 100_000),
                        rng.uniform(-745.5, -700, 20_000), rng.uniform(700, 709.8, 2_000),
                        special])
    o = np.empty_like(x)
    k(x, o)

    def exact(v):
        if np.isnan(v):
            return np.nan
        try:
            return math.exp(v)
        except OverflowError:
            return np.inf

    want = np.array([exact(v) for v in x])
    np.testing.assert_array_equal(np.isnan(o), np.isnan(want))
    finite = np.isfinite(want)
    np.testing.assert_array_equal(o[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
    ulps = np.abs(o[finite] - want[finite]) / np.spacing(want[finite])
    assert ulps.max() <= 2, x[finite][np.argmax(ulps)]
    assert "llvm.intr.exp" not in k.lower(x, o, stage="llvm")
