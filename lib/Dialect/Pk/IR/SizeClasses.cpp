//===- SizeClasses.cpp - which dynamic sizes of a kernel are equal --------===//

#include "picokernel/Dialect/Pk/IR/SizeClasses.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

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
  void unite(Dim a, Dim b) { uniteKeys(key(a), key(b)); }
  void uniteKeys(unsigned a, unsigned b) { classes.unionSets(a, b); }
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
  unsigned leaderOfKey(unsigned key) { return classes.getLeaderValue(key); }

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

/// A size the caller gives, or one computed from it:
/// max(0, ceil((n - offset) / step)) for n the size of class `base`.
struct Derivation {
  unsigned base;
  int64_t offset = 0;
  int64_t step = 1;

  auto tie() const { return std::tie(base, offset, step); }
  bool operator==(const Derivation &other) const {
    return tie() == other.tie();
  }
  /// `pk.slice_size` of this size: the indices `offset`, `offset + step`,
  /// ... of a dimension of this size are this size's indices from
  /// `this->offset + offset * this->step`, `step * this->step` apart.
  std::optional<Derivation> slice(int64_t sliceOffset,
                                  int64_t sliceStep) const {
    Derivation result{base, 0, 0};
    int64_t shift;
    if (llvm::MulOverflow(sliceOffset, step, shift) ||
        llvm::AddOverflow(offset, shift, result.offset) ||
        llvm::MulOverflow(sliceStep, step, result.step))
      return std::nullopt;
    return result;
  }
};

/// The sizes of a kernel: the classes of sizes that must be equal, and how
/// each slice's size follows from the sizes the caller gives.
class SizeAnalysis {
public:
  explicit SizeAnalysis(KernelOp kernel) : kernel(kernel) {}
  /// Unites the equal sizes and checks the slices, emitting errors.
  LogicalResult run();
  SizeClasses classes();

private:
  void uniteEqualities(Operation *op);
  /// A slice's dynamic sizes are its value's sizes.
  void uniteSliceSizes(Value slice, ArrayRef<int64_t> sizes,
                       ValueRange dynamicSizes);
  /// Checks that the dynamic sizes of a slice of `full` keep every index
  /// inside it, for every size the caller gives.
  LogicalResult checkSlice(Operation *op, Value full, ArrayRef<int64_t> offsets,
                           ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides,
                           ValueRange dynamicOffsets, ValueRange dynamicSizes);
  /// How far before the end of dimension `d` (of size `whole`) the
  /// dynamic offset `start` is, checking that it counts from there.
  FailureOr<int64_t> startFromEnd(Operation *op, size_t d, Derivation whole,
                                  Value start);
  /// Checks a constant-size slice of a dimension that varies, from `start`
  /// (a value counted from the end) or offset `offset`, and records the
  /// least size it needs.
  LogicalResult checkConstantSize(Operation *op, size_t d, Value full,
                                  int64_t offset, Value start, int64_t size,
                                  int64_t stride);
  /// How the class of `dim` follows from the caller's sizes.
  std::optional<Derivation> derivationOf(Dim dim, unsigned depth = 0);
  /// How `count` follows from the caller's sizes, by its own operand.
  std::optional<Derivation> derivationOf(SliceSizeOp count, unsigned depth);
  /// Checks that each class is one size: no computed size must equal a
  /// given one, or another computed differently.
  LogicalResult checkClasses();

  /// Derives the classes of parameters' sizes that counts compute from
  /// other sizes the caller gives (o[...] = x[1:]: o's from x's).
  void deriveClasses();
  bool hasParameter(unsigned leader) {
    return llvm::any_of(parameterDims,
                        [&](Dim dim) { return unifier.leader(dim) == leader; });
  }

  /// A max or min has no value over no elements (NumPy raises): each
  /// dimension of a dynamic size it reduces needs an element.
  LogicalResult requireElements(Operation *op);

  /// Records that a constant-size slice of a dimension of size `whole`
  /// reads its index `last`: the least size of `whole`'s class it needs.
  LogicalResult requireIndex(Operation *op, size_t d, Derivation whole,
                             int64_t last);

