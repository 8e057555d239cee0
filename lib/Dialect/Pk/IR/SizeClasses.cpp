//===- SizeClasses.cpp - which dynamic sizes of a kernel are equal --------===//

#include "picokernel/Dialect/Pk/IR/SizeClasses.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/EquivalenceClasses.h"

using namespace mlir;
using namespace mlir::pk;

namespace {

/// A dimension of a value (an index value, such as pk.dim's, is its own
/// dimension 0).
using Dim = std::pair<Value, int64_t>;

ArrayRef<int64_t> shapeOf(Value value) {
  if (auto ref = dyn_cast<RefType>(value.getType()))
    return ref.getShape();
  if (auto tensor = dyn_cast<RankedTensorType>(value.getType()))
    return tensor.getShape();
  return {};
}

class Unifier {
public:
  void unite(Dim a, Dim b) { classes.unionSets(key(a), key(b)); }
  /// Dimension by dimension, where both are dynamic.
  void uniteShapes(Value a, Value b) {
    ArrayRef<int64_t> x = shapeOf(a), y = shapeOf(b);
    if (x.size() != y.size())
      return;
    for (size_t d = 0; d < x.size(); ++d)
      if (ShapedType::isDynamic(x[d]) && ShapedType::isDynamic(y[d]))
        unite({a, d}, {b, d});
  }
  unsigned leader(Dim dim) { return classes.getLeaderValue(key(dim)); }

private:
  unsigned key(Dim dim) {
    auto [it, inserted] = keys.try_emplace(dim, keys.size());
    if (inserted)
      classes.insert(it->second);
    return it->second;
  }
  llvm::DenseMap<Dim, unsigned> keys;
  llvm::EquivalenceClasses<unsigned> classes;
};

} // namespace

SizeClasses mlir::pk::computeSizeClasses(KernelOp kernel) {
  Unifier unifier;
  kernel.getBodyBlock().walk([&](Operation *op) {
    if (auto load = dyn_cast<LoadOp>(op)) {
      unifier.uniteShapes(load.getRef(), load.getResult());
    } else if (auto store = dyn_cast<StoreOp>(op)) {
      unifier.uniteShapes(store.getValue(), store.getRef());
    } else if (auto dim = dyn_cast<DimOp>(op)) {
      unifier.unite({dim.getResult(), 0}, {dim.getRef(), dim.getIndex()});
    } else if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
      ArrayRef<int64_t> from = shapeOf(broadcast.getOperand());
      ArrayRef<int64_t> to = shapeOf(broadcast.getResult());
      size_t next = 0, offset = to.size() - from.size();
      for (size_t d = 0; d < to.size(); ++d) {
        if (!ShapedType::isDynamic(to[d]))
          continue;
        unifier.unite({broadcast.getResult(), d},
                      {broadcast.getSizes()[next++], 0});
        if (d >= offset && ShapedType::isDynamic(from[d - offset]))
          unifier.unite({broadcast.getResult(), d},
                        {broadcast.getOperand(), d - offset});
      }
    } else if (op->hasTrait<OpTrait::Elementwise>()) {
      for (Value operand : op->getOperands())
        unifier.uniteShapes(operand, op->getResult(0));
    } else if (isa<ReduceSumOp, ReduceMaxOp, ReduceMinOp>(op)) {
      // The kept dimensions, in order (kept ones of size 1 are static).
      Value operand = op->getOperand(0), result = op->getResult(0);
      ArrayRef<int64_t> from = shapeOf(operand), to = shapeOf(result);
      auto reduced = [&](int64_t d) {
        if (auto sum = dyn_cast<ReduceSumOp>(op))
          return sum.isReduced(d);
        if (auto max = dyn_cast<ReduceMaxOp>(op))
          return max.isReduced(d);
        return cast<ReduceMinOp>(op).isReduced(d);
      };
      bool keepDims = to.size() == from.size();
      size_t next = 0;
      for (size_t d = 0; d < from.size(); ++d) {
        if (reduced(d)) {
          next += keepDims;
          continue;
        }
        if (ShapedType::isDynamic(from[d]) && ShapedType::isDynamic(to[next]))
          unifier.unite({operand, d}, {result, next});
        ++next;
      }
    }
  });

  SizeClasses result;
  llvm::DenseMap<unsigned, int> numbers;
  for (BlockArgument ref : kernel.getBodyBlock().getArguments()) {
    SmallVector<int> &classes = result.ofParameter.emplace_back();
    for (auto [d, size] : llvm::enumerate(shapeOf(ref))) {
      if (!ShapedType::isDynamic(size)) {
        classes.push_back(-1);
        continue;
      }
      auto [it, inserted] =
          numbers.try_emplace(unifier.leader({ref, d}), result.count);
      if (inserted)
        ++result.count;
      classes.push_back(it->second);
    }
  }
  return result;
}
