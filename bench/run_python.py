#!/usr/bin/env python3
"""Python peers side by side in one process: NumPy, the seed's out= lowering,
numexpr, jax.jit (CPU) and picokernel. Writes JSON results for
bench/report.py (which renders docs/benchmarks.md and the plots).

    python3 bench/run_python.py [--quick] [--output build/bench/python.json]
"""
import argparse
import json
import os
import platform
import time

import subprocess
import sys
import tempfile

import numpy as np

from machine import cpu_model

# Throughput and compile times are measured compiling: the disk cache is
# measured on its own, in fresh processes (disk_cache_first_calls).
os.environ["PK_CACHE"] = "0"

import picokernel  # noqa: E402

try:
    import numexpr
except ImportError:  # reported as missing in the tables
    numexpr = None
try:
    import numba
except ImportError:
    numba = None
try:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
except ImportError:
    jax = None


def calibrate(fn, target):
    """Calls per timed loop so that one loop lasts about `target` seconds."""
    fn()  # warm-up: never fold a compile into a throughput figure
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        if time.perf_counter() - start > target or number > 1 << 22:
            return number
        number *= 4


def measure_all(variants, target=0.02, repeats=7):
    """Median and spread ((max - min) / median) of one call's time for each
    variant. The repetitions of all variants are interleaved, in a rotating
    order, so that drifting memory bandwidth on a shared machine affects
    every variant alike."""
    names = list(variants)
    numbers = {name: calibrate(variants[name], target) for name in names}
    samples = {name: [] for name in names}
    for repeat in range(repeats):
        for name in names[repeat % len(names):] + names[:repeat % len(names)]:
            fn, number = variants[name], numbers[name]
            start = time.perf_counter()
            for _ in range(number):
                fn()
            samples[name].append((time.perf_counter() - start) / number)
    results = {}
    for name, times in samples.items():
        times.sort()
        median = times[len(times) // 2]
        results[name] = {"median": median, "spread": (times[-1] - times[0]) / median}
    return results


def first_call(make):
    """Seconds of the first call of a freshly made callable."""
    fn = make()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


#
# Workloads: each builds its variants for given arrays.
#

def fma_variants(n, dtype):
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(n).astype(dtype) for _ in range(3))
    o = np.empty_like(a)
    buf = np.empty_like(a)

    @picokernel.kernel
    def fma(a_ref, b_ref, c_ref, o_ref):
        o_ref[...] = a_ref[...] * b_ref[...] + c_ref[...]

    def numpy_line():
        o[...] = a * b + c

    def seed_lowering():
        np.multiply(a, b, out=buf)
        np.add(buf, c, out=o)

    variants = {
        "picokernel": lambda: fma(a, b, c, o),
        "numpy": numpy_line,
        "seed out=": seed_lowering,
    }
    if numexpr:
        scope = {"a": a, "b": b, "c": c}
        variants["numexpr"] = lambda: numexpr.evaluate(
            "a * b + c", local_dict=scope, out=o)
    if jax:
        f = jax.jit(lambda x, y, z: x * y + z)
        ja, jb, jc = (jnp.asarray(x) for x in (a, b, c))
        variants["jax.jit"] = lambda: f(ja, jb, jc).block_until_ready()
    check = a * b + c
    fma(a, b, c, o)
    assert np.array_equal(o, check)
    return variants, 4 * a.itemsize


def sum_product_variants(n, dtype):
    rng = np.random.default_rng(1)
    a, b, c, d = (rng.standard_normal(n).astype(dtype) for _ in range(4))
    o = np.empty_like(a)

    @picokernel.kernel
    def sum_product(a_ref, b_ref, c_ref, d_ref, o_ref):
        o_ref[...] = (a_ref[...] + b_ref[...]) * (c_ref[...] + d_ref[...])

    def numpy_line():
        o[...] = (a + b) * (c + d)

    variants = {"picokernel": lambda: sum_product(a, b, c, d, o),
                "numpy": numpy_line}
    if numexpr:
        scope = {"a": a, "b": b, "c": c, "d": d}
        variants["numexpr"] = lambda: numexpr.evaluate(
            "(a + b) * (c + d)", local_dict=scope, out=o)
    if jax:
        f = jax.jit(lambda w, x, y, z: (w + x) * (y + z))
        js = [jnp.asarray(x) for x in (a, b, c, d)]
        variants["jax.jit"] = lambda: f(*js).block_until_ready()
    return variants, 5 * a.itemsize


