"""`//` and `%` (np.floor_divide, np.remainder) inside kernels give NumPy's
results, edge cases included, on the CPU and (where one exists) Vulkan."""

import warnings

import numpy as np
import pytest

import picokernel

BACKENDS = ["cpu"]
if picokernel.vulkan_available()[0]:
    BACKENDS.append("vulkan")


def numpy_quietly(function, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return function(*args)


def float_operands(dtype):
    """Every pair of edge cases, then random operands many binades apart
    (quotients far beyond 2^24, subnormals)."""
    with np.errstate(over="ignore"):  # 1e30 is inf in float16
        values = np.array([7.5, -7.5, 3.0, -3.0, 0.0, -0.0, 5.0, np.inf,
                           -np.inf, np.nan, -2.5, 0.25, 1e-30, 0.1, 1e30],
                          dtype=dtype)
    a, b = np.meshgrid(values, values)
    rng = np.random.default_rng(7)
    info = np.finfo(dtype)
    exponents = rng.uniform(np.log10(info.smallest_subnormal),
                            np.log10(info.max) - 1, (2, 5000))
    with np.errstate(all="ignore"):
        wide = (rng.standard_normal((2, 5000)) * 10.0 ** exponents).astype(dtype)
    return (np.concatenate([a.ravel(), wide[0]]),
            np.concatenate([b.ravel(), wide[1]]))


def integer_operands(dtype):
    info = np.iinfo(dtype)
    values = np.array([7, -7, 3, -3, 0, 1, -1, 2, info.min, info.max,
                       info.min + 1, 100 % (info.max + 1)], dtype=dtype)
    a, b = np.meshgrid(values, values)
    return a.ravel().copy(), b.ravel().copy()


def divide_and_remainder(a_ref, b_ref, q_ref, r_ref):
    a, b = a_ref[...], b_ref[...]
    q_ref[...] = a // b
    r_ref[...] = a % b


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_float_floor_division_matches_numpy_bit_for_bit(backend, dtype):
    """On Vulkan too: OpFRem is inexact, so the remainder is computed on the
    bits (pk-exact-remf-for-spirv). Subnormal results may be flushed to
    zero by a device (lavapipe keeps them)."""
    a, b = float_operands(dtype)
    q, r = np.empty_like(a), np.empty_like(a)
    picokernel.kernel(backend=backend)(divide_and_remainder)(a, b, q, r)
    np.testing.assert_array_equal(q, numpy_quietly(np.floor_divide, a, b))
    np.testing.assert_array_equal(r, numpy_quietly(np.remainder, a, b))
    # Signed zeros too: -0.0 // 5 is -0.0, 3 % -3 is -0.0 (a NaN's sign
    # bit means nothing: x86 makes negative NaNs, GPUs positive ones).
    for got, want in ((q, numpy_quietly(np.floor_divide, a, b)),
                      (r, numpy_quietly(np.remainder, a, b))):
        numbers = ~np.isnan(want)
        np.testing.assert_array_equal(np.signbit(got[numbers]),
                                      np.signbit(want[numbers]))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_integer_floor_division_matches_numpy(backend, dtype):
    """Including x // 0 == 0, x % 0 == 0 and MIN // -1 == MIN (NumPy warns
    and returns these; LLVM and SPIR-V would be undefined)."""
    a, b = integer_operands(dtype)
    q, r = np.empty_like(a), np.empty_like(a)
    picokernel.kernel(backend=backend)(divide_and_remainder)(a, b, q, r)
    np.testing.assert_array_equal(q, numpy_quietly(np.floor_divide, a, b))
    np.testing.assert_array_equal(r, numpy_quietly(np.remainder, a, b))
    assert q.dtype == r.dtype == dtype


def test_dtypes_scalars_and_ufuncs_follow_numpy():
    @picokernel.kernel
    def kernel(i_ref, f_ref, m_ref, o1_ref, o2_ref, o3_ref, o4_ref, o5_ref):
        i, f, m = i_ref[...], f_ref[...], m_ref[...]
        o1_ref[...] = i % 3          # int32 with a weak Python int
        o2_ref[...] = 7 // i         # reflected
        o3_ref[...] = i // f         # int32 with float32 -> float64
        o4_ref[...] = np.remainder(f, 0.75) + np.floor_divide(f, -2)
        o5_ref[...] = m // m         # bool // bool is int8

    i = np.array([-7, -1, 1, 5, 9], dtype=np.int32)
    f = np.array([-2.5, -0.5, 0.25, 4.0, 7.75], dtype=np.float32)
    m = np.array([True, True, True, True, True])
    expected = [i % 3, 7 // i, i // f, np.remainder(f, 0.75) + np.floor_divide(f, -2),
                m // m]
    outputs = [np.empty_like(e) for e in expected]
    kernel(i, f, m, *outputs)
    for output, want in zip(outputs, expected):
        assert output.dtype == want.dtype
        np.testing.assert_array_equal(output, want)


def test_compound_assignment_and_broadcasting():
    @picokernel.kernel
    def kernel(x_ref, period_ref, o_ref):
        o_ref[...] = x_ref[...]
        o_ref[...] %= period_ref[...]

    x = np.linspace(-10, 10, 24).reshape(4, 6)
    period = np.array([1.0, 2.0, 3.0, -1.5, 0.5, 7.0])
    o = np.empty_like(x)
    kernel(x, period, o)
    np.testing.assert_array_equal(o, x % period)
