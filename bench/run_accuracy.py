#!/usr/bin/env python3
"""Accuracy of picokernel's math and sums against the correctly rounded
result, written to docs/accuracy.md.

    python3 bench/run_accuracy.py [--stride 127] [--output docs/accuracy.md]

float32 functions are measured on every `stride`-th float32 bit pattern
(both signs, subnormals, the ends of the range) against float64 NumPy (or
SciPy's erf, else math.erf) rounded to float32; float64 ones on a log-spaced sample against
math's functions. Sums: mean error in units of eps * sum|x| against
math.fsum, next to NumPy's pairwise sum on the same arrays.
"""
import argparse
import math
import os
import platform

import numpy as np

os.environ.setdefault("PK_CACHE", "0")
import picokernel  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ordered(a):
    """Floats as integers in their order: distances are ulps."""
    if a.dtype == np.float32:
        bits = a.view(np.int32).astype(np.int64)
        return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)
    bits = a.view(np.int64)
    return np.where(bits < 0, -(bits & 0x7FFFFFFFFFFFFFFF), bits).astype(object)


def kernel_for(name):
    functions = {"exp": np.exp, "log": np.log, "tanh": np.tanh, "expm1": np.expm1,
                 "log1p": np.log1p, "sigmoid": picokernel.sigmoid, "erf": picokernel.erf}

    def body(x_ref, o_ref):
        o_ref[...] = functions[name](x_ref[...])

    body.__name__ = name
    return picokernel.kernel(body)


try:  # float64 erf on arrays (jax, which bench/run installs, brings SciPy)
    from scipy.special import erf as fast_erf
except ImportError:
    fast_erf = None


def reference(name, x64):
    with np.errstate(all="ignore"):
        if name == "sigmoid":
            return 1 / (1 + np.exp(-x64))
        if name == "erf":
            if fast_erf is not None:
                return fast_erf(x64)
            return np.vectorize(math.erf, otypes=[np.float64])(x64)
        return getattr(np, name)(x64)


def float32_row(name, stride):
    x = np.arange(0, 2**32, stride, dtype=np.uint64).astype(np.uint32).view(np.float32)
    if name == "erf" and fast_erf is None:  # math.erf per element: coarser
        x = x[::16]
    out = np.empty_like(x)
    kernel_for(name)(x, out)
    want = reference(name, x.astype(np.float64)).astype(np.float32)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(out), nan), name
    ulps = np.abs(ordered(out[~nan]) - ordered(want[~nan]))
    return x.size, int(ulps.max()), float(np.mean(ulps > 0))


def float64_row(name):
    rng = np.random.default_rng(0)
    x = np.concatenate([np.sign(rng.standard_normal(200_000)) *
                        10.0 ** rng.uniform(-300, 2.9, 200_000),
                        rng.uniform(-30, 30, 200_000)])
    if name in ("log", "log1p"):
        x = np.abs(x)
    out = np.empty_like(x)
    kernel_for(name)(x, out)
    want = reference(name, x)
    ok = np.isfinite(want) & np.isfinite(out)
    ulps = np.abs(out[ok] - want[ok]) / np.spacing(np.abs(want[ok]))
    return x.size, float(ulps.max())


def sum_rows():
    @picokernel.kernel
    def total(x_ref, o_ref):
        o_ref[...] = x_ref[...].sum()

    rng = np.random.default_rng(1)
    rows = []
    for dtype in (np.float32, np.float64):
        eps = np.finfo(dtype).eps
        for name, make in [("uniform [0, 1)", lambda n: rng.random(n)),
                           ("normal", lambda n: rng.standard_normal(n)),
                           ("lognormal (sigma 3)", lambda n: rng.lognormal(0, 3, n))]:
            ours, numpys = [], []
            for _ in range(40):
                x = make(100_003).astype(dtype)
                x64 = x.astype(np.float64)
                exact, scale = math.fsum(x64), eps * np.abs(x64).sum()
                out = np.empty((), dtype)
                total(x, out)
                ours.append(abs(float(out) - exact) / scale)
                numpys.append(abs(float(x.sum()) - exact) / scale)
            rows.append((np.dtype(dtype).name, name, np.mean(ours), np.mean(numpys)))
    ones = np.ones(10**8, np.float32)
    out = np.empty((), np.float32)
    total(ones, out)
    return rows, float(out), adversarial_sum_rows(total)


