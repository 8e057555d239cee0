//===- Arguments.h - checking the arrays of a call -------------*- C++ -*-===//
//
// Private to the kernel layer: what a call's arrays must satisfy (count,
// dtype, rank, size, contiguity, data) and which of them are the same array
// or overlap in part.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_KERNEL_ARGUMENTS_H
#define PICOKERNEL_LIB_KERNEL_ARGUMENTS_H

#include "picokernel/Kernel/Kernel.h"

#include "llvm/ADT/SmallVector.h"

#include <span>
#include <string>
#include <utility>
#include <vector>

namespace pk::detail {

/// Arrays of more dimensions are refused.
constexpr size_t kMaxRank = 32;

/// The name of parameter `index` in messages: its given name, else argN.
std::string paramName(const std::vector<std::string> &paramNames, size_t index);

/// Checks `arrays` for kernel `name` (which takes `arity` arrays, or any
/// number when negative) and throws ArgumentError naming the argument.
/// Sets `aliasOf[i]` to the first earlier argument that is the same array
/// (-1 if none) and lists the pairs that overlap without being the same.
void checkArguments(
    std::span<const ArrayView> arrays, int arity, const std::string &name,
    const std::vector<std::string> &paramNames,
    llvm::SmallVectorImpl<int> &aliasOf,
    llvm::SmallVectorImpl<std::pair<int, int>> &partialOverlaps);

} // namespace pk::detail

#endif // PICOKERNEL_LIB_KERNEL_ARGUMENTS_H
