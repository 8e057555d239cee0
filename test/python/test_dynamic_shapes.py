"""One compile for every size: kernels compiled for dynamic sizes agree
with NumPy at every size, the policy (dynamic=None, True, False) compiles
when it promises, and kernels that cannot take dynamic sizes stay static,
correct, with the reason logged."""

import threading

import ml_dtypes
import numpy as np
import pytest

import picokernel

NUMERIC = [np.float16, ml_dtypes.bfloat16, np.float32, np.float64,
           np.int8, np.int16, np.int32, np.int64]


def misses(kernel):
    return kernel.cache_info().misses


def fma_kernel(**options):
    @picokernel.kernel(**options)
    def fma(a, b, c, o):
        o[...] = a[...] * b[...] + c[...] * 2
    return fma


def check_fma(kernel, n, dtype=np.float32, rng=np.random.default_rng(0)):
    a, b, c = (rng.standard_normal(n).astype(dtype) for _ in range(3))
    o = np.full(n, 7, dtype)
    kernel(a, b, c, o)
    expected = a * b + c * dtype(2)
    np.testing.assert_array_equal(o, expected)


def test_automatic_compiles_twice_for_a_hundred_sizes():
    fma = fma_kernel()
    for n in range(1000, 1100):
        check_fma(fma, n)
    assert misses(fma) == 2
    # Sizes far from the first ones, across the parallel threshold, serve
    # from the same kernel.
    for n in [2, 3, 17, 100_003, 1_000_000]:
        check_fma(fma, n)
    assert misses(fma) == 2


def test_sizes_0_and_1_are_part_of_the_key():
    fma = fma_kernel(dynamic=True)
    for n in [5, 0, 1, 6, 0, 1, 7]:
        check_fma(fma, n)
    assert misses(fma) == 3


def test_calls_cycling_over_sizes_and_other_variants_get_their_own():
    # A thread remembers the last few hundred sizes its last variant served:
    # calls cycling over more sizes than that, between calls that variant
    # does not serve (sizes 0 and 1, another dtype, aliased arrays), each
    # get the right variant and result.
    fma = fma_kernel(dynamic=True)
    rng = np.random.default_rng(1)
    for round in range(2):
        for n in list(range(2, 302)) + list(range(301, 1, -7)):
            check_fma(fma, n, rng=rng)
            if n % 37 == 0:
                check_fma(fma, n % 2, rng=rng)
                check_fma(fma, n, np.float64, rng=rng)
                x = rng.standard_normal(n).astype(np.float32)
                expected = x * x + x * np.float32(2)
                fma(x, x, x, x)
                np.testing.assert_array_equal(x, expected)
    # Dynamic float32, sizes 0 and 1, float64 and the aliased call.
    assert misses(fma) == 5


def test_kernels_called_in_turn_each_run_their_own_variant():
    # A thread remembers the last variant of each of the last few kernels
    # it called: calls taking turns between more kernels than that, of
    # several sizes and dtypes, between cache clears and evictions, each
    # run their own kernel's variant.
    def make(scale, **options):
        @picokernel.kernel(**options)
        def scaled(a, o):
            o[...] = a[...] * scale + 1
        return scaled

    kernels = [make(s) for s in range(11)] + [make(11, max_cache_entries=1)]
    rng = np.random.default_rng(2)
    for step in range(600):
        index = step % len(kernels) if step < 300 else int(rng.integers(len(kernels)))
        n = [5, 6, 1, 0, 700][step % 5 if step % 7 else 4]
        dtype = np.float32 if step % 3 else np.float64
        a = rng.standard_normal(n).astype(dtype)
        o = np.full(n, np.nan, dtype)
        kernels[index](a, o)
        np.testing.assert_array_equal(o, a * dtype(index) + 1)
        if step % 97 == 0:
            kernels[index].clear_cache()


def test_never_compiles_per_size():
    fma = fma_kernel(dynamic=False)
    for n in [10, 11, 12, 10]:
        check_fma(fma, n)
    assert misses(fma) == 3


