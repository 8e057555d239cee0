"""Dynamic sizes, side by side in one run: how many compiles and how long
the first calls take when every call brings a new size (picokernel's three
policies, numba, jax.jit), how fast kernels compiled for dynamic sizes run
next to static ones, what a cache hit costs with one shape or cycling
over 100, and the same on a Vulkan device where there is one. Writes
docs/dynamic.md.

    python3 bench/run_dynamic.py [--quick] [--output docs/dynamic.md]
"""

import argparse
import os
import platform
import statistics
import time

import numpy as np

import picokernel

try:
    import numba
except ImportError:
    numba = None
try:
    import jax
    import jax.numpy as jnp
except ImportError:
    jax = None


def fma_source(a, b, c, o):
    o[...] = a[...] * b[...] + c[...]


def make_fma(dynamic):
    return picokernel.kernel(lambda a, b, c, o: fma_source(a, b, c, o), dynamic=dynamic)


def fms_source(a, b, c, o):
    o[...] = a[...] * b[...] - c[...]


def chain16(x_ref, o_ref):
    x = x_ref[...]
    for i in range(16):
        x = x * 0.5 + 0.25 if i % 2 else np.maximum(x, 0.1) - 0.05
    o_ref[...] = x


def softmax_rows(x_ref, o_ref):
    v = x_ref[...]
    e = np.exp(v - v.max(axis=1, keepdims=True))
    o_ref[...] = e / e.sum(axis=1, keepdims=True)


def total(x_ref, o_ref):
    o_ref[...] = x_ref[...].sum()


def layer_norm(x_ref, o_ref):
    v = x_ref[...]
    centered = v - v.mean(axis=1, keepdims=True)
    o_ref[...] = centered / np.sqrt((centered * centered).mean(axis=1, keepdims=True) + 1e-5)


def stencil(x_ref, o_ref):
    o_ref[1:-1] = x_ref[2:] - 2 * x_ref[1:-1] + x_ref[:-2]


def laplacian(x_ref, o_ref):
    o_ref[1:-1, 1:-1] = (x_ref[2:, 1:-1] + x_ref[:-2, 1:-1] + x_ref[1:-1, 2:]
                         + x_ref[1:-1, :-2] - 4 * x_ref[1:-1, 1:-1])


def periodic(x_ref, o_ref):
    o_ref[1:-1] = x_ref[2:] - 2 * x_ref[1:-1] + x_ref[:-2]
    o_ref[0] = x_ref[1] - 2 * x_ref[0] + x_ref[-1]
    o_ref[-1] = x_ref[0] - 2 * x_ref[-1] + x_ref[-2]


def differences(x_ref, o_ref):
    o_ref[...] = x_ref[1:] - x_ref[:-1]


def matmul(a_ref, b_ref, o_ref):
    o_ref[...] = a_ref[...] @ b_ref[...]


def matmul_bias_relu(a_ref, b_ref, bias_ref, o_ref):
    o_ref[...] = np.maximum(a_ref[...] @ b_ref[...] + bias_ref[...], 0)


def numba_fma():
    """numba's fma: a loop over the flattened arrays (no temporaries)."""
    @numba.njit
    def fma(a, b, c, o):
        af, bf, cf, of = a.ravel(), b.ravel(), c.ravel(), o.ravel()
        for i in range(af.size):
            of[i] = af[i] * bf[i] + cf[i]
    return fma


def numba_fms():
    @numba.njit
    def fms(a, b, c, o):
        af, bf, cf, of = a.ravel(), b.ravel(), c.ravel(), o.ravel()
        for i in range(af.size):
            of[i] = af[i] * bf[i] - cf[i]
    return fms


def timed(call):
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def first_calls(make_call, shapes):
    """Seconds for one call per shape, each a first call for its size."""
    call = make_call()
    return sum(timed(lambda s=s: call(s)) for s in shapes)