  KernelOp kernel;
  Unifier unifier;
  SmallVector<Dim> parameterDims;
  SmallVector<SliceSizeOp> counts;
  /// Least sizes, by a unifier key of their class.
  SmallVector<std::pair<unsigned, int64_t>> minimums;
  /// The derived classes, by a unifier key of theirs (classes may unite
  /// later: compare leaders): how each follows from a class the caller
  /// gives.
  SmallVector<std::pair<unsigned, Derivation>> derivedClasses;
  /// The derivation of the class led by `leader`, its base a leader.
  std::optional<Derivation> derivedOf(unsigned leader) {
    for (auto [key, derivation] : derivedClasses)
      if (unifier.leaderOfKey(key) == leader) {
        derivation.base = unifier.leaderOfKey(derivation.base);
        return derivation;
      }
    return std::nullopt;
  }
};

void SizeAnalysis::uniteSliceSizes(Value slice, ArrayRef<int64_t> sizes,
                                   ValueRange dynamicSizes) {
  ArrayRef<int64_t> sliceShape = shapeOf(slice);
  size_t kept = 0, next = 0;
  for (int64_t size : sizes) {
    // The verifier's greedy matching of the kept dimensions.
    bool isKept = kept < sliceShape.size() && sliceShape[kept] == size;
    if (ShapedType::isDynamic(size))
      unifier.unite({slice, kept}, {dynamicSizes[next++], 0});
    kept += isKept;
  }
}

void SizeAnalysis::uniteEqualities(Operation *op) {
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
  } else if (auto slice = dyn_cast<ExtractSliceOp>(op)) {
    uniteSliceSizes(slice.getResult(), slice.getSizes(),
                    slice.getDynamicSizes());
  } else if (auto insert = dyn_cast<InsertSliceOp>(op)) {
    unifier.uniteShapes(insert.getDest(), insert.getResult());
    uniteSliceSizes(insert.getSource(), insert.getSizes(),
                    insert.getDynamicSizes());
  } else if (auto matmul = dyn_cast<MatmulOp>(op)) {
    // NumPy's `@`: the contracted dimensions, the batches, then A's rows
    // and B's columns in the result.
    Value lhs = matmul.getLhs(), rhs = matmul.getRhs();
    Value result = matmul.getResult();
    int64_t lhsRank = shapeOf(lhs).size(), rhsRank = shapeOf(rhs).size();
    auto unite = [&](Dim a, Dim b) {
      if (ShapedType::isDynamic(shapeOf(a.first)[a.second]) &&
          ShapedType::isDynamic(shapeOf(b.first)[b.second]))
        unifier.unite(a, b);
    };
    unite({lhs, lhsRank - 1}, {rhs, rhsRank == 1 ? 0 : rhsRank - 2});
    int64_t batches = std::max<int64_t>(0, std::max(lhsRank, rhsRank) - 2);
    for (int64_t d = 0; d < batches; ++d) {
      if (lhsRank >= 2 && rhsRank >= 2)
        unite({lhs, d}, {rhs, d});
      unite({result, d}, {lhsRank >= 2 ? lhs : rhs, d});
    }
    int64_t next = batches;
    if (lhsRank >= 2)
      unite({result, next++}, {lhs, lhsRank - 2});
    if (rhsRank >= 2)
      unite({result, next}, {rhs, rhsRank - 1});
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
}

std::optional<Derivation> SizeAnalysis::derivationOf(Dim dim, unsigned depth) {
  unsigned leader = unifier.leader(dim);
  if (std::optional<Derivation> derived = derivedOf(leader))
    return derived;
  for (Dim parameter : parameterDims)
    if (unifier.leader(parameter) == leader)
      return Derivation{leader};
  for (SliceSizeOp count : counts)
    if (unifier.leader({count.getResult(), 0}) == leader)
      return derivationOf(count, depth);
  return std::nullopt;
}

std::optional<Derivation> SizeAnalysis::derivationOf(SliceSizeOp count,
                                                     unsigned depth) {
  // SSA order bounds the depth; the limit guards against deep nests.
  if (depth > 64)
    return std::nullopt;
  std::optional<Derivation> base =
      derivationOf({count.getSize(), 0}, depth + 1);
  if (!base)
    return std::nullopt;
  return base->slice(count.getOffset(), count.getStep());
}

