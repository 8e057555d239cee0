//===- SecondTrace.h - the sizes a dynamic compile traces again -*- C++ -*-===//
//
// Private to the kernel layer. A variant for dynamic sizes is made from two
// traces (DynamicSizes.cpp): the caller's sizes, then each class of sizes
// moved by its own amount. Here: which size of a key is in which class or
// is computed from one (a SizeRelation of the mask), the sizes of the
// second trace, and, where classes fail to trace moved alone, which of
// them are computed from others (o[...] = x[1:] - x[:-1]: o's is x's less
// 1).
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_KERNEL_SECONDTRACE_H
#define PICOKERNEL_LIB_KERNEL_SECONDTRACE_H

#include "GuardKey.h"

#include "picokernel/Dialect/Pk/IR/SizeClasses.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <utility>
#include <vector>

namespace pk::detail {

/// Per size of a key: the class it is in (a dynamic size; -1 otherwise),
/// or the class of the size it is computed from and the difference.
struct SizeRoles {
  std::vector<int> classOf;
  std::vector<std::optional<std::pair<size_t, int64_t>>> related;
};

/// The roles of `real`'s sizes under `mask`, whose dynamic sizes are the
/// classes `sizes` (as encodeDynamicKey numbers them).
SizeRoles rolesOf(const Signature &real, const SizeMask &mask,
                  llvm::ArrayRef<int64_t> sizes);

/// `real` with each class k of dynamic sizes `classSizes[k]` and each size
/// computed from one moved with it.
Signature withClassSizes(const Signature &real, const SizeRoles &roles,
                         llvm::ArrayRef<int64_t> classSizes);

/// Whether the sizes `classSizes` give `real` are new (no size of `real`,
/// none equal but where a class has them: no equality either trace lacks)
/// and keep every array countable in bytes.
bool takesClassSizes(const Signature &real, const SizeRoles &roles,
                     llvm::ArrayRef<int64_t> classSizes);

/// The sizes the classes of a dynamic compile take in its second trace:
/// class k's size plus the first prime at least step (k + 1), for the
/// largest step of a few that `takesClassSizes`. Empty if none does.
/// Distinct primes keep sizes that are in proportion in the first trace
/// (m = 2 n - 2) from looking like one another's multiples in both (a
/// mean's count 2 (n - 2) = m - 2).
std::vector<int64_t> secondSizes(const Signature &real, const SizeRoles &roles,
                                 llvm::ArrayRef<int64_t> sizes);

/// Which of the classes `failing` (each fails to trace moved alone) are
/// computed from others: two that trace moved together by one amount (the
/// rest as they are) are a group, the others one group; where the kernel
/// traces (`traces`) with each group moved by its own amount (the other
/// classes as `moved` has them), the smaller sizes of a group are computed
/// from its largest. Per class, the class it is computed from, or -1;
/// empty where they are not, or `roles` relates sizes already.
std::vector<int>
relateSizes(const Signature &real, const SizeRoles &roles,
            llvm::ArrayRef<int64_t> sizes, llvm::ArrayRef<int64_t> moved,
            llvm::ArrayRef<size_t> failing,
            llvm::function_ref<bool(const Signature &)> traces);

/// Whether the derived classes of a kernel (of size classes `classes`,
/// traced for `real`) are sizes the key (`roles`) computes from the same
/// class with the same difference: the variant's key checks only those.
bool derivesAsKeyed(const mlir::pk::SizeClasses &classes, const Signature &real,
                    const SizeRoles &roles);

} // namespace pk::detail

#endif // PICOKERNEL_LIB_KERNEL_SECONDTRACE_H