def adversarial_sum_rows(total):
    """float32 sums whose rounding errors do not cancel, in ulps of the
    result: one value repeated (every addition in a lane rounds the same
    way), and one 1.0 among tiny values (every addition onto the partial
    sum that holds it rounds to its precision)."""
    def ulps(x):
        exact = math.fsum(x.astype(np.float64))
        ulp = float(np.spacing(np.float32(exact)))
        out = np.empty((), np.float32)
        total(x, out)
        return abs(float(out) - exact) / ulp, abs(float(x.sum()) - exact) / ulp

    rng = np.random.default_rng(2)
    repeated = [ulps(np.full(n, value, np.float32))
                for n in range(2, 20_000, 37) for value in (0.1, 1 / 3, 0.7)]
    beside = []
    for _ in range(60):
        n = int(rng.integers(10**4, 2 * 10**6))
        x = np.full(n, float(rng.choice([1e-8, 3e-8, 1e-7])), np.float32)
        x[int(rng.integers(0, n))] = 1.0
        beside.append(ulps(x))
    rows = []
    for name, errors in [("0.1, 1/3 or 0.7 repeated n = 2...20,000 times (every 37th n)",
                          repeated),
                         ("1.0 among 1e4...2e6 tiny values (1e-8, 3e-8 or 1e-7), 60 arrays",
                          beside)]:
        ours, numpys = np.array(errors).T
        rows.append((name, ours.mean(), ours.max(), numpys.mean(), numpys.max()))
    return rows


def has_avx512():
    try:
        with open("/proc/cpuinfo") as f:
            return " avx512f" in f.read()
    except OSError:
        return False


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--stride", type=int, default=127)
    parser.add_argument("--output", default=os.path.join(ROOT, "docs", "accuracy.md"))
    args = parser.parse_args()
    lines = [
        "# Accuracy", "",
        "Generated by `python3 bench/run_accuracy.py` on "
        f"{platform.machine()}{' with AVX-512' if has_avx512() else ''} (CPU backend). Errors are in ulps of the correctly "
        "rounded result (float64 NumPy or `math` rounded to float32); NaN, the "
        "infinities and the zeros' signs are checked to be libm's.", "",
        "## float32 math", "",
        "pk-inline-cpu-math computes exp, log, tanh and erf (and sigmoid, through exp) "
        "inline, vectorized at the full vector width; the others come from libm / "
        "libmvec or are built from exp and log with corrections "
        "(expm1, log1p). With AVX-512, kernels with math loops (ten floating-point "
        "operations or more per iteration) run 512-bit vectors and call libmvec's "
        "AVX-512 variants.", "",
        f"| function | points (every {args.stride}th bit pattern) | max ulps | "
        "share not correctly rounded | computed by |", "|---|---:|---:|---:|---|"]
    how = {"exp": "inline polynomial", "log": "inline polynomial",
           "tanh": "inline (from expm1)", "sigmoid": "inline (exp)",
           "expm1": "exp with a correction", "log1p": "log with a correction",
           "erf": "inline (expm1 of a polynomial)" + (
               "" if fast_erf is not None else " (every 16th point)")}
    for name in ("exp", "log", "tanh", "sigmoid", "expm1", "log1p", "erf"):
        count, worst, share = float32_row(name, args.stride)
        lines.append(f"| {name} | {count:,} | {worst} | {share * 100:.1f}% | {how[name]} |")
        print(lines[-1], flush=True)
    lines += ["", "## float64 math", "",
              "exp inline (Cephes' Pade form), the others from libm / libmvec "
              "(expm1 and log1p built from exp and log with corrections). The "
              "reference is float64 NumPy, itself within about an ulp, on a "
              "log-spaced sample.", "",
              "| function | points | max ulps |", "|---|---:|---:|"]
    for name in ("exp", "log", "tanh", "expm1", "log1p"):
        count, worst = float64_row(name)
        lines.append(f"| {name} | {count:,} | {worst:.2f} |")
        print(lines[-1], flush=True)
    rows, ones, adversarial = sum_rows()
    lines += ["", "## Sums", "",
              "`x.sum()` of 100,003 elements, 40 arrays each: mean error in units of "
              "eps · Σ|x| (the sum's condition), picokernel's blocked pairwise sum "
              "(pk-split-reductions) next to NumPy's pairwise sum on the same arrays. "
              f"A float32 sum of 1e8 ones gives {ones:.0f} (a serial sum stops at "
              "16,777,216).", "",
              "| dtype | data | picokernel | NumPy |", "|---|---|---:|---:|"]
    lines += [f"| {d} | {n} | {ours:.3f} | {numpy:.3f} |" for d, n, ours, numpy in rows]
    lines += ["", "Adversarial float32 sums, in ulps of the result: data whose rounding "
              "errors do not cancel. Within a block, LLVM's vectorized loop keeps 4 "
              "vectors of partial sums, so each lane adds up to 32 elements in order "
              "(NumPy adds up to 16 per accumulator), and adds the elements its vectors "
              "leave over one by one onto the total.", "",
              "| data | picokernel mean | max | NumPy mean | max |",
              "|---|---:|---:|---:|---:|"]
    lines += [f"| {name} | {a:.2f} | {b:.2f} | {c:.2f} | {d:.2f} |"
              for name, a, b, c, d in adversarial]
    lines.append("")
    with open(args.output, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
