#!/usr/bin/env python3
"""Issue 18's benchmark: row kernels (softmax, logsumexp, layernorm, rmsnorm
over rows of 128, 1024 and 8192), math-heavy elementwise kernels (gelu in
tanh and erf forms, softplus, sigmoid) and full reductions (sum, max, mean
of 1e7) against jax.jit and numba `@njit(parallel=True)` loops, float32.

Each (kernel, size, library) runs in its own process (idle OpenMP, XLA and
numba threads spin and would steal a core from the next library), best
median of --rounds processes. Every result is checked against NumPy in
float64 before it is timed. Writes JSON for bench/report.py.

    python3 bench/run_rows.py [--quick] [--rounds 2] [--output build/bench/rows.json]
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys

ROW_KERNELS = ["softmax", "logsumexp", "layernorm", "rmsnorm"]
ELEMENTWISE = ["gelu (tanh)", "gelu (erf)", "softplus", "sigmoid"]
REDUCTIONS = ["sum", "max", "mean"]
SIZES = [16384, 1 << 20, 1 << 23]
ROW_LENGTHS = [128, 1024, 8192]

CHILD = r'''
import json, math, os, sys, time
import numpy as np
name, n, length, library = json.loads(sys.argv[1])
rows = n // length if length else 0
rng = np.random.default_rng(0)
x = rng.standard_normal((rows, length) if length else n).astype(np.float32)
g = rng.standard_normal(length or 1).astype(np.float32)
b = rng.standard_normal(length or 1).astype(np.float32)
shape = {"logsumexp": (rows, 1), "sum": (), "max": (), "mean": ()}.get(name, x.shape)
o = np.empty(shape, np.float32)
x64 = x.astype(np.float64)

def formula(v, g, b, xp, erf, sigmoid):
    """The kernel's result from v (and g, b) with the functions of `xp`
    (NumPy on arrays or traced values, jax.numpy), `erf` and `sigmoid`."""
    if name == "softmax":
        e = xp.exp(v - v.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    if name == "logsumexp":
        m = v.max(axis=-1, keepdims=True)
        return m + xp.log(xp.exp(v - m).sum(axis=-1, keepdims=True))
    if name == "layernorm":
        mean = v.mean(axis=-1, keepdims=True)
        var = ((v - mean) ** 2).mean(axis=-1, keepdims=True)
        return (v - mean) / xp.sqrt(var + 1e-5) * g + b
    if name == "rmsnorm":
        return v / xp.sqrt((v * v).mean(axis=-1, keepdims=True) + 1e-5) * g
    if name == "gelu (tanh)":
        return 0.5 * v * (1.0 + xp.tanh(0.7978845608 * (v + 0.044715 * v ** 3)))
    if name == "gelu (erf)":
        return 0.5 * v * (1.0 + erf(v * 0.7071067811865476))
    if name == "softplus":
        return xp.maximum(v, 0) + xp.log1p(xp.exp(-xp.abs(v)))
    if name == "sigmoid":
        return sigmoid(v)
    if name == "fma":
        return v * v + v
    return getattr(v, name)()

def reference():
    erf = np.frompyfunc(math.erf, 1, 1)
    return formula(x64, g.astype(np.float64), b.astype(np.float64), np,
                   lambda v: erf(v).astype(np.float64), lambda v: 1 / (1 + np.exp(-v)))

if library == "picokernel":
    import picokernel as pk
    def body(x_ref, g_ref, b_ref, o_ref):
        o_ref[...] = formula(x_ref[...], g_ref[...], b_ref[...], np, pk.erf, pk.sigmoid)
    kernel = pk.kernel(body, dynamic=False)
    def call():
        kernel(x, g, b, o)
    def result():
        return o
elif library == "jax":
    import jax, jax.numpy as jnp
    def f(v, g, b):
        return formula(v, g, b, jnp, jax.scipy.special.erf, jax.nn.sigmoid)
    jf = jax.jit(f)
    args = [jax.device_put(a) for a in (x, g, b)]
    out = [None]
    def call():
        out[0] = jf(*args).block_until_ready()
    def result():
        return np.asarray(out[0])
else:
    import numba
    from numba import njit, prange
    fm = dict(parallel=True, fastmath=True, cache=False)
    if name in ("softmax", "logsumexp", "layernorm", "rmsnorm"):
        @njit(**fm)
        def rowwise(x, g, b, o, kind):
            rows, length = x.shape
            for i in prange(rows):
                r = x[i]
                if kind == 0 or kind == 1:
                    m = r[0]
                    for j in range(length):
                        m = max(m, r[j])
                    s = np.float32(0)
                    for j in range(length):
                        s += np.exp(r[j] - m)
                    if kind == 1:
                        o[i, 0] = m + np.log(s)
                    else:
                        inv = np.float32(1) / s
                        for j in range(length):
                            o[i, j] = np.exp(r[j] - m) * inv
                elif kind == 2:
                    s = np.float32(0)
                    for j in range(length):
                        s += r[j]
                    mean = s / length
                    q = np.float32(0)
                    for j in range(length):
                        q += (r[j] - mean) ** 2
                    inv = np.float32(1) / np.sqrt(q / length + np.float32(1e-5))
                    for j in range(length):
                        o[i, j] = (r[j] - mean) * inv * g[j] + b[j]
                else:
                    q = np.float32(0)
                    for j in range(length):
                        q += r[j] * r[j]
                    inv = np.float32(1) / np.sqrt(q / length + np.float32(1e-5))
                    for j in range(length):
                        o[i, j] = r[j] * inv * g[j]
        kind = ["softmax", "logsumexp", "layernorm", "rmsnorm"].index(name)
        def call():
            rowwise(x, g, b, o, kind)
    elif name in ("sum", "max", "mean"):
        @njit(**fm)
        def reduce(x, kind):
            if kind == 1:
                m = x[0]
                for i in prange(x.size):
                    m = max(m, x[i])
                return m
            s = np.float32(0)
            for i in prange(x.size):
                s += x[i]
            return s / x.size if kind == 2 else s
        kind = ["sum", "max", "mean"].index(name)
        def call():
            o[...] = reduce(x, kind)
    else:
        @njit(**fm)
        def elementwise(x, o, kind):
            for i in prange(x.size):
                v = x[i]
                if kind == 0:
                    o[i] = np.float32(0.5) * v * (np.float32(1) + np.tanh(
                        np.float32(0.7978845608) * (v + np.float32(0.044715) * v * v * v)))
                elif kind == 1:
                    o[i] = np.float32(0.5) * v * (np.float32(1) + math.erf(
                        v * np.float32(0.7071067811865476)))
                elif kind == 2:
                    o[i] = max(v, np.float32(0)) + np.log1p(np.exp(-abs(v)))
                elif kind == 3:
                    o[i] = np.float32(1) / (np.float32(1) + np.exp(-v))
                else:
                    o[i] = v * v + v
        kind = ["gelu (tanh)", "gelu (erf)", "softplus", "sigmoid", "fma"].index(name)
        def call():
            elementwise(x, o, kind)
    def result():
        return o
call()
want = reference()
np.testing.assert_allclose(np.asarray(result(), np.float64).reshape(np.shape(want)), want,
                           rtol=2e-4 if name not in ("sum", "mean") else 1e-3,
                           atol=1e-4 if name not in ("sum", "mean") else 1e-2 * math.sqrt(n))
number = 1
while True:
    start = time.perf_counter()
    for _ in range(number):
        call()
    if time.perf_counter() - start > 0.05:
        break
    number *= 2
times = []
for _ in range(7):
    start = time.perf_counter()
    for _ in range(number):
        call()
    times.append((time.perf_counter() - start) / number)
times.sort()
print(json.dumps({"median": times[3]}))
'''


def run_child(case, library):
    env = dict(os.environ, PK_CACHE="0")
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(case + [library])],
                          env=env, capture_output=True, text=True)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr else "failed"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="1M elements only")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--kernels", default=None,
                        help="comma-separated kernel names to run")
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    libraries = ["picokernel"] + [lib for lib in ("jax", "numba")
                                  if importlib.util.find_spec(lib)]
    sizes = [1 << 20] if args.quick else SIZES
    cases = [[name, n, length] for name in ROW_KERNELS for n in sizes
             for length in ROW_LENGTHS if length <= n]
    cases += [[name, n, 0] for name in ELEMENTWISE for n in sizes if n >= 1 << 20]
    cases += [[name, 10_000_000, 0] for name in REDUCTIONS + ["fma"]]
    if args.kernels:
        wanted = args.kernels.split(",")
        cases = [c for c in cases if c[0] in wanted]
    rows = []
    print(f"{'kernel':12} {'n':>9} {'row':>5}  " + "  ".join(f"{lib:>10}" for lib in libraries)
          + "  jax/pk  numba/pk")
    for case in cases:
        best = {}
        for _ in range(args.rounds):
            for library in libraries:
                measured = run_child(case, library)
                if "error" in measured:
                    best[library] = measured
                elif (library not in best or "error" in best[library]
                      or measured["median"] < best[library]["median"]):
                    best[library] = measured
        row = {"name": case[0], "n": case[1], "row_length": case[2], "times": best}
        rows.append(row)
        pk = best["picokernel"].get("median")
        cells = [f"{best[lib]['median'] * 1e6:9.1f}µ" if "median" in best[lib] else "     error"
                 for lib in libraries]
        ratios = [f"{best[lib]['median'] / pk:6.2f}" if pk and "median" in best.get(lib, {})
                  else "     —" for lib in ("jax", "numba")]
        print(f"{case[0]:12} {case[1]:9} {case[2]:5}  " + "  ".join(cells) + "  "
              + "  ".join(ratios), flush=True)
        for lib in libraries:
            if "error" in best[lib]:
                print(f"  {lib}: {best[lib]['error']}", flush=True)
    if args.output:
        os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
        with open(args.output, "w") as f:
            json.dump({"rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
