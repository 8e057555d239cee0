"""Operands and NumPy's results for the matmul tests of every backend.

Floating-point operands hold small integers, so that every partial sum is
exact and any summation order gives NumPy's result bit for bit.
"""

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
