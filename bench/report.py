#!/usr/bin/env python3
"""Renders docs/benchmarks.md and its plots from the results of
bench/run_python.py (Python peers) and pk-cpu-bench (machine bandwidth)."""
import argparse
import json
import os
from statistics import median

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = ["picokernel", "numpy", "seed out=", "numexpr", "jax.jit", "numba"]


def fmt(seconds):
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds < 1e-6:
        return f"{seconds * 1e9:.0f} ns"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e3:.2f} ms"


def cell(entry, bytes_moved=None):
    text = f"{fmt(entry['median'])} ±{entry['spread'] * 100:.0f}%"
    if bytes_moved:
        text += f" ({bytes_moved / entry['median'] / 1e9:.1f} GB/s)"
    return text


def machine_bandwidth(cpu_json):
    if not cpu_json:
        return None
    triad = [b["bytes_per_second"] for b in cpu_json["benchmarks"]
             if b.get("run_name", b["name"]).startswith("BM_Stream_triad")
             and b.get("run_type") == "iteration"]
    return median(triad) / 1e9 if triad else None


def table(rows, peers, bytes_key=None, label="n"):
    present = [p for p in peers if any(p in r["times"] for r in rows)]
    lines = ["| " + label + " | " + " | ".join(present) +
             " | " + " | ".join(f"{p} / picokernel" for p in present[1:]) + " |",
             "|---:|" + "---:|" * (2 * len(present) - 1)]
    for r in rows:
        moved = r["n"] * r[bytes_key] if bytes_key else None
        cells = [cell(r["times"][p], moved) if p in r["times"] else "—"
                 for p in present]
        pk = r["times"]["picokernel"]["median"]
        ratios = [f"{r['times'][p]['median'] / pk:.2f}x" if p in r["times"] else "—"
                  for p in present[1:]]
        key = r.get("ops", r["n"])
        lines.append(f"| {key:,} | " + " | ".join(cells) + " | " +
                     " | ".join(ratios) + " |")
    return lines