FailureOr<int64_t> SizeAnalysis::startFromEnd(Operation *op, size_t d,
                                              Derivation whole, Value start) {
  // The size sliced less `back`: the dimension's indices from `back` on.
  auto count = start.getDefiningOp<SliceSizeOp>();
  std::optional<Derivation> from =
      count ? derivationOf(count, 0) : derivationOf({start, 0});
  if (!from)
    return op->emitOpError() << "dimension " << d
                             << " starts at an index that no parameter's size "
                                "gives";
  unifier.uniteKeys(whole.base, from->base);
  int64_t shift = from->offset - whole.offset;
  if (from->step != whole.step || shift <= 0 || shift % whole.step != 0)
    return op->emitOpError()
           << "dimension " << d
           << " must start at an index counted from the end of the "
              "dimension it slices (its size less a constant)";
  return shift / whole.step;
}

LogicalResult SizeAnalysis::checkConstantSize(Operation *op, size_t d,
                                              Value full, int64_t offset,
                                              Value start, int64_t size,
                                              int64_t stride) {
  std::optional<Derivation> whole = derivationOf({full, d});
  if (!whole)
    return op->emitOpError()
           << "dimension " << d
           << " slices a dimension whose size no parameter's size gives";
  // (The verifier checked that the span does not overflow.)
  int64_t span = (size - 1) * stride;
  if (!start)
    return requireIndex(op, d, *whole, offset + std::max<int64_t>(0, span));
  FailureOr<int64_t> fromEnd = startFromEnd(op, d, *whole, start);
  if (failed(fromEnd))
    return failure();
  int64_t back = *fromEnd;
  if (std::max<int64_t>(0, span) >= back)
    return op->emitOpError()
           << "dimension " << d << " takes " << size << " elements from "
           << back << " before the end with stride " << stride
           << ", past the end of the array";
  // Every index from the first read to the end.
  int64_t last;
  if (llvm::SubOverflow(back - 1, std::min<int64_t>(0, span), last))
    return op->emitOpError()
           << "dimension " << d << " takes " << size << " elements from "
           << back << " before the end with stride " << stride
           << ": its array would have too many elements to count";
  return requireIndex(op, d, *whole, last);
}

LogicalResult
SizeAnalysis::checkSlice(Operation *op, Value full, ArrayRef<int64_t> offsets,
                         ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides,
                         ValueRange dynamicOffsets, ValueRange dynamicSizes) {
  size_t next = 0, nextOffset = 0;
  ArrayRef<int64_t> fullShape = shapeOf(full);
  for (auto [d, size] : llvm::enumerate(sizes)) {
    Value start = ShapedType::isDynamic(offsets[d])
                      ? dynamicOffsets[nextOffset++]
                      : Value();
    if (!ShapedType::isDynamic(size)) {
      // A constant size of a dimension that varies: the verifier checked
      // the first index read and its direction.
      if (!ShapedType::isDynamic(fullShape[d]) || size == 0)
        continue;
      if (failed(checkConstantSize(op, d, full, offsets[d], start, size,
                                   strides[d])))
        return failure();
      continue;
    }
    Value count = dynamicSizes[next++];
    std::optional<Derivation> whole = derivationOf({full, d});
    // The count by its own definition: checkClasses checks that its class
    // agrees.
    auto countOp = count.getDefiningOp<SliceSizeOp>();
    std::optional<Derivation> taken =
        countOp ? derivationOf(countOp, 0) : derivationOf({count, 0});
    if (!whole || !taken)
      return op->emitOpError() << "dimension " << d
                               << " has a size that no parameter's size gives";
    // The count is computed from the size of the dimension it slices: the
    // caller gives them as one.
    unifier.uniteKeys(whole->base, taken->base);
    // The last index taken, offset + (count - 1) * stride, lies inside the
    // dimension when the count's indices start no earlier than the slice's
    // and lie at least as far apart; backwards from `back` before the end
    // (the verifier checked the direction), it counts no more of them than
    // the indices from `back - 1` on (down to index 0).
    std::optional<Derivation> room;
    if (start) {
      FailureOr<int64_t> back = startFromEnd(op, d, *whole, start);
      if (failed(back))
        return failure();
      room = whole->slice(*back - 1, -strides[d]);
    } else {
      room = whole->slice(offsets[d], strides[d]);
    }
    if (!room || taken->step < room->step || taken->offset < room->offset)
      return op->emitOpError()
             << "dimension " << d << " may read outside the array for some "
             << "sizes: its count (of the indices from " << taken->offset
             << ", " << taken->step << " apart, of a size the caller gives) "
             << "must count no more than the slice has room for (indices "
             << "from at least " << (room ? room->offset : 0) << ", at least "
             << (room ? room->step : 0) << " apart)";
  }
  return success();
}

