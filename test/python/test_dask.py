"""Kernels over Dask arrays (picokernel.dask): each result, computed on a
dask.distributed LocalCluster of two worker processes (and on Dask's
threads), equals the kernel run by NumPy on the whole arrays, for arrays of
several chunks of uneven sizes, chunked differently from each other."""
import os
import warnings

import numpy as np
import pytest

import picokernel as pk

da = pytest.importorskip("dask.array", reason="picokernel.dask needs dask")
distributed = pytest.importorskip("distributed", reason="the cluster needs distributed")

import dask  # noqa: E402

import picokernel.dask as pkd  # noqa: E402


@pytest.fixture(scope="module")
def client():
    # (No memory limit: the sanitizer build's workers are several times
    # bigger; the example's test below checks one.)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                       processes=True, dashboard_address=None,
                                       memory_limit=0)
    with cluster, distributed.Client(cluster) as client:
        yield client


def uneven(rng, shape, chunks, dtype=np.float64):
    """A Dask array of random values and its NumPy value."""
    if np.issubdtype(dtype, np.integer):
        value = rng.integers(-100, 100, size=shape).astype(dtype)
    else:
        value = rng.standard_normal(shape).astype(dtype)
    return da.from_array(value, chunks=chunks), value


def kernel_blocks(array):
    """How many blocks the graph of `array` runs a kernel on."""
    layers = array.__dask_graph__().layers
    return sum(len(layer) for name, layer in layers.items()
               if name.startswith("picokernel-"))


def reference(kernel, *arrays):
    """The kernel's outputs on NumPy arrays: what Dask must give."""
    copies = [np.array(a, copy=True) for a in arrays]
    kernel(*copies)
    return copies


@pk.kernel
def fma(a, b, c, o):
    o[...] = a[...] * b[...] + c[...]


@pk.kernel
def chain16(x, o):
    v = x[...]
    for step in range(8):
        v = v * 0.5 + 1.0
    o[...] = v


@pk.kernel
def laplace1d(x, o):
    o[1:-1] = x[2:] - 2 * x[1:-1] + x[:-2]


@pk.kernel
def laplace2d(x, o):
    o[1:-1, 1:-1] = (x[2:, 1:-1] + x[:-2, 1:-1] + x[1:-1, 2:] + x[1:-1, :-2]
                     - 4 * x[1:-1, 1:-1])


@pk.kernel
def wide_stencil(x, o):
    o[3:] = x[3:] - x[:-3]


@pk.kernel
def softmax_rows(x, o):
    e = pk.exp(x[...] - x[...].max(axis=-1, keepdims=True))
    o[...] = e / e.sum(axis=-1, keepdims=True)


@pk.kernel
def layernorm_rows(x, o):
    mean = x[...].mean(axis=-1, keepdims=True)
    centered = x[...] - mean
    var = (centered * centered).mean(axis=-1, keepdims=True)
    o[...] = centered / pk.sqrt(var + 1e-5)


@pk.kernel
def total(x, o):
    o[...] = x[...].sum()


@pk.kernel
def total_of_product(x, y, o):
    o[...] = (x[...] * y[...]).sum()


@pk.kernel
def column_sums(x, o):
    o[...] = x[...].sum(axis=0)


@pk.kernel
def row_max(x, o):
    o[...] = x[...].max(axis=1)


@pk.kernel
def column_min(x, o):
    o[...] = x[...].min(axis=0)


@pk.kernel
def mean_all(x, o):
    o[...] = x[...].mean()


@pk.kernel
def matmul_gelu(a, b, o):
    y = a[...] @ b[...]
    o[...] = 0.5 * y * (1 + pk.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))


@pk.kernel
def two_outputs(x, y, s, d):
    s[...] = x[...] + y[...]
    d[...] = x[...] - y[...]


@pk.kernel
def accumulate(x, o):
    o[...] += 2 * x[...]


@pk.kernel
def broadcast_row(x, row, o):
    o[...] = x[...] * row[...]


@pk.kernel
def every_other(x, o):
    o[...] = x[::2]


@pk.kernel
def scaled_by_length(x, o):
    o[...] = x[...] / x.shape[0]