def hundred_sizes(quick):
    """Compiles and total seconds for the first call at each of 100 sizes."""
    rows = []
    count = 20 if quick else 100
    one_d = [(n,) for n in range(1000, 1000 + count)]
    two_d = [(64 + i, 96 + 2 * i) for i in range(count)]
    for label, shapes in (("fma, n = 1000...", one_d), ("add, 2-D, both sizes vary", two_d)):
        arrays = {s: [np.random.rand(*s).astype(np.float32) for _ in range(4)] for s in shapes}
        row = {"case": label + (f"{999 + count}" if label.startswith("fma") else "")}
        for policy, name in ((None, "picokernel (dynamic=None)"),
                             (True, "picokernel (dynamic=True)"),
                             (False, "picokernel (dynamic=False)")):
            kernel = make_fma(policy)

            def run(s, kernel=kernel):
                a, b, c, o = arrays[s]
                kernel(a, b, c, o)
            seconds = sum(timed(lambda s=s: run(s)) for s in shapes)
            row[name] = (kernel.cache_info().misses, seconds)
        if numba:
            fma_numba = numba_fma()
            seconds = sum(timed(lambda s=s: fma_numba(*arrays[s])) for s in shapes)
            row["numba"] = (1, seconds)
        if jax:
            f = jax.jit(lambda a, b, c: a * b + c)
            jarrays = {s: [jnp.asarray(x) for x in arrays[s][:3]] for s in shapes}
            seconds = sum(timed(lambda s=s: f(*jarrays[s]).block_until_ready()) for s in shapes)
            row["jax.jit"] = (len(shapes), seconds)
        rows.append(row)
        print(row, flush=True)
    return rows


def best_of(call, reps, rounds=7):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(reps):
            call()
        times.append((time.perf_counter() - start) / reps)
    return statistics.median(times)