LogicalResult SizeAnalysis::requireIndex(Operation *op, size_t d,
                                         Derivation whole, int64_t last) {
  // A size max(0, ceil((n - offset) / step)) is more than `last` when
  // n >= offset + last * step + 1.
  int64_t span, least;
  if (llvm::MulOverflow(last, whole.step, span) ||
      llvm::AddOverflow(whole.offset, span, least) ||
      llvm::AddOverflow(least, int64_t(1), least))
    return op->emitOpError() << "dimension " << d << " takes index " << last
                             << ": its array would have too many elements "
                                "to count";
  minimums.push_back({whole.base, least});
  return success();
}

LogicalResult SizeAnalysis::requireElements(Operation *op) {
  Value operand = op->getOperand(0);
  for (auto [d, size] : llvm::enumerate(shapeOf(operand))) {
    bool reduced = isa<ReduceMaxOp>(op) ? cast<ReduceMaxOp>(op).isReduced(d)
                                        : cast<ReduceMinOp>(op).isReduced(d);
    if (!reduced || !ShapedType::isDynamic(size))
      continue;
    // (A size no parameter gives has no class to check.)
    std::optional<Derivation> whole = derivationOf({operand, int64_t(d)});
    if (whole && failed(requireIndex(op, d, *whole, 0)))
      return failure();
  }
  return success();
}

void SizeAnalysis::deriveClasses() {
  // To a fixpoint: a derived class may be sliced in turn.
  bool changed = true;
  while (changed) {
    changed = false;
    for (SliceSizeOp count : counts) {
      unsigned leader = unifier.leader({count.getResult(), 0});
      std::optional<Derivation> own = derivationOf(count, 0);
      // (A count of every index from 0 is the size itself: one class.)
      if (!own || own->step < 1 || own->base == leader ||
          (own->offset == 0 && own->step == 1) || derivedOf(leader) ||
          !hasParameter(leader))
        continue;
      // Classes derived from this one before are derived from its base.
      for (auto &[other, derivation] : derivedClasses)
        if (unifier.leaderOfKey(derivation.base) == leader)
          if (std::optional<Derivation> composed =
                  own->slice(derivation.offset, derivation.step))
            derivation = *composed;
      derivedClasses.push_back({leader, *own});
      changed = true;
    }
  }
}

LogicalResult SizeAnalysis::checkClasses() {
  // A count of every index from 0 is the size it counts.
  for (SliceSizeOp count : counts)
    if (std::optional<Derivation> own = derivationOf(count, 0);
        own && own->offset == 0 && own->step == 1)
      unifier.uniteKeys(own->base, unifier.leader({count.getResult(), 0}));
  deriveClasses();
  for (SliceSizeOp count : counts) {
    std::optional<Derivation> own = derivationOf(count, 0);
    std::optional<Derivation> known = derivationOf({count.getResult(), 0});
    if (!own || !known)
      return count.emitOpError("counts a size that no parameter's size gives");
    if (!(*own == *known))
      return count.emitOpError()
             << "computes a size (from offset " << own->offset << ", "
             << own->step << " apart, of a size the caller gives) that must "
             << "equal "
             << (known->offset == 0 && known->step == 1
                     ? "a size the caller gives"
                     : "a size computed differently")
             << ": they agree for some sizes only, and no caller could be "
                "checked";
  }
  return success();
}