def test_fma_uneven_chunks(client, rng):
    a, av = uneven(rng, (1000,), (300, 200, 500))
    b, bv = uneven(rng, (1000,), (250, 750))
    c, cv = uneven(rng, (1000,), 100)
    o = fma(a, b, c, da.empty_like(a))
    assert isinstance(o, da.Array)
    np.testing.assert_allclose(o.compute(), av * bv + cv, rtol=1e-12)


def test_fma_2d_with_broadcasting_and_numpy_operands(client, rng):
    x, xv = uneven(rng, (60, 50), ((10, 20, 30), (25, 25)))
    row = rng.standard_normal(50)
    o = broadcast_row(x, row, da.empty_like(x))
    np.testing.assert_allclose(o.compute(), xv * row, rtol=1e-12)
    # A number for an input, NumPy for the output's initial contents.
    o = fma(x, 2.0, xv, np.zeros((60, 50)))
    np.testing.assert_allclose(o.compute(), 2 * xv + xv, rtol=1e-12)


def test_chain(client, rng):
    x, xv = uneven(rng, (3000,), (1000, 700, 1300), np.float32)
    o = chain16(x, da.empty_like(x)).compute()
    np.testing.assert_allclose(o, reference(chain16, xv, np.empty_like(xv))[1],
                               rtol=1e-6)


@pytest.mark.parametrize("chunks", [(7, 13, 30), (2, 3, 45), 50])
def test_stencil_1d(client, rng, chunks):
    x, xv = uneven(rng, (50,), chunks)
    initial = rng.standard_normal(50)
    o = laplace1d(x, da.from_array(initial, chunks=17)).compute()
    expected = reference(laplace1d, xv, initial)[1]
    np.testing.assert_allclose(o, expected, rtol=1e-12, atol=1e-12)
    # The ends keep the output's initial contents.
    assert o[0] == initial[0] and o[-1] == initial[-1]


def test_stencil_2d(client, rng):
    x, xv = uneven(rng, (40, 30), ((5, 15, 20), (10, 1, 19)))
    o = laplace2d(x, da.zeros_like(x)).compute()
    np.testing.assert_allclose(o, reference(laplace2d, xv, np.zeros_like(xv))[1],
                               rtol=1e-12, atol=1e-12)


def test_stencil_deeper_than_a_chunk(client, rng):
    x, xv = uneven(rng, (20,), (2, 2, 2, 14))
    o = wide_stencil(x, da.zeros_like(x)).compute()
    np.testing.assert_allclose(o, reference(wide_stencil, xv, np.zeros(20))[1])


@pytest.mark.parametrize("kernel", [softmax_rows, layernorm_rows])
def test_row_kernels_over_chunked_rows(client, rng, kernel):
    x, xv = uneven(rng, (45, 64), ((10, 20, 15), (16, 48)), np.float32)
    o = kernel(x, da.empty_like(x)).compute()
    expected = reference(kernel, xv, np.empty_like(xv))[1]
    np.testing.assert_allclose(o, expected, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int8])
def test_full_sum(client, rng, dtype):
    x, xv = uneven(rng, (97, 31), ((40, 50, 7), (30, 1)), dtype)
    o = total(x, da.empty((), dtype=dtype))
    # The kernel runs on each of the 6 blocks, which combine in a tree.
    assert kernel_blocks(o) == 6
    expected = reference(total, xv, np.empty((), dtype))[1]
    if np.issubdtype(dtype, np.integer):
        assert o.compute() == expected  # wraps as the kernel does
    else:
        np.testing.assert_allclose(o.compute(), expected, rtol=1e-5)


def test_sum_of_product(client, rng):
    x, xv = uneven(rng, (1000,), (100, 900))
    y, yv = uneven(rng, (1000,), 250)
    o = total_of_product(x, y, da.empty((), dtype=np.float64)).compute()
    np.testing.assert_allclose(o, (xv * yv).sum(), rtol=1e-12)


