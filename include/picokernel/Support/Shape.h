//===- Shape.h - array shapes and NumPy's broadcasting ----------*- C++ -*-===//
//
// Shapes of arrays as NumPy has them: sizes per dimension, row-major
// (C-contiguous) layouts, broadcasting, and the way messages print them.
// Shared by every layer (verifiers, tracers, compilers and runtimes).
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_SUPPORT_SHAPE_H
#define PICOKERNEL_SUPPORT_SHAPE_H

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace pk {

using Shape = std::vector<int64_t>;

/// A dimension whose size is given when the kernel runs: MLIR's
/// ShapedType::kDynamic (the dialect checks that they agree).
inline constexpr int64_t kDynamicSize = INT64_MIN;

/// A shape the way NumPy users read it: `(2, 3)`, `(4,)`, `()`; a dynamic
/// size prints as `?`.
std::string formatShape(std::span<const int64_t> shape);

/// The strides, in elements, of a C-contiguous array of `shape`.
Shape rowMajorStrides(std::span<const int64_t> shape);

/// NumPy broadcasting of two shapes, or nothing if they are incompatible.
std::optional<Shape> broadcastShapes(std::span<const int64_t> a,
                                     std::span<const int64_t> b);

/// Whether `from` broadcasts to exactly `to` (as in `to_array[...] = from`).
bool broadcastsTo(std::span<const int64_t> from, std::span<const int64_t> to);

} // namespace pk

#endif // PICOKERNEL_SUPPORT_SHAPE_H