def chain_expression(ops):
    """x op ... with `ops` binary ops alternating `* b` and `+ c`."""
    text = "a"
    for i in range(ops):
        text = f"({text} * b)" if i % 2 == 0 else f"({text} + c)"
    return text


def chain_variants(n, dtype, ops):
    rng = np.random.default_rng(2)
    a, b, c = (rng.standard_normal(n).astype(dtype) * 0.5 for _ in range(3))
    o = np.empty_like(a)
    expression = chain_expression(ops)
    namespace = {}
    exec(f"def chain(a_ref, b_ref, c_ref, o_ref):\n"
         f"    a, b, c = a_ref[...], b_ref[...], c_ref[...]\n"
         f"    o_ref[...] = {expression}\n", namespace)
    kernel = picokernel.kernel(namespace["chain"])
    scope = {"a": a, "b": b, "c": c}

    def numpy_line():
        o[...] = eval(compiled, scope)

    compiled = compile(expression, "<chain>", "eval")
    variants = {"picokernel": lambda: kernel(a, b, c, o), "numpy": numpy_line}
    if numexpr:
        variants["numexpr"] = lambda: numexpr.evaluate(
            expression, local_dict=scope, out=o)
    if jax:
        f = jax.jit(eval(f"lambda a, b, c: {expression}"))
        ja, jb, jc = (jnp.asarray(x) for x in (a, b, c))
        variants["jax.jit"] = lambda: f(ja, jb, jc).block_until_ready()
    return variants


def nn_variants(name, n_rows, dtype=np.float32):
    """softplus, gelu (tanh form), softmax and layernorm over rows of 1024
    float32."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((n_rows, 1024)).astype(dtype)
    o = np.empty_like(x)
    inputs = (x,)
    if name == "softplus":
        def kernel(x_ref, o_ref):
            v = x_ref[...]
            o_ref[...] = np.maximum(v, 0) + np.log1p(np.exp(-np.abs(v)))
        expression = "where(x > 0, x, 0) + log1p(exp(-abs(x)))"

        def jax_fn(v):
            return jnp.maximum(v, 0) + jnp.log1p(jnp.exp(-jnp.abs(v)))
    elif name == "gelu":
        def kernel(x_ref, o_ref):
            v = x_ref[...]
            o_ref[...] = 0.5 * v * (1.0 + np.tanh(0.7978845608 * (v + 0.044715 * v ** 3)))
        expression = "0.5 * x * (1.0 + tanh(0.7978845608 * (x + 0.044715 * x ** 3)))"

        def jax_fn(v):
            return 0.5 * v * (1.0 + jnp.tanh(0.7978845608 * (v + 0.044715 * v ** 3)))
    elif name == "softmax":
        def kernel(x_ref, o_ref):
            v = x_ref[...]
            e = np.exp(v - v.max(axis=-1, keepdims=True))
            o_ref[...] = e / e.sum(axis=-1, keepdims=True)
        expression = None

        def jax_fn(v):
            e = jnp.exp(v - v.max(axis=-1, keepdims=True))
            return e / e.sum(axis=-1, keepdims=True)
    else:
        inputs = (x, rng.standard_normal(1024).astype(dtype),
                  rng.standard_normal(1024).astype(dtype))

        def kernel(x_ref, g_ref, b_ref, o_ref):
            v = x_ref[...]
            mean = v.mean(axis=-1, keepdims=True)
            variance = ((v - mean) ** 2.0).mean(axis=-1, keepdims=True)
            o_ref[...] = (v - mean) / np.sqrt(variance + 1e-5) * g_ref[...] + b_ref[...]
        expression = None

        def jax_fn(v, g, b):
            mean = v.mean(axis=-1, keepdims=True)
            variance = ((v - mean) ** 2.0).mean(axis=-1, keepdims=True)
            return (v - mean) / jnp.sqrt(variance + 1e-5) * g + b

    compiled = picokernel.kernel(kernel)
    # NumPy arrays are refs already: `ref[...]` reads and assigns the whole array.
    variants = {"picokernel": lambda: compiled(*inputs, o),
                "numpy": lambda: kernel(*inputs, o)}
    if numexpr and expression:
        scope = {"x": x}
        variants["numexpr"] = lambda: numexpr.evaluate(expression, local_dict=scope, out=o)
    if jax:
        f = jax.jit(jax_fn)
        jax_inputs = [jnp.asarray(a) for a in inputs]
        variants["jax.jit"] = lambda: f(*jax_inputs).block_until_ready()
    return variants


def full_reduction_variants(op, n, dtype=np.float32):
    """x.sum() / x.max() / x.mean() of n float32 elements into a 0-d output;
    numba's peer is a parallel prange loop (sum and mean)."""
    x = np.random.default_rng(5).standard_normal(n).astype(dtype)
    o = np.empty((), dtype)

    def kernel(x_ref, o_ref):
        o_ref[...] = getattr(x_ref[...], op)()

    compiled = picokernel.kernel(kernel)
    reduce = getattr(np, op)
    variants = {"picokernel": lambda: compiled(x, o), "numpy": lambda: reduce(x)}
    if jax:
        f = jax.jit(getattr(jnp, op))
        jx = jnp.asarray(x)
        variants["jax.jit"] = lambda: f(jx).block_until_ready()
    if numba and op in ("sum", "mean"):
        @numba.njit(parallel=True, fastmath=True)
        def parallel_sum(v):
            total = np.float32(0)
            for i in numba.prange(v.size):
                total += v[i]
            return total

        scale = 1 / n if op == "mean" else 1
        variants["numba"] = lambda: parallel_sum(x) * scale
    compiled(x, o)
    np.testing.assert_allclose(o, reduce(x), rtol=1e-4, atol=1e-3)
    return variants, x.itemsize


