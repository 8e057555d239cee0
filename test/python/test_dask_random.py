"""picokernel.dask over the whole language: random kernels
(random_language.py) run on Dask arrays of random chunks must give what the
same kernel gives on the whole NumPy arrays (each argument its own array:
Dask never writes its arguments, so none alias), or raise the same kind of
exception. Dask's synchronous scheduler runs them: the graphs are the
subject here; test_dask.py runs graphs on a cluster.

    PK_DASK_RANDOM_KERNELS=2000 PK_RANDOM_SEED=7 pytest test_dask_random.py
"""
import os
import warnings

import numpy as np
import pytest

import picokernel
import random_language
from conftest import report

da = pytest.importorskip("dask.array", reason="picokernel.dask needs dask")
import dask  # noqa: E402

from picokernel import dask as pkd  # noqa: E402

COUNT = int(os.environ.get("PK_DASK_RANDOM_KERNELS", 400))
FIRST_SEED = int(os.environ.get("PK_RANDOM_SEED", 0))


def random_chunks(rng, shape):
    """1 to 4 chunks of random sizes per dimension."""
    chunks = []
    for size in shape:
        cuts = sorted(set(rng.integers(1, size, size=int(rng.integers(0, 4))).tolist())) \
            if size > 1 else []
        bounds = [0] + cuts + [size]
        chunks.append(tuple(b - a for a, b in zip(bounds, bounds[1:])) or (size,))
    return tuple(chunks)


def check(seed):
    """(problem, blocks): None when the kernel agrees on Dask arrays, else
    why not; and the most chunks its graph split a dimension into."""
    case = random_language.Case(seed)
    if isinstance(case.expected, Exception):
        return None, 0  # NumPy raises: random_language's own test covers it
    kernel = picokernel.kernel(case.function(picokernel))
    _, views = case.layout.materialize()
    arrays = [np.array(view, copy=True) for view in views]
    rng = np.random.default_rng([seed, 99])
    chunked = [da.from_array(a.copy(), chunks=random_chunks(rng, a.shape)) for a in arrays]
    try:
        kernel(*arrays)
        expected_error = None
    except Exception as error:  # noqa: BLE001 - compared below
        expected_error = error
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", da.core.PerformanceWarning)
            graph = pkd._Graph(kernel, chunked)
            results = graph.outputs()
        results = results if isinstance(results, tuple) else (results,)
        computed = dask.compute(*results, scheduler="sync")
    except Exception as error:  # noqa: BLE001
        if expected_error is not None and \
                random_language.same_kind_of_error(error, expected_error):
            return None, 0
        return f"on Dask: {type(error).__name__}: {error}", 0
    if expected_error is not None:
        return f"the kernel raised {expected_error!r} on NumPy arrays, not on Dask", 0
    blocks = max(len(chunks) for chunks in graph.chunks.values() if chunks) \
        if any(graph.chunks.values()) else 1
    for ref, got in zip(graph.outputs_refs, computed):
        want = arrays[ref]
        rtol = random_language.tolerance(want.dtype) if random_language.is_float(
            want.dtype) else 0.0
        problem = random_language.compare(np.asarray(got), want, rtol, True)
        if problem:
            return f"argument {case.param_names[ref]}: {problem}", blocks
    return None, blocks


def test_random_kernels_on_dask_agree():
    failures, split = [], 0
    for seed in range(FIRST_SEED, FIRST_SEED + COUNT):
        problem, blocks = check(seed)
        split += blocks > 1
        if problem:
            failures.append(f"{random_language.Case(seed).describe()}\n{problem}")
    report(f"picokernel.dask: {COUNT - len(failures)} of {COUNT} random kernels agree "
           f"on Dask arrays; {split} of them ran on several blocks")
    assert not failures, f"{len(failures)} of {COUNT} disagree:\n\n" + \
        "\n\n".join(failures[:5])
    # The kernels must exercise graphs, not only arrays of one chunk.
    assert split >= COUNT // 4
