"""backend="vulkan" with dynamic sizes: one compile serves every size, the
host computing grids, temporaries and the kernels' size arguments at
dispatch; results agree with NumPy at every size, dtype, layout and
aliasing. llvmpipe stops a thread after 65,535 loop iterations, which a loop
of a size known only at dispatch cannot be checked against: there, kernels
with such loops (reductions, products) stay static, and the tests that run
them without the limit do so in a process of their own."""

import os
import subprocess
import sys
import textwrap
import threading

import ml_dtypes
import numpy as np
import pytest

import picokernel

available, why = picokernel.vulkan_available()
pytestmark = [pytest.mark.skipif(not available, reason=f"no Vulkan device: {why}"),
              pytest.mark.usefixtures("spirv_dump")]

NUMERIC = [np.float16, ml_dtypes.bfloat16, np.float32, np.float64,
           np.int8, np.int16, np.int32, np.int64]


def gpu(fn=None, **options):
    options.setdefault("dynamic", True)
    if fn is None:
        return lambda f: picokernel.kernel(f, backend="vulkan", **options)
    return picokernel.kernel(fn, backend="vulkan", **options)


def misses(kernel):
    return kernel.cache_info().misses


@pytest.mark.parametrize("dtype", NUMERIC, ids=lambda d: np.dtype(d).name)
def test_fma_compiles_once_for_every_size(dtype, rng):
    @gpu
    def fma(a, b, c, o):
        o[...] = a[...] * b[...] + c[...] * 2

    # Across workgroups of 64 threads: one, a ragged last one, many.
    for n in [2, 3, 63, 64, 65, 1000, 4099, 70_001]:
        a, b, c = (rng.integers(-8, 8, n).astype(dtype) for _ in range(3))
        o = np.full(n, 7, dtype)
        fma(a, b, c, o)
        np.testing.assert_array_equal(o, a * b + c * dtype(2))
    assert misses(fma) == 1


def test_automatic_policy_compiles_twice():
    fma = gpu(lambda a, o: o.__setitem__(..., a[...] * 3), dynamic=None)
    for n in range(1000, 1040):
        a = np.arange(n, dtype=np.float32)
        o = np.zeros_like(a)
        fma(a, o)
        np.testing.assert_array_equal(o, a * 3)
    assert misses(fma) == 2


def test_two_dimensions_both_varying_with_broadcasting(rng):
    @gpu
    def add(x, row, col, o):
        o[...] = x[...] + row[...] * col[...]

    for shape in [(2, 3), (3, 2), (64, 65), (100, 7), (7, 300), (513, 129)]:
        x = rng.standard_normal(shape).astype(np.float32)
        row = rng.standard_normal(shape[1]).astype(np.float32)
        col = rng.standard_normal((shape[0], 1)).astype(np.float32)
        o = np.zeros_like(x)
        add(x, row, col, o)
        np.testing.assert_array_equal(o, x + row * col)
    assert misses(add) == 1


def test_three_and_four_dimensions(rng):
    @gpu
    def scale(x, o):
        o[...] = x[...] * 2 - 1

    # (Sizes equal to one another are one size class: all differ here.)
    for shape in [(2, 3, 4), (5, 2, 70), (3, 2, 4, 65), (2, 3, 5, 7)]:
        x = rng.standard_normal(shape).astype(np.float32)
        o = np.zeros_like(x)
        scale(x, o)
        np.testing.assert_array_equal(o, x * 2 - 1)
    assert misses(scale) == 2  # one per rank


def test_slices_relative_to_the_sizes(rng):
    @gpu
    def stencil(x, o):
        o[1:-1] = x[2:] - 2 * x[1:-1] + x[:-2]

    @gpu
    def every_other(x, o):
        o[::2] = x[::2] * 10

    @gpu
    def laplacian(x, o):
        o[1:-1, 1:-1] = (x[2:, 1:-1] + x[:-2, 1:-1] + x[1:-1, 2:]
                         + x[1:-1, :-2] - 4 * x[1:-1, 1:-1])

    for n in [3, 4, 65, 1001, 70_000]:
        x = rng.standard_normal(n).astype(np.float32)
        o = np.full(n, 5, np.float32)
        stencil(x, o)
        expected = np.full(n, 5, np.float32)
        expected[1:-1] = x[2:] - 2 * x[1:-1] + x[:-2]
        np.testing.assert_array_equal(o, expected)
        o = np.full(n, 5, np.float32)
        every_other(x, o)
        expected = np.full(n, 5, np.float32)
        expected[::2] = x[::2] * 10
        np.testing.assert_array_equal(o, expected)
    for shape in [(3, 4), (4, 70), (65, 66), (200, 3)]:
        x = rng.standard_normal(shape).astype(np.float32)
        o = np.zeros_like(x)
        laplacian(x, o)
        expected = np.zeros_like(x)
        expected[1:-1, 1:-1] = (x[2:, 1:-1] + x[:-2, 1:-1] + x[1:-1, 2:]
                                + x[1:-1, :-2] - 4 * x[1:-1, 1:-1])
        np.testing.assert_allclose(o, expected, rtol=1e-6, atol=1e-6)
    assert (misses(stencil), misses(every_other), misses(laplacian)) == (1, 1, 1)