def test_always_compiles_once():
    fma = fma_kernel(dynamic=True)
    for n in [10, 11, 12, 4096, 33]:
        check_fma(fma, n)
    assert misses(fma) == 1


@pytest.mark.parametrize("dtype", NUMERIC, ids=lambda d: np.dtype(d).name)
def test_every_dtype(dtype):
    fma = fma_kernel(dynamic=True)
    for n in [3, 64, 1001]:
        check_fma(fma, n, dtype)
    assert misses(fma) == 1


def test_bad_policy_is_a_type_error():
    with pytest.raises(TypeError, match="dynamic must be None"):
        picokernel.kernel(lambda o: None, dynamic="yes")


def test_broadcasting_rows_and_columns():
    @picokernel.kernel(dynamic=True)
    def affine(x, row, col, s, o):
        o[...] = x[...] * row[...] + col[...] - s[...]

    rng = np.random.default_rng(1)
    for n, m in [(3, 4), (5, 7), (64, 33), (2, 1000)]:
        x = rng.standard_normal((n, m))
        row, col, s = rng.standard_normal(m), rng.standard_normal((n, 1)), np.float64(0.5)
        o = np.empty((n, m))
        affine(x, row, col, np.array(s), o)
        np.testing.assert_array_equal(o, x * row + col - s)
    assert misses(affine) == 1


def test_equal_sizes_stay_equal():
    """A kernel compiled where two sizes were equal serves only calls where
    they are equal: other calls trace again (and fail as NumPy does)."""
    @picokernel.kernel(dynamic=True)
    def add(a, b, o):
        o[...] = a[...] + b[...]

    a, b = np.ones(5), np.ones(5)
    add(a, b, np.empty(5))
    with pytest.raises(ValueError, match="broadcast"):
        add(np.ones(5), np.ones(6), np.empty(5))
    o = np.empty(9)
    add(np.arange(9.0), np.arange(9.0), o)
    np.testing.assert_array_equal(o, 2 * np.arange(9.0))
    assert misses(add) == 1  # (a failed trace compiles nothing)


def test_reductions_over_dynamic_and_static_axes():
    @picokernel.kernel(dynamic=True)
    def stats(x, hi, lo, total):
        v = x[...]
        hi[...] = v.max(axis=1)
        lo[...] = v.min(axis=0)
        total[...] = v.sum(axis=1)

    rng = np.random.default_rng(2)
    for n in [2, 3, 50, 301]:
        x = rng.standard_normal((n, 16)).astype(np.float32)
        hi, lo, total = np.empty(n, np.float32), np.empty(16, np.float32), np.empty(n, np.float32)
        stats(x, hi, lo, total)
        np.testing.assert_array_equal(hi, x.max(axis=1))
        np.testing.assert_array_equal(lo, x.min(axis=0))
        np.testing.assert_allclose(total, x.sum(axis=1), rtol=1e-6, atol=1e-6)
    assert misses(stats) == 1


def test_softmax_rows_of_a_dynamic_count():
    @picokernel.kernel
    def softmax(x, o):
        v = x[...]
        e = np.exp(v - v.max(axis=1, keepdims=True))
        o[...] = e / e.sum(axis=1, keepdims=True)

    rng = np.random.default_rng(3)
    for n in [4, 5, 6, 7, 1, 64]:
        x = rng.standard_normal((n, 128)).astype(np.float32)
        o = np.empty_like(x)
        softmax(x, o)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        np.testing.assert_allclose(o, e / e.sum(axis=1, keepdims=True), rtol=2e-6, atol=1e-7)
    # (4,) static, then one dynamic kernel for every count but 1.
    assert misses(softmax) == 3


def test_in_place_update():
    @picokernel.kernel(dynamic=True)
    def scale(x):
        x[...] = x[...] * 3 + 1

    for n in [4, 9, 100_000]:
        x = np.arange(n, dtype=np.float64)
        scale(x)
        np.testing.assert_array_equal(x, np.arange(n) * 3.0 + 1)
    assert misses(scale) == 1


