//===- CompileError.h - a kernel that does not compile ----------*- C++ -*-===//
//
// The exception every compile path throws at the API's edge (the JIT, the
// Vulkan runtime, ahead-of-time objects, lowering to a stage), with the
// diagnostics of what failed as its message.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_SUPPORT_COMPILEERROR_H
#define PICOKERNEL_SUPPORT_COMPILEERROR_H

#include <stdexcept>

namespace pk {

/// A kernel that does not compile (for any backend), or a stage or option
/// that does not exist; what() says why.
class CompileError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

} // namespace pk

#endif // PICOKERNEL_SUPPORT_COMPILEERROR_H
