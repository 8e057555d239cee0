//===- TargetMachine.h - LLVM target machines for pk kernels ----*- C++ -*-===//

#ifndef PICOKERNEL_COMPILER_TARGETMACHINE_H
#define PICOKERNEL_COMPILER_TARGETMACHINE_H

#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace llvm {
class TargetMachine;
} // namespace llvm

namespace mlir::pk {

struct TargetMachineOptions {
  /// Target triple; empty: the host's.
  std::string triple;
  /// "host": this machine's CPU and all its features (the fastest code,
  /// which then needs a CPU like it); else an LLVM CPU name such as
  /// "x86-64-v2" or "generic".
  std::string cpu = "host";
  unsigned optLevel = 3;
  /// For code that runs in this process through the JIT: the host's triple,
  /// CPU and features (`triple` and `cpu` are ignored) with the JIT's code
  /// and relocation models (code and data may be far apart in memory).
  /// Otherwise position-independent code for an object file.
  bool jit = false;
};

/// The target machine every CPU compile path uses.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const TargetMachineOptions &options);

/// The widest vector registers `machine` generates code for, in bits (512
/// with AVX-512, 256 with AVX, else 128): what sizes matmul register tiles.
int64_t vectorBitsOf(const llvm::TargetMachine &machine);

} // namespace mlir::pk

#endif // PICOKERNEL_COMPILER_TARGETMACHINE_H
