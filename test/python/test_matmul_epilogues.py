"""Elementwise epilogues of packed matmuls against NumPy: each runs on the
register tiles of C while they are in registers (pk-vectorize-packed-matmul),
over every op class (arithmetic, comparisons and selects, math calls,
integer division and bit operations, casts), the loop nests around the tiles
(row panels, blocks of N, batches, any thread count), C's element types, and
the layouts of the arrays the epilogue reads (broadcasts, views, the output
itself, transposed). Operands are small integers, so that the products are
exact in any summation order.
"""

import math
import re

import ml_dtypes
import numpy as np
import pytest

import picokernel
from matmul_oracle import integers


def erf(x):
    if isinstance(x, np.ndarray):
        return np.vectorize(math.erf, otypes=[x.dtype])(x)
    return picokernel.erf(x)


# Bodies over the product x, an array r of x's shape and a row (bias) of
# x's last dimension; exact in float32 unless marked with a tolerance.
FLOAT_BODIES = {
    "relu": (lambda x, r, row: np.maximum(x + row, 0), 0),
    "select": (lambda x, r, row: np.where(x > r, x - row, r * 2), 0),
    "min_div": (lambda x, r, row: np.minimum(x, r) / (np.abs(row) + 1), 0),
    "nan_inf": (lambda x, r, row: x / (x - r) + np.maximum(r, np.nan), 0),
    "gelu_tanh": (lambda x, r, row: 0.5 * x * (1.0 + np.tanh(
        0.7978845608 * (x + 0.044715 * x ** 3))), 4e-6),
    "exp_log_sqrt": (lambda x, r, row: np.sqrt(np.abs(x)) + np.log1p(
        np.abs(r)) - np.exp(-np.abs(x) * 0.125), 4e-6),
    "erf": (lambda x, r, row: x * (1 + erf(x * 0.125)), 4e-6),
    "sigmoid_sin": (lambda x, r, row: 1 / (1 + np.exp(-x)) + np.sin(row), 4e-6),
}
INT_BODIES = {
    "floor_div_mod": lambda x, r, row: x // 3 - x % 5 + (r // (np.abs(row) + 1)),
    "min_max": lambda x, r, row: np.minimum(x * r, row) - np.maximum(x, -r * 3),
    "select_abs": lambda x, r, row: np.where(x > r, -x, np.abs(row)),
}

# (batch, M, K, N): row panels only; blocks of N (with 1 MiB of B per
# block, K = 1024 float32 makes 8 column panels of 16); batches.
LAYOUTS = [(None, 128, 64, 96), (None, 64, 1024, 512), (3, 64, 48, 96)]


def operands(rng, batch, m, k, n, dtype, out_dtype=None):
    lead = () if batch is None else (batch,)
    a = integers(rng, lead + (m, k), dtype)
    b = integers(rng, lead + (k, n), dtype)
    r = integers(rng, lead + (m, n), dtype)
    row = integers(rng, (n,), dtype)
    o = np.empty(lead + (m, n), out_dtype or dtype)
    return a, b, r, row, o


def kernel_of(body, cast=None):
    def apply(a, b, r, row, o):
        x = body(a[...] @ b[...], r[...], row[...])
        o[...] = x if cast is None else x.astype(cast)
    return picokernel.kernel(apply)


def want_of(body, a, b, r, row, dtype):
    with np.errstate(all="ignore"):
        return np.asarray(body(a @ b, r, row)).astype(dtype)


@pytest.mark.parametrize("layout", LAYOUTS, ids=["panels", "n_blocks", "batches"])
@pytest.mark.parametrize("name", FLOAT_BODIES)
def test_float_epilogues(rng, name, layout):
    body, rtol = FLOAT_BODIES[name]
    for dtype in (np.float32, np.float64):
        a, b, r, row, o = operands(rng, *layout, dtype)
        kernel_of(body)(a, b, r, row, o)
        want = want_of(body, a, b, r, row, dtype)
        np.testing.assert_allclose(o, want, rtol=rtol, atol=rtol, equal_nan=True)


