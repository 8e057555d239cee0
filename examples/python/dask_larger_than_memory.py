"""A picokernel stencil and sum over an array larger than a worker's memory,
on a dask.distributed cluster (pip install picokernel[dask]).

    python3 examples/python/dask_larger_than_memory.py [--gib 4] [--workers 2]
        [--memory-limit 1GiB] [--chunk-mib 128] [--scheduler ADDRESS]

The input, `--gib` GiB of float64 numbers, is made by da.random block by
block on the workers, so no process ever holds it; each worker may use
`--memory-limit` bytes. The kernels smooth it (a 3-point stencil: blocks
exchange one-element halos) and sum the squares of the result (each block's
partial sum combines in a tree), and the same computation as a NumPy
expression on dask.array checks the answer. Printed: the time and
throughput (GB/s of input) of each, and of the same picokernel graph run by
one process on one thread (Dask's synchronous scheduler), which gives the
cluster's throughput per worker against one process's.

With --scheduler, the graph runs on that cluster (tcp://host:8786) instead
of a LocalCluster: the same code scales past one machine.
"""
import argparse
import time

import dask
import dask.array as da
import distributed
import numpy as np

import picokernel

# One thread per kernel: each worker is one core, and so is the one-process
# baseline (a worker's OMP_NUM_THREADS is 1 too).
SINGLE_THREADED = dict(parallel_threshold=2**62)


@picokernel.kernel(**SINGLE_THREADED)
def smooth(x, o):
    o[...] = x[...]
    o[1:-1] = 0.25 * x[:-2] + 0.5 * x[1:-1] + 0.25 * x[2:]


@picokernel.kernel(**SINGLE_THREADED)
def sum_of_squares(y, s):
    s[...] = (y[...] * y[...]).sum()


def picokernel_graph(x):
    y = smooth(x, da.empty_like(x))
    return sum_of_squares(y, da.empty((), dtype=x.dtype))


def numpy_expression(x):
    inner = 0.25 * x[:-2] + 0.5 * x[1:-1] + 0.25 * x[2:]
    return (inner * inner).sum() + x[0] * x[0] + x[-1] * x[-1]


def timed(label, compute, nbytes):
    start = time.perf_counter()
    value = compute()
    seconds = time.perf_counter() - start
    print(f"{label:<44} {seconds:8.2f} s {nbytes / seconds / 1e9:7.2f} GB/s")
    return value, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=4.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="1GiB")
    parser.add_argument("--chunk-mib", type=float, default=128)
    parser.add_argument("--scheduler", default=None)
    args = parser.parse_args()

    n = int(args.gib * 2**30 / 8)
    chunk = max(2, int(args.chunk_mib * 2**20 / 8))
    nbytes = n * 8

    def make_input():
        return da.random.default_rng(42).random(n, chunks=chunk)

    if args.scheduler:
        client = distributed.Client(args.scheduler)
        cluster = None
    else:
        cluster = distributed.LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True,
            memory_limit=args.memory_limit, dashboard_address=None)
        client = distributed.Client(cluster)
    workers = len(client.scheduler_info()["workers"])
    print(f"{args.gib:g} GiB of float64 in {-(-n // chunk)} chunks; {workers} workers"
          + (f" of {args.memory_limit} each" if cluster else ""))
    try:
        # Warm up: each worker compiles the kernels for the blocks' shapes
        # (not timed; a small array of the same chunking).
        warm = da.random.default_rng(1).random(3 * chunk, chunks=chunk)
        picokernel_graph(warm).compute()
        ours, ours_s = timed("picokernel on the cluster",
                             picokernel_graph(make_input()).compute, nbytes)
        theirs, theirs_s = timed("dask.array (NumPy expression) on the cluster",
                                 numpy_expression(make_input()).compute, nbytes)
        assert np.isclose(ours, theirs, rtol=1e-9), (ours, theirs)
    finally:
        client.close()
        if cluster:
            cluster.close()
    with dask.config.set(scheduler="sync"):
        picokernel_graph(da.random.default_rng(1).random(3 * chunk, chunks=chunk)).compute()
        single, single_s = timed("picokernel, one process on one thread",
                                 picokernel_graph(make_input()).compute, nbytes)
    assert np.isclose(single, ours, rtol=1e-9), (single, ours)
    print(f"cluster vs dask.array: {theirs_s / ours_s:.2f}x; "
          f"throughput per worker vs one process: "
          f"{single_s / ours_s / workers:.2f}")


if __name__ == "__main__":
    main()
