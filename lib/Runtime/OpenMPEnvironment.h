//===- OpenMPEnvironment.h - settings the OpenMP runtime reads --*- C++ -*-===//
//
// Private to the runtime. Debian's libomp (an assertion-enabled build)
// aborts the process on some OMP_NUM_THREADS values instead of warning:
// picokernel checks the variable before the runtime first starts.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_RUNTIME_OPENMPENVIRONMENT_H
#define PICOKERNEL_LIB_RUNTIME_OPENMPENVIRONMENT_H

#include <cstdint>
#include <string_view>

namespace pk::detail {

/// The most threads per level OMP_NUM_THREADS may ask for: libomp aborts
/// when it cannot start them (32768 did here).
inline constexpr int64_t kMaxOpenMPThreads = 4096;

/// Whether `value` is an OMP_NUM_THREADS libomp takes: a comma-separated
/// list of decimal counts of at most kMaxOpenMPThreads (blanks around
/// them; 0 it replaces by 1 itself).
bool isValidThreadCountList(std::string_view value);

/// Once per process, before the OpenMP runtime is loaded: removes an
/// OMP_NUM_THREADS that is not isValidThreadCountList from the environment
/// (the runtime then uses every core), saying so on stderr, and an empty
/// registration file of this process's pid that a dead process left in
/// /dev/shm (libomp would die of SIGBUS reading it; also in forked
/// children).
void prepareOpenMPEnvironment();

} // namespace pk::detail

#endif // PICOKERNEL_LIB_RUNTIME_OPENMPENVIRONMENT_H
