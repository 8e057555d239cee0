"""Outputs (and inputs) whose sizes follow others' by a constant:
`o[...] = x[1:] - x[:-1]` (o has one element less than x), `o[1:-1] =
x[...]` (two more), valid convolutions (`n - 2`). One compile serves every
size where the relation holds: the variant's key computes o's size from
x's, the kernel's IR derives o's size class from x's (and the C entry point
takes x's size only). Sizes that break the relation still raise NumPy's
error; relations that are not a constant difference (`x[::2]`) stay
static; independent groups of related sizes stay independent."""

import re

import numpy as np
import pytest

import picokernel
from random_language import DTYPES
from test_dynamic_slices import ahead_of_time


def values(rng, shape, dtype):
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    return rng.integers(0, 50, shape).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_neighbour_sums_compile_once(dtype):
    @picokernel.kernel(dynamic=True)
    def pairs(x, o):
        o[...] = x[1:] + x[:-1]

    rng = np.random.default_rng(0)
    for n in [3, 4, 5, 17, 64, 65, 1000, 4099]:
        x = values(rng, n, dtype)
        o = np.zeros(n - 1, dtype)
        pairs(x, o)
        np.testing.assert_array_equal(o, x[1:] + x[:-1], err_msg=f"n={n}")
    assert pairs.cache_info().misses == 1


def test_short_sizes_agree_with_numpy():
    # o of 0 or 1 elements (x of 1 or 2) is a size of its own (0 and 1 stay
    # in every key); all agree with NumPy.
    @picokernel.kernel(dynamic=True)
    def diff(x, o):
        o[...] = x[1:] - x[:-1]

    rng = np.random.default_rng(1)
    for n in [1, 2, 3, 10, 2, 1, 11]:
        x = rng.standard_normal(n)
        o = np.full(n - 1, np.nan)
        diff(x, o)
        np.testing.assert_array_equal(o, x[1:] - x[:-1], err_msg=f"n={n}")
    assert diff.cache_info().misses <= 3


def test_automatic_policy_relates_the_sizes(capfd, monkeypatch):
    monkeypatch.setenv("PK_LOG_COMPILES", "1")

    @picokernel.kernel
    def diff(x, o):
        o[...] = x[1:] - x[:-1]

    rng = np.random.default_rng(2)
    for n in range(10, 40):
        x = rng.standard_normal(n).astype(np.float32)
        o = np.empty(n - 1, np.float32)
        diff(x, o)
        np.testing.assert_array_equal(o, x[1:] - x[:-1])
    assert diff.cache_info().misses == 2
    log = capfd.readouterr().err
    assert "(x: (n,) float32, o: (n - 1,) float32)" in log, log


def test_larger_outputs_and_valid_convolutions():
    @picokernel.kernel(dynamic=True)
    def pad(x, o):
        o[...] = 0
        o[1:-1] = x[...]

    @picokernel.kernel(dynamic=True)
    def convolve(x, w, o):
        o[...] = x[:-2] * w[0] + x[1:-1] * w[1] + x[2:] * w[2]

    rng = np.random.default_rng(3)
    w = np.array([1.0, -2.0, 1.0])
    # (Convolutions of 1 element (n = 3) would be a size of their own.)
    for n in [4, 9, 100, 1001]:
        x = rng.standard_normal(n)
        o = np.full(n + 2, np.nan)
        pad(x, o)
        np.testing.assert_array_equal(o, np.pad(x, 1))
        o = np.full(n - 2, np.nan)
        convolve(x, w, o)
        np.testing.assert_allclose(
            o, np.convolve(x, w[::-1], mode="valid"), rtol=1e-12, atol=1e-12)
    assert pad.cache_info().misses == 1
    assert convolve.cache_info().misses == 1


def test_rows_of_a_matrix_and_chains_of_relations():
    # o has one row less than x and q two; p is o sliced again (o's size is
    # derived, and so is its slice's).
    @picokernel.kernel(dynamic=True)
    def steps(x, o, q, p):
        o[...] = x[1:, :] - x[:-1, :]
        q[...] = x[2:, :] - x[:-2, :]
        p[...] = o[1:, :] * 2

    rng = np.random.default_rng(4)
    # (Sizes apart: equal sizes are a key of their own.)
    for n, m in [(6, 13), (7, 20), (40, 33), (9, 100)]:
        x = rng.standard_normal((n, m))
        o, q = np.empty((n - 1, m)), np.empty((n - 2, m))
        p = np.empty((n - 2, m))
        steps(x, o, q, p)
        np.testing.assert_array_equal(o, x[1:] - x[:-1])
        np.testing.assert_array_equal(q, x[2:] - x[:-2])
        np.testing.assert_array_equal(p, (x[1:] - x[:-1])[1:] * 2)
    assert steps.cache_info().misses == 1