def test_slices_of_a_constant_size(rng):
    """First rows, last rows and ends counted from the end (x[0], x[-1],
    x[-3:], x[:-3:-1]) take offsets computed at dispatch: one compile for
    every size that holds them."""
    @gpu
    def ends(x, o, p):
        o[...] = x[0] + x[-1]
        p[...] = x[...]
        p[-3:] = x[:-4:-1] * 2 + x[1]

    for m, n in [(4, 5), (9, 70), (1001, 3), (5, 1000)]:
        x = rng.standard_normal((m, n)).astype(np.float32)
        o, p = np.empty(n, np.float32), np.empty((m, n), np.float32)
        ends(x, o, p)
        np.testing.assert_array_equal(o, x[0] + x[-1])
        expected = x.copy()
        expected[-3:] = x[:-4:-1] * 2 + x[1]
        np.testing.assert_array_equal(p, expected)
    assert misses(ends) == 1


def test_sizes_computed_from_others(rng):
    """o has one row less than x, p two elements more than y: their sizes
    are computed from x's and y's at dispatch, one compile for all."""
    @gpu
    def steps(x, y, o, p):
        o[...] = x[1:] - x[:-1]
        p[...] = 0
        p[1:-1] = y[...] * 2

    for m, n, k in [(4, 6, 9), (9, 70, 100), (1001, 3, 7), (5, 1000, 12)]:
        x = rng.standard_normal((m, n)).astype(np.float32)
        y = rng.standard_normal(k).astype(np.float32)
        o, p = np.empty((m - 1, n), np.float32), np.empty(k + 2, np.float32)
        steps(x, y, o, p)
        np.testing.assert_array_equal(o, x[1:] - x[:-1])
        np.testing.assert_array_equal(p, np.pad(y * 2, 1))
    assert misses(steps) == 1


def test_reversed_dimensions(rng):
    """x[::-1, ::-2] reads backwards from the end of sizes known at
    dispatch."""
    @gpu
    def flipped(x, o):
        o[...] = x[...]
        o[:, ::-2] = x[::-1, ::-2] * 2

    for m, n in [(4, 5), (9, 70), (1001, 3), (5, 1000)]:
        x = rng.standard_normal((m, n)).astype(np.float32)
        o = np.empty((m, n), np.float32)
        flipped(x, o)
        expected = x.copy()
        expected[:, ::-2] = x[::-1, ::-2] * 2
        np.testing.assert_array_equal(o, expected)
    assert misses(flipped) == 1


def test_in_place_aliasing_and_views(rng):
    @gpu
    def update(x, o):
        o[...] += x[...] * 2

    base = rng.standard_normal((40, 30)).astype(np.float32)
    for x in [base[::2, ::3], base.T, base[1:-1, 2:]]:
        o = rng.standard_normal(x.shape).astype(np.float32)
        expected = o + x * 2
        update(x, o)
        np.testing.assert_array_equal(o, expected)
    # The same array as both arguments.
    o = rng.standard_normal((9, 11)).astype(np.float32)
    expected = o + o * 2
    update(o, o)
    np.testing.assert_array_equal(o, expected)
    read_only = rng.standard_normal((5, 6)).astype(np.float32)
    read_only.flags.writeable = False
    o = np.zeros((5, 6), np.float32)
    update(read_only, o)
    np.testing.assert_array_equal(o, read_only * 2)


def test_sizes_that_come_back(rng):
    # Each new set of sizes rebuilds the buffers and commands; the old ones
    # must not leak into the new call.
    @gpu
    def negate(x, o):
        o[...] = -x[...]

    sizes = [5, 1000, 5, 77, 1000, 3, 77]
    for n in sizes * 2:
        x = rng.standard_normal(n).astype(np.float64)
        o = np.zeros_like(x)
        negate(x, o)
        np.testing.assert_array_equal(o, -x)
    assert misses(negate) == 1


def test_threads_share_one_kernel_of_dynamic_sizes(rng):
    @gpu
    def double(x, o):
        o[...] = x[...] * 2

    errors = []

    def work(seed):
        local = np.random.default_rng(seed)
        try:
            for _ in range(20):
                n = int(local.integers(2, 3000))
                x = local.standard_normal(n).astype(np.float32)
                o = np.zeros_like(x)
                double(x, o)
                np.testing.assert_array_equal(o, x * 2)
        except Exception as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[0]
    assert misses(double) == 1


