//===- Passes.h - picokernel transformations on upstream IR -----*- C++ -*-===//

#ifndef PICOKERNEL_TRANSFORMS_PASSES_H
#define PICOKERNEL_TRANSFORMS_PASSES_H

#include "picokernel/Support/Defaults.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::pk {

/// The most iterations an `scf.for` with dynamic bounds runs, as an
/// integer attribute on it, set by the pass that builds it (fmod's loop
/// over quotient bits); pk-check-loop-budget counts with it.
constexpr llvm::StringLiteral kMaxTripCountAttrName = "pk.max_trip_count";

/// The most operations elementwise fusion puts into one loop body: LLVM's
/// loop vectorizer takes time quadratic in a body's dependence chains (4,000
/// dependent ops took 5 s), and past a few hundred operations per element a
/// loop is compute-bound, so another pass over memory costs little.
constexpr unsigned kMaxFusedBodyOps = 512;

/// The unit attribute pk-pack-matmul puts on the packed contractions it
/// makes, for pk-vectorize-packed-matmul (which removes it).
constexpr llvm::StringLiteral kPackedMatmulAttrName = "pk.packed_matmul";

/// Panels of rows of C up to which pk-vectorize-packed-matmul runs a packed
/// product's column panels in parallel, each panel of B packed right before
/// every row panel reads it from cache, instead of all of B packed first
/// (two more passes over B through memory). Past it, rereading A's panels
/// for each column panel costs more: float32 x @ (1024 x 1024) on an
/// AVX-512 Xeon, per-panel packing took 0.75x the time of packing all of B
/// at 64 rows (8 panels), about the same at 256 and 1.2x at 1024.
constexpr int64_t kMaxFewRowPanels = 16;

/// The unit attribute pk-pack-matmul puts on a packed contraction of a
/// dynamic M that a run-time choice found to have at most kMaxFewRowPanels
/// panels of rows, for pk-vectorize-packed-matmul (which removes it).
constexpr llvm::StringLiteral kFewRowPanelsAttrName = "pk.few_row_panels";

/// What pk-rename-kernel-functions puts before a kernel function's symbol
/// (`erf` becomes `kernel.erf`): no C library names a symbol with a dot, so
/// a kernel named like one (erf, malloc, omp_get_thread_num) no longer
/// stands for it (and none becomes an `llvm.` intrinsic's).
constexpr llvm::StringLiteral kKernelSymbolPrefix = "kernel.";

/// The attribute holding a renamed kernel function's own name, for
/// pk-name-c-interfaces-after-kernels (which removes it).
constexpr llvm::StringLiteral kKernelNameAttrName = "pk.kernel_name";

#define GEN_PASS_DECL
#include "picokernel/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "picokernel/Transforms/Passes.h.inc"

} // namespace mlir::pk

#endif // PICOKERNEL_TRANSFORMS_PASSES_H