LogicalResult SizeAnalysis::run() {
  for (BlockArgument ref : kernel.getBodyBlock().getArguments())
    for (auto [d, size] : llvm::enumerate(shapeOf(ref)))
      if (ShapedType::isDynamic(size))
        parameterDims.push_back({ref, d});
  kernel.getBodyBlock().walk([&](Operation *op) {
    if (auto count = dyn_cast<SliceSizeOp>(op))
      counts.push_back(count);
    uniteEqualities(op);
  });
  // Derived classes first: a slice of a derived size is checked against
  // the size it is computed from.
  deriveClasses();
  // Slices in order: a slice of a slice needs the first one's sizes.
  WalkResult walk = kernel.getBodyBlock().walk([&](Operation *op) {
    LogicalResult checked = success();
    if (auto slice = dyn_cast<ExtractSliceOp>(op))
      checked = checkSlice(op, slice.getSource(), slice.getOffsets(),
                           slice.getSizes(), slice.getStrides(),
                           slice.getDynamicOffsets(), slice.getDynamicSizes());
    else if (auto insert = dyn_cast<InsertSliceOp>(op))
      checked =
          checkSlice(op, insert.getDest(), insert.getOffsets(),
                     insert.getSizes(), insert.getStrides(),
                     insert.getDynamicOffsets(), insert.getDynamicSizes());
    else if (isa<ReduceMaxOp, ReduceMinOp>(op))
      checked = requireElements(op);
    return failed(checked) ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return checkClasses();
}

SizeClasses SizeAnalysis::classes() {
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
  result.minimum.assign(result.count, 0);
  result.derived.assign(result.count, std::nullopt);
  for (auto [key, derivation] : derivedClasses) {
    auto number = numbers.find(unifier.leaderOfKey(key));
    auto base = numbers.find(unifier.leaderOfKey(derivation.base));
    // (A class united with its base since is one size.)
    if (number != numbers.end() && base != numbers.end() &&
        number->second != base->second)
      result.derived[number->second] =
          DerivedSize{base->second, derivation.offset, derivation.step};
  }
  // Classes united since may chain derivations: each from a given class
  // (a cycle, which checkClasses rejects, leaves its classes given).
  for (int k = 0; k < result.count; ++k)
    for (int hops = 0; result.derived[k] && hops <= result.count; ++hops) {
      std::optional<DerivedSize> base = result.derived[result.derived[k]->base];
      if (!base)
        break;
      int64_t shift;
      DerivedSize &derived = *result.derived[k];
      if (hops == result.count ||
          llvm::MulOverflow(derived.offset, base->step, shift) ||
          llvm::AddOverflow(base->offset, shift, derived.offset) ||
          llvm::MulOverflow(derived.step, base->step, derived.step))
        result.derived[k] = std::nullopt;
      else
        derived.base = base->base;
    }
  for (auto [key, least] : minimums) {
    auto number = numbers.find(unifier.leaderOfKey(key));
    if (number == numbers.end())
      continue;
    int k = number->second;
    // A derived size of at least `least` needs its base to be at least
    // offset + (least - 1) step + 1.
    if (std::optional<DerivedSize> derived = result.derived[k]) {
      int64_t span = 0;
      if (least > 0 && (llvm::MulOverflow(least - 1, derived->step, span) ||
                        llvm::AddOverflow(span, derived->offset + 1, least)))
        least = std::numeric_limits<int64_t>::max();
      k = derived->base;
    }
    result.minimum[k] = std::max(result.minimum[k], least);
  }
  return result;
}

} // namespace

int64_t DerivedSize::at(int64_t n) const {
  return std::max<int64_t>(0, llvm::divideCeilSigned(n - offset, step));
}

LogicalResult mlir::pk::verifySizeClasses(KernelOp kernel) {
  return SizeAnalysis(kernel).run();
}

SizeClasses mlir::pk::computeSizeClasses(KernelOp kernel) {
  SizeAnalysis analysis(kernel);
  // A verified kernel's sizes check.
  (void)analysis.run();
  return analysis.classes();
}
