//===- OpenMPEnvironment.cpp - settings the OpenMP runtime reads ----------===//

#include "OpenMPEnvironment.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace pk::detail {

bool isValidThreadCountList(std::string_view value) {
  auto isBlank = [](char c) { return c == ' ' || c == '\t'; };
  size_t i = 0;
  while (true) {
    while (i < value.size() && isBlank(value[i]))
      ++i;
    int64_t count = 0;
    size_t digits = 0;
    for (; i < value.size() && value[i] >= '0' && value[i] <= '9'; ++i) {
      count = count * 10 + (value[i] - '0');
      if (count > kMaxOpenMPThreads)
        return false;
      ++digits;
    }
    if (digits == 0)
      return false;
    while (i < value.size() && isBlank(value[i]))
      ++i;
    if (i == value.size())
      return true;
    if (value[i] != ',')
      return false;
    ++i;
  }
}

void prepareOpenMPEnvironment() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char *value = std::getenv("OMP_NUM_THREADS");
    if (!value || isValidThreadCountList(value))
      return;
    std::fprintf(stderr,
                 "picokernel: ignoring OMP_NUM_THREADS='%s' (not a list of "
                 "thread counts from 1 to %lld, on which the OpenMP runtime "
                 "would abort): kernels use every core\n",
                 value, static_cast<long long>(kMaxOpenMPThreads));
    unsetenv("OMP_NUM_THREADS");
  });
}

} // namespace pk::detail
