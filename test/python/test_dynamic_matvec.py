"""Products with a vector compiled once for every size (dynamic=True):
pk-vectorize-matvec splits them at multiples of its tiles known at run time
and chooses parallel or serial tiles at run time. NumPy's results for
sizes around every tile (rows of 8, K and columns of 4 vectors), on both
sides of the parallel threshold, every dtype, batches, views, outputs
that are an operand, fused consumers and special values; one compile per
pattern of sizes. Operands from matmul_oracle (small integers: exact in
any summation order)."""

import ml_dtypes
import numpy as np
import pytest

import picokernel
from matmul_oracle import (check_dynamic_with_threads, expected, integers,
                           product_like)


def product(a, b, o):
    o[...] = a[...] @ b[...]


matmul = picokernel.kernel(product, dynamic=True)


def run(kernel, a, b):
    o = product_like(a, b)
    kernel(a, b, o)
    return o


# Rows below, at and past a tile of 8, K and columns below, at and past a
# tile of 64 float32 (AVX-512; 32 with AVX2), past the parallel threshold
# (2^15 multiply-adds) and below, and the rows a tile leaves over.
MATRIX_VECTOR = [(2, 3), (7, 63), (8, 64), (9, 65), (15, 129), (17, 200),
                 (300, 301), (1000, 7), (3, 4096), (1025, 129), (64, 1000)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_one_compile_for_every_size(rng, dtype):
    for kind in ["A @ x", "x @ A", "x @ y"]:
        kernel = picokernel.kernel(product, dynamic=True)
        for m, k in MATRIX_VECTOR:
            a, x = integers(rng, (m, k), dtype), integers(rng, (k,), dtype)
            y = integers(rng, (m,), dtype)
            left, right = {"A @ x": (a, x), "x @ A": (y, a),
                           "x @ y": (x, integers(rng, (k,), dtype))}[kind]
            np.testing.assert_array_equal(run(kernel, left, right),
                                          left @ right, err_msg=f"{kind} {m}x{k}")
        assert kernel.cache_info().misses == 1, kind


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.int8,
                                   np.int16, np.int32, np.int64],
                         ids=lambda d: np.dtype(d).name)
def test_dtypes(rng, dtype):
    kernel = picokernel.kernel(product, dynamic=True)
    for m, k in [(5, 3), (9, 300), (260, 100), (40, 1030)]:
        a, x = integers(rng, (m, k), dtype), integers(rng, (k,), dtype)
        y = integers(rng, (m,), dtype)
        for left, right in [(a, x), (y, a)]:
            np.testing.assert_array_equal(run(kernel, left, right),
                                          expected(left, right, dtype))


@pytest.mark.parametrize("shapes", [
    ((3, 130, 70), (70,)), ((70,), (3, 70, 130)), ((2, 3, 40, 72), (72,)),
    ((4, 2, 257), (257,)), ((5, 9, 65), (65,)), ((65,), (5, 65, 9))])
def test_batches(rng, shapes):
    a = integers(rng, shapes[0], np.float32)
    b = integers(rng, shapes[1], np.float32)
    np.testing.assert_array_equal(run(matmul, a, b), a @ b)


@pytest.mark.parametrize("kind", ["(b, m, K) @ (b, K, 1)", "(b, 1, K) @ (b, K, n)",
                                  "(m, K) @ (K, 1)", "(1, K) @ (K, n)",
                                  "(b, m, K) @ (K,)", "(K,) @ (b, K, n)"])
