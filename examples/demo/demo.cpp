//===- demo.cpp - the picokernel demo: trace, lower, run, check -----------===//
//
// The seed post's kernel, o = a * b + c, written in C++: traced into the pk
// dialect, shown after each stage of the CPU pipeline, compiled, run on
// 1e7 floats and checked against (and timed next to) a plain C++ two-pass
// loop, the way NumPy evaluates the same line.
//
//===----------------------------------------------------------------------===//

#include "picokernel/Kernel/Kernel.h"
#include "picokernel/Target/Listing.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>
#include <sstream>
#include <vector>

namespace {
using Clock = std::chrono::steady_clock;

double millisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

/// The first `lines` lines of `text`, and how many were left out.
std::string head(const std::string &text, size_t lines) {
  std::istringstream in(text);
  std::string line, out;
  size_t count = 0, total = 0;
  while (std::getline(in, line)) {
    if (count++ < lines)
      out += line + "\n";
    ++total;
  }
  if (total > lines)
    out += "    ... (" + std::to_string(total - lines) + " more lines)\n";
  return out;
}

void section(const std::string &title) {
  std::cout << "\n=== " << title << " ===\n";
}

template <typename Fn> double medianMilliseconds(int runs, Fn &&fn) {
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    auto start = Clock::now();
    fn();
    times.push_back(millisecondsSince(start));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}
} // namespace

int main() {
  using pk::all;
  const int64_t n = 10'000'000;
  pk::Kernel fma("fma",
                 [](pk::Ref a, pk::Ref b, pk::Ref c, pk::Ref o) {
                   o[all] = a[all] * b[all] + c[all];
                 },
                 {"a", "b", "c", "o"});

  std::vector<float> a(n), b(n), c(n), o(n, 0.0f), reference(n), tmp(n);
  std::mt19937 gen(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = dist(gen);
    b[i] = dist(gen);
    c[i] = dist(gen);
  }
  std::vector<int64_t> shape = {n};
  std::vector<pk::ArrayView> arrays = {{a.data(), pk::f32, shape},
                                       {b.data(), pk::f32, shape},
                                       {c.data(), pk::f32, shape},
                                       {o.data(), pk::f32, shape}};

  section("1. traced (seed-style listing)");
  pk::Module module = fma.trace(arrays);
  std::cout << pk::listing(module);
  section("2. pk dialect");
  std::cout << pk::printModule(module);
  for (const std::string &stage :
       {"linalg", "fused", "tiled", "bufferized", "llvm"}) {
    section("3. after stage '" + stage + "'");
    std::cout << head(pk::lowerToStage(module, stage),
                      stage == "llvm" ? 24 : 40);
  }

  section("4. run on " + std::to_string(n) + " float32 elements");
  auto start = Clock::now();
  fma(arrays);
  double firstCall = millisecondsSince(start);
  pk::CacheStats stats = fma.stats();
  std::printf("first call (trace + compile + run): %.1f ms  [trace %.1f ms, "
              "MLIR passes %.1f ms, LLVM %.1f ms]\n",
              firstCall, stats.traceSeconds * 1e3, stats.pipelineSeconds * 1e3,
              stats.codegenSeconds * 1e3);

  double picokernel = medianMilliseconds(11, [&] { fma(arrays); });
  double twoPass = medianMilliseconds(11, [&] {
    for (int64_t i = 0; i < n; ++i)
      tmp[i] = a[i] * b[i];
    for (int64_t i = 0; i < n; ++i)
      reference[i] = tmp[i] + c[i];
  });

  section("5. result check");
  int64_t mismatches = 0;
  for (int64_t i = 0; i < n; ++i)
    mismatches += o[i] != reference[i];
  std::printf("o[0..3] = %g %g %g %g\n", o[0], o[1], o[2], o[3]);
  std::printf("elements differing from the two-pass C++ loop: %lld of %lld "
              "-> %s\n",
              (long long)mismatches, (long long)n,
              mismatches == 0 ? "OK" : "MISMATCH");
  std::printf("median time: picokernel %.2f ms, two-pass C++ loop %.2f ms "
              "(%.2fx); cache %llu hits, %llu misses\n",
              picokernel, twoPass, twoPass / picokernel,
              (unsigned long long)fma.stats().hits,
              (unsigned long long)fma.stats().misses);
  return mismatches == 0 ? 0 : 1;
}