def test_views_and_read_only_inputs():
    fma = fma_kernel(dynamic=True)
    base = np.arange(40, dtype=np.float32)
    for n in [5, 10, 20]:
        a = base[: 2 * n : 2]
        b = base[::-1][:n]
        c = np.ones(n, np.float32)
        c.flags.writeable = False
        o = np.empty(n, np.float32)
        fma(a, b, c, o)
        np.testing.assert_array_equal(o, a * b + c * 2)


@pytest.mark.parametrize("body, shrink, reason", [
    ("o[...] = x[...] * x.shape[0]", 0, "reads the sizes"),
    ("o[...] = x[...] * len(x[...])", 0, "reads the sizes"),
    ("o[...] = x[...]; o[-5:4] = x[-5:4] * 2", 0, "from its end to a stop"),
    ("o[...] = x[...]; o[4:-4:-1] = x[4:-4:-1] * 2", 0, "backwards from a start"),
])
def test_kernels_that_cannot_be_dynamic_stay_static(body, shrink, reason, monkeypatch,
                                                    capfd):
    """Each size `o` has `shrink` elements less than `x`'s."""
    namespace = {}
    exec(f"def k(x, o):\n    {body}\n", namespace)
    kernel = picokernel.kernel(namespace["k"], dynamic=True)
    monkeypatch.setenv("PK_LOG_COMPILES", "1")
    for n in [6, 7, 8]:
        x = np.arange(n, dtype=np.float64)
        o, expected = np.empty(n - shrink), np.empty(n - shrink)
        kernel(x, o)
        exec(body, {"x": x, "o": expected, "len": len})
        np.testing.assert_allclose(o, expected, rtol=1e-15)
    assert misses(kernel) == 3
    assert reason in capfd.readouterr().err


def test_sum_over_a_varying_axis_keeps_numpys_accuracy(monkeypatch, capfd):
    """A sum over a length that varies compiles once and is still blocked
    (pairwise) by its length at run time: as accurate as NumPy's."""
    @picokernel.kernel
    def total(x, o):
        o[...] = x[...].sum()

    monkeypatch.setenv("PK_LOG_COMPILES", "1")
    rng = np.random.default_rng(4)
    ours, numpys = 0.0, 0.0
    for n in [100_003, 2**17, 2**17 + 5, 300_007, 2047, 2048, 2049, 5, 1_000_003]:
        for _ in range(3):
            x = rng.random(n).astype(np.float32)
            o = np.empty((), np.float32)
            total(x, o)
            exact = float(x.astype(np.float64).sum())
            ours += abs(float(o) - exact)
            numpys += abs(float(x.sum()) - exact)
    assert ours <= 1.5 * numpys, (ours, numpys)
    assert misses(total) == 2
    assert "dynamic sizes: shape of 'x'" in capfd.readouterr().err


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_reductions_over_varying_rows_and_lengths(dtype):
    """Row sums, maxima and softmax with both sizes dynamic, across the
    length where sums are split into blocks (2 x 1024)."""
    @picokernel.kernel(dynamic=True)
    def reduce_rows(x, s, m, t):
        v = x[...]
        s[...] = v.sum(axis=1)
        m[...] = v.max(axis=1)
        t[...] = v.sum()

    rng = np.random.default_rng(5)
    for rows, cols in [(2, 3), (3, 2047), (5, 2048), (2, 2049), (7, 4099), (33, 3000), (2, 70_001)]:
        x = (rng.random((rows, cols)) * 100).astype(dtype)
        s, m, t = np.empty(rows, dtype), np.empty(rows, dtype), np.empty((), dtype)
        reduce_rows(x, s, m, t)
        if np.issubdtype(dtype, np.floating):
            tol = 1e-5 if dtype == np.float32 else 1e-12
            np.testing.assert_allclose(s, x.sum(axis=1), rtol=tol)
            np.testing.assert_allclose(t, x.sum(), rtol=tol)
        else:
            np.testing.assert_array_equal(s, x.sum(axis=1, dtype=dtype))
            np.testing.assert_array_equal(t, x.sum(dtype=dtype))
        np.testing.assert_array_equal(m, x.max(axis=1))
    assert misses(reduce_rows) == 1


