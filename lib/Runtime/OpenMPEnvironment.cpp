//===- OpenMPEnvironment.cpp - settings the OpenMP runtime reads ----------===//

#include "OpenMPEnvironment.h"

#include "picokernel/Support/Fork.h"
#include "picokernel/Support/Log.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#ifdef __linux__
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace pk::detail {

namespace {
/// libomp registers itself in /dev/shm/__KMP_REGISTERED_LIB_<pid>_<uid>:
/// it creates the file, gives it a size, then reads it back. A file of this
/// process's pid already there is an earlier process's that died between
/// the two (pids are reused), and libomp reads an empty one past its end:
/// SIGBUS on its first parallel region. An empty one is never a live
/// runtime's: removed.
void removeStaleOpenMPRegistration() {
#ifdef __linux__
  std::string path = "/dev/shm/__KMP_REGISTERED_LIB_" +
                     std::to_string(getpid()) + "_" + std::to_string(getuid());
  struct stat info;
  if (stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
      info.st_size == 0)
    unlink(path.c_str());
#endif
}

/// (A forked child registers again, under its own pid.) Registered while
/// the library loads (Support/Fork.h): glibc before 2.36 holds its
/// fork-handler lock while a fork waits for compiles, so a compile that
/// registered one then would wait for that fork for ever.
[[maybe_unused]] const bool registeredAtLoad =
    (registerForkHandler(ForkStage::TakeLocks,
                         {nullptr, nullptr, removeStaleOpenMPRegistration}),
     true);
} // namespace

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
    removeStaleOpenMPRegistration();
    const char *value = std::getenv("OMP_NUM_THREADS");
    if (!value || isValidThreadCountList(value))
      return;
    logRecord(LogLevel::Warning,
              "ignoring OMP_NUM_THREADS='" + std::string(value) +
                  "' (not a list of thread counts from 1 to " +
                  std::to_string(kMaxOpenMPThreads) +
                  ", on which the OpenMP runtime would abort): kernels use "
                  "every core");
    unsetenv("OMP_NUM_THREADS");
  });
}

} // namespace pk::detail
