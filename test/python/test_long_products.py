"""Products with a vector over a long K (pk-vectorize-matvec sums K in
blocks, the blocks' partials combined pairwise): held to NumPy's accuracy
on data that makes running sums drift (all positive), exact around every
block edge (small integers: any summation order gives NumPy's result),
static and dynamic, every float dtype, fused consumers, views."""

import ml_dtypes
import numpy as np
import pytest

import picokernel
from matmul_oracle import expected, integers, product_like


def product(a, b, o):
    o[...] = a[...] @ b[...]


KINDS = {
    "x @ A": lambda k, n: ((k,), (k, n)),
    "A @ x": lambda k, n: ((n, k), (k,)),
    "x @ y": lambda k, n: ((k,), (k,)),
}


def relative_error(result, a, b):
    """max |result - exact| / (|a| @ |b|): the error in units of the sum's
    condition, as error bounds of summation state it."""
    # (Extended precision: float64 sums are checked too. NumPy has no
    # matmul loop for it; the products of two float32 or float64 values
    # are exact in it or nearly so, and the sums 11 bits finer.)
    wide = np.longdouble
    a_wide, b_wide = a.astype(wide), b.astype(wide)
    if a.ndim == 1 and b.ndim == 1:
        exact = np.sum(a_wide * b_wide)
        condition = np.sum(np.abs(a_wide * b_wide))
    elif a.ndim == 1:
        exact = np.sum(a_wide[:, None] * b_wide, axis=0)
        condition = np.sum(np.abs(a_wide[:, None] * b_wide), axis=0)
    else:
        exact = np.sum(a_wide * b_wide, axis=1)
        condition = np.sum(np.abs(a_wide * b_wide), axis=1)
    return float(np.max(np.abs(result.astype(wide) - exact) / condition))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype, k", [(np.float32, 2**20), (np.float64, 2**18)],
                         ids=["float32", "float64"])
def test_as_accurate_as_numpy(kind, dtype, k):
    """A running sum over 2^20 positive products loses about 2^10 eps (x @ A
    did, 12 times NumPy's error); in blocks the error stays a few eps."""
    rng = np.random.default_rng(3)
    a_shape, b_shape = KINDS[kind](k, 16)
    a, b = rng.random(a_shape).astype(dtype), rng.random(b_shape).astype(dtype)
    o = product_like(a, b)
    picokernel.kernel(product)(a, b, o)
    eps = np.finfo(dtype).eps
    ours, numpys = relative_error(o, a, b), relative_error(a @ b, a, b)
    assert ours <= max(2 * numpys, 16 * eps), (ours / eps, numpys / eps)


@pytest.mark.parametrize("a_shape, b_shape", [((16, 2**18), (2**18, 16)),
                                              ((2, 16, 2**17), (2, 2**17, 32))],
                         ids=["2-D", "batched"])
def test_matrix_products_sum_chunks_of_k_on_their_own(a_shape, b_shape):
    """Packed matmuls add each chunk of K, summed from zero in registers,
    to C (as BLAS does), not every product to C's running sum."""
    rng = np.random.default_rng(4)
    a = rng.random(a_shape).astype(np.float32)
    b = rng.random(b_shape).astype(np.float32)
    o = product_like(a, b)
    picokernel.kernel(product)(a, b, o)
    wide = np.longdouble
    exact = np.einsum("...ik,...kj->...ij", a.astype(wide), b.astype(wide))
    # (All positive: the condition is the result.)
    ours = np.max(np.abs(o.astype(wide) - exact) / exact)
    numpys = np.max(np.abs((a @ b).astype(wide) - exact) / exact)
    eps = np.finfo(np.float32).eps
    assert ours <= max(2 * numpys, 16 * eps), (ours / eps, numpys / eps)


# Around the blocks of x @ A (1024 rows) and of A @ x and dot products
# (8192): below two blocks (one sum), exact multiples, remainders, many
# blocks.
LENGTHS = [2047, 2048, 2049, 3073, 16383, 16384, 16385, 40_003]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_exact_around_block_edges(kind, dynamic):
    rng = np.random.default_rng(5)
    kernel = picokernel.kernel(product, dynamic=dynamic)
    for k in LENGTHS:
        for n in [3, 37]:
            a_shape, b_shape = KINDS[kind](k, n)
            a = integers(rng, a_shape, np.float32)
            b = integers(rng, b_shape, np.float32)
            o = product_like(a, b)
            kernel(a, b, o)
            np.testing.assert_array_equal(o, a @ b, err_msg=f"{kind} k={k} n={n}")
    if dynamic:
        assert kernel.cache_info().misses == 1


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float64],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("kind", KINDS)
def test_other_float_dtypes(kind, dtype):
    rng = np.random.default_rng(7)
    a_shape, b_shape = KINDS[kind](5000, 9)
    a, b = integers(rng, a_shape, dtype, -2, 3), integers(rng, b_shape, dtype, -2, 3)
    o = product_like(a, b, dtype=np.float32 if dtype == ml_dtypes.bfloat16 else None)
    picokernel.kernel(product)(a, b, o)
    np.testing.assert_array_equal(o, expected(a, b, dtype))


def test_fused_consumers_views_and_an_output_that_is_an_operand():
    @picokernel.kernel
    def affine(x, a, bias, o):
        o[...] = (x[...] @ a[...]) * 2 + bias[...]

    @picokernel.kernel
    def update(a, x):
        x[:4] = a[...] @ x[...]

    rng = np.random.default_rng(9)
    k = 5000
    whole = integers(rng, (k, 64), np.float32)
    a = whole[:, ::2]  # strided: runs on a copy
    x, bias = integers(rng, k, np.float32), integers(rng, 32, np.float32)
    o = np.empty(32, np.float32)
    affine(x, a, bias, o)
    np.testing.assert_array_equal(o, (x @ a) * 2 + bias)
    m = integers(rng, (4, 20_000), np.float32)
    y = integers(rng, 20_000, np.float32)
    want = m @ y
    update(m, y)
    np.testing.assert_array_equal(y[:4], want)


def test_special_values_propagate():
    k = 40_000
    for kind in KINDS:
        a_shape, b_shape = KINDS[kind](k, 5)
        a, b = np.ones(a_shape, np.float32), np.ones(b_shape, np.float32)
        a.reshape(-1)[12_345] = np.nan
        b.reshape(-1)[-1] = np.inf
        o = product_like(a, b)
        picokernel.kernel(product)(a, b, o)
        np.testing.assert_array_equal(o, a @ b, err_msg=kind)