def test_batches_and_matrices_of_one_row_or_column_compile_once(rng, kind):
    """Batches of tiles: one compile serves every size (the unit sizes are
    part of the key), around the tiles and past two blocks of K."""
    kernel = picokernel.kernel(product, dynamic=True)
    for b, m, k in [(3, 9, 70), (2, 64, 65), (5, 8, 2049), (2, 17, 3),
                    (4, 130, 300), (2, 3, 17_000)]:
        shapes = {"(b, m, K) @ (b, K, 1)": ((b, m, k), (b, k, 1)),
                  "(b, 1, K) @ (b, K, n)": ((b, 1, k), (b, k, m)),
                  "(m, K) @ (K, 1)": ((m, k), (k, 1)),
                  "(1, K) @ (K, n)": ((1, k), (k, m)),
                  "(b, m, K) @ (K,)": ((b, m, k), (k,)),
                  "(K,) @ (b, K, n)": ((k,), (b, k, m))}[kind]
        a = integers(rng, shapes[0], np.float32)
        x = integers(rng, shapes[1], np.float32)
        np.testing.assert_array_equal(run(kernel, a, x), a @ x,
                                      err_msg=f"{kind}: {shapes}")
    assert kernel.cache_info().misses == 1


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32],
                         ids=lambda d: np.dtype(d).name)
def test_columns_the_tiles_leave_over(rng, dtype):
    """x @ A's columns past its tiles of 4 vectors (all of them below one
    tile) are masked steps of two vectors: every count of them, every K
    around a step and a block, one compile."""
    kernel = picokernel.kernel(product, dynamic=True)
    for k in [5, 7, 8, 9, 1025, 2049]:  # (never equal to n: one class)
        for n in [2, 3, 15, 16, 17, 31, 32, 33, 63, 64, 65, 130]:
            x, a = integers(rng, (k,), dtype), integers(rng, (k, n), dtype)
            np.testing.assert_array_equal(run(kernel, x, a), expected(x, a, dtype),
                                          err_msg=f"k={k} n={n}")
    assert kernel.cache_info().misses == 1


def test_empty_and_unit_sizes(rng):
    for m, k in [(0, 70), (70, 0), (0, 0), (1, 70), (70, 1), (1, 1)]:
        a = integers(rng, (m, k), np.float32)
        x, y = integers(rng, (k,), np.float32), integers(rng, (m,), np.float32)
        np.testing.assert_array_equal(run(matmul, a, x), a @ x)
        np.testing.assert_array_equal(run(matmul, y, a), y @ a)


def test_views_and_outputs_that_are_operands(rng):
    base = integers(rng, (300, 260), np.float32)
    x = integers(rng, (600,), np.float32)
    for a, v in [(base[::2, 1:], x[:259]), (base.T, x[::2]),
                 (base[:, ::-1], x[-260:][::-1]), (base[:77, :131], x[3:134])]:
        np.testing.assert_array_equal(run(matmul, a, v), a @ v)
    for v, a in [(x[:150], base[::2, 1:]), (x[::2][:260], base.T),
                 (x[-300:][::-1], base[:, ::-1]), (x[5:82], base[:77, :131])]:
        np.testing.assert_array_equal(run(matmul, v, a), v @ a)
    wide = np.full(2 * 300, 7, np.float32)
    matmul(base, x[:260], wide[::2])
    np.testing.assert_array_equal(wide[::2], base @ x[:260])
    np.testing.assert_array_equal(wide[1::2], 7)
    for n in [256, 77]:
        a = integers(rng, (n, n), np.float32)
        v = integers(rng, (n,), np.float32)
        want = a @ v
        matmul(a, v, v)  # the result overwrites the vector it is made from
        np.testing.assert_array_equal(v, want)
        v = integers(rng, (n,), np.float32)
        want = v @ a
        matmul(v, a, v)
        np.testing.assert_array_equal(v, want)


def test_fused_consumers(rng):
    @picokernel.kernel(dynamic=True)
    def layer(a, x, bias, o):
        o[...] = picokernel.maximum(a[...] @ x[...] + bias[...], 0)

    for m, k in [(9, 65), (300, 301), (1025, 129)]:
        a, x = integers(rng, (m, k), np.float32), integers(rng, (k,), np.float32)
        bias = integers(rng, (m,), np.float32)
        o = np.full(m, 7, np.float32)
        layer(a, x, bias, o)
        np.testing.assert_array_equal(o, np.maximum(a @ x + bias, 0))
    assert layer.cache_info().misses == 1


