#!/usr/bin/env python3
"""`@` against OpenBLAS (NumPy's matmul) over the shape classes of issue 17,
in GFLOP/s, on 1 and 2 threads.

Each (case, thread count) runs in fresh processes, picokernel and NumPy
alternating, so that one library's idle spinning threads never steal the
other's cores; the best median of `--rounds` processes counts. OpenBLAS
runs with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset in its processes only
(on this machine they force a slow generic kernel); threadpoolctl's view of
the BLAS is recorded.

    python3 bench/run_matmul.py [--quick] [--output build/bench/matmul.json]
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

# name: (batch, m, k, n, dtype)
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
    "gelu(a @ b + bias) 512": (None, 512, 512, 512, "epilogue"),
    "gelu(a @ b + bias) 1024": (None, 1024, 1024, 1024, "epilogue"),
}
QUICK = ["f32 512", "f32 1000", "f64 512", "f32 4096x4096 @ 4096", "gelu(a @ b + bias) 512"]

CHILD = r'''
import json, sys, time
import numpy as np
batch, m, k, n, kind, library = json.loads(sys.argv[1])
dtype = np.float32 if kind == "epilogue" else np.dtype(kind)
rng = np.random.default_rng(0)
def array(*shape):
    return rng.standard_normal([s for s in shape if s is not None]).astype(dtype)
a = array(batch, m, k)
b = array(batch, k, n) if n is not None else array(k)
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
else:
    import picokernel
    if kind == "epilogue":
        @picokernel.kernel
        def kernel(a, b, bias, o):
            x = a[...] @ b[...] + bias[...]
            o[...] = 0.5 * x * (1.0 + picokernel.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))
        arrays = (a, b, bias, o)
    else:
        @picokernel.kernel
        def kernel(a, b, o):
            o[...] = a[...] @ b[...]
        arrays = (a, b, o)
    start = time.perf_counter()
    kernel(*arrays)
    first = time.perf_counter() - start
    def call():
        kernel(*arrays)
    info = {"first_call_seconds": first}
call()
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
print(json.dumps({"median": times[3], "info": info}))
'''


def run_child(case, library, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads),
               OPENBLAS_NUM_THREADS=str(threads), PK_CACHE="0")
    if library == "numpy":
        env.pop("OPENBLAS_CORETYPE", None)
        env.pop("OPENBLAS_L2_SIZE", None)
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(list(case) + [library])],
                         env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def flops(case):
    batch, m, k, n, _ = case
    return 2.0 * (batch or 1) * (m or 1) * k * (n or 1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--output", default=None)
    parser.add_argument("--cases", default=None,
                        help="comma-separated substrings of case names to run")
    args = parser.parse_args()
    names = QUICK if args.quick else list(CASES)
    if args.cases:
        wanted = args.cases.split(",")
        names = [name for name in names if any(w in name for w in wanted)]
    results = []
    print(f"{'case':28} thr  pk GF/s  BLAS GF/s  time ratio (pk/BLAS)")
    for name in names:
        case = CASES[name]
        for threads in map(int, args.threads.split(",")):
            best = {"picokernel": None, "numpy": None}
            infos = {}
            for _ in range(args.rounds):
                for library in ("picokernel", "numpy"):
                    measured = run_child(case, library, threads)
                    infos[library] = measured["info"]
                    if best[library] is None or measured["median"] < best[library]:
                        best[library] = measured["median"]
            row = {"case": name, "threads": threads,
                   "picokernel_seconds": best["picokernel"],
                   "numpy_seconds": best["numpy"],
                   "picokernel_gflops": flops(case) / best["picokernel"] / 1e9,
                   "numpy_gflops": flops(case) / best["numpy"] / 1e9,
                   "ratio": best["picokernel"] / best["numpy"],
                   "blas": infos["numpy"],
                   "first_call_seconds": infos["picokernel"]["first_call_seconds"]}
            results.append(row)
            print(f"{name:28} {threads:3} {row['picokernel_gflops']:8.1f} "
                  f"{row['numpy_gflops']:10.1f}  {row['ratio']:.2f}", flush=True)
    print("BLAS:", results[-1]["blas"])
    if args.output:
        os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
        with open(args.output, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