def plot_sizes(rows, title, path, bytes_key):
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for peer in PEERS:
        points = [(r["n"], r["n"] * r[bytes_key] / r["times"][peer]["median"] / 1e9)
                  for r in rows if peer in r["times"]]
        if points:
            ax.plot(*zip(*points), marker="o", label=peer)
    ax.set_xscale("log")
    ax.set_xlabel("elements")
    ax.set_ylabel("GB/s (bytes the expression must move)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_chain(rows, path):
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for peer in PEERS:
        points = [(r["ops"], r["times"][peer]["median"] * 1e3)
                  for r in rows if peer in r["times"]]
        if points:
            ax.plot(*zip(*points), marker="o", label=peer)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("elementwise ops in the expression")
    ax.set_ylabel("ms per call")
    ax.set_title(f"Chained ops on {rows[0]['n']:,} float32 elements")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def matmul_rows(matmul, backend="cpu"):
    """bench/run_matmul.py's rows for one backend (older files: a list of
    CPU rows)."""
    rows = matmul["rows"] if isinstance(matmul, dict) else matmul
    return [r for r in rows if r.get("backend", "cpu") == backend]


def plot_matmul(matmul, path):
    """GFLOP/s of the square float32 products (bench/run_matmul.py), per
    library and thread count, on log-scaled sizes, under the CPU's peak."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    square = [r for r in matmul_rows(matmul) if r["case"].startswith("f32 ") and
              r["case"][4:].isdigit()]
    styles = {"picokernel": "-", "OpenBLAS (NumPy)": "--", "jax.jit": ":"}
    for threads in sorted({r["threads"] for r in square}):
        for key, label in (("picokernel_gflops", "picokernel"),
                           ("numpy_gflops", "OpenBLAS (NumPy)"),
                           ("jax_gflops", "jax.jit")):
            points = sorted((int(r["case"][4:]), r[key]) for r in square
                            if r["threads"] == threads and key in r)
            if points:
                ax.plot(*zip(*points), marker="o", linestyle=styles[label],
                        label=f"{label}, {threads} thread{'s' * (threads > 1)}")
    machine = matmul.get("machine", {}) if isinstance(matmul, dict) else {}
    peak = machine.get("float32_peak_gflops_per_core")
    if peak and square:
        for threads in sorted({r["threads"] for r in square}):
            ax.axhline(peak * threads, color="gray", linewidth=0.8)
            ax.annotate(f"peak, {threads} core{'s' * (threads > 1)} "
                        f"({machine['ghz']:.1f} GHz nominal)",
                        (min(int(r["case"][4:]) for r in square), peak * threads),
                        textcoords="offset points", xytext=(2, 3), fontsize=7,
                        color="gray")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("n (n x n @ n x n, float32)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title("Matmul")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def matmul_section(matmul):
    """The markdown of the matmul section from bench/run_matmul.py's rows."""
    rows = matmul_rows(matmul)
    blas = "; ".join(sorted({str(r["blas"]) for r in rows if r.get("blas")}))
    jax = sorted({r["jax_version"] for r in rows if "jax_version" in r})
    machine = matmul.get("machine", {}) if isinstance(matmul, dict) else {}
    peak = machine.get("float32_peak_gflops_per_core")
    lines = ["## Matmul (against OpenBLAS and jax.jit)", "",
             "picokernel packs large products into register-tile panels and runs "
             "them as vector FMA code (pk-pack-matmul, pk-vectorize-packed-matmul); "
             "products of a few rows take tiles of all of them (reading B in place), "
             "products of up to a vector's lanes of columns take tiles of one vector "
             "per row and twice the rows (reading A in place where the rows divide "
             "M), batches that one operand broadcasts join the other's rows or "
             "columns (one batch_matmul of the operands themselves), boolean "
             "products are float32 sums of 0 and 1 tested nonzero, "
             "and matrix-vector products run as vector dot products or row updates "
             "(pk-vectorize-matvec). `bench/run_matmul.py` times each shape class "
             "against NumPy's OpenBLAS" + (f" and jax.jit (jax {', '.join(jax)})" if jax else "")
             + " on 1 and 2 threads, each library in its own "
             "processes (idle BLAS and OpenMP threads spin and would steal a core), "
             "best median of 3 processes each; OpenBLAS runs with "
             "`OPENBLAS_CORETYPE`/`OPENBLAS_L2_SIZE` unset (they force a slow kernel "
             f"on this machine). threadpoolctl's view of the BLAS: `{blas}`. "
             "GFLOP/s count 2 m n k per product; for `gelu(a @ b + bias)` the "
             "OpenBLAS column is NumPy's best (the product, then in-place ufuncs). "
             "First calls include tracing and compiling in a fresh process."
             + (f" The CPU's float32 peak is {peak:.0f} GFLOP/s per core "
                f"({machine['ghz']:.1f} GHz nominal x 2 FMA units x "
                f"{machine['float32_lanes']} lanes x 2)." if peak else ""), "",
             "![matmul](img/bench_matmul.png)", "",
             "| case | threads | picokernel GFLOP/s | OpenBLAS GFLOP/s | "
             "time ratio (picokernel / OpenBLAS) | jax.jit GFLOP/s | "
             "picokernel first call |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        jax_gflops = f"{r['jax_gflops']:.1f}" if "jax_gflops" in r else "-"
        lines.append(f"| {r['case']} | {r['threads']} | {r['picokernel_gflops']:.1f} | "
                     f"{r['numpy_gflops']:.1f} | {r['ratio']:.2f} | {jax_gflops} | "
                     f"{fmt(r['first_call_seconds'])} |")
    epilogues = [r for r in rows if "epilogue_overhead" in r]
    if epilogues:
        lines += ["", "The fused epilogue's cost over the product alone (picokernel's "
                  "`o = a @ b` timed interleaved with the gelu kernel in the same "
                  "process, from the fastest round): " + "; ".join(
                      f"{r['case'].split()[-1]} on {r['threads']} thread"
                      f"{'s' if r['threads'] > 1 else ''} "
                      f"{r['epilogue_overhead'] * 100:+.1f}%" for r in epilogues) + "."]
    vulkan = matmul_rows(matmul, "vulkan")
    if vulkan:
        lines += ["", "### Matmul through Vulkan", "",
                  "The same kernels with `backend=\"vulkan\"`: "
                  "pk-tile-matmul-for-gpu gives each workgroup of 16 x 8 threads a "
                  "64 x 64 tile of the product, staging 16-deep tiles of the operands "
                  "in workgroup memory between barriers. Measured on this machine's "
                  "Vulkan device, lavapipe (Mesa's Vulkan on the CPU, LP_NUM_THREADS "
                  "threads): its numbers say what the CPU emulation reaches, not what "
                  "a GPU would; `scripts/gpu-check` runs the suite on a real one.", "",
                  "| case | threads | GFLOP/s | first call |", "|---|---:|---:|---:|"]
        for r in vulkan:
            lines.append(f"| {r['case']} | {r['threads']} | {r['picokernel_gflops']:.2f} | "
                         f"{fmt(r['first_call_seconds'])} |")
    return lines


def rows_section(rows):
    """The markdown of bench/run_rows.py's results (issue 18's kernels)."""
    lines = ["## Row kernels, math and full reductions (against jax.jit and numba)", "",
             "`bench/run_rows.py`: softmax, logsumexp, layernorm and rmsnorm over rows of "
             "128, 1024 and 8192 float32 (16,384, 1,048,576 and 8,388,608 elements), "
             "gelu (tanh and erf forms), softplus and sigmoid elementwise, and full "
             "reductions of 1e7 float32 next to an elementwise `v * v + v` at the same "
             "size (the streaming reference). Each (kernel, size, library) runs in its "
             "own process, best median of the rounds; every result is checked against "
             "NumPy in float64 first. numba runs `@njit(parallel=True, fastmath=True)` "
             "`prange` loops over rows (or elements); jax.jit returns a new array. "
             "Ratios above 1 are picokernel's lead.", "",
             "| kernel | elements | row | picokernel | jax.jit | numba | "
             "jax.jit / picokernel | numba / picokernel |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows["rows"]:
        times = r["times"]
        pk = times["picokernel"].get("median")
        cells = [fmt(times[lib]["median"]) if "median" in times.get(lib, {})
                 else ("error" if lib in times else "-")
                 for lib in ("picokernel", "jax", "numba")]
        ratios = [f"{times[lib]['median'] / pk:.2f}x" if pk and "median" in times.get(lib, {})
                  else "-" for lib in ("jax", "numba")]
        name = "`v * v + v`" if r["name"] == "fma" else r["name"]
        lines.append(f"| {name} | {r['n']:,} | {r['row_length'] or '-'} | "
                     + " | ".join(cells + ratios) + " |")
    stream = next((r["times"]["picokernel"].get("median") for r in rows["rows"]
                   if r["name"] == "fma"), None)
    if stream:
        lines += ["", "Full reductions against the streaming reference (the bytes a "
                  "reduction reads per second over those `v * v + v` reads and writes "
                  "per second): "
                  + "; ".join(f"{r['name']} {stream / (2 * r['times']['picokernel']['median']):.2f}x"
                              for r in rows["rows"] if r["name"] in ("sum", "max", "mean")
                              and "median" in r["times"]["picokernel"]) + "."]
    return lines


def splice_section(markdown, heading, section, before=None):
    """`markdown` with the `## ` section whose title starts with `heading`
    replaced by `section` (lines), or inserted before the section titled
    `before` where there is none."""
    lines = markdown.split("\n")
    if before and not any(line.startswith(heading) for line in lines):
        at = next(i for i, line in enumerate(lines) if line.startswith(before))
        return "\n".join(lines[:at] + section + [""] + lines[at:])
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    end = next((i for i in range(start + 1, len(lines))
                if lines[i].startswith("## ")), len(lines))
    return "\n".join(lines[:start] + section + [""] + lines[end:])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", default=os.path.join(ROOT, "build/bench/python.json"))
    parser.add_argument("--cpu", default=os.path.join(ROOT, "build/bench/cpu.json"))
    parser.add_argument("--matmul", default=os.path.join(ROOT, "build/bench/matmul.json"))
    parser.add_argument("--output", default=os.path.join(ROOT, "docs/benchmarks.md"))
    parser.add_argument("--rows", default=os.path.join(ROOT, "build/bench/rows.json"))
    parser.add_argument("--matmul-only", action="store_true",
                        help="only replace the matmul section (and plot) of --output")
    parser.add_argument("--rows-only", action="store_true",
                        help="only replace the row kernels' section of --output")
    args = parser.parse_args()
    rows = None
    if os.path.exists(args.rows):
        with open(args.rows) as f:
            rows = json.load(f)
    if args.rows_only:
        with open(args.output) as f:
            text = f.read()
        with open(args.output, "w") as f:
            f.write(splice_section(text, "## Row kernels", rows_section(rows),
                                   before="## Matmul"))
        return
    images = os.path.join(os.path.dirname(args.output), "img")
    matmul = None
    if os.path.exists(args.matmul):
        with open(args.matmul) as f:
            matmul = json.load(f)
    if args.matmul_only:
        plot_matmul(matmul, os.path.join(images, "bench_matmul.png"))
        with open(args.output) as f:
            text = f.read()
        with open(args.output, "w") as f:
            f.write(splice_section(text, "## Matmul", matmul_section(matmul)))
        return
    with open(args.python) as f:
        results = json.load(f)
    cpu = None
    if os.path.exists(args.cpu):
        with open(args.cpu) as f:
            cpu = json.load(f)
    os.makedirs(images, exist_ok=True)

    m = results["machine"]
    triad = machine_bandwidth(cpu)
    fma32 = [r for r in results["fma"] if r["dtype"] == "float32"]
    fma64 = [r for r in results["fma"] if r["dtype"] == "float64"]
    plot_sizes(fma32, "o = a*b + c, float32", os.path.join(images, "bench_fma.png"),
               "bytes_per_element")
    plot_chain(results["chain"], os.path.join(images, "bench_chain.png"))
    if matmul:
        plot_matmul(matmul, os.path.join(images, "bench_matmul.png"))

    largest = fma32[-1]
    pk_bw = largest["n"] * largest["bytes_per_element"] / largest["times"]["picokernel"]["median"] / 1e9
    lines = [
        "# Benchmarks",
        "",
        "Generated by `bench/run` (`bench/run_python.py`, `bench/report.py`): every peer ran "
        "side by side in one Python process, inputs created once, each variant warmed up "
        "before timing (compile time is reported separately, never folded into throughput). "
        "Times are medians of 7 timed loops per variant, the variants' loops interleaved; "
        "± is (max − min) / median. GB/s counts the bytes "
        "the expression must move (fma float32: 16 per element).",
        "",
        f"Machine: {m['threads']} hardware threads ({m['cpu']}); NumPy {m['numpy']}, numexpr "
        f"{m['numexpr']} ({m['numexpr_threads']} threads), jax {m['jax']} (CPU), numba "
        f"{m.get('numba')}. picokernel "
        "runs loop nests of ≥ 32768 iterations on all threads (OpenMP), smaller ones on one. "
        "jax.jit returns a new array (it has no `out=`) and its inputs are already JAX arrays.",
        "",
    ]
    if triad:
        lines += [f"Memory bandwidth of this machine (STREAM-like triad, all threads, "
                  f"pk-cpu-bench): {triad:.1f} GB/s. picokernel's fma at "
                  f"{largest['n']:,} float32 moves {pk_bw:.1f} GB/s, "
                  f"{pk_bw / triad * 100:.0f}% of it.", ""]
    lines += ["## fma `o = a*b + c`, float32", "", "![fma](img/bench_fma.png)", ""]
    lines += table(fma32, PEERS, "bytes_per_element")
    lines += ["", "## fma, float64", ""] + table(fma64, PEERS, "bytes_per_element")
    lines += ["", "## `(a + b) * (c + d)`, float32", ""]
    lines += table(results["sum_product"], PEERS, "bytes_per_element")
    lines += ["", f"## A chain of elementwise ops at {results['chain'][0]['n']:,} float32",
              "", "The seed's chained-ops experiment: `((a*b)+c)*b ...` with 1 to 16 ops. "
              "NumPy makes a pass (and a temporary) per op; a fused kernel makes one.",
              "", "![chain](img/bench_chain.png)", ""]
    lines += table(results["chain"], PEERS, label="ops")
    if results.get("nn"):
        lines += ["", "## Math-heavy kernels, float32 rows of 1024", "",
                  "softplus and gelu (tanh form) elementwise, softmax over the last axis "
                  "(a reduction, a broadcast back, another reduction), layernorm (two "
                  "reductions, then scale and shift by 1024-element rows). NumPy runs the "
                  "same Python kernel body on arrays; numexpr cannot express the reductions.",
                  ""]
        for name in ("softplus", "gelu", "softmax", "layernorm"):
            rows = [r for r in results["nn"] if r["name"] == name]
            lines += [f"### {name}", ""] + table(rows, PEERS) + [""]
    if results.get("reductions"):
        lines += ["", "## Full reductions, float32", "",
                  "`o[...] = x.sum()` (and `max`, `mean`) into a 0-d output: "
                  "pk-split-reductions reduces blocks of 1024 elements on all threads "
                  "and adds the partial sums pairwise (NumPy's accuracy). numba runs "
                  "an `@njit(parallel=True, fastmath=True)` `prange` loop. The last "
                  "column compares picokernel's GB/s with its fma's at the same n.", ""]
        fma_bw = {r["n"]: r["n"] * r["bytes_per_element"] /
                  r["times"]["picokernel"]["median"] for r in fma32}
        for name in ("sum", "max", "mean"):
            rows = [r for r in results["reductions"] if r["name"] == name]
            if not rows:
                continue
            lines += [f"### {name}", ""] + table(rows, PEERS, "bytes_per_element")
            lines[-len(rows) - 2] += " vs fma GB/s |"
            lines[-len(rows) - 1] += "---:|"
            for i, r in enumerate(rows):
                bw = r["n"] * r["bytes_per_element"] / r["times"]["picokernel"]["median"]
                ref = fma_bw.get(r["n"])
                lines[-len(rows) + i] += f" {bw / ref:.2f}x |" if ref else " — |"
            lines += [""]
    if results.get("stencil"):
        lines += ["", "## Slices: the 3-point stencil `o[1:-1] = x[2:] - 2*x[1:-1] + x[:-2]`, "
                  "float32", "",
                  "Three shifted views of one array, written into a view of the output: "
                  "picokernel reads the views in place and writes the inner part of `o` "
                  "in one loop; NumPy makes two temporaries; jax.jit returns a new array.",
                  ""]
        lines += table(results["stencil"], PEERS, "bytes_per_element")
    if rows:
        lines += [""] + rows_section(rows)
    if matmul:
        lines += [""] + matmul_section(matmul)
    first = results["first_call_seconds"]
    lines += ["", "## First call (trace + compile + run), fma n=1000", "",
              "picokernel's compiled kernels also persist on disk "
              "(Runtime/DiskCache.h): a new process's first call loads the "
              "machine code the previous one stored instead of compiling it.", "",
              "| peer | median of 5 |", "|---|---:|"]
    lines += [f"| {peer} | {fmt(t)} |" for peer, t in first.items()]
    curve = results.get("compile_curve", {})
    if curve:
        lines += ["", "## First call against kernel length", "",
                  "Elementwise chains of n operations (float64, 1000 elements), "
                  "traced, compiled and run once: `pk-fuse-elementwise-trees` "
                  "fuses each tree in one step, so compile time grows about "
                  "linearly (upstream's pairwise fusion alone took 208 s at "
                  "8,000 operations).", "",
                  "| operations | first call |", "|---:|---:|"]
        lines += [f"| {int(ops):,} | {fmt(t)} |" for ops, t in curve.items()]
    lines += [""]
    with open(args.output, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