def test_special_values(rng):
    for m, k in [(9, 65), (300, 301)]:
        a = integers(rng, (m, k), np.float32)
        x = integers(rng, (k,), np.float32)
        a[3, 5] = np.inf
        a[5, :] = -np.inf
        x[7] = np.nan
        a[6, 0] = -0.0
        x[8] = 0.0
        for left, right in [(a, x), (x[:m] if m <= k else x, a[:, :m] if m <= k else a)]:
            with np.errstate(invalid="ignore"):
                got, want = run(matmul, left, right), left @ right
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
            mask = ~np.isnan(want)
            np.testing.assert_array_equal(got[mask], want[mask])


def test_sums_are_accurate(rng):
    # As the static kernel's: 64-product trees added in order.
    a = rng.standard_normal((67, 100003)).astype(np.float32)
    v = rng.standard_normal(100003).astype(np.float32)
    want = a.astype(np.float64) @ v.astype(np.float64)
    got = run(matmul, a, v)
    assert np.abs(got - want).max() <= 2 * np.abs((a @ v) - want).max() + 1e-3


@pytest.mark.parametrize("threads", ["1", "3"])
def test_thread_counts(threads):
    sizes = [(9, 65), (300, 301), (1025, 129), (3, 20000)]
    check_dynamic_with_threads(
        threads, [((m, k), (k,)) for m, k in sizes] +
        [((m,), (m, k)) for m, k in sizes])


def test_constant_slices_fix_some_sizes(rng):
    # Slices of a constant size make K (or the rows, or the columns) static
    # inside a kernel of dynamic sizes: one tile of K, whole tiles and a
    # rest, few rows, few columns.
    @picokernel.kernel(dynamic=True)
    def first_columns(a, x, o):
        o[...] = a[:, :64] @ x[:64]

    @picokernel.kernel(dynamic=True)
    def more_columns(a, x, o):
        o[...] = a[:, :70] @ x[:70]

    @picokernel.kernel(dynamic=True)
    def first_rows(x, a, o):
        o[...] = x[:8] @ a[:8]

    for m, k in [(9, 100), (300, 133), (64, 200)]:
        a, x = integers(rng, (m, k), np.float32), integers(rng, (k,), np.float32)
        o = np.full(m, 7, np.float32)
        first_columns(a, x, o)
        np.testing.assert_array_equal(o, a[:, :64] @ x[:64])
        more_columns(a, x, o)
        np.testing.assert_array_equal(o, a[:, :70] @ x[:70])
        y = integers(rng, (m,), np.float32)
        o = np.full(k, 7, np.float32)
        first_rows(y, a, o)
        np.testing.assert_array_equal(o, y[:8] @ a[:8])
    for kernel in [first_columns, more_columns, first_rows]:
        assert kernel.cache_info().misses == 1


def test_ahead_of_time(rng, tmp_path):
    # The object for dynamic sizes takes them as arguments and has the same
    # code (parallel or serial tiles chosen per call).
    import ctypes
    import re

    from test_dynamic_slices import ahead_of_time

    kernel = picokernel.kernel(product, dynamic=True)
    kernel(integers(rng, (9, 65), np.float32), integers(rng, (65,), np.float32),
           np.empty(9, np.float32))
    header, entry = ahead_of_time(kernel, "product", tmp_path)
    assert re.search(r"int pk_product\(int64_t n0, int64_t n1, const float \*\w+, "
                     r"const float \*\w+, float \*\w+\);", header), header
    pointer = ctypes.POINTER(ctypes.c_float)
    entry.argtypes = [ctypes.c_int64, ctypes.c_int64, pointer, pointer, pointer]
    for m, k in [(9, 65), (2, 3), (300, 301), (1025, 129), (64, 1000)]:
        a, x = integers(rng, (m, k), np.float32), integers(rng, (k,), np.float32)
        o = np.full(m, 7, np.float32)
        assert entry(m, k, a.ctypes.data_as(pointer), x.ctypes.data_as(pointer),
                     o.ctypes.data_as(pointer)) == 0
        np.testing.assert_array_equal(o, a @ x, err_msg=f"{m}x{k}")