def test_softmax_over_varying_widths():
    @picokernel.kernel(dynamic=True)
    def softmax(x_ref, o_ref):
        x = x_ref[...]
        e = np.exp(x - x.max(axis=1, keepdims=True))
        o_ref[...] = e / e.sum(axis=1, keepdims=True)

    rng = np.random.default_rng(6)
    for rows, cols in [(2, 3), (64, 1024), (9, 2049), (100, 3000), (3, 50_000)]:
        x = rng.standard_normal((rows, cols)).astype(np.float32)
        o = np.empty_like(x)
        softmax(x, o)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        np.testing.assert_allclose(o, e / e.sum(axis=1, keepdims=True), rtol=2e-6, atol=1e-9)
    assert misses(softmax) == 1


@pytest.mark.parametrize("in_place", [False, True])
def test_row_kernels_on_both_sides_of_the_parallel_threshold(in_place):
    """Whether rows run in parallel tiles is decided when the kernel runs
    (about 32768 iterations): both ways agree with NumPy, into another
    array, in place (`k(x, x)`) and through a strided view."""
    @picokernel.kernel(dynamic=True)
    def softmax(x_ref, o_ref):
        x = x_ref[...]
        e = np.exp(x - x.max(axis=1, keepdims=True))
        o_ref[...] = e / e.sum(axis=1, keepdims=True)

    rng = np.random.default_rng(11)
    shapes = [(2, 3), (31, 1024), (32, 1024), (33, 1024), (1, 40_000),
              (300, 7), (5000, 7), (4, 8191), (4, 8192)]
    for rows, cols in shapes:
        for strided in [False, True]:
            base = rng.standard_normal((rows, 2 * cols)).astype(np.float32)
            x = base[:, ::2] if strided else base[:, :cols]
            e = np.exp(x - x.max(axis=1, keepdims=True))
            expected = e / e.sum(axis=1, keepdims=True)
            if in_place:
                softmax(x, x)
                out = x
            else:
                out = np.empty((rows, cols), np.float32)
                softmax(x, out)
            np.testing.assert_allclose(out, expected, rtol=2e-6, atol=1e-9,
                                       err_msg=f"{rows}x{cols} strided={strided}")
            if in_place:
                # Only the view was written.
                untouched = base[:, 1::2] if strided else base[:, cols:]
                assert np.isfinite(untouched).all() and np.abs(untouched).max() > 0.5
    # One kernel per layout (contiguous rows, strided rows).
    assert misses(softmax) == 2


CHAINED = {
    "maxima": ("a = x - x.max(axis=1, keepdims=True); b = a - a.max(axis=1, keepdims=True); "
               "o[...] = b - b.max(axis=0, keepdims=True)"),
    "means": ("a = x - x.mean(axis=1, keepdims=True); b = a - a.mean(axis=1, keepdims=True); "
              "o[...] = b - b.mean(axis=0)"),
    "softmax_then_columns": ("e = np.exp(x - x.max(axis=1, keepdims=True)); "
                             "s = e / e.sum(axis=1, keepdims=True); "
                             "o[...] = s / s.sum(axis=0, keepdims=True)"),
    "sinkhorn": ("e = np.exp(x); e = e / e.sum(axis=1, keepdims=True); "
                 "e = e / e.sum(axis=0, keepdims=True); o[...] = e / e.sum(axis=1, keepdims=True)"),
}


@pytest.mark.parametrize("name", list(CHAINED))
def test_row_reductions_then_a_column_reduction(name):
    """Row reductions chained, then one over the columns read back by every
    row: rows fused into tiles of columns must not write a whole row's
    values into a tile (dynamic sizes have the same type whatever their
    size: this corrupted the heap past 4096 elements)."""
    body = CHAINED[name]
    namespace = {"np": np}
    exec(f"def k(x_ref, o_ref):\n    x = x_ref[...]\n    o = o_ref\n    {body}\n", namespace)
    kernel = picokernel.kernel(namespace["k"], dynamic=True)
    rng = np.random.default_rng(13)
    for shape in [(2, 2048), (2, 2049), (32, 128), (33, 128), (31, 1024), (300, 301), (3, 9000)]:
        x = rng.random(shape).astype(np.float32)
        o = np.zeros_like(x)
        kernel(x, o)
        expected = np.zeros(shape, np.float64)
        exec(f"def ref(x, o):\n    {body}\n", namespace)
        namespace["ref"](x.astype(np.float64), expected)
        np.testing.assert_allclose(o, expected, rtol=2e-5, atol=2e-6, err_msg=str(shape))


