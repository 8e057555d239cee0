"""Long reductions (pk-split-reductions): blocks reduced in parallel, partial
sums added pairwise. NumPy is the oracle for every dtype, axis, view and
remainder; sums are held to NumPy's pairwise accuracy on adversarial data."""

import math

import numpy as np
import pytest

import picokernel

# Around the 1024-element block: fewer than two blocks (left alone), exact
# multiples, remainders, and a partial-sum tree thousands wide.
SIZES = [2047, 2048, 2049, 3 * 1024 + 1, 100_003, 2**21 + 5]
DTYPES = [np.float32, np.float64, np.float16, np.int8, np.int32, np.int64, np.bool_]


def reduce_kernel(op, axis=None, keepdims=False):
    def body(x_ref, o_ref):
        o_ref[...] = getattr(x_ref[...], op)(axis=axis, keepdims=keepdims)

    body.__name__ = f"{op}_{axis}_{keepdims}".replace("-", "m").replace(" ", "")
    return picokernel.kernel(body)


def sample(dtype, shape, rng):
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    # float16 sums stay finite: mean 0.
    return (rng.standard_normal(shape) * 3 + (dtype != np.float16)).astype(dtype)


def float_bound(x, expected, result_dtype):
    """NumPy's pairwise error bound (a few eps per level times sum |x|),
    plus the rounding of the result itself."""
    x64 = np.abs(np.asarray(x, np.float64))
    n = max(x64.size, 2)
    eps = np.finfo(result_dtype).eps
    acc_eps = np.finfo(np.float32 if result_dtype == np.float16 else result_dtype).eps
    return 4 * acc_eps * math.log2(n) * x64.sum() + eps * abs(float(expected)) + 1e-300


def check(kernel, x, axis=None, keepdims=False, op="sum"):
    expected = getattr(np, op)(x, axis=axis, keepdims=keepdims)
    out = np.empty_like(np.asarray(expected))
    kernel(x, out)
    if op in ("max", "min") or not np.issubdtype(out.dtype, np.floating):
        np.testing.assert_array_equal(out, expected)
        return
    # Reference in float64 for sums and means of floats.
    x64 = np.asarray(x, np.float64)
    exact = getattr(np, op)(x64, axis=axis, keepdims=keepdims)
    err = np.abs(out.astype(np.float64) - exact)
    if axis is None:
        assert err <= float_bound(x, exact, out.dtype), (out, exact)
    else:
        bound = 4 * np.finfo(np.float32).eps * math.log2(max(x.size, 2)) * np.abs(x64).sum(
            axis=axis, keepdims=keepdims) + np.finfo(out.dtype).eps * np.abs(exact)
        if op == "mean":
            bound = bound / (x.size / np.asarray(exact).size)
        assert np.all(err <= bound + 1e-300), (out, exact)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", ["sum", "max", "min", "mean"])
def test_full_reductions_match_numpy(op, dtype, n):
    if op == "mean" and dtype == np.bool_ and n > 10**6:
        pytest.skip("covered by the smaller sizes")
    rng = np.random.default_rng(n)
    x = sample(dtype, n, rng)
    check(reduce_kernel(op), x, op=op)


@pytest.mark.parametrize(
    "shape, axis, keepdims",
    [
        ((3000, 700), None, False),      # two reduced loops folded into one
        ((3000, 700), (0, 1), True),
        ((5000, 7), 0, False),           # the reduced loop outermost (columns)
        ((3, 5000), -1, True),           # long rows
        ((4, 2500, 3), 1, False),        # a middle axis
        ((2, 3, 2049), (1, 2), False),   # two trailing axes of each batch
    ],
)
@pytest.mark.parametrize("op", ["sum", "max", "mean"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32], ids=lambda d: np.dtype(d).name)
def test_axes_match_numpy(dtype, op, shape, axis, keepdims):
    rng = np.random.default_rng(len(shape))
    x = sample(dtype, shape, rng)
    check(reduce_kernel(op, axis, keepdims), x, axis, keepdims, op)


@pytest.mark.parametrize(
    "view",
    [lambda x: x[::2], lambda x: x[::-1], lambda x: x[7:-5],
     lambda x: x.reshape(500, -1).T, lambda x: x.reshape(100, -1)[:, 3:]],
    ids=["every_other", "reversed", "offset", "transposed", "sliced_rows"],
)
def test_views(view):
    x = view(np.random.default_rng(3).standard_normal(200_000).astype(np.float32))
    for op in ("sum", "max"):
        check(reduce_kernel(op), x, op=op)


def test_fused_producers():
    @picokernel.kernel
    def sum_of_squares(x_ref, y_ref, o_ref):
        x = x_ref[...]
        o_ref[...] = (x * x + y_ref[...]).sum()

    @picokernel.kernel
    def outer_sum(column_ref, row_ref, o_ref):
        o_ref[...] = (column_ref[...] * row_ref[...]).sum()

    rng = np.random.default_rng(4)
    x = rng.standard_normal(300_001).astype(np.float32)
    y = rng.standard_normal(300_001).astype(np.float32)
    o = np.empty((), np.float32)
    sum_of_squares(x, y, o)
    exact = math.fsum(x.astype(np.float64) ** 2 + y.astype(np.float64))
    assert abs(float(o) - exact) <= float_bound(np.abs(x * x) + np.abs(y), exact, np.float32)
    a, b = x[:3001, None], y[None, :997]
    outer_sum(a, b, o)
    exact = math.fsum((a.astype(np.float64) * b).ravel())
    bound = float_bound(np.abs(a) * np.abs(b), exact, np.float32)
    assert abs(float(o) - exact) <= bound


