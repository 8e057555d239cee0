//===- cpu_bench.cpp - picokernel's CPU path against hand-written C++ -----===//
//
// Side by side in one run: the seed's fma (o = a * b + c, float32) through
// picokernel, a hand-written fused loop (-O3 -march=native; one thread and
// OpenMP over all cores) and the two-pass loop NumPy's evaluation amounts
// to; the cost of a cache-hit call; and the first call (trace + compile).
//
//===----------------------------------------------------------------------===//

#include "picokernel/Kernel/Kernel.h"

#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

namespace {

using pk::all;

pk::Kernel makeFma() {
  return pk::Kernel("fma",
                    [](pk::Ref a, pk::Ref b, pk::Ref c, pk::Ref o) {
                      o[all] = a[all] * b[all] + c[all];
                    },
                    {"a", "b", "c", "o"});
}

struct Data {
  explicit Data(int64_t n)
      : n(n), shape{n}, a(n, 1.5f), b(n, 2.0f), c(n, 0.25f), o(n), tmp(n) {
    arrays = {{a.data(), pk::f32, shape},
              {b.data(), pk::f32, shape},
              {c.data(), pk::f32, shape},
              {o.data(), pk::f32, shape}};
  }
  int64_t n;
  std::vector<int64_t> shape;
  std::vector<float> a, b, c, o, tmp;
  std::vector<pk::ArrayView> arrays;
};

void setBytes(benchmark::State &state, int64_t n) {
  // Three arrays read and one written: 16 bytes per element.
  state.SetBytesProcessed(int64_t(state.iterations()) * n * 16);
  state.counters["elements"] = double(n);
}

void BM_Fma_picokernel(benchmark::State &state) {
  Data data(state.range(0));
  pk::Kernel fma = makeFma();
  fma(data.arrays); // compile outside the timed loop
  for (auto _ : state) {
    fma(data.arrays);
    benchmark::ClobberMemory();
  }
  setBytes(state, data.n);
}

// The same kernel through Vulkan (lavapipe here: a CPU too), with the
// time split into upload, compute and download.
void BM_Fma_vulkan(benchmark::State &state) {
  std::string why;
  if (!pk::vulkanAvailable(&why)) {
    state.SkipWithError(("no Vulkan device: " + why).c_str());
    return;
  }
  Data data(state.range(0));
  pk::KernelOptions options;
  options.backend = pk::Backend::Vulkan;
  pk::Kernel fma(
      "fma",
      [](pk::Ref a, pk::Ref b, pk::Ref c, pk::Ref o) {
        o[all] = a[all] * b[all] + c[all];
      },
      {"a", "b", "c", "o"}, options);
  fma(data.arrays);
  double upload = 0, compute = 0, download = 0;
  for (auto _ : state) {
    fma(data.arrays);
    pk::VulkanRunTimes times = pk::lastVulkanRunTimes();
    upload += times.uploadSeconds;
    compute += times.computeSeconds;
    download += times.downloadSeconds;
  }
  double runs = double(state.iterations());
  state.counters["upload_us"] = upload / runs * 1e6;
  state.counters["compute_us"] = compute / runs * 1e6;
  state.counters["download_us"] = download / runs * 1e6;
  setBytes(state, data.n);
}

void BM_Fma_fused_loop_1_thread(benchmark::State &state) {
  Data data(state.range(0));
  for (auto _ : state) {
    const float *__restrict a = data.a.data(), *__restrict b = data.b.data(),
                            *__restrict c = data.c.data();
    float *__restrict o = data.o.data();
    for (int64_t i = 0; i < data.n; ++i)
      o[i] = a[i] * b[i] + c[i];
    benchmark::ClobberMemory();
  }
  setBytes(state, data.n);
}

void BM_Fma_fused_loop_all_threads(benchmark::State &state) {
  Data data(state.range(0));
  for (auto _ : state) {
    const float *__restrict a = data.a.data(), *__restrict b = data.b.data(),
                            *__restrict c = data.c.data();
    float *__restrict o = data.o.data();
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < data.n; ++i)
      o[i] = a[i] * b[i] + c[i];
    benchmark::ClobberMemory();
  }
  setBytes(state, data.n);
}

// What NumPy's `o[...] = a * b + c` does: a temporary and two passes.
void BM_Fma_two_pass_loop(benchmark::State &state) {
  Data data(state.range(0));
  for (auto _ : state) {
    for (int64_t i = 0; i < data.n; ++i)
      data.tmp[i] = data.a[i] * data.b[i];
    for (int64_t i = 0; i < data.n; ++i)
      data.o[i] = data.tmp[i] + data.c[i];
    benchmark::ClobberMemory();
  }
  setBytes(state, data.n);
}

// STREAM-like bandwidth of this machine (all threads): copy moves 8 bytes
// per float32 element, triad (o = a + s * b) 12.
void BM_Stream_copy(benchmark::State &state) {
  Data data(state.range(0));
  for (auto _ : state) {
    const float *__restrict a = data.a.data();
    float *__restrict o = data.o.data();
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < data.n; ++i)
      o[i] = a[i];
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * data.n * 8);
}

void BM_Stream_triad(benchmark::State &state) {
  Data data(state.range(0));
  for (auto _ : state) {
    const float *__restrict a = data.a.data(), *__restrict b = data.b.data();
    float *__restrict o = data.o.data();
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < data.n; ++i)
      o[i] = a[i] + 3.0f * b[i];
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * data.n * 12);
}

void BM_CacheHitCall(benchmark::State &state) {
  Data data(4);
  pk::Kernel fma = makeFma();
  fma(data.arrays);
  for (auto _ : state)
    fma(data.arrays);
}

// Trace + MLIR passes + LLVM for a kernel not seen before (the process's
// MLIR context is already set up, as after any earlier compile).
void BM_FirstCall(benchmark::State &state) {
  Data data(4);
  makeFma()(data.arrays); // context set-up, once per process
  double trace = 0, passes = 0, llvm = 0;
  for (auto _ : state) {
    pk::Kernel fma = makeFma();
    fma(data.arrays);
    state.PauseTiming();
    pk::CacheStats stats = fma.stats();
    trace += stats.traceSeconds;
    passes += stats.pipelineSeconds;
    llvm += stats.codegenSeconds;
    state.ResumeTiming();
  }
  double runs = double(state.iterations());
  state.counters["trace_ms"] = trace / runs * 1e3;
  state.counters["passes_ms"] = passes / runs * 1e3;
  state.counters["llvm_ms"] = llvm / runs * 1e3;
}

void sizes(benchmark::internal::Benchmark *bench) {
  for (int64_t n : {4LL, 1000LL, 100000LL, 1000000LL, 10000000LL, 30000000LL})
    bench->Arg(n);
  bench->UseRealTime();
}

} // namespace

BENCHMARK(BM_Fma_picokernel)->Apply(sizes);
BENCHMARK(BM_Fma_fused_loop_1_thread)->Apply(sizes);
BENCHMARK(BM_Fma_vulkan)->Apply(sizes);
BENCHMARK(BM_Fma_fused_loop_all_threads)->Apply(sizes);
BENCHMARK(BM_Fma_two_pass_loop)->Apply(sizes);
BENCHMARK(BM_Stream_copy)->Arg(30000000)->UseRealTime();
BENCHMARK(BM_Stream_triad)->Arg(30000000)->UseRealTime();
BENCHMARK(BM_CacheHitCall);
BENCHMARK(BM_FirstCall)->Unit(benchmark::kMillisecond)->Iterations(20);

BENCHMARK_MAIN();