MEANS = {
    "all": ("o[...] = x[...] - x[...].mean()", lambda x: x - x.mean()),
    "rows": ("o[...] = x[...] - x[...].mean(axis=1, keepdims=True)",
             lambda x: x - x.mean(axis=1, keepdims=True)),
    "columns": ("o[...] = x[...] - x[...].mean(axis=0)", lambda x: x - x.mean(axis=0)),
    "sliced": ("o[...] = x[1:-1, 1:].mean() + x[:, 2:].mean(axis=1, keepdims=True)"
               " + x[...] * 0",
               lambda x: x[1:-1, 1:].mean() + x[:, 2:].mean(axis=1, keepdims=True) + x * 0),
    "variance": ("v = x[...]; d = v - v.mean(axis=1, keepdims=True); "
                 "o[...] = (d * d).mean(axis=1, keepdims=True) + v * 0",
                 lambda x: variance_of_rows(x)),
}


def variance_of_rows(x):
    d = x - x.mean(axis=1, keepdims=True)
    return (d * d).mean(axis=1, keepdims=True) + x * 0


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32])
@pytest.mark.parametrize("name", list(MEANS))
def test_means_divide_by_a_count_of_the_sizes(name, dtype, monkeypatch, capfd):
    """A mean's divisor is computed from the sizes it averages (pk.count,
    also for a product of sizes and a slice's length): one compile for
    every shape, NumPy's result (integers average in float64, float16 in
    float32)."""
    body, reference = MEANS[name]
    namespace = {"np": np}
    exec(f"def k(x, o):\n    {body}\n", namespace)
    kernel = picokernel.kernel(namespace["k"], dynamic=True)
    monkeypatch.setenv("PK_LOG_COMPILES", "1")
    rng = np.random.default_rng(12)
    tolerance = {np.float16: 4e-3, np.float32: 2e-6}.get(dtype, 1e-13)
    for shape in [(4, 6), (5, 9), (6, 3), (64, 1000), (7, 2049)]:
        x = (rng.standard_normal(shape) * 8).astype(dtype)
        expected = reference(x)
        o = np.empty(expected.shape, expected.dtype)
        kernel(x, o)
        scale = np.abs(expected).max()
        np.testing.assert_allclose(o, expected, rtol=tolerance, atol=tolerance * scale,
                                   err_msg=str(shape))
    assert misses(kernel) == 1
    assert "COUNT(" in str(kernel.ir)
    assert "static" not in capfd.readouterr().err


@pytest.mark.parametrize("shapes, axis", [
    ([(3, 4, 5), (6, 7, 9), (2, 30, 11)], None),
    ([(3, 4, 5, 6), (5, 2, 7, 3), (4, 9, 2, 8)], None),
    ([(3, 4, 5, 6), (5, 2, 7, 3), (4, 9, 2, 8)], (1, 2, 3)),
    ([(3, 4, 5), (6, 7, 9), (2, 30, 11)], (1, 2)),
])
def test_means_over_three_and_four_dimensions(shapes, axis, monkeypatch, capfd):
    """A count of up to four sizes (kMaxCountFactors) is recognized."""
    @picokernel.kernel(dynamic=True)
    def centered(x, o):
        o[...] = x[...] - x[...].mean(axis=axis, keepdims=True)

    monkeypatch.setenv("PK_LOG_COMPILES", "1")
    rng = np.random.default_rng(3)
    for shape in shapes:
        x = rng.standard_normal(shape)
        o = np.empty(shape)
        centered(x, o)
        np.testing.assert_allclose(o, x - x.mean(axis=axis, keepdims=True),
                                   rtol=1e-13, atol=1e-13)
    assert misses(centered) == 1
    assert "static" not in capfd.readouterr().err


