#!/usr/bin/env python3
"""`@` against OpenBLAS (NumPy's matmul) over the shape classes of issue 17,
and jax.jit (when installed) in GFLOP/s, on 1 and 2 threads; and a few of them through Vulkan (on this
machine lavapipe, Mesa's Vulkan on the CPU, LP_NUM_THREADS threads) when a
Vulkan device is present.

Each (case, thread count) runs in fresh processes, picokernel and NumPy
alternating, so that one library's idle spinning threads never steal the
other's cores; the best median of `--rounds` processes counts. OpenBLAS
runs with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset in its processes only
(on this machine they force a slow generic kernel); threadpoolctl's view of
the BLAS is recorded.

    python3 bench/run_matmul.py [--quick] [--output build/bench/matmul.json]
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np

# name: (batch, m, k, n, dtype); batch may be [A's batch, B's batch] (shapes
# that broadcast against each other)
CASES = {
    "f32 256": (None, 256, 256, 256, "float32"),
    "f32 512": (None, 512, 512, 512, "float32"),
    "f32 1024": (None, 1024, 1024, 1024, "float32"),
    "f32 2048": (None, 2048, 2048, 2048, "float32"),
    "f64 512": (None, 512, 512, 512, "float64"),
    "f64 1024": (None, 1024, 1024, 1024, "float64"),
    "f32 129": (None, 129, 129, 129, "float32"),
    "f32 777": (None, 777, 777, 777, "float32"),
    "f32 1000": (None, 1000, 1000, 1000, "float32"),
    "f32 1023": (None, 1023, 1023, 1023, "float32"),
    "f32 4096x64 @ 64x4096": (None, 4096, 64, 4096, "float32"),
    "f32 64x4096 @ 4096x64": (None, 64, 4096, 64, "float32"),
    "f32 4096x4096 @ 4096": (None, 4096, 4096, None, "float32"),
    "f32 4096 @ 4096x4096": (None, None, 4096, 4096, "float32"),
    "f32 16 x 256^3": (16, 256, 256, 256, "float32"),
    "f32 16 x 256x256 @ 256": (16, 256, 256, None, "float32"),
    "f32 16 x 256x256 @ 256x1": (16, 256, 256, 1, "float32"),
    "f32 16 x 1x256 @ 256x256": (16, 1, 256, 256, "float32"),
    "f32 1x65536 @ 65536x16": (None, 1, 65536, 16, "float32"),
    "f32 4x1024 @ 1024x1024": (None, 4, 1024, 1024, "float32"),
    "f32 1024x1024 @ 1024x8": (None, 1024, 1024, 8, "float32"),
    "f32 1024x1024 @ 1024x4": (None, 1024, 1024, 4, "float32"),
    "f32 8x262144 @ 262144x8": (None, 8, 262144, 8, "float32"),
    "f32 2x3x1x1024 @ 3x1024x256": ([[2, 3], [3]], 1, 1024, 256, "float32"),
    "bool 512": (None, 512, 512, 512, "bool"),
    "gelu(a @ b + bias) 512": (None, 512, 512, 512, "epilogue"),
    "gelu(a @ b + bias) 1024": (None, 1024, 1024, 1024, "epilogue"),
}
QUICK = ["f32 512", "f32 1000", "f64 512", "f32 4096x4096 @ 4096", "gelu(a @ b + bias) 512"]
# The cases timed through Vulkan as well (lavapipe runs them at a few
# GFLOP/s: larger ones take seconds per call).
VULKAN = ["f32 256", "f32 512", "f32 1000", "f64 512", "f32 16 x 256^3",
          "gelu(a @ b + bias) 512"]

CHILD = r'''
import json, sys, time
import numpy as np
batch, m, k, n, kind, library = json.loads(sys.argv[1])
dtype = np.float32 if kind == "epilogue" else np.dtype(kind)
rng = np.random.default_rng(0)
def array(*shape):
    shape = [s for s in shape if s is not None]
    if dtype == np.bool_:  # sparse: NumPy's loop stops at the first true
        return rng.random(shape) < 0.002
    return rng.standard_normal(shape).astype(dtype)
a_batch, b_batch = batch if isinstance(batch, list) else ([batch], [batch])
a = array(*a_batch, m, k)
b = array(*b_batch, k, n) if n is not None else array(k)
o = np.empty(np.matmul(a, b).shape, dtype)
bias = array(n)
info = None
if library == "numpy":
    try:
        from threadpoolctl import threadpool_info
        info = [{key: pool.get(key) for key in ("internal_api", "architecture", "num_threads")}
                for pool in threadpool_info()]
    except ImportError:
        info = "threadpoolctl not installed"
    if kind == "epilogue":
        def call(o=o):  # NumPy's best: the product, then in-place ufuncs
            np.matmul(a, b, out=o)
            o += bias
            t = o ** 3
            t *= 0.044715
            t += o
            t *= 0.7978845608
            np.tanh(t, out=t)
            t += 1.0
            o *= t
            o *= 0.5
    else:
        def call():
            np.matmul(a, b, out=o)
elif library == "jax":
    import jax
    jax.config.update("jax_enable_x64", True)  # float64 stays float64
    import jax.numpy as jnp
    if kind == "epilogue":
        @jax.jit
        def product(a, b, bias):
            x = a @ b + bias
            return 0.5 * x * (1.0 + jnp.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))
        arrays = [jax.device_put(x) for x in (a, b, bias)]
    else:
        product = jax.jit(jnp.matmul)
        arrays = [jax.device_put(x) for x in (a, b)]
    start = time.perf_counter()
    product(*arrays).block_until_ready()
    first = time.perf_counter() - start
    def call():
        product(*arrays).block_until_ready()
    info = {"first_call_seconds": first, "version": jax.__version__}
else:
    import picokernel
    backend = "vulkan" if library == "vulkan" else "cpu"
    if kind == "epilogue":
        @picokernel.kernel(backend=backend)
        def kernel(a, b, bias, o):
            x = a[...] @ b[...] + bias[...]
            o[...] = 0.5 * x * (1.0 + picokernel.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))
        arrays = (a, b, bias, o)
    @picokernel.kernel(backend=backend)
    def product(a, b, o):
        o[...] = a[...] @ b[...]
    if kind != "epilogue":
        kernel, arrays = product, (a, b, o)
    start = time.perf_counter()
    kernel(*arrays)
    first = time.perf_counter() - start
    if kind != "epilogue":  # the timed kernel gives NumPy's product
        want = np.matmul(a, b)
        scale = float(np.abs(want).max()) if want.size and dtype != np.bool_ else 1.0
        assert np.abs(o.astype(np.float64) - want).max() <= 1e-4 * scale, kind
    def call():
        kernel(*arrays)
    info = {"first_call_seconds": first}
    if kind == "epilogue":
        # The epilogue's cost: the product alone, timed interleaved with it
        # in this process (apart, the machine's drift swamps a few %).
        product(a, b, o)
        def plain():
            product(a, b, o)
def timed(fn):
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        if time.perf_counter() - start > 0.05:
            return number
        number *= 2
call()
number = timed(call)
compare = library == "picokernel" and kind == "epilogue"
times, plain_times = [], []
for _ in range(7):
    start = time.perf_counter()
    for _ in range(number):
        call()
    times.append((time.perf_counter() - start) / number)
    if compare:
        start = time.perf_counter()
        for _ in range(number):
            plain()
        plain_times.append((time.perf_counter() - start) / number)
times.sort()
if compare:
    plain_times.sort()
    info["product_alone_seconds"] = plain_times[3]
print(json.dumps({"median": times[3], "info": info}))
'''


def run_child(case, library, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads),
               OPENBLAS_NUM_THREADS=str(threads), LP_NUM_THREADS=str(threads),
               PK_CACHE="0")
    # XLA's CPU runtime takes every core it may run on, whatever its flags
    # say: jax runs on `threads` cores.
    pin = None
    if library == "jax":
        def pin():
            os.sched_setaffinity(0, range(threads))
    if library == "numpy":
        env.pop("OPENBLAS_CORETYPE", None)
        env.pop("OPENBLAS_L2_SIZE", None)
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(list(case) + [library])],
                         env=env, check=True, capture_output=True, text=True,
                         preexec_fn=pin).stdout
    return json.loads(out.strip().splitlines()[-1])


def flops(case):
    batch, m, k, n, _ = case
    if isinstance(batch, list):  # the broadcast batch
        batch = int(np.prod(np.broadcast_shapes(tuple(batch[0]), tuple(batch[1]))))
    return 2.0 * (batch or 1) * (m or 1) * k * (n or 1)


def machine_peak():
    """The CPU's float32 peak per core from /proc/cpuinfo: its clock times
    two FMA units of its vector width (AVX-512: 16 lanes, else AVX2: 8),
    times 2 flops per FMA. The nominal clock: turbo may exceed it."""
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
    except OSError:
        return info
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key in ("model name", "cpu MHz", "flags") and key not in info:
            info[key] = value.strip()
    lanes = 16 if "avx512f" in info.get("flags", "").split() else 8
    ghz = float(info.get("cpu MHz", "0")) / 1000
    return {"model": info.get("model name"), "ghz": ghz, "float32_lanes": lanes,
            "float32_peak_gflops_per_core": ghz * 2 * lanes * 2,
            "cores": os.cpu_count()}


def vulkan_available():
    import picokernel
    return picokernel.vulkan_available()[0]


def run_vulkan(names, args):
    """Rows for the Vulkan backend: the VULKAN cases among `names`, best
    median of the rounds."""
    rows = []
    print(f"\n{'case (Vulkan)':28} thr  GF/s  first call")
    for name in [n for n in names if n in VULKAN]:
        case = CASES[name]
        for threads in map(int, args.threads.split(",")):
            runs = [run_child(case, "vulkan", threads) for _ in range(args.rounds)]
            best = min(r["median"] for r in runs)
            row = {"case": name, "threads": threads, "backend": "vulkan",
                   "picokernel_seconds": best,
                   "picokernel_gflops": flops(case) / best / 1e9,
                   "first_call_seconds": runs[0]["info"]["first_call_seconds"]}
            rows.append(row)
            print(f"{name:28} {threads:3} {row['picokernel_gflops']:5.2f}  "
                  f"{row['first_call_seconds']:.2f} s", flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--output", default=None)
    parser.add_argument("--no-jax", action="store_true",
                        help="skip jax.jit (timed when jax is installed)")
    parser.add_argument("--no-vulkan", action="store_true",
                        help="skip the Vulkan rows")
    parser.add_argument("--cases", default=None,
                        help="comma-separated substrings of case names to run")
    args = parser.parse_args()
    names = QUICK if args.quick else list(CASES)
    if args.cases:
        wanted = args.cases.split(",")
        names = [name for name in names if any(w in name for w in wanted)]
    libraries = ["picokernel", "numpy"]
    if not args.no_jax and importlib.util.find_spec("jax"):
        libraries.append("jax")
    results = []
    print(f"{'case':28} thr  pk GF/s  BLAS GF/s  time ratio (pk/BLAS)"
          + ("  jax GF/s" if "jax" in libraries else ""))
    for name in names:
        case = CASES[name]
        for threads in map(int, args.threads.split(",")):
            best = {library: None for library in libraries}
            infos, overhead = {}, {}
            for _ in range(args.rounds):
                for library in libraries:
                    measured = run_child(case, library, threads)
                    infos[library] = measured["info"]
                    if best[library] is None or measured["median"] < best[library]:
                        best[library] = measured["median"]
                        if "product_alone_seconds" in measured["info"]:
                            overhead[library] = (measured["info"]["product_alone_seconds"],
                                                 measured["median"])
            row = {"case": name, "threads": threads,
                   "picokernel_seconds": best["picokernel"],
                   "numpy_seconds": best["numpy"],
                   "picokernel_gflops": flops(case) / best["picokernel"] / 1e9,
                   "numpy_gflops": flops(case) / best["numpy"] / 1e9,
                   "ratio": best["picokernel"] / best["numpy"],
                   "blas": infos["numpy"],
                   "first_call_seconds": infos["picokernel"]["first_call_seconds"]}
            if "product_alone_seconds" in infos["picokernel"]:
                # The epilogue's cost over the product alone, from the round
                # that timed it fastest (both timed in one process).
                row["epilogue_overhead"] = (
                    overhead["picokernel"][1] / overhead["picokernel"][0] - 1)
            if "jax" in best:
                row["jax_seconds"] = best["jax"]
                row["jax_gflops"] = flops(case) / best["jax"] / 1e9
                row["jax_version"] = infos["jax"]["version"]
            results.append(row)
            print(f"{name:28} {threads:3} {row['picokernel_gflops']:8.1f} "
                  f"{row['numpy_gflops']:10.1f}  {row['ratio']:.2f}"
                  + (f"  {row['jax_gflops']:8.1f}" if "jax_gflops" in row else "")
                  + (f"  epilogue +{row['epilogue_overhead'] * 100:.1f}%"
                     if "epilogue_overhead" in row else ""), flush=True)
    if results:
        print("BLAS:", results[-1]["blas"])
    if not args.no_vulkan and vulkan_available():
        results += run_vulkan(names, args)
    if args.output:
        os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
        with open(args.output, "w") as f:
            json.dump({"machine": machine_peak(), "rows": results}, f, indent=1)


if __name__ == "__main__":
    main()