def speed_ratios(quick):
    """Static and dynamic kernels on the same arrays, interleaved."""
    cases = []
    sizes = [1000, 10_000, 1_000_000] if quick else [1000, 10_000, 100_000, 1_000_000, 10_000_000]
    for n in sizes:
        arrays = [np.random.rand(n).astype(np.float32) for _ in range(4)]
        cases.append((f"fma n={n:,}", lambda a, b, c, o: fma_source(a, b, c, o), arrays))
    for n in sizes[:-1]:
        arrays = [np.random.rand(n).astype(np.float32), np.empty(n, np.float32)]
        cases.append((f"16-op chain n={n:,}", chain16, arrays))
    for rows in ([64, 1024] if quick else [64, 1024, 8192]):
        arrays = [np.random.rand(rows, 1024).astype(np.float32),
                  np.empty((rows, 1024), np.float32)]
        cases.append((f"softmax {rows}x1024 (rows dynamic)", softmax_rows, arrays))
    for n in sizes:
        cases.append((f"x.sum() n={n:,}", total,
                      [np.random.rand(n).astype(np.float32), np.empty((), np.float32)]))
    for rows, cols in ([(2, 3), (100, 3000)] if quick else
                       [(2, 3), (8, 16), (64, 64), (100, 3000), (512, 5000)]):
        arrays = [np.random.rand(rows, cols).astype(np.float32),
                  np.empty((rows, cols), np.float32)]
        cases.append((f"softmax {rows}x{cols} (both sizes dynamic)", softmax_rows, arrays))
        cases.append((f"layer norm {rows}x{cols} (both sizes dynamic)", layer_norm, arrays))
    for n in ([10_000, 1_000_000] if quick else [1000, 10_000, 1_000_000]):
        cases.append((f"stencil o[1:-1] = x[2:] - 2x[1:-1] + x[:-2], n={n:,}", stencil,
                      [np.random.rand(n).astype(np.float32), np.zeros(n, np.float32)]))
    for n in ([10_000, 1_000_000] if quick else [1000, 10_000, 1_000_000]):
        cases.append((f"periodic stencil (ends from x[0], x[-1], x[-2]), n={n:,}", periodic,
                      [np.random.rand(n).astype(np.float32), np.zeros(n, np.float32)]))
    for side in ([256, 2048] if quick else [64, 256, 2048]):
        cases.append((f"2-D laplacian {side}x{side + 1}", laplacian,
                      [np.random.rand(side, side + 1).astype(np.float32),
                       np.zeros((side, side + 1), np.float32)]))
    for n in ([10_000, 1_000_000] if quick else [1000, 10_000, 1_000_000]):
        cases.append((f"differences o = x[1:] - x[:-1] (o's size from x's), n={n:,}",
                      differences,
                      [np.random.rand(n).astype(np.float32), np.empty(n - 1, np.float32)]))
    for m, k, n in ([(100, 101, 102), (1000, 1000, 1000)] if quick else
                    [(8, 16, 32), (64, 64, 64), (100, 101, 102), (256, 256, 256),
                     (1000, 1000, 1000), (1024, 1024, 1024)]):
        cases.append((f"matmul {m}x{k} @ {k}x{n}", matmul,
                      [np.random.rand(m, k).astype(np.float32),
                       np.random.rand(k, n).astype(np.float32),
                       np.empty((m, n), np.float32)]))
    for side in ([256] if quick else [100, 256, 1000]):
        cases.append((f"matmul + bias, relu {side}x{side}", matmul_bias_relu,
                      [np.random.rand(side, side).astype(np.float32),
                       np.random.rand(side, side).astype(np.float32),
                       np.random.rand(side).astype(np.float32),
                       np.empty((side, side), np.float32)]))
    for m, k in ([(1000, 1000)] if quick else
                 [(64, 64), (100, 3000), (1000, 1000), (4096, 4096)]):
        cases.append((f"matrix @ vector {m}x{k}", matmul,
                      [np.random.rand(m, k).astype(np.float32),
                       np.random.rand(k).astype(np.float32), np.empty(m, np.float32)]))
        cases.append((f"vector @ matrix {m}x{k}", matmul,
                      [np.random.rand(m).astype(np.float32),
                       np.random.rand(m, k).astype(np.float32), np.empty(k, np.float32)]))
    results = []
    for label, function, arrays in cases:
        static = picokernel.kernel(function, dynamic=False)
        dynamic = picokernel.kernel(function, dynamic=True)
        static(*arrays)
        dynamic(*arrays)
        if "?" not in dynamic.ir.mlir:  # never report a static fallback as dynamic
            label += " (dynamic fell back to static)"
        elements = max(a.size for a in arrays)
        if label.startswith("matmul"):  # by multiply-adds
            elements = arrays[0].size * arrays[1].shape[1] // 30
        reps = max(3, min(100_000, int(3e6 // elements)))
        # Round by round alternately, the best round of each: on a shared
        # machine another tenant's burst then slows rounds of both.
        s, d = [], []
        for _ in range(21):
            s.append(best_of(lambda: static(*arrays), reps, rounds=1))
            d.append(best_of(lambda: dynamic(*arrays), reps, rounds=1))
        ts, td = min(s), min(d)
        results.append((label, ts, td))
        print(label, f"{ts * 1e6:.1f}us {td * 1e6:.1f}us {td / ts:.3f}", flush=True)
    return results


def seconds_per_call(f, arrays, reps, rounds=5):
    """Median seconds per `f(*arrays)` in a plain loop: the call itself,
    with no wrapper around it (the arguments are local variables)."""
    a, b, c, o = arrays
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(reps):
            f(a, b, c, o)
        times.append((time.perf_counter() - start) / reps)
    return statistics.median(times)


def in_turn(f, g, arrays, reps, rounds=5):
    """Median seconds per call of `f` and `g` called in turn on `arrays`."""
    a, b, c, o = arrays
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(reps):
            f(a, b, c, o)
            g(a, b, c, o)
        times.append((time.perf_counter() - start) / (2 * reps))
    return statistics.median(times)


def hit_costs():
    """Seconds per call at n=1000: one shape; cycling over 100 sizes of
    views of the same arrays (what dispatch costs, the data staying in the
    CPU's caches); cycling over 100 sets of arrays (which also misses
    those caches); two kernels called in turn (fma and fms) on the same
    arrays; and what calling a Python function that does nothing costs,
    for scale."""
    sets = [tuple(np.random.rand(n).astype(np.float32) for _ in range(4))
            for n in range(1000, 1100)]
    whole = [np.random.rand(1100).astype(np.float32) for _ in range(4)]
    views = [tuple(x[:n] for x in whole) for n in range(1000, 1100)]
    rows = {}
    kernel = make_fma(None)
    other = picokernel.kernel(fms_source)
    for arrays in sets + views:
        kernel(*arrays)
    other(*sets[0])
    contenders = {"picokernel (dynamic=None)": (kernel, other)}
    if numba:
        fma_numba, fms_numba = numba_fma(), numba_fms()
        for arrays in sets + views:
            fma_numba(*arrays)
        fms_numba(*sets[0])
        contenders["numba"] = (fma_numba, fms_numba)
    contenders["a Python function that does nothing"] = (lambda a, b, c, o: None,
                                                          lambda a, b, c, o: None)
    for _ in range(3):  # interleaved rounds
        for name, (f, g) in contenders.items():
            one = seconds_per_call(f, sets[0], 20000)
            costs = [one]
            for arrays_of_sizes in (views, sets):
                def cycle():
                    for arrays in arrays_of_sizes:
                        f(*arrays)
                costs.append(best_of(cycle, 200, rounds=5) / len(arrays_of_sizes))
            costs.append(in_turn(f, g, sets[0], 10000))
            best = rows.get(name, (1, 1, 1, 1))
            rows[name] = tuple(min(b, c) for b, c in zip(best, costs))
    return rows


def on_vulkan(quick):
    """The same on Vulkan (lavapipe in CI): compiles and first-call totals
    over 100 sizes per policy, then dynamic against static per call. None
    without a device."""
    if not picokernel.vulkan_available()[0]:
        return None
    count = 20 if quick else 100
    shapes = [(n,) for n in range(1000, 1000 + count)]
    arrays = {s: [np.random.rand(*s).astype(np.float32) for _ in range(4)] for s in shapes}
    firsts = {}
    for policy in (None, True, False):
        kernel = picokernel.kernel(fma_source, backend="vulkan", dynamic=policy)
        seconds = sum(timed(lambda s=s: kernel(*arrays[s])) for s in shapes)
        firsts[policy] = (kernel.cache_info().misses, seconds)
    cases = []
    for n in [10_000, 1_000_000]:
        cases.append((f"fma n={n:,}", fma_source,
                      [np.random.rand(n).astype(np.float32) for _ in range(4)]))
    n = 1_000_000
    cases.append((f"stencil n={n:,}", stencil,
                  [np.random.rand(n).astype(np.float32), np.zeros(n, np.float32)]))
    shape = (256, 257)
    cases.append((f"2-D laplacian {shape[0]}x{shape[1]}", laplacian,
                  [np.random.rand(*shape).astype(np.float32), np.zeros(shape, np.float32)]))
    ratios = []
    for label, fn, arrays in cases:
        static = picokernel.kernel(fn, backend="vulkan", dynamic=False)
        dynamic = picokernel.kernel(fn, backend="vulkan", dynamic=True)
        static(*arrays)
        dynamic(*arrays)
        if "?" not in dynamic.ir.mlir:  # never report a static fallback as dynamic
            label += " (dynamic fell back to static)"
        reps = 20 if arrays[0].size >= 100_000 else 200
        ts, td = [], []
        for _ in range(5):  # interleaved
            ts.append(best_of(lambda: static(*arrays), reps, rounds=1))
            td.append(best_of(lambda: dynamic(*arrays), reps, rounds=1))
        ratios.append((label, min(ts), min(td)))
        print(ratios[-1], flush=True)
    return firsts, ratios, picokernel.vulkan_device()


def report(sizes, ratios, hits, quick, vulkan=None):
    lines = ["# Dynamic sizes", "",
             "Generated by `bench/run_dynamic.py`" + (" --quick" if quick else "") +
             f" on {platform.processor() or platform.machine()}, {os.cpu_count()} threads "
             "(shared machine: ratios from interleaved runs, absolute times vary). "
             "numba " + (numba.__version__ if numba else "absent") + ", jax " +
             (jax.__version__ if jax else "absent") + ".", "",
             "## A new size on every call", "",
             "Compiles, and total seconds of the first call at each size (100 sizes):", ""]
    names = [k for k in sizes[0] if k != "case"]
    lines.append("| case | " + " | ".join(names) + " |")
    lines.append("|---" * (len(names) + 1) + "|")
    for row in sizes:
        lines.append(f"| {row['case']} | " + " | ".join(
            f"{row[k][0]} compiles, {row[k][1]:.2f} s" for k in names) + " |")
    lines += ["", "## Dynamic against static", "",
              "The same kernel compiled for dynamic sizes (`dynamic=True`) and for the "
              "arrays' sizes (`dynamic=False`); best of interleaved rounds.", "",
              "| kernel | static | dynamic | dynamic / static |", "|---|---|---|---|"]
    for label, ts, td in ratios:
        lines.append(f"| {label} | {ts * 1e6:.1f} us | {td * 1e6:.1f} us | {td / ts:.2f} |")
    lines += ["", "## A cache hit", "",
              "Seconds per call of fma at n=1000..1099 once compiled: the same arrays "
              "every call (`f(a, b, c, o)` in a loop); cycling over 100 sizes "
              "(`f(*arrays)`) of views of the same arrays, whose data stays in the "
              "CPU's caches; cycling over 100 sets of arrays, which also misses "
              "those caches; and two kernels called in turn (fma and `a * b - c`) on "
              "the same arrays.",
              "", "| | one shape | cycling over 100 sizes | cycling over 100 sets "
              "| two kernels in turn |",
              "|---|---|---|---|---|"]
    for name, (one, views, sets, turns) in hits.items():
        lines.append(f"| {name} | {one * 1e9:.0f} ns | {views * 1e9:.0f} ns "
                     f"| {sets * 1e9:.0f} ns | {turns * 1e9:.0f} ns |")
    if vulkan:
        firsts, vulkan_ratios, device = vulkan
        lines += ["", f"## On Vulkan ({device})", "",
                  "fma at n = 1000...1099, a new size on every call (compiles, total "
                  "seconds of the first calls):", "",
                  "| dynamic=None | dynamic=True | dynamic=False |", "|---|---|---|",
                  "| " + " | ".join(f"{firsts[p][0]} compiles, {firsts[p][1]:.2f} s"
                                   for p in (None, True, False)) + " |", "",
                  "Per call (upload, dispatch, download), best of interleaved rounds:", "",
                  "| kernel | static | dynamic | dynamic / static |", "|---|---|---|---|"]
        for label, ts, td in vulkan_ratios:
            lines.append(f"| {label} | {ts * 1e6:.1f} us | {td * 1e6:.1f} us | "
                         f"{td / ts:.2f} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--output", default="docs/dynamic.md")
    args = parser.parse_args()
    os.environ.setdefault("PK_CACHE", "0")  # first calls compile
    sizes = hundred_sizes(args.quick)
    ratios = speed_ratios(args.quick)
    hits = hit_costs()
    vulkan = on_vulkan(args.quick)
    with open(args.output, "w") as f:
        f.write(report(sizes, ratios, hits, args.quick, vulkan))


if __name__ == "__main__":
    main()