def test_sums_over_varying_axes_that_are_not_adjacent_stay_static(monkeypatch, capfd):
    @picokernel.kernel
    def outer_axes(x, o):
        o[...] = x[...].sum(axis=(0, 2))

    monkeypatch.setenv("PK_LOG_COMPILES", "1")
    for shape in [(3, 4, 5), (4, 4, 6), (5, 4, 7)]:
        x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
        o = np.empty(4)
        outer_axes(x, o)
        np.testing.assert_allclose(o, x.sum(axis=(0, 2)))
    assert misses(outer_axes) == 3
    assert "not adjacent" in capfd.readouterr().err
    # With dynamic=True too: the log says why those sizes stay static.
    @picokernel.kernel(dynamic=True)
    def always(x, o):
        o[...] = x[...].sum(axis=(0, 2))

    always(np.ones((3, 4, 5)), np.empty(4))
    err = capfd.readouterr().err
    assert "dynamic sizes: asked for" in err and "not adjacent" in err


def test_log_says_why(monkeypatch, capfd):
    monkeypatch.setenv("PK_LOG_COMPILES", "1")
    fma = fma_kernel()
    check_fma(fma, 10)
    check_fma(fma, 11)
    check_fma(fma, 12)
    err = capfd.readouterr().err
    assert "first compile" in err
    assert "for (a: (n,) float32" in err and "dynamic sizes: shape of 'a' (10,) -> (11,)" in err
    assert err.count("compiling kernel") == 2


def test_log_names_the_sizes_of_dynamic_variants(monkeypatch, capfd):
    """Variants that differ in which sizes are equal (square or not) log
    different signatures, with the least sizes a slice needs."""
    monkeypatch.setenv("PK_LOG_COMPILES", "1")

    @picokernel.kernel(dynamic=True)
    def scale(x, o):
        o[...] = x[...] * x[2, 1]

    for shape in [(5, 5), (5, 7)]:
        x = np.ones(shape, np.float32)
        scale(x, np.empty_like(x))
    err = capfd.readouterr().err
    assert "for (x: (n, n) float32, o: (n, n) float32; n >= 3)" in err, err
    assert "for (x: (n0, n1) float32, o: (n0, n1) float32; n0 >= 3)" in err, err


