//===- Generalize.h - one kernel for every size from two traces -*- C++ -*-===//
//
// A kernel traced for concrete sizes is generalized to dynamic sizes by
// tracing it twice: once for the caller's sizes and once with each class of
// equal input sizes moved by its own offset. Where the two modules differ
// only in sizes that are exactly an input size (or a slice's, or counts of
// elements such as a mean's divisor), those sizes become `?`; anything else
// that depends on the sizes (an operation that takes no dynamic sizes yet, a
// slice from one end to a bound counted from the other) keeps the kernel
// static, with the reason.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_FRONTEND_GENERALIZE_H
#define PICOKERNEL_FRONTEND_GENERALIZE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <utility>

namespace pk {

/// The attribute with which the tracer records each slice's index as the
/// user wrote it (an integer, or [start, stop, step] with unit for a
/// missing bound, per dimension): whether a bound counts from the end
/// decides how a slice of a dynamic size is computed.
inline constexpr llvm::StringLiteral kIndexAttrName = "pk.index";

/// Removes the recorded indices from a module that is not generalized.
void dropRecordedIndices(mlir::ModuleOp module);

/// An input size that becomes dynamic: its value in the first trace and in
/// the second. Every pair's values are distinct from every other pair's.
using SizeSymbol = std::pair<int64_t, int64_t>;

/// Rewrites `traced` (one pk.kernel, traced for the first values of
/// `symbols`) into the kernel for every size, given `perturbed`, the same
/// kernel traced for the second values. Fails with `reason` (in user terms)
/// where the kernel cannot take dynamic sizes; `traced` is then unusable.
/// Where only some sizes keep it static (a count not exact in its type,
/// non-adjacent dynamic axes of a sum), their first values go to `keepStatic`:
/// the kernel may take the others dynamic. `derivedFrom` (per symbol, or
/// empty) names the symbol whose size a symbol's is, less a constant (the
/// same in both traces; o[...] = x[1:] - x[:-1]: o's is x's less 1), or -1.
mlir::LogicalResult generalizeSizes(mlir::ModuleOp traced,
                                    mlir::ModuleOp perturbed,
                                    llvm::ArrayRef<SizeSymbol> symbols,
                                    std::string &reason,
                                    llvm::SmallVectorImpl<int64_t> &keepStatic,
                                    llvm::ArrayRef<int> derivedFrom = {});

} // namespace pk

#endif // PICOKERNEL_FRONTEND_GENERALIZE_H