def stencil_variants(n, dtype=np.float32):
    """The 3-point Laplacian `o[1:-1] = x[2:] - 2 x[1:-1] + x[:-2]`: three
    shifted slices of one array, written into a slice of the output."""
    x = np.random.default_rng(5).standard_normal(n).astype(dtype)
    o = np.zeros_like(x)

    def laplacian(x_ref, o_ref):
        o_ref[1:-1] = x_ref[2:] - 2 * x_ref[1:-1] + x_ref[:-2]

    compiled = picokernel.kernel(laplacian)
    variants = {"picokernel": lambda: compiled(x, o),
                "numpy": lambda: laplacian(x, o)}
    if numexpr:
        scope = {"right": x[2:], "middle": x[1:-1], "left": x[:-2]}
        inner = o[1:-1]
        variants["numexpr"] = lambda: numexpr.evaluate(
            "right - 2 * middle + left", local_dict=scope, out=inner)
    if jax:
        f = jax.jit(lambda v: v[2:] - 2 * v[1:-1] + v[:-2])
        jx = jnp.asarray(x)
        variants["jax.jit"] = lambda: f(jx).block_until_ready()
    return variants, 2 * x.itemsize


def compile_times():
    """First-call seconds for fma at n=1000 (each made fresh)."""
    a = np.ones(1000, np.float32)

    def make_pk():
        @picokernel.kernel
        def fma(a_ref, b_ref, c_ref, o_ref):
            o_ref[...] = a_ref[...] * b_ref[...] + c_ref[...]
        return lambda: fma(a, a, a, a)

    times = {"picokernel": sorted(first_call(make_pk) for _ in range(5))[2]}
    if jax:
        ja = jnp.asarray(a)

        def make_jax():
            f = jax.jit(lambda x, y, z: x * y + z)
            return lambda: f(ja, ja, ja).block_until_ready()
        times["jax.jit"] = sorted(first_call(make_jax) for _ in range(5))[2]
    return times


def compile_curve(lengths):
    """First-call seconds (trace + compile + run, n=1000) of elementwise
    chains of each length: how compile time grows with a kernel's size."""
    times = {}
    for ops in lengths:
        lines = [f"    x = x {'+*-'[i % 3]} {(i % 7 + 1) / 8}" if i % 4 != 3
                 else "    x = np.maximum(x, y * 0.5)" for i in range(ops)]
        scope = {"np": np}
        exec("def chain(a_ref, b_ref, o_ref):\n    x = a_ref[...]\n"
             "    y = b_ref[...]\n" + "\n".join(lines) + "\n    o_ref[...] = x\n",
             scope)
        a = np.linspace(-1, 1, 1000)

        def make(fn=scope["chain"]):
            kernel = picokernel.kernel(fn)
            return lambda: kernel(a, a, np.empty_like(a))
        times[ops] = first_call(make)
        print("compile curve", ops, f"{times[ops]:.2f}s", flush=True)
    return times


