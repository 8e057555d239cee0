//===- memory_cycles.cpp - RSS over many compile/evict cycles -------------===//
//
// Compiles a kernel for `cycles` different shapes through a cache of 4
// entries, so that every call compiles one variant and evicts another, and
// prints the resident set size as it goes. Bounded RSS means evicted
// kernels (their MLIR, their JIT'd code) are freed.
//
//   pk-memory-cycles [cycles=10000] [report every=1000]
//
//===----------------------------------------------------------------------===//

#include "picokernel/Kernel/Kernel.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <unistd.h>
#include <vector>

namespace {

double residentMiB() {
  std::ifstream statm("/proc/self/statm");
  long total = 0, resident = 0;
  statm >> total >> resident;
  return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

} // namespace

int main(int argc, char **argv) {
  long cycles = argc > 1 ? std::atol(argv[1]) : 10000;
  long every = argc > 2 ? std::atol(argv[2]) : 1000;
  pk::KernelOptions options;
  options.maxCacheEntries = 4;
  pk::Kernel kernel(
      "cycle",
      [](pk::Ref a, pk::Ref b, pk::Ref o) {
        o[pk::all] = pk::exp(a[pk::all]) * b[pk::all] + 1.0f;
      },
      {"a", "b", "o"}, options);
  auto start = std::chrono::steady_clock::now();
  std::printf("cycles  rss_mib  seconds\n");
  for (long cycle = 1; cycle <= cycles; ++cycle) {
    int64_t n = cycle; // a new shape, so a new compile, every cycle
    std::vector<float> a(size_t(n), 0.5f), b(size_t(n), 2.0f),
        o(size_t(n), 0.0f);
    std::vector<int64_t> shape = {n};
    kernel({{a.data(), pk::f32, shape},
            {b.data(), pk::f32, shape},
            {o.data(), pk::f32, shape}});
    if (o[0] != std::exp(0.5f) * 2.0f + 1.0f) {
      std::fprintf(stderr, "wrong result at cycle %ld\n", cycle);
      return 1;
    }
    if (cycle % every == 0 || cycle == 1)
      std::printf("%6ld  %7.1f  %7.1f\n", cycle, residentMiB(),
                  std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - start)
                      .count());
  }
  pk::CacheStats stats = kernel.stats();
  std::printf("compiles %llu, evictions %llu, entries %zu\n",
              (unsigned long long)stats.misses,
              (unsigned long long)stats.evictions, stats.entries);
  return 0;
}