@pytest.mark.parametrize("layout", LAYOUTS, ids=["panels", "n_blocks", "batches"])
@pytest.mark.parametrize("name", INT_BODIES)
def test_integer_epilogues(rng, name, layout):
    body = INT_BODIES[name]
    for dtype in (np.int32, np.int64):
        a, b, r, row, o = operands(rng, *layout, dtype)
        kernel_of(body)(a, b, r, row, o)
        np.testing.assert_array_equal(o, want_of(body, a, b, r, row, dtype))


@pytest.mark.parametrize("cast", [np.float16, ml_dtypes.bfloat16, np.int8, np.bool_, np.float64])
def test_epilogues_that_cast(rng, cast):
    # Scaled by a quarter (exactly), into int8's range: casts of floats out
    # of an integer type's range are unspecified (docs/reliability.md).
    select = FLOAT_BODIES["select"][0]
    def body(x, r, row):
        return select(x, r, row) * 0.25
    a, b, r, row, o = operands(rng, None, 128, 64, 96, np.float32, cast)
    kernel_of(body, cast)(a, b, r, row, o)
    exact = body(a @ b, r, row)
    assert np.abs(exact).max() < 127
    np.testing.assert_array_equal(o, exact.astype(cast))


def test_float16_products_round_before_the_epilogue(rng):
    # float16 @ accumulates in float32 and rounds to float16; the epilogue
    # then computes in float16 (each op rounded), as NumPy does.
    body = FLOAT_BODIES["min_div"][0]
    a, b, r, row, o = operands(rng, None, 128, 64, 96, np.float16)
    r = (r / 3).astype(np.float16)
    kernel_of(body)(a, b, r, row, o)
    x = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(o, body(x, r, row))


@pytest.mark.parametrize("threads", ["1", "2"])
def test_epilogues_read_views_and_the_output(rng, threads, monkeypatch):
    # The epilogue reads r through a transposed or reversed view of the
    # output itself (the tiles write o while others still read it), and
    # broadcasts of a column and of a 0-d array.
    monkeypatch.setenv("OMP_NUM_THREADS", threads)
    body = FLOAT_BODIES["select"][0]
    kernel = kernel_of(body)
    for n in (128, 512):
        a, b, r, row, _ = operands(rng, None, n, 64, n, np.float32)
        for view in (lambda t: t.T, lambda t: t[::-1], lambda t: t[:, ::-1]):
            o = r.copy()
            want = want_of(body, a, b, view(o), row, np.float32)
            kernel(a, b, view(o), row, o)
            np.testing.assert_array_equal(o, want, err_msg=f"n={n}")
        column, scalar = r[:, :1].copy(), np.array(3.0, np.float32)
        o = np.empty_like(r)
        kernel(a, b, column, scalar, o)
        np.testing.assert_array_equal(o, want_of(body, a, b, column, scalar, np.float32))


def test_padded_products_keep_a_separate_epilogue(rng):
    # Tiles that do not divide C: the epilogue is a pass over C.
    body = FLOAT_BODIES["nan_inf"][0]
    for m, k, n in [(97, 64, 100), (130, 70, 33)]:
        a, b, r, row, o = operands(rng, None, m, k, n, np.float32)
        kernel_of(body)(a, b, r, row, o)
        np.testing.assert_array_equal(o, want_of(body, a, b, r, row, np.float32))


def test_epilogues_run_on_the_register_tiles(rng):
    # The tiled IR: the product's tile meets the epilogue's arithmetic in
    # vector registers, and no C-sized temporary is left. (96 x 96: register
    # tiles of 6 x 16 (AVX2) and of 8 x 32 (AVX-512) divide C.)
    body = FLOAT_BODIES["gelu_tanh"][0]
    args = operands(rng, None, 96, 64, 96, np.float32)
    tiled = kernel_of(body).lower(*args, stage="tiled")
    assert re.search(r"math.tanh %\S+ : vector<\d+xf32>", tiled), tiled
    assert "linalg.generic" not in tiled, tiled