DISK_PROBE = """
import time, numpy as np, picokernel

@picokernel.kernel
def fma(a_ref, b_ref, c_ref, o_ref):
    o_ref[...] = a_ref[...] * b_ref[...] + c_ref[...]

a = np.ones(1000, np.float32)
start = time.perf_counter()
fma(a, a, a, a)
print(time.perf_counter() - start, fma.cache_info().disk_loads)
"""


def disk_cache_first_calls():
    """First-call seconds for fma at n=1000 in a new process: compiling (an
    empty disk cache), then loading what the first process stored (median
    of 5 processes)."""
    with tempfile.TemporaryDirectory() as directory:
        env = dict(os.environ, PK_CACHE="1", PK_CACHE_DIR=directory)
        runs = [subprocess.run([sys.executable, "-c", DISK_PROBE], env=env,
                               check=True, capture_output=True,
                               text=True).stdout.split() for _ in range(6)]
    assert runs[0][1] == "0" and all(r[1] == "1" for r in runs[1:]), runs
    return float(runs[0][0]), sorted(float(r[0]) for r in runs[1:])[2]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true",
                        help="fewer sizes (a smoke run)")
    parser.add_argument("--output", default="build/bench/python.json")
    args = parser.parse_args()

    sizes = [4, 1000, 100_000, 1_000_000, 10_000_000, 30_000_000]
    if args.quick:
        sizes = [4, 1000, 100_000]
    results = {
        "machine": {
            "cpu": cpu_model(),
            "threads": os.cpu_count(),
            "numpy": np.__version__,
            "numexpr": numexpr.__version__ if numexpr else None,
            "numexpr_threads": numexpr.get_num_threads() if numexpr else None,
            "jax": jax.__version__ if jax else None,
            "numba": numba.__version__ if numba else None,
        },
        "fma": [], "sum_product": [], "chain": [],
    }
    for dtype in (np.float32, np.float64):
        for n in sizes if dtype == np.float32 else sizes[::2]:
            variants, bytes_per_element = fma_variants(n, dtype)
            row = {"n": n, "dtype": np.dtype(dtype).name,
                   "bytes_per_element": bytes_per_element,
                   "times": measure_all(variants)}
            results["fma"].append(row)
            print("fma", row["dtype"], n,
                  {k: f"{v['median'] * 1e6:.2f}us" for k, v in row["times"].items()},
                  flush=True)
    for n in sizes:
        variants, bytes_per_element = sum_product_variants(n, np.float32)
        row = {"n": n, "dtype": "float32", "bytes_per_element": bytes_per_element,
               "times": measure_all(variants)}
        results["sum_product"].append(row)
        print("sum_product", n, flush=True)
    chain_n = 1_000_000 if args.quick else 10_000_000
    for ops in (1, 2, 4, 8, 16):
        variants = chain_variants(chain_n, np.float32, ops)
        results["chain"].append({"ops": ops, "n": chain_n,
                                 "times": measure_all(variants)})
        print("chain", ops, flush=True)
    results["nn"] = []
    for name in ("softplus", "gelu", "softmax", "layernorm"):
        for rows in ([16] if args.quick else [16, 1024, 8192]):
            results["nn"].append({"name": name, "n": rows * 1024,
                                  "times": measure_all(nn_variants(name, rows))})
            print(name, rows, flush=True)
    results["reductions"] = []
    for op in ("sum", "max", "mean"):
        for n in [s for s in sizes if s >= 100_000]:
            variants, bytes_per_element = full_reduction_variants(op, n)
            results["reductions"].append({"name": op, "n": n, "dtype": "float32",
                                          "bytes_per_element": bytes_per_element,
                                          "times": measure_all(variants)})
            print("reduction", op, n, flush=True)
    results["stencil"] = []
    for n in sizes:
        variants, bytes_per_element = stencil_variants(n)
        results["stencil"].append({"n": n, "dtype": "float32",
                                   "bytes_per_element": bytes_per_element,
                                   "times": measure_all(variants)})
        print("stencil", n, flush=True)
    results["first_call_seconds"] = compile_times()
    results["compile_curve"] = compile_curve(
        [125, 500] if args.quick else [125, 500, 2000, 8000])
    cold, warm = disk_cache_first_calls()
    results["first_call_seconds"]["picokernel, new process, compiling"] = cold
    results["first_call_seconds"]["picokernel, new process, from the disk cache"] = warm

    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