def test_threads_share_one_dynamic_kernel():
    fma = fma_kernel(dynamic=True)
    errors = []

    def work(offset):
        try:
            for n in range(offset, offset + 40):
                check_fma(fma, n, rng=np.random.default_rng(n))
        except Exception as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(10 + 7 * t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert misses(fma) == 1


def test_clear_cache_then_dynamic_again():
    fma = fma_kernel()
    for n in [10, 11, 12]:
        check_fma(fma, n)
    fma.clear_cache()
    for n in [10, 11, 12]:
        check_fma(fma, n)
    assert fma.cache_info().entries == 2


DISK_SCRIPT = """
import sys
import numpy as np
import picokernel

@picokernel.kernel(dynamic=True)
def fma(a, b, c, o):
    o[...] = a[...] * b[...] + c[...]

for n in map(int, sys.argv[1:]):
    a, b, c = (np.arange(n, dtype=np.float32) + k for k in range(3))
    o = np.empty(n, np.float32)
    fma(a, b, c, o)
    assert (o == a * b + c).all(), n
print(fma.cache_info().disk_loads)
"""


def test_disk_cache_keeps_dynamic_kernels_without_sizes(tmp_path):
    """A kernel compiled for dynamic sizes by one process serves another's
    calls of other sizes from the disk cache."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, PK_CACHE="1", PK_CACHE_DIR=str(tmp_path))

    def run(*sizes):
        result = subprocess.run([sys.executable, "-c", DISK_SCRIPT, *map(str, sizes)],
                                env=env, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        return int(result.stdout)

    assert run(10, 20) == 0
    assert run(30, 5000, 3) == 1


def test_long_row_sums_stay_as_accurate_as_numpy():
    """Rows long enough to be summed in blocks are blocked at run time in
    a dynamic kernel too (as accurate as NumPy's); short rows of a varying
    count are one dynamic kernel."""
    def row_sums(**options):
        @picokernel.kernel(dynamic=True, **options)
        def sums(x, o):
            o[...] = x[...].sum(axis=1)
        return sums

    rng = np.random.default_rng(5)
    long, short = row_sums(), row_sums()
    ours, numpys = 0.0, 0.0
    for n in [3, 4, 5]:
        x = rng.random((n, 200_003)).astype(np.float32)
        o = np.empty(n, np.float32)
        long(x, o)
        exact = x.astype(np.float64).sum(axis=1)
        ours += np.abs(o - exact).sum()
        numpys += np.abs(x.sum(axis=1) - exact).sum()
        y = rng.random((n, 100)).astype(np.float32)
        short(y, o)
        np.testing.assert_allclose(o, y.sum(axis=1), rtol=1e-6)
    assert ours <= 1.5 * numpys, (ours, numpys)
    assert misses(long) == 1
    assert misses(short) == 1


@pytest.mark.parametrize("name", ["softmax", "layer_norm", "logsumexp"])
def test_row_kernels_over_a_dynamic_count_of_rows(name):
    """Rows fused in tiles whose last one is partial: every count of rows
    (tiles of several rows, one partial, fewer rows than a tile)."""
    def softmax(x, o):
        v = x[...]
        e = np.exp(v - v.max(axis=1, keepdims=True))
        o[...] = e / e.sum(axis=1, keepdims=True)

    def layer_norm(x, o):
        v = x[...]
        centered = v - v.mean(axis=1, keepdims=True)
        o[...] = centered / np.sqrt((centered * centered).mean(axis=1, keepdims=True) + 1e-5)

    def logsumexp(x, o):
        v = x[...]
        m = v.max(axis=1, keepdims=True)
        o[...] = np.log(np.exp(v - m).sum(axis=1, keepdims=True)) + m

    function = {"softmax": softmax, "layer_norm": layer_norm, "logsumexp": logsumexp}[name]
    kernel = picokernel.kernel(function, dynamic=True)
    rng = np.random.default_rng(6)
    for rows in [2, 3, 5, 7, 31, 64, 1001, 2]:
        x = rng.standard_normal((rows, 96)).astype(np.float32)
        o = np.empty((rows, 1) if name == "logsumexp" else (rows, 96), np.float32)
        kernel(x, o)
        expected = np.empty_like(o)
        function(x.astype(np.float64), expected)
        np.testing.assert_allclose(o, expected, rtol=2e-5, atol=2e-6)
    assert misses(kernel) == 1


WEIGHTS = np.linspace(0, 1, 64).astype(np.float32)


def test_sizes_fixed_by_a_constant_array_stay_static_alone():
    """A constant array of the kernel's fixes one size: the others (the
    batch) are still dynamic."""
    @picokernel.kernel(dynamic=True)
    def scale(x, o):
        o[...] = x[...] * WEIGHTS

    for n in [3, 5, 100, 64]:
        x = np.random.default_rng(n).random((n, 64)).astype(np.float32)
        o = np.empty_like(x)
        scale(x, o)
        np.testing.assert_array_equal(o, x * WEIGHTS)
    # (n = 64, equal to the fixed size, is served too.)
    assert misses(scale) == 1


def test_first_calls_of_size_0_and_1_do_not_block_dynamic_sizes():
    """Automatic compares a call with the last miss of its pattern: a warm-up
    with 0 or 1 elements costs a compile, not one per later size."""
    for start in (0, 1):
        fma = fma_kernel()
        for n in range(start, start + 60):
            check_fma(fma, n)
        assert misses(fma) == 4 - start


def test_code_that_catches_a_trace_error_stays_static():
    """A kernel choosing what to compute by catching a shape error cannot
    be generalized: which branch runs depends on sizes (n == 3 here) that
    neither trace sees."""
    b = np.full(3, 100.0)

    @picokernel.kernel(dynamic=True)
    def add_if_fits(a, o):
        try:
            o[...] = a[...] + b
        except ValueError:
            o[...] = a[...]

    for n in (5, 7, 3, 8):
        a = np.arange(n, dtype=np.float64)
        o = np.zeros(n)
        add_if_fits(a, o)
        np.testing.assert_array_equal(o, a + b if n == 3 else a)


def test_keyboard_interrupt_in_the_second_trace_propagates():
    traces = [0]

    @picokernel.kernel(dynamic=True)
    def inc(a, o):
        traces[0] += 1
        if traces[0] == 2:
            raise KeyboardInterrupt
        o[...] = a[...] + 1

    with pytest.raises(KeyboardInterrupt):
        inc(np.ones(5), np.empty(5))
    for n in (6, 7, 8):  # and the kernel is still dynamic afterwards
        o = np.empty(n)
        inc(np.ones(n), o)
        np.testing.assert_array_equal(o, 2.0)
    assert misses(inc) == 1


def test_many_patterns_and_high_ranks():
    """Each rank is its own pattern with its own dynamic variant (masks never
    apply to another pattern's keys); a rank-6 array of distinct sizes is
    still dynamic (the second trace's sizes stay countable in bytes)."""
    traces = [0]

    @picokernel.kernel
    def double(a, o):
        traces[0] += 1
        o[...] = a[...] * 2

    def call(shape):
        a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        o = np.empty_like(a)
        double(a, o)
        np.testing.assert_array_equal(o, a * 2)

    for rank in range(1, 11):
        call((3,) + (2,) * (rank - 1))
        call((5,) + (2,) * (rank - 1))
    compiled, traced = misses(double), traces[0]
    for rank in range(1, 11):
        call((7,) + (2,) * (rank - 1))
        call((4,) + (2,) * (rank - 1))
    assert misses(double) == compiled and traces[0] == traced

    high = picokernel.kernel(lambda a, o: o.__setitem__(Ellipsis, a[...] * 2), dynamic=True)
    for shape in [(2, 3, 4, 5, 6, 7), (2, 3, 4, 5, 6, 8), (3, 4, 5, 6, 7, 9)]:
        a = np.ones(shape, np.float32)
        o = np.empty_like(a)
        high(a, o)
        np.testing.assert_array_equal(o, 2.0)
    assert misses(high) == 1


def test_calls_cycling_over_sizes_keep_every_guard():
    """A thread's last variant serves the next call without a lookup when
    its dynamic key takes that call's sizes: calls that alternate with
    ones it must not serve (sizes 1 and 0, sizes that were equal and are
    not, a static size changed, a size below a slice's minimum, a broken
    relation) still get their own variant, error or NumPy's result."""
    @picokernel.kernel(dynamic=True)
    def add(a, b, o):
        o[...] = a[...] + b[:, :3] * 2

    @picokernel.kernel(dynamic=True)
    def diff(x, o):
        o[...] = x[1:] - x[:-1]

    rng = np.random.default_rng(5)
    shapes = [((4, 3), (4, 3)), ((5, 3), (5, 3)), ((4, 3), (4, 5)),
              ((6, 3), (1, 3)), ((1, 3), (6, 3)), ((3, 3), (3, 3)),
              ((7, 3), (7, 4)), ((0, 3), (0, 3)), ((2, 1), (2, 3)),
              ((5, 5, 3), (5, 3)), ((4, 3), (4, 4))]
    for _ in range(3):
        for a_shape, b_shape in shapes:
            a, b = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
            expected = a + b[:, :3] * 2
            o = np.full(expected.shape, np.nan)
            add(a, b, o)
            np.testing.assert_array_equal(o, expected)
        with pytest.raises(ValueError):
            add(np.ones((4, 3)), np.ones((4, 2)), np.empty((4, 3)))
        for n, m in [(10, 9), (10, 10), (12, 11), (3, 2), (12, 10), (2, 1),
                     (5, 4)]:
            x, o = rng.standard_normal(n), np.full(m, np.nan)
            if m != n - 1:
                with pytest.raises(ValueError, match="store to 'o'"):
                    diff(x, o)
                continue
            diff(x, o)
            np.testing.assert_array_equal(o, x[1:] - x[:-1])
