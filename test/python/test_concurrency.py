"""8 Python threads call several kernels on mixed shapes at once: every
result equals NumPy's and every (kernel, shape) compiles once. Compiled
calls release the GIL (but for short runs of a compiled kernel), so the
threads really run the kernels concurrently."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import picokernel


def fma(a_ref, b_ref, c_ref, o_ref):
    o_ref[...] = a_ref[...] * b_ref[...] + c_ref[...]


def softmax(x_ref, o_ref):
    x = x_ref[...]
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    o_ref[...] = e / e.sum(axis=-1, keepdims=True)


def stencil(x_ref, o_ref):
    o_ref[1:-1] = x_ref[2:] - x_ref[:-2]


def test_threads_share_kernels_and_compile_each_shape_once():
    kernels = [picokernel.kernel(f) for f in (fma, softmax, stencil)]
    sizes = [3, 40, 1000, 40000]
    failures = []

    def work(thread):
        rng = np.random.default_rng(thread)
        for call in range(24):
            n = sizes[(thread * 7 + call) % len(sizes)]
            which = (thread + call) % 3
            try:
                if which == 0:
                    a, b, c = (rng.integers(-9, 9, n).astype(np.float32) for _ in range(3))
                    o = np.empty_like(a)
                    kernels[0](a, b, c, o)
                    np.testing.assert_array_equal(o, a * b + c)
                elif which == 1:
                    x = rng.standard_normal((3, n))
                    o = np.empty_like(x)
                    kernels[1](x, o)
                    e = np.exp(x - x.max(axis=-1, keepdims=True))
                    np.testing.assert_allclose(o, e / e.sum(axis=-1, keepdims=True),
                                               rtol=1e-12)
                else:
                    x = np.arange(n, dtype=np.int32) * (thread + 1)
                    o = np.full(n, -1, np.int32)
                    kernels[2](x, o)
                    want = np.full(n, -1, np.int32)
                    want[1:-1] = x[2:] - x[:-2]
                    np.testing.assert_array_equal(o, want)
            except Exception as error:  # reported by the main thread
                failures.append(error)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures[0]
    for kernel in kernels:
        info = kernel.cache_info()
        # each shape at most once (racing first calls), and one dynamic kernel
        assert info.misses <= len(sizes) + 1
        assert info.misses == info.entries
    assert sum(k.cache_info().hits + k.cache_info().misses for k in kernels) == 8 * 24


VULKAN_FIRST_USE = """
import threading, numpy as np, picokernel

def add(a_ref, o_ref):
    o_ref[...] = a_ref[...] + 1

def total(a_ref, o_ref):
    o_ref[...] = a_ref[...].sum(axis=-1)

results = {}

def work(name, fn, shape):
    a = np.ones(shape, np.float32)
    o = np.zeros(shape[:-1] if name == "total" else shape, np.float32)
    picokernel.kernel(fn, backend="vulkan")(a, o)
    results[name] = o

threads = [threading.Thread(target=work, args=("add", add, (1000,))),
           threading.Thread(target=work, args=("total", total, (10, 100)))]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
assert (results["add"] == 2).all() and (results["total"] == 100).all(), results
print("ok")
"""


def test_two_threads_compile_the_first_vulkan_kernels_at_once():
    """The first two Vulkan kernels of a process, compiled at once by two
    threads, loaded the SPIR-V dialects into the shared MLIR context together
    and crashed: each run is a fresh process, several times."""
    available, why = picokernel.vulkan_available()
    if not available:
        pytest.skip(f"no Vulkan device: {why}")
    for _ in range(4):
        result = subprocess.run([sys.executable, "-c", VULKAN_FIRST_USE],
                                capture_output=True, text=True, timeout=300,
                                env={**os.environ, "PK_CACHE": "0"})
        assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


SLOW_TRACE = """
import threading, time
import numpy as np
import picokernel
traced = threading.Event()

@picokernel.kernel
def slow(x_ref, o_ref):
    traced.set()
    time.sleep(0.2)  # the other threads arrive mid-trace
    o_ref[...] = x_ref[...] * 2

x = np.arange(5, dtype=np.float32)
outputs = [np.zeros(5, np.float32) for _ in range(6)]
threads = [threading.Thread(target=slow, args=(x, o)) for o in outputs]
threads[0].start()
traced.wait(10)
for thread in threads[1:]:
    thread.start()
for thread in threads:
    thread.join()
for o in outputs:
    np.testing.assert_array_equal(o, x * 2)
assert slow.cache_info().misses == 1
print("ok")
"""


def test_short_calls_during_a_slow_trace_of_their_shape_do_not_deadlock():
    """Short calls keep the GIL while a compiled kernel runs; one that
    finds its shape still being traced by another thread (which needs the
    GIL) must let go of it and wait like any other call. (In a process of
    its own: a deadlock holds the GIL, which no timeout here could take.)"""
    done = subprocess.run([sys.executable, "-c", SLOW_TRACE], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_small_temporaries_on_the_stack_fit_a_small_thread_stack():
    """A kernel's small temporaries outside loops (the slots of long sums'
    blocks, their pairwise levels) live on the calling thread's stack: a
    kernel of many of them runs in a thread with a 256 KiB stack, several
    threads at once, each with its own."""
    def many_sums(x, o):
        total = x[0:3000].sum()
        for start in range(1, 40):
            total = total + x[start:start + 3000].sum() * (start % 3)
        o[...] = total

    kernel = picokernel.kernel(many_sums)
    x = np.random.default_rng(3).random(3100).astype(np.float32)
    want = sum(float(x[s:s + 3000].astype(np.float64).sum()) * (s % 3 if s else 1)
               for s in range(40))
    results, errors = [], []

    def run():
        try:
            for _ in range(50):
                out = np.empty((), np.float32)
                kernel(x, out)
                results.append(float(out))
        except Exception as error:  # reported below
            errors.append(error)

    previous = threading.stack_size(256 << 10)
    try:
        threads = [threading.Thread(target=run) for _ in range(3)]
    finally:
        threading.stack_size(previous)
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert len(results) == 150
    np.testing.assert_allclose(results, want, rtol=1e-5)