@pytest.mark.parametrize("kernel, numpy", [
    (column_sums, lambda v: v.sum(axis=0)),
    (row_max, lambda v: v.max(axis=1)),
    (column_min, lambda v: v.min(axis=0)),
])
def test_axis_reductions(client, rng, kernel, numpy):
    x, xv = uneven(rng, (60, 40), ((15, 25, 20), (10, 30)))
    shape = numpy(xv).shape
    o = kernel(x, da.empty(shape, chunks=-1)).compute()
    np.testing.assert_allclose(o, numpy(xv), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_mean(client, rng, dtype):
    x, xv = uneven(rng, (101,), (30, 30, 41), dtype)
    o = mean_all(x, da.empty((), dtype=dtype)).compute()
    np.testing.assert_allclose(o, xv.mean(), rtol=1e-5)


def test_matmul_contracted_over_chunks(client, rng):
    a, av = uneven(rng, (40, 30), ((10, 30), (12, 18)))
    b, bv = uneven(rng, (30, 20), ((15, 15), (5, 15)))
    o = matmul_gelu(a, b, da.empty((40, 20), chunks=(20, 10))).compute()
    expected = reference(matmul_gelu, av, bv, np.empty((40, 20)))[2]
    # (Blocks of another shape sum the products in another order.)
    np.testing.assert_allclose(o, expected, rtol=1e-10, atol=1e-12)


def test_two_outputs_by_keyword(client, rng):
    x, xv = uneven(rng, (30, 20), (10, 5))
    y, yv = uneven(rng, (30, 20), (15, 20))
    s, d = two_outputs(x, y, d=da.empty_like(x), s=da.empty_like(x))
    np.testing.assert_allclose(s.compute(), xv + yv)
    np.testing.assert_allclose(d.compute(), xv - yv)


def test_output_read_is_its_initial_contents(client, rng):
    x, xv = uneven(rng, (100,), 30)
    initial, iv = uneven(rng, (100,), 45)
    o = accumulate(x, initial).compute()
    np.testing.assert_allclose(o, iv + 2 * xv)
    np.testing.assert_array_equal(initial.compute(), iv)  # not written


def test_strided_read_is_one_chunk(client, rng):
    x, xv = uneven(rng, (100,), 30)
    o = every_other(x, da.empty(50, chunks=10)).compute()
    np.testing.assert_array_equal(o, xv[::2])


def test_kernel_that_reads_sizes_runs_whole(client, rng):
    x, xv = uneven(rng, (100,), 30)
    with pytest.warns(da.core.PerformanceWarning, match="reads sizes"):
        o = scaled_by_length(x, da.empty_like(x))
    np.testing.assert_allclose(o.compute(), xv / 100)


def test_empty_and_zero_d(client, rng):
    x = da.empty((0,), chunks=5)
    o = fma(x, x, x, da.empty_like(x)).compute()
    assert o.shape == (0,)
    s = da.from_array(np.float64(3.0))
    o = fma(s, s, s, da.empty((), dtype=np.float64)).compute()
    assert o == 12.0


def test_threads_and_numpy_backend_without_a_cluster(rng):
    a, av = uneven(rng, (500,), (100, 400))
    o = fma(a, a, a, da.empty_like(a))
    np.testing.assert_allclose(o.compute(scheduler="threads"), av * av + av)
    interpreted = pk.kernel(fma.__wrapped__, backend="numpy")
    o = interpreted(a, a, a, da.empty_like(a))
    np.testing.assert_allclose(o.compute(scheduler="sync"), av * av + av)


def test_errors_at_the_call(rng):
    a, _ = uneven(rng, (10,), 5)
    b, _ = uneven(rng, (11,), 5)
    with pytest.raises(ValueError, match="broadcast|shape"):
        fma(a, b, a, da.empty_like(a))
    with pytest.raises(TypeError, match="takes 4 arrays"):
        pkd.apply(fma, a, a)
    with pytest.raises(TypeError, match="complex"):
        fma(a.astype(np.complex128), a, a, da.empty_like(a))


@pk.kernel
def fails_on_workers(x, o):
    try:
        distributed.get_worker()
    except ValueError:  # traced on the client
        pass
    else:
        raise ArithmeticError("raised on a worker")
    o[...] = x[...]


def test_worker_error_reaches_the_client(client, rng):
    x, _ = uneven(rng, (100,), 30)
    o = fails_on_workers(x, da.empty_like(x))
    with pytest.raises(ArithmeticError, match="raised on a worker"):
        o.compute()


def test_the_example_runs_within_its_memory_limits():
    # examples/python/dask_larger_than_memory.py at a small size: its
    # answer checks against dask.array's, and no worker restarts.
    import pathlib
    import subprocess
    import sys

    example = (pathlib.Path(__file__).parents[2] / "examples" / "python"
               / "dask_larger_than_memory.py")
    # Workers instrumented by AddressSanitizer (scripts/sanitize) take
    # several times the memory.
    sanitized = "asan" in os.environ.get("LD_PRELOAD", "")
    result = subprocess.run(
        [sys.executable, str(example), "--gib", "0.03", "--chunk-mib", "4",
         "--memory-limit", "4GiB" if sanitized else "512MiB"],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert "throughput per worker vs one process" in result.stdout
    assert "Restarting" not in result.stderr


# A fresh-eyes review's findings, each a kernel that once gave another
# answer on Dask arrays than on the whole NumPy arrays.

@pk.kernel
def half_sum(x, o):
    o[...] = x[...].sum() / 2.0


@pk.kernel
def thirds(x, o):
    o[...] = x[...].sum(axis=0) / 3


@pk.kernel
def variance(x, o):
    o[...] = ((x[...] - x[...].mean()) ** 2).mean()


@pk.kernel
def total_share(x, o):
    o[...] = (x[...] / x[...].sum()).sum()


@pk.kernel
def span(x, o):
    o[...] = (x[...] - x[...].min()).max()


@pk.kernel
def wrapped_sum(x, o):
    o[...] = x[...].sum().astype(np.int8)


@pk.kernel
def plain_sum(x, o):
    o[...] = x[...].sum()


def on_blocks_as_whole(kernel, *arrays, chunks=3, rtol=0.0):
    """The kernel on Dask arrays (the first of `chunks`, the others whole)
    equals it on the arrays."""
    expected = reference(kernel, *arrays)[-1]
    dask_arrays = [da.from_array(a, chunks=chunks if n == 0 else -1)
                   for n, a in enumerate(arrays)]
    got = kernel(*dask_arrays).compute(scheduler="sync")
    if rtol:
        np.testing.assert_allclose(got, expected, rtol=rtol)
    else:
        np.testing.assert_array_equal(got, expected)


def test_a_sum_divided_by_a_constant_is_no_mean():
    on_blocks_as_whole(half_sum, np.arange(1.0, 9.0), np.zeros(()), chunks=4)
    on_blocks_as_whole(thirds, np.arange(12.0).reshape(6, 2), np.zeros(2),
                       chunks=(2, 2), rtol=1e-12)


@pytest.mark.parametrize("kernel", [variance, total_share, span])
def test_reductions_inside_the_final_one(kernel):
    on_blocks_as_whole(kernel, np.arange(1.0, 13.0), np.zeros(()), chunks=4,
                       rtol=1e-12)


def test_integer_casts_after_a_sum():
    on_blocks_as_whole(wrapped_sum, np.array([100, 100]), np.zeros((), np.int64),
                       chunks=1)
    on_blocks_as_whole(plain_sum, np.array([100, 100], np.int8), np.zeros((), np.int8),
                       chunks=1)


def test_partial_sums_do_not_overflow_a_narrow_output():
    on_blocks_as_whole(plain_sum, np.array([40000, 40000, -40000, -40000], np.float16),
                       np.zeros((), np.float16), chunks=2)
    on_blocks_as_whole(plain_sum, np.array([3e38, 3e38, -3e38, -3e38]),
                       np.zeros((), np.float32), chunks=2)


def test_two_kernels_of_one_name_have_their_own_keys():
    x = da.arange(4.0, chunks=2)

    def make(factor):
        @pk.kernel
        def scaled(x, o):
            o[...] = x[...] * factor
        return scaled

    a = make(2)(x, da.empty_like(x))
    b = make(3)(x, da.empty_like(x))
    assert a.name != b.name
    got_a, got_b = dask.compute(a, b, scheduler="sync")
    np.testing.assert_array_equal(got_a, [0, 2, 4, 6])
    np.testing.assert_array_equal(got_b, [0, 3, 6, 9])


def test_stencil_with_a_small_last_chunk_stays_split():
    x = da.arange(1001.0, chunks=100)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        o = laplace1d(x, da.zeros_like(x))
    assert len(o.chunks[0]) > 1
    np.testing.assert_array_equal(o.compute(scheduler="sync"),
                                  reference(laplace1d, np.arange(1001.0), np.zeros(1001))[1])


W10 = np.arange(10.0)


@pk.kernel
def catches_its_errors(x, o):
    try:
        o[...] = x[...] + W10
    except Exception:  # shapes of a block: another kernel
        o[...] = x[...] - 1


def test_a_kernel_that_catches_errors_on_blocks_runs_whole():
    x = da.arange(10.0, chunks=5)
    with pytest.warns(da.core.PerformanceWarning) as caught:
        o = catches_its_errors(x, da.empty_like(x))
    assert caught[0].filename == __file__  # the user's line
    np.testing.assert_array_equal(o.compute(scheduler="sync"), np.arange(10.0) * 2)


def test_warnings_name_the_users_line_for_the_numpy_backend():
    interpreted = pk.kernel(scaled_by_length.__wrapped__, backend="numpy")
    with pytest.warns(da.core.PerformanceWarning) as caught:
        interpreted(da.arange(4.0, chunks=2), da.empty(4, chunks=2))
    assert caught[0].filename == __file__


def test_a_kernel_of_main_runs_on_a_cluster(tmp_path):
    # Defined under `if __name__ == "__main__":`, where a worker's __main__
    # (another program) cannot find it: it goes to workers by value.
    import subprocess
    import sys

    script = tmp_path / "main_kernel.py"
    script.write_text(
        "import numpy as np, dask.array as da, distributed, picokernel as pk\n"
        "if __name__ == '__main__':\n"
        "    @pk.kernel\n"
        "    def double(x, o):\n"
        "        o[...] = x[...] * 2\n"
        "    with distributed.LocalCluster(n_workers=1, processes=True,\n"
        "                                  dashboard_address=None) as c, \\\n"
        "            distributed.Client(c) as client:\n"
        "        x = da.from_array(np.arange(6.0), chunks=3)\n"
        "        o = client.compute(double(x, da.empty_like(x))).result(timeout=60)\n"
        "        print(o.tolist())\n")
    result = subprocess.run([sys.executable, str(script)], capture_output=True,
                            text=True, timeout=180)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "[0.0, 2.0, 4.0, 6.0, 8.0, 10.0]" in result.stdout


# A second review's findings.

@pk.kernel
def sum_times_output(x, o):
    o[...] = (x[...] * o[...]).sum()


@pk.kernel
def sum_by_zero(x, o):
    o[...] = x[...].sum() / 0.0


@pk.kernel
def row_sums(x, o):
    o[...] = x[...].sum(axis=1)


def test_block_parts_that_would_overflow_run_whole():
    on_blocks_as_whole(plain_sum, np.array([40000, 40000, -40000, -40000]),
                       np.zeros((), np.float16), chunks=2)
    on_blocks_as_whole(sum_times_output, np.array([3e38, 3e38, -3e38, -3e38]),
                       np.ones((), np.float32), chunks=2)
    on_blocks_as_whole(sum_by_zero, np.array([1.0, -2.0]), np.zeros(()), chunks=1)


def test_a_narrower_output_of_unsplit_reductions_stays_split():
    x = da.from_array(np.arange(48.0).reshape(6, 8), chunks=(2, 8))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        o = row_sums(x, np.zeros(6, np.float32))
    assert kernel_blocks(o) == 3
    np.testing.assert_array_equal(o.compute(scheduler="sync"),
                                  np.arange(48.0).reshape(6, 8).sum(axis=1))


def test_a_kernel_unpickled_by_value_again_is_the_same_kernel():
    import cloudpickle
    import pickle

    @pk.kernel
    def local(x, o):
        o[...] = x[...] + 1

    payload = cloudpickle.dumps(local)
    first, second = pickle.loads(payload), pickle.loads(payload)
    assert first is second and first is not local  # compiled once per process
    x = np.arange(3.0)
    o = np.empty(3)
    first(x, o)
    np.testing.assert_array_equal(o, x + 1)