def test_a_derived_size_sliced_again():
    # x is o's size less 2 (o[1:-1] = x), and x is sliced in turn.
    @picokernel.kernel(dynamic=True)
    def both(x, o, q):
        o[...] = 0
        o[1:-1] = x[...]
        q[...] = x[1:] * 3

    rng = np.random.default_rng(5)
    for n in [3, 10, 77, 4]:
        x = rng.standard_normal(n)
        o, q = np.full(n + 2, np.nan), np.full(n - 1, np.nan)
        both(x, o, q)
        np.testing.assert_array_equal(o, np.pad(x, 1))
        np.testing.assert_array_equal(q, x[1:] * 3)
    assert both.cache_info().misses == 1


def test_independent_groups_stay_independent():
    # x and o are related, y and p are; the two groups (and z) vary apart:
    # one compile.
    @picokernel.kernel(dynamic=True)
    def two(x, y, z, o, p, r):
        o[...] = x[1:] - x[:-1]
        p[...] = y[2:] * 2
        r[...] = z[...] + 1

    rng = np.random.default_rng(6)
    for n, m, k in [(10, 37, 5), (11, 40, 9), (57, 20, 1000), (5, 9, 13)]:
        x, y, z = (rng.standard_normal(s) for s in (n, m, k))
        o, p, r = np.empty(n - 1), np.empty(m - 2), np.empty(k)
        two(x, y, z, o, p, r)
        np.testing.assert_array_equal(o, x[1:] - x[:-1])
        np.testing.assert_array_equal(p, y[2:] * 2)
        np.testing.assert_array_equal(r, z + 1)
    assert two.cache_info().misses == 1


def test_equal_sizes_and_fixed_slices_next_to_relations():
    # Square arrays (equal sizes are a key of their own: one more compile),
    # and a fixed slice x[:4] next to a relation (its size stays static).
    @picokernel.kernel(dynamic=True)
    def corners(x, o):
        o[...] = x[1:, 1:] - x[:-1, :-1]

    @picokernel.kernel(dynamic=True)
    def head(x, o, h):
        o[...] = x[1:] - x[:-1]
        h[...] = x[:4] * 2

    rng = np.random.default_rng(8)
    for n, m in [(4, 9), (7, 7), (8, 8), (9, 10), (12, 12), (30, 17)]:
        x = rng.standard_normal((n, m))
        o = np.empty((n - 1, m - 1))
        corners(x, o)
        np.testing.assert_array_equal(o, x[1:, 1:] - x[:-1, :-1])
    assert corners.cache_info().misses == 2
    for n in [10, 11, 12, 13, 100]:
        x = rng.standard_normal(n)
        o, h = np.empty(n - 1), np.empty(4)
        head(x, o, h)
        np.testing.assert_array_equal(o, x[1:] - x[:-1])
        np.testing.assert_array_equal(h, x[:4] * 2)
    assert head.cache_info().misses == 1


def test_empty_dimensions_next_to_relations():
    # x of 0 rows (or columns): one dynamic compile per such pattern, no
    # failed compile before it.
    @picokernel.kernel(dynamic=True)
    def corners(x, o):
        o[...] = x[1:, 1:] - x[:-1, :-1]

    for n, m in [(0, 3), (0, 5), (0, 9), (3, 0), (7, 0)]:
        x = np.ones((n, m))
        o = np.empty((max(n - 1, 0), max(m - 1, 0)))
        corners(x, o)
        assert o.size == 0
    assert corners.cache_info().misses == 2


def test_maxima_over_derived_and_sliced_sizes():
    # A max or min needs an element: dynamic from the least size that has
    # one (x[2:]: n >= 3); shorter sizes raise as NumPy does.
    @picokernel.kernel(dynamic=True)
    def spread(x, o, m):
        d = x[1:] - x[:-1]
        o[...] = d.sum()
        m[...] = d.max()

    @picokernel.kernel(dynamic=True)
    def scaled(x, o):
        o[...] = x[...] * x[2:].min()

    rng = np.random.default_rng(10)
    for n in [5, 6, 2, 3, 100]:
        x = rng.standard_normal(n)
        o, m = np.empty(()), np.empty(())
        spread(x, o, m)
        d = x[1:] - x[:-1]
        np.testing.assert_allclose(o, d.sum(), rtol=1e-12, atol=1e-12)
        assert m == d.max()
        if n >= 3:
            o = np.empty(n)
            scaled(x, o)
            np.testing.assert_array_equal(o, x * x[2:].min())
    assert spread.cache_info().misses == 1
    assert scaled.cache_info().misses == 1
    with pytest.raises(ValueError, match="zero-size array"):
        scaled(np.ones(2), np.empty(2))
    with pytest.raises(ValueError, match="zero-size array"):
        spread(np.ones(1), np.empty(()), np.empty(()))