@pytest.mark.parametrize("where", [0, 5000, 2**20 - 1, 2**20 + 3])
def test_nan_anywhere_propagates(where):
    x = np.random.default_rng(5).random(2**20 + 7).astype(np.float32)
    x[where] = np.nan
    for op in ("sum", "max", "min", "mean"):
        out = np.empty((), np.float32)
        reduce_kernel(op)(x, out)
        assert np.isnan(out), op


def test_int64_sums_wrap_like_numpy():
    x = np.full(10_000, np.iinfo(np.int64).max // 3000, np.int64)
    x[::7] = np.iinfo(np.int64).min + 5
    check(reduce_kernel("sum"), x)


def test_a_hundred_million_ones_sum_exactly():
    # A serial float32 sum stops at 2**24 = 16777216.
    ones = np.ones(10**8, np.float32)
    out = np.empty((), np.float32)
    reduce_kernel("sum")(ones, out)
    assert out == 1e8
    reduce_kernel("mean")(ones, out)
    assert out == 1.0


def test_tiny_values_after_a_large_one_are_not_lost():
    # Serially, every 1e-8 added to 1.0 rounds away (the sum stays 1.0).
    x = np.full(10**7 + 1, 1e-8, np.float32)
    x[0] = 1.0
    out = np.empty((), np.float32)
    reduce_kernel("sum")(x, out)
    exact = math.fsum(x.astype(np.float64))
    assert abs(float(out) - exact) <= 2 * abs(float(x.sum()) - exact) + np.spacing(np.float32(exact))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize(
    "distribution",
    ["uniform", "normal", "lognormal", "alternating"],
)
def test_as_accurate_as_numpy_pairwise(distribution, dtype):
    """Mean error over seeded trials, in units of eps * sum|x| (the
    condition of the sum), against NumPy's own pairwise sum."""
    rng = np.random.default_rng(6)
    kernel = reduce_kernel("sum")
    eps = np.finfo(dtype).eps
    ours, numpys = [], []
    # Errors are fractions of an ulp of the result: many trials, or the
    # comparison measures which tree rounds luckier for a handful of seeds.
    for n in [100_003, 2**17]:
        for _ in range(60):
            if distribution == "uniform":
                x = rng.random(n)
            elif distribution == "normal":
                x = rng.standard_normal(n)
            elif distribution == "lognormal":
                x = rng.lognormal(0, 3, n)
            else:
                x = (1 + rng.random(n)) * np.where(np.arange(n) % 2, 1e4, -1e4)
            x = x.astype(dtype)
            x64 = x.astype(np.float64)
            exact = math.fsum(x64)
            scale = eps * np.abs(x64).sum()
            out = np.empty((), dtype)
            kernel(x, out)
            ours.append(abs(float(out) - exact) / scale)
            numpys.append(abs(float(x.sum()) - exact) / scale)
    assert np.mean(ours) <= 1.25 * np.mean(numpys) + 0.02, (np.mean(ours), np.mean(numpys))


def test_reductions_with_broadcast_operands_and_split_axes_are_blocked_too():
    """Operands that broadcast along a reduced axis (a keepdims result, an
    (N, 1) array, a row vector) and reduced axes that are not adjacent: a
    serial float32 sum stops at 2**24, a blocked one is exact on ones."""
    @picokernel.kernel
    def weighted(x_ref, w_ref, o_ref):
        o_ref[...] = (x_ref[...] * w_ref[...]).sum()

    @picokernel.kernel
    def centered_rows(x_ref, o_ref):
        x = x_ref[...]
        o_ref[...] = (x - x.min(axis=-1, keepdims=True)).sum(axis=-1)

    @picokernel.kernel
    def outer(column_ref, row_ref, o_ref):
        o_ref[...] = (column_ref[...] * row_ref[...]).sum()

    @picokernel.kernel
    def outer_axes(x_ref, o_ref):
        o_ref[...] = x_ref[...].sum(axis=(0, 2))

    out = np.empty((), np.float32)
    weighted(np.ones((10**7, 2), np.float32), np.ones(2, np.float32), out)
    assert out == 2e7
    x = np.ones((2, 2 * 10**7 + 1), np.float32)
    x[:, 0] = 0
    rows = np.empty(2, np.float32)
    centered_rows(x, rows)
    np.testing.assert_array_equal(rows, [2e7, 2e7])
    outer(np.ones((5000, 1), np.float32), np.ones((1, 5000), np.float32), out)
    assert out == 2.5e7
    pair = np.empty(2, np.float32)
    outer_axes(np.ones((10**7, 2, 2), np.float32), pair)
    np.testing.assert_array_equal(pair, [2e7, 2e7])
    ints = np.random.default_rng(8).integers(-9, 9, (3001, 3, 5), dtype=np.int32)
    check(reduce_kernel("max", (0, 2)), ints, (0, 2), op="max")
    check(reduce_kernel("sum", (0, 2), True), ints, (0, 2), True, op="sum")
