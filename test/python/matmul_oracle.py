"""Operands, NumPy's results and shared checks for the matmul tests of every
backend.

Floating-point operands hold small integers, so that every partial sum is
exact and any summation order gives NumPy's result bit for bit.
"""

import os
import subprocess
import sys

import numpy as np


def integers(rng, shape, dtype, low=-4, high=5):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        low, high = max(low, int(info.min)), min(high, int(info.max) + 1)
    return rng.integers(low, high, size=shape).astype(dtype)


def expected(a, b, dtype):
    # NumPy's float16 matmul accumulates in float32 and rounds once; so does
    # picokernel's. bfloat16 @ gives float32 (ml_dtypes has no matmul loop).
    if np.dtype(dtype) == np.float16:
        return (a.astype(np.float32) @ b.astype(np.float32)).astype(dtype)
    return a @ b


def product_like(a, b, fill=7, dtype=None):
    """An output array for a @ b, of its dtype unless given, holding `fill`
    (which a correct kernel overwrites)."""
    if dtype is None:
        if a.ndim > 1 and b.ndim > 1:
            dtype = np.matmul(a[..., :0, :], b[..., :, :0]).dtype
        else:
            dtype = np.matmul(a, b).dtype
    shape = np.matmul(np.zeros(a.shape, np.int8), np.zeros(b.shape, np.int8)).shape
    return np.full(shape, fill, dtype=dtype)


def computed(kernel, a, b, out_dtype=None):
    """`kernel(a, b, o)`'s o, from an output of product_like."""
    o = product_like(a, b, dtype=out_dtype)
    kernel(a, b, o)
    return o


def check_dynamic_with_threads(threads, shapes, dynamic=True):
    """In a process of OMP_NUM_THREADS=`threads` (the team size is fixed
    when the OpenMP runtime starts), a dynamic `@` kernel (or one of the
    policy `dynamic`) gives NumPy's result for operands of each pair of
    `shapes`."""
    code = (
        "import numpy as np, picokernel\n"
        f"@picokernel.kernel(dynamic={dynamic!r})\n"
        "def product(a, b, o):\n"
        "    o[...] = a[...] @ b[...]\n"
        "rng = np.random.default_rng(1)\n"
        f"for a_shape, b_shape in {shapes!r}:\n"
        "    a = rng.integers(-4, 5, a_shape).astype(np.float32)\n"
        "    b = rng.integers(-4, 5, b_shape).astype(np.float32)\n"
        "    o = np.empty(np.matmul(a, b).shape, np.float32)\n"
        "    product(a, b, o)\n"
        "    assert (o == a @ b).all(), (a_shape, b_shape)\n")
    env = dict(os.environ, OMP_NUM_THREADS=threads)
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=300)


def run_into(matmul, a, b):
    """matmul(a, b, o) into a fresh output of a @ b's shape and dtype."""
    o = product_like(a, b)
    matmul(a, b, o)
    return o


def check_views_and_transposes(matmul, rng):
    base = integers(rng, (300, 260), np.float32)
    other = integers(rng, (260, 300), np.float32)
    for a, b in [(base[::2, 1:], other[1:, ::3]), (other.T, base.T),
                 (base[::-1], other[:, ::-1])]:
        np.testing.assert_array_equal(run_into(matmul, a, b), a @ b)


def check_output_is_an_operand(matmul, rng, n):
    a = integers(rng, (n, n), np.float32)
    b = integers(rng, (n, n), np.float32)
    want = a @ b
    matmul(a, b, a)  # o aliases a: the product of the old a
    np.testing.assert_array_equal(a, want)
    c = integers(rng, (n, n), np.float32)
    want = c @ c
    matmul(c, c, c)
    np.testing.assert_array_equal(c, want)


def check_special_values(matmul, rng):
    a = integers(rng, (70, 64), np.float32)
    b = integers(rng, (64, 50), np.float32)
    a[3, 5] = np.inf
    a[10, :] = -np.inf
    b[7, 9] = np.nan
    b[:, 20] = 0.0
    a[20, 0] = -0.0
    with np.errstate(invalid="ignore"):
        got, want = run_into(matmul, a, b), a @ b
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    mask = ~np.isnan(want)
    np.testing.assert_array_equal(got[mask], want[mask])
    np.testing.assert_array_equal(np.signbit(got[mask]), np.signbit(want[mask]))


def check_empty_and_zero_k(matmul):
    for m, k, n in [(0, 40, 50), (40, 0, 50), (40, 50, 0)]:
        a = np.ones((m, k), np.float32)
        b = np.ones((k, n), np.float32)
        np.testing.assert_array_equal(run_into(matmul, a, b), a @ b)
