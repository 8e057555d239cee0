//===- Generalizer.h - comparing two traces, rewriting the first -*- C++
//-*-===//
//
// The state of one generalization (Generalize.h): Generalize.cpp compares
// the two traces op by op and learns which sizes are dynamic;
// GeneralizeRewrite.cpp then rewrites the first trace into the kernel for
// every size.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_FRONTEND_GENERALIZER_H
#define PICOKERNEL_LIB_FRONTEND_GENERALIZER_H

#include "Counts.h"
#include "SliceSizes.h"
#include "picokernel/Dialect/Pk/IR/PkOps.h"
#include "picokernel/Frontend/Generalize.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <map>
#include <optional>
#include <string>

namespace pk {

/// A slice of dynamic dimensions: per dimension, the size it takes where
/// that is dynamic, and its first index (a size where it counts from the
/// end).
struct SlicePlan {
  mlir::Operation *op;
  llvm::SmallVector<std::optional<SizeExpr>> sizes, offsets;
  llvm::SmallVector<int64_t> starts, steps;
};

class Generalizer {
public:
  Generalizer(llvm::ArrayRef<SizeSymbol> symbols, std::string &reason,
              llvm::SmallVectorImpl<int64_t> &keepStatic,
              llvm::ArrayRef<int> derivedFrom)
      : symbols(symbols), reason(reason), keepStatic(keepStatic),
        derivedFrom(derivedFrom) {}

  mlir::LogicalResult run(mlir::ModuleOp traced, mlir::ModuleOp perturbed);

private:
  mlir::LogicalResult fail(const llvm::Twine &why) {
    reason = why.str();
    return mlir::failure();
  }
  /// The class of a dynamic size, from its value in the first trace.
  int classOf(int64_t size) const {
    for (auto [k, symbol] : llvm::enumerate(symbols))
      if (symbol.first == size)
        return int(k);
    return -1;
  }
  /// Records that a size of the first trace `x` and of the second `y` is
  /// `size`. Two different sizes with the same values make the values
  /// ambiguous: they may differ for other sizes.
  void learn(int64_t x, int64_t y, SizeExpr size) {
    auto [it, inserted] = sizesSeen.try_emplace({x, y}, size);
    if (!inserted && it->second != size)
      it->second = std::nullopt;
  }
  /// The dynamic size that is `x` in the first trace and `y` in the second.
  std::optional<SizeExpr> sizeFor(int64_t x, int64_t y) const {
    auto it = sizesSeen.find({x, y});
    return it == sizesSeen.end() ? std::nullopt : it->second;
  }
  /// Dimension `d` of `value` (of the first trace): null where static,
  /// mlir::failure where its size is not known.
  mlir::FailureOr<std::optional<SizeExpr>> sizeOfDim(mlir::Value value,
                                                     int64_t d) const;
  template <typename SliceOp>
  mlir::LogicalResult compareSlices(SliceOp a, SliceOp b);
  /// Compares the slices of the two traces' operations (in order), then
  /// fails if some size must stay static.
  mlir::LogicalResult compareAllSlices(llvm::ArrayRef<mlir::Operation *> opsA,
                                       llvm::ArrayRef<mlir::Operation *> opsB);
  /// Keeps the class of first value `size` static, for `why` (the first
  /// reason is the one given).
  void keepSizeStatic(int64_t size, llvm::StringRef why) {
    if (keepStatic.empty())
      keepStaticReason = why.str();
    if (!llvm::is_contained(keepStatic, size))
      keepStatic.push_back(size);
  }
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  mergeShape(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);
  mlir::FailureOr<mlir::Type> merge(mlir::Type a, mlir::Type b);
  mlir::LogicalResult compare(mlir::Operation *a, mlir::Operation *b);
  /// pk.dim of the first parameter with a dimension of class `k`.
  mlir::Value sizeOfClass(int k);
  /// `size` computed from its class's pk.dim.
  mlir::Value sizeValue(const SizeExpr &size);
  /// Every dynamic size seen so far, with its values in the two traces.
  llvm::SmallVector<SeenSize> seenSizes() const;
  /// The count `plan` as a 0-d array of `type`'s element type.
  mlir::Value countValue(mlir::OpBuilder &builder, mlir::Location loc,
                         mlir::ShapedType type, const CountPlan &plan);
  void rewriteSizedOps();
  void rewriteSlices();

  llvm::ArrayRef<SizeSymbol> symbols;
  std::string &reason;
  llvm::SmallVectorImpl<int64_t> &keepStatic;
  llvm::ArrayRef<int> derivedFrom;
  std::string keepStaticReason;
  mlir::pk::KernelOp kernel;
  /// Each parameter's shape in the first trace.
  llvm::SmallVector<llvm::SmallVector<int64_t>> parameterShapes;
  llvm::DenseMap<mlir::Value, unsigned> idsA, idsB;
  /// The merged type of each value of the first trace that changes.
  llvm::SmallVector<std::pair<mlir::Value, mlir::Type>> newTypes;
  std::optional<mlir::FunctionType> newKernelType;
  llvm::DenseMap<int, mlir::Value> classSizes;
  std::map<SizeExpr, mlir::Value> sizeValues;
  /// Each dynamic size seen, by its values in the two traces.
  std::map<std::pair<int64_t, int64_t>, std::optional<SizeExpr>> sizesSeen;
  /// Each value of the first trace's counterpart in the second.
  llvm::DenseMap<mlir::Value, mlir::Value> partners;
  llvm::SmallVector<SlicePlan> slices;
  /// The constants that are counts of elements.
  llvm::SmallVector<std::pair<mlir::pk::ConstantOp, CountPlan>> counts;
};

} // namespace pk

#endif // PICOKERNEL_LIB_FRONTEND_GENERALIZER_H
