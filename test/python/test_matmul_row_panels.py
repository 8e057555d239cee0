"""`@` of a few rows times a layer's matrix (small batches of inference),
at every count of row panels: one (B read in place), a few (B's column
panels packed in the loop over them, in parallel) and many (B packed
first), with M static and with M dynamic against a static B (the
automatic policy's kernel after a second batch size: a run-time choice
between those three). NumPy's results for every dtype, sizes that the
tiles divide and that they pad, a fused epilogue, views of B and an
output that aliases an operand, on 1 and 3 threads. Operands come from
matmul_oracle (small integers: any summation order gives NumPy's result
bit for bit)."""

import ml_dtypes
import numpy as np
import pytest

import picokernel
from matmul_oracle import (check_dynamic_with_threads, expected, integers,
                           product_like)

# Rows: within one register tile's panel (6 rows with 256-bit vectors, 8
# with 512-bit ones), just past it, a few panels, at and past the most
# that pack B panel by panel (16), and many.
ROWS = [2, 5, 6, 7, 8, 9, 13, 16, 17, 24, 33, 64, 96, 97, 128, 129, 200]
# (K, N): divided by the tiles (K by 4; N by 16 and 32 columns), and not.
LAYERS = [(256, 512), (250, 500), (64, 40)]


def matmul_kernel(**options):
    @picokernel.kernel(**options)
    def matmul(a, b, o):
        o[...] = a[...] @ b[...]
    return matmul


def check_rows(matmul, rng, dtype, k, n, rows=ROWS):
    b = integers(rng, (k, n), dtype)
    for m in rows:
        a = integers(rng, (m, k), dtype)
        o = product_like(a, b)
        matmul(a, b, o)
        np.testing.assert_array_equal(o, expected(a, b, dtype),
                                      err_msg=f"{(m, k, n)}")


@pytest.mark.parametrize("layer", LAYERS, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("dynamic", [None, False])
def test_float32_rows(rng, layer, dynamic):
    matmul = matmul_kernel(dynamic=dynamic)
    check_rows(matmul, rng, np.float32, *layer)
    if dynamic is None:  # the first size static, then one with M dynamic
        assert matmul.cache_info().misses == 2


@pytest.mark.parametrize("dtype", [np.float64, np.float16, ml_dtypes.bfloat16,
                                   np.int8, np.int32, np.int64],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("dynamic", [None, False])
def test_dtypes(rng, dtype, dynamic):
    # float16 and bfloat16 multiply in float32: the cast of B is packed
    # panel by panel, never read in place.
    matmul = matmul_kernel(dynamic=dynamic)
    check_rows(matmul, rng, dtype, 256, 512, rows=[3, 5, 9, 17, 33, 129])
    if dynamic is None:
        assert matmul.cache_info().misses == 2


@picokernel.kernel
def dense_relu(x, w, bias, o):
    o[...] = picokernel.maximum(x[...] @ w[...] + bias[...], 0.0)


def test_epilogue(rng):
    w = integers(rng, (256, 512), np.float32)
    bias = integers(rng, (512,), np.float32)
    for m in [3, 7, 12, 40, 150]:
        x = integers(rng, (m, 256), np.float32)
        o = np.full((m, 512), 7, np.float32)
        dense_relu(x, w, bias, o)
        np.testing.assert_array_equal(o, np.maximum(x @ w + bias, 0))


def test_views_of_the_matrix_and_aliasing(rng):
    matmul = matmul_kernel()
    base = integers(rng, (512, 300), np.float32)
    for w in [base[:256, :256].T, base[::2, 1:257],
              base[:256, ::-1][:, :256]]:
        for m in [4, 20, 140]:
            x = integers(rng, (m, w.shape[0]), np.float32)
            o = product_like(x, w)
            matmul(x, w, o)
            np.testing.assert_array_equal(o, x @ w, err_msg=f"{m} {w.strides}")
    square = integers(rng, (256, 256), np.float32)
    for m in [5, 30, 256]:
        x = integers(rng, (m, 256), np.float32)
        want = x @ square
        matmul(x, square, x)  # o is x: the product of the old x
        np.testing.assert_array_equal(x, want)


@pytest.mark.parametrize("threads", ["1", "3"])
def test_thread_counts(threads):
    # The automatic policy: M dynamic from the second size, B static.
    check_dynamic_with_threads(
        threads, [((m, 256), (256, 512)) for m in [3, 8, 9, 40, 128, 129, 300]],
        dynamic=None)
