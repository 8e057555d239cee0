"""`@` against NumPy for thin products: a few rows times a matrix (a small
batch of inputs through a layer; tiles of all its rows) and many rows times
a matrix of up to a vector's lanes of columns (tiles of one vector per
row, which read A in place where their rows divide M), static and dynamic,
over dtypes, batches, layouts, aliasing and epilogues (operands from
matmul_oracle: small integers, so that any summation order gives NumPy's
result bit for bit). `matmul` compiles per shape, `dynamic_matmul` once
for every size.
"""

import ml_dtypes
import numpy as np
import pytest

import picokernel
from matmul_oracle import (check_dynamic_with_threads, computed, expected,
                           integers)


@picokernel.kernel(dynamic=False)
def matmul(a, b, o):
    o[...] = a[...] @ b[...]


@picokernel.kernel(dynamic=False)
def matmul_bias_relu(a, b, bias, o):
    o[...] = np.maximum(a[...] @ b[...] + bias[...], 0)


# (M, K, N): a few rows (2 to 7) and a few columns (2 to 15) with many of
# the other, sizes that the tiles divide and that they don't (K not a
# multiple of 4, N or M not of 32), a few of both (tiles of all of them;
# 7 x 300 x 7 is below the packing threshold: a loop nest), and long K.
FEW_ROWS = [(2, 64, 64), (3, 100, 70), (4, 1024, 1024), (5, 7, 33),
            (7, 513, 257), (6, 4, 32)]
FEW_COLUMNS = [(64, 64, 2), (1000, 300, 12), (100, 100, 5), (33, 9, 3),
               (1024, 1024, 8), (70, 513, 15), (129, 16, 7)]
BOTH = [(2, 4096, 2), (7, 300, 7), (4, 1000, 15), (15, 1000, 4)]


@pytest.mark.parametrize("m,k,n", FEW_ROWS + FEW_COLUMNS + BOTH)
def test_float32_shapes(rng, m, k, n):
    a = integers(rng, (m, k), np.float32)
    b = integers(rng, (k, n), np.float32)
    np.testing.assert_array_equal(computed(matmul, a, b), a @ b)


@pytest.mark.parametrize("m,k,n", FEW_ROWS + FEW_COLUMNS)
def test_dynamic_shapes_in_one_kernel(rng, m, k, n):
    # One kernel of dynamic sizes for every shape: the run-time choice
    # between tiles of two vectors per row, of one and the loop nest.
    a = integers(rng, (m, k), np.float32)
    b = integers(rng, (k, n), np.float32)
    np.testing.assert_array_equal(computed(dynamic_matmul, a, b), a @ b)


@picokernel.kernel(dynamic=True)
def dynamic_matmul(a, b, o):
    o[...] = a[...] @ b[...]


@pytest.mark.parametrize("threads", ["1", "2"])
def test_dynamic_thin_products_with_threads(threads):
    check_dynamic_with_threads(threads, [
        ((3, 300), (300, 100)), ((200, 300), (300, 6)), ((7, 40), (40, 9)),
        ((2, 8), (8, 4096)), ((4096, 8), (8, 2))])


@pytest.mark.parametrize("dtype", [np.float64, np.float16, ml_dtypes.bfloat16,
                                   np.int64, np.int32, np.int16, np.int8,
                                   np.bool_])
@pytest.mark.parametrize("m,k,n", [(3, 70, 65), (129, 70, 5), (200, 33, 12),
                                   (6, 3000, 5)])
def test_dtypes(rng, dtype, m, k, n):
    a = integers(rng, (m, k), dtype, -2, 3)
    b = integers(rng, (k, n), dtype, -2, 3)
    np.testing.assert_array_equal(computed(matmul, a, b), expected(a, b, dtype))


@pytest.mark.parametrize("shapes", [
    ((3, 4, 300), (3, 300, 200)), ((3, 200, 300), (3, 300, 5)),
    ((2, 3, 5, 64), (3, 64, 96)), ((2, 3, 96, 64), (64, 6)),
    ((5, 64), (4, 64, 96)), ((4, 96, 64), (64, 3))])
def test_batches(rng, shapes):
    a = integers(rng, shapes[0], np.float32)
    b = integers(rng, shapes[1], np.float32)
    np.testing.assert_array_equal(computed(matmul, a, b), a @ b)


