"""`@` compiled once for every size (dynamic=True, and dynamic=None from
the second size): NumPy's results on both sides of every run-time choice
(packed or loop nest, register tiles that divide or pad, chunks of K and
column blocks, parallel or serial packs), for every dtype, batches, fused
elementwise consumers, views and outputs that alias an operand (products
with a vector: test_dynamic_matvec.py). Operands come from
matmul_oracle (small integers: any summation order gives NumPy's result bit
for bit)."""

import ml_dtypes
import numpy as np
import pytest

import picokernel
from matmul_oracle import (check_dynamic_with_threads, check_empty_and_zero_k,
                           check_output_is_an_operand, check_special_values,
                           check_views_and_transposes, expected, integers,
                           product_like)


def matmul_kernel(**options):
    @picokernel.kernel(**options)
    def matmul(a, b, o):
        o[...] = a[...] @ b[...]
    return matmul


# (M, K, N): below every packing condition (M < 8 rows, 2N < a tile's
# columns, K < 4, fewer than 2^15 multiply-adds), just at them, tiles that
# divide and that pad, K longer than one chunk (512 blocks of 4), N longer
# than one column block, and a tall product with packs past the parallel
# threshold.
SHAPES = [(2, 3, 4), (1, 1, 1), (7, 64, 64), (8, 4, 16), (64, 3, 64),
          (8, 64, 64), (32, 32, 32), (64, 64, 64), (31, 33, 35),
          (129, 70, 65), (16, 2100, 40), (40, 300, 600), (1000, 64, 33)]


def pattern(sizes):
    """What keys a dynamic kernel: which sizes are 0 or 1, which are equal."""
    return tuple(s if s < 2 else sizes.index(s) for s in sizes)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_one_compile_for_every_pattern(rng, dtype):
    matmul = matmul_kernel(dynamic=True)
    for m, k, n in SHAPES:
        a, b = integers(rng, (m, k), dtype), integers(rng, (k, n), dtype)
        o = product_like(a, b)
        matmul(a, b, o)
        np.testing.assert_array_equal(o, a @ b, err_msg=f"{(m, k, n)}")
    assert matmul.cache_info().misses == len({pattern(s) for s in SHAPES})
    assert matmul.cache_info().misses < len(SHAPES) / 2


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.int8,
                                   np.int16, np.int32, np.int64],
                         ids=lambda d: np.dtype(d).name)
def test_dtypes(rng, dtype):
    matmul = matmul_kernel(dynamic=True)
    for m, k, n in [(5, 3, 4), (64, 256, 96), (129, 70, 65)]:
        a, b = integers(rng, (m, k), dtype), integers(rng, (k, n), dtype)
        o = product_like(a, b)
        matmul(a, b, o)
        np.testing.assert_array_equal(o, expected(a, b, dtype))
    assert matmul.cache_info().misses == 1


def test_automatic_policy_compiles_twice(rng, monkeypatch, capfd):
    matmul = matmul_kernel()
    monkeypatch.setenv("PK_LOG_COMPILES", "1")
    for n in range(20, 220, 20):
        a, b = integers(rng, (n, n + 1), np.float32), integers(rng, (n + 1, 3 * n), np.float32)
        o = product_like(a, b)
        matmul(a, b, o)
        np.testing.assert_array_equal(o, a @ b)
    assert matmul.cache_info().misses == 2
    assert "dynamic sizes: shape of 'a'" in capfd.readouterr().err


@pytest.mark.parametrize("shapes", [((3, 40, 50), (3, 50, 60)),
                                    ((2, 7, 3), (2, 3, 5)),
                                    ((5, 64, 64), (5, 64, 64))])
def test_batched(rng, shapes):
    matmul = matmul_kernel(dynamic=True)
    for scale in [1, 2]:
        a = integers(rng, tuple(s * scale for s in shapes[0]), np.float64)
        b = integers(rng, (a.shape[0], a.shape[2], shapes[1][2] * scale), np.float64)
        o = product_like(a, b)
        matmul(a, b, o)
        np.testing.assert_array_equal(o, a @ b)
    assert matmul.cache_info().misses == 1


@picokernel.kernel(dynamic=True)
def matmul_bias_relu(a, b, bias, o):
    o[...] = np.maximum(a[...] @ b[...] + bias[...], 0)


@picokernel.kernel(dynamic=True)
def matmul_residual_into_a(a, b):
    a[...] = a[...] @ b[...] + a[...]


def test_elementwise_consumers(rng):
    for m, k, n in [(3, 4, 5), (64, 48, 96), (100, 37, 70)]:
        a, b = integers(rng, (m, k), np.float32), integers(rng, (k, n), np.float32)
        bias = integers(rng, (n,), np.float32)
        o = product_like(a, b)
        matmul_bias_relu(a, b, bias, o)
        np.testing.assert_array_equal(o, np.maximum(a @ b + bias, 0))
        square = integers(rng, (k, k), np.float32)
        c = integers(rng, (m, k), np.float32)
        want = c @ square + c
        matmul_residual_into_a(c, square)
        np.testing.assert_array_equal(c, want)
    assert matmul_bias_relu.cache_info().misses == 1


def test_views_transposes_aliasing_and_special_values(rng):
    matmul = matmul_kernel(dynamic=True)
    check_views_and_transposes(matmul, rng)
    for n in [5, 64, 100]:
        check_output_is_an_operand(matmul, rng, n)
    check_special_values(matmul, rng)
    check_empty_and_zero_k(matmul)
    a, b = integers(rng, (40, 30), np.float32), integers(rng, (30, 20), np.float32)
    a.flags.writeable = False
    np.testing.assert_array_equal(
        (lambda o: (matmul(a, b, o), o)[1])(product_like(a, b)), a @ b)


def test_empty_batches_of_any_layout_compile_once():
    # A batch of 0 with a permuted batch axis made a tile out of bounds.
    matmul = matmul_kernel(dynamic=True)
    for m, k, n in [(3, 5, 4), (6, 8, 7), (9, 11, 10)]:
        a = np.zeros((m, 0, k), np.float32).transpose(1, 0, 2)
        b = np.zeros((0, k, n), np.float32)
        o = np.zeros((0, m, n), np.float32)
        matmul(a, b, o)
        assert o.shape == (a @ b).shape
    assert matmul.cache_info().misses == 1


def test_output_of_another_layout(rng):
    matmul = matmul_kernel(dynamic=True)
    for m, k, n in [(9, 5, 33), (70, 64, 40)]:
        a, b = integers(rng, (m, k), np.float32), integers(rng, (k, n), np.float32)
        o = np.full((n, m), 7, np.float32).T  # column-major
        matmul(a, b, o)
        np.testing.assert_array_equal(o, a @ b)
        wide = np.full((m, 2 * n), 7, np.float32)
        matmul(a, b, wide[:, ::2])
        np.testing.assert_array_equal(wide[:, ::2], a @ b)
        np.testing.assert_array_equal(wide[:, 1::2], 7)


@pytest.mark.parametrize("threads", ["1", "3"])
def test_thread_counts(threads):
    check_dynamic_with_threads(
        threads, [((m, k), (k, n))
                  for m, k, n in [(8, 4, 16), (200, 300, 100), (513, 65, 97)]])