def test_automatic_policy_keeps_sizes_that_varied_before():
    # Two groups changing in turn: once both have varied, one compile
    # serves both (not one per call).
    @picokernel.kernel
    def two(x, o, y, p):
        o[...] = x[1:] - x[:-1]
        p[...] = 0
        p[1:-1] = y[...]

    rng = np.random.default_rng(9)
    n, m = 5, 7
    for i in range(12):
        n += i % 2
        m += 1 - i % 2
        x, y = rng.standard_normal(n), rng.standard_normal(m)
        o, p = np.empty(n - 1), np.empty(m + 2)
        two(x, o, y, p)
        np.testing.assert_array_equal(o, x[1:] - x[:-1])
        np.testing.assert_array_equal(p, np.pad(y, 1))
    assert two.cache_info().misses == 3


def test_sizes_that_break_the_relation_raise():
    @picokernel.kernel(dynamic=True)
    def diff(x, o):
        o[...] = x[1:] - x[:-1]

    diff(np.arange(10.0), np.empty(9))
    for n, m in [(10, 10), (10, 8), (10, 0), (10, 1), (3, 9)]:
        with pytest.raises(ValueError, match="store to 'o'"):
            diff(np.arange(float(n)), np.empty(m))
    o = np.empty(20)
    diff(np.arange(21.0), o)
    np.testing.assert_array_equal(o, 1.0)


def test_views_and_overlapping_outputs():
    @picokernel.kernel(dynamic=True)
    def diff(x, o):
        o[...] = x[1:] - x[:-1]

    rng = np.random.default_rng(7)
    for n in [5, 6, 50]:
        base = rng.standard_normal(2 * n)
        x = base[::2]
        o = np.empty(2 * (n - 1))[::2]
        diff(x, o)
        np.testing.assert_array_equal(o, x[1:] - x[:-1])
        # o overlapping x: NumPy computes the right side first.
        y = rng.standard_normal(n)
        expected = y[1:] - y[:-1]
        diff(y, y[:-1])
        np.testing.assert_array_equal(y[:-1], expected)


def test_relations_other_than_a_difference_stay_static():
    @picokernel.kernel(dynamic=True)
    def halves(x, o):
        o[...] = x[::2]

    for n in [10, 12, 14]:
        x = np.arange(float(n))
        o = np.empty((n + 1) // 2)
        halves(x, o)
        np.testing.assert_array_equal(o, x[::2])
    assert halves.cache_info().misses == 3


def test_ir_derives_the_size_class():
    @picokernel.kernel(dynamic=True)
    def diff(x, o):
        o[...] = x[1:] - x[:-1]

    diff(np.arange(10.0), np.empty(9))
    mlir = diff.ir.mlir
    assert "!pk.ref<?xf64>" in mlir and "pk.slice_size" in mlir, mlir


def test_ahead_of_time_takes_the_base_size_only(tmp_path):
    """The derived size is computed in the entry point: pk_diff(n, x, o)
    with o of n - 1 elements, NumPy's result at every size."""
    import ctypes

    @picokernel.kernel(dynamic=True)
    def diff(x, o):
        o[...] = x[1:] - x[:-1]

    diff(np.arange(10.0), np.empty(9))
    header, entry = ahead_of_time(diff, "diff", tmp_path)
    assert re.search(r"int pk_diff\(int64_t n, const double \*\w+, "
                     r"double \*\w+\);", header), header
    assert "max(0, n - 1)" in header, header
    pointer = ctypes.POINTER(ctypes.c_double)
    entry.argtypes = [ctypes.c_int64, pointer, pointer]
    for n in [1, 2, 3, 17, 1000]:
        x = np.random.default_rng(n).standard_normal(n)
        o = np.full(n - 1, np.nan)
        assert entry(n, x.ctypes.data_as(pointer), o.ctypes.data_as(pointer)) == 0
        np.testing.assert_array_equal(o, x[1:] - x[:-1], err_msg=f"n={n}")
    assert entry(-1, None, None) == 1