def test_views_and_transposes(rng):
    base = integers(rng, (600, 260), np.float32)
    other = integers(rng, (260, 40), np.float32)
    for a, b in [(base[:8:2], other[:, ::3]), (base[::2, 1:], other[1:, :24:3]),
                 (other.T[:5], base.T[:, :40]), (base[::-3, ::-1], other[::-1, :9])]:
        np.testing.assert_array_equal(computed(matmul, a, b), a @ b)
    # Sizes the tiles divide, with one panel of rows (or columns): the
    # operand read in place (no pack) is a strided or transposed view.
    big = integers(rng, (512, 256), np.float32)
    for a, b in [(big[:4], big[::2, ::2]), (big[:4, ::-1], big[:128].T),
                 (big[::2], big[::2, :8]), (big.T[:, ::2], big[::-2, ::32]),
                 (big[::-2, ::-1], big[::2, 1:6]), (big.T, big[:, :3].copy()),
                 (big[:96:3, 1:], big[:255, ::-64]), (big[:6, ::2], big[::4, :4])]:
        np.testing.assert_array_equal(computed(matmul, a, b), a @ b)


def test_output_is_an_operand(rng):
    # o is a itself: every element of a is read before o's is written
    # (528 x 8: A read in place, in tiles of one vector per row).
    for m, k in [(4, 256), (300, 12), (528, 8), (480, 4)]:
        a = integers(rng, (m, k), np.float32)
        b = integers(rng, (k, k), np.float32)
        want = a @ b
        matmul(a, b, a)
        np.testing.assert_array_equal(a, want)


@pytest.mark.parametrize("m,k,n", [(4, 256, 512), (500, 256, 6), (3, 33, 70),
                                   (480, 256, 8), (1009, 64, 2)])
def test_epilogue(rng, m, k, n):
    a = integers(rng, (m, k), np.float32)
    b = integers(rng, (k, n), np.float32)
    bias = integers(rng, (n,), np.float32)
    o = np.empty((m, n), np.float16)
    matmul_bias_relu(a, b, bias, o)
    np.testing.assert_array_equal(o, np.maximum(a @ b + bias, 0).astype(np.float16))


def test_special_values(rng):
    a = integers(rng, (300, 64), np.float32)
    b = integers(rng, (64, 6), np.float32)
    a[3, 5], a[7, 9], b[11, 2] = np.nan, np.inf, -np.inf
    with np.errstate(invalid="ignore"):
        want = a @ b
    np.testing.assert_array_equal(computed(matmul, a, b), want)
    np.testing.assert_array_equal(computed(matmul, b.T.copy(), a.T.copy()), want.T)


@pytest.mark.parametrize("kernel", [matmul, dynamic_matmul], ids=["static", "dynamic"])
@pytest.mark.parametrize("m,k,n,dtype", [
    (4, 1 << 18, 32, np.float32), (1000, 1 << 16, 6, np.float32),
    (8, 1 << 18, 8, np.float32), (3, 100003, 5, np.float32),
    (7, 50000, 7, np.float32), (6, 1 << 16, 2, np.float32),
    (3, 100003, 3, np.float64)])
def test_long_sums_are_accurate(rng, kernel, m, k, n, dtype):
    # All positive: a running sum over K would lose ~K times the rounding
    # of one addition; each chunk of K sums from zero, as BLAS sums (with
    # dynamic sizes too, down to two rows and two columns).
    a = rng.random((m, k)).astype(dtype)
    b = rng.random((k, n)).astype(dtype)
    want = a.astype(np.longdouble) @ b.astype(np.longdouble)
    eps = np.finfo(dtype).eps
    error = float(np.abs(computed(kernel, a, b) - want).max() / np.abs(want).max())
    numpys = float(np.abs((a @ b) - want).max() / np.abs(want).max())
    assert error <= 4 * numpys + 2 * eps


def test_thin_products_are_vector_code(rng):
    for m, k, n in [(4, 256, 512), (512, 256, 4), (8, 4096, 8),
                    (1024, 256, 8), (1009, 256, 2)]:
        a = integers(rng, (m, k), np.float32)
        b = integers(rng, (k, n), np.float32)
        tiled = matmul.lower(a, b, np.empty((m, n), np.float32), stage="tiled")
        assert "vector.fma" in tiled, (m, k, n)
        assert "linalg.matmul" not in tiled, (m, k, n)