def test_loops_of_dynamic_trip_counts_stay_static_under_a_loop_limit(monkeypatch, capfd):
    if "llvmpipe" not in picokernel.vulkan_device() or os.environ.get(
            "PK_VULKAN_LOOP_LIMIT"):
        pytest.skip("only llvmpipe limits loop iterations")
    monkeypatch.setenv("PK_LOG_COMPILES", "1")

    @gpu
    def total(x, o):
        o[...] = x[...].sum()

    for n in [5, 6, 3000]:
        x = np.arange(n, dtype=np.float32)
        o = np.zeros((), np.float32)
        total(x, o)
        assert o == x.sum()
    assert "cannot be checked against the device's limit" in capfd.readouterr().err


WITHOUT_LOOP_LIMIT = textwrap.dedent("""
    import ml_dtypes
    import numpy as np
    import picokernel

    rng = np.random.default_rng(1)

    def gpu(fn):
        return picokernel.kernel(fn, backend="vulkan", dynamic=True)

    @gpu
    def total(x, o):
        o[...] = x[...].sum()

    @gpu
    def row_means(x, o):
        o[...] = np.mean(x[...], axis=1)

    @gpu
    def softmax(x, o):
        v = x[...]
        e = np.exp(v - v.max(axis=-1, keepdims=True))
        o[...] = e / e.sum(axis=-1, keepdims=True)

    @gpu
    def product(a, b, o):
        o[...] = a[...] @ b[...] + 1

    @gpu
    def grand_total(x, o):  # over both axes: views delinearized on the host
        o[...] = x[...].sum()

    @gpu
    def centered(x, o):  # a reduction of what a reduction made
        d = x[...] - x[...].sum(axis=-1, keepdims=True)
        o[...] = d * d.sum(axis=-1, keepdims=True)

    # Short sums and long ones (split into blocks, chosen at dispatch).
    for n in [2, 3, 1000, 2047, 2048, 5000, 100_003]:
        x = rng.standard_normal(n).astype(np.float32)
        o = np.zeros((), np.float32)
        total(x, o)
        np.testing.assert_allclose(o, x.sum(dtype=np.float64), rtol=1e-5, atol=1e-3)
    for dtype in [np.float16, np.float32, np.float64]:
        for shape in [(2, 3), (5, 1000), (3, 4099)]:
            x = rng.standard_normal(shape).astype(dtype)
            o = np.zeros(shape[0], dtype)
            row_means(x, o)
            np.testing.assert_allclose(o, np.mean(x, axis=1), rtol=1e-2, atol=1e-2)
    for shape in [(2, 3), (64, 1000), (7, 3000)]:
        x = rng.standard_normal(shape).astype(np.float32)
        o = np.zeros_like(x)
        softmax(x, o)
        e = np.exp(x - x.max(-1, keepdims=True))
        np.testing.assert_allclose(o, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)
    for m, k, n in [(3, 5, 7), (100, 101, 102), (65, 300, 2), (2, 17, 130)]:
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        o = np.zeros((m, n), np.float32)
        product(a, b, o)
        np.testing.assert_allclose(o, a @ b + 1, rtol=1e-4, atol=1e-4)
    for m, n in [(3, 4), (5, 6), (70, 3001)]:
        x = rng.standard_normal((m, n)).astype(np.float32)
        o = np.zeros((), np.float32)
        grand_total(x, o)
        np.testing.assert_allclose(o, x.sum(dtype=np.float64), rtol=1e-4, atol=1e-3)
        o = np.zeros_like(x)
        centered(x, o)
        x64 = x.astype(np.float64)
        d = x64 - x64.sum(-1, keepdims=True)
        expected = d * d.sum(-1, keepdims=True)  # large: compared to its scale
        np.testing.assert_allclose(o, expected, atol=1e-4 * np.abs(expected).max())
    kernels = (total, row_means, softmax, product, grand_total, centered)
    info = [f.cache_info().misses for f in kernels]
    # row_means: one per dtype; product: sizes all distinct, one compile.
    assert info == [1, 3, 1, 1, 1, 1], info
    print("ok")
""")


def test_reductions_softmax_and_products_without_a_loop_limit(tmp_path):
    env = dict(os.environ, PK_VULKAN_LOOP_LIMIT="0", PK_CACHE="0")
    result = subprocess.run([sys.executable, "-c", WITHOUT_LOOP_LIMIT], env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0 and "ok" in result.stdout, result.stderr[-3000:]


def test_a_bad_loop_limit_is_an_error():
    env = dict(os.environ, PK_VULKAN_LOOP_LIMIT="lots")
    code = ("import numpy as np, picokernel\n"
            "k = picokernel.kernel(lambda x, o: o.__setitem__(..., x[...]),"
            " backend='vulkan')\n"
            "k(np.ones(3), np.ones(3))\n")
    result = subprocess.run([sys.executable, "-c", code], env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode != 0
    assert "PK_VULKAN_LOOP_LIMIT must be a number" in result.stderr
