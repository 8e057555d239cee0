//===- Accesses.cpp - which elements each stored array reads -------------===//
//
// Walks back from each store through the values it is computed from,
// carrying the index map of each value (its indices as affine functions of
// the stored array's indices) to the loads, where it becomes a read of the
// ref. A value reached along several paths with different maps (the slices
// of a stencil) is visited once per map.
//
//===----------------------------------------------------------------------===//

#include "picokernel/Dialect/Pk/Analysis/Accesses.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <set>

using namespace mlir;
using namespace mlir::pk;

namespace {

using IndexMap = SmallVector<IndexTerm>;
using Kind = IndexTerm::Kind;

/// More distinct (value, map) pairs than this and the kernel is not
/// analyzed (a stencil of stencils of stencils...).
constexpr size_t kMaxVisits = 100000;

IndexTerm unknownTerm(int64_t var = -1) { return {Kind::Unknown, var, 1, 0}; }

/// `term` seen through a slice that reads index `offset + stride * i` for
/// its index `i`.
IndexTerm throughSlice(IndexTerm term, int64_t offset, int64_t stride) {
  if (term.kind == Kind::Unknown)
    return term;
  term.stride *= stride;
  term.offset = offset + stride * term.offset;
  if (term.kind == Kind::Constant)
    term.stride = 1;
  return term;
}

/// The source dimension each dimension of a slice of shape `slice` comes
/// from (the greedy match of the slice verifier); -1 for dropped ones.
SmallVector<int64_t> keptDimensions(ArrayRef<int64_t> sizes,
                                    ArrayRef<int64_t> slice) {
  SmallVector<int64_t> kept(sizes.size(), -1);
  size_t matched = 0;
  for (auto [d, size] : llvm::enumerate(sizes))
    if (matched < slice.size() && slice[matched] == size)
      kept[d] = matched++;
  return kept;
}

CombineKind combineOf(Operation *op) {
  return llvm::TypeSwitch<Operation *, CombineKind>(op)
      .Case([](ReduceSumOp) { return CombineKind::Sum; })
      .Case([](ReduceMaxOp) { return CombineKind::Max; })
      .Case([](ReduceMinOp) { return CombineKind::Min; })
      .Default([](Operation *) { return CombineKind::None; });
}

/// Whether the casts `chain` (innermost first, from the reduction's type)
/// applied to blocks' partial results and then combined in the last type
/// give what they give applied to the whole result. Integer casts wrap: a
/// homomorphism of sums only when the combine wraps at the narrowest width
/// of the chain (the last one); a float cast to a type as wide rounds (an
/// error like reordering), as does an integer's first conversion to float,
/// but one to a narrower type may overflow on a block's part; maxima and
/// minima keep under any cast that keeps order (widening, to float).
bool castsCommute(ArrayRef<std::pair<Type, Type>> chain, CombineKind kind) {
  unsigned narrowest = ~0u;
  for (auto [i, cast] : llvm::enumerate(chain)) {
    auto [from, to] = cast;
    auto fromInt = dyn_cast<IntegerType>(from);
    auto toInt = dyn_cast<IntegerType>(to);
    if ((fromInt && fromInt.getWidth() == 1) ||
        (toInt && toInt.getWidth() == 1))
      return false;
    if (isa<FloatType>(from) && isa<FloatType>(to)) {
      // A narrower float may overflow on a block's part where it does not
      // on the whole.
      if (kind != CombineKind::Max && kind != CombineKind::Min &&
          to.getIntOrFloatBitWidth() < from.getIntOrFloatBitWidth())
        return false;
      continue;
    }
    if (fromInt && isa<FloatType>(to)) {
      // float16 holds no more than 65504: a block's part may overflow.
      if (i != 0 || (kind != CombineKind::Max && kind != CombineKind::Min &&
                     isa<Float16Type>(to)))
        return false;
      continue;
    }
    if (!fromInt || !toInt || kind == CombineKind::Mean)
      return false;
    if (kind != CombineKind::Sum &&
        (toInt.getWidth() < fromInt.getWidth() ||
         fromInt.isUnsigned() != toInt.isUnsigned()))
      return false;
    narrowest = std::min({narrowest, fromInt.getWidth(), toInt.getWidth()});
  }
  if (kind == CombineKind::Sum && narrowest != ~0u)
    return cast<IntegerType>(chain.back().second).getWidth() == narrowest;
  return true;
}

/// The value of `value` when it is a number the same for every element
/// (a constant, or a count of elements: `nullopt` with `isCount` set).
std::optional<double> splatDivisor(Value value, bool &isCount) {
  Operation *op = value.getDefiningOp();
  if (auto broadcast = dyn_cast_if_present<BroadcastOp>(op))
    return splatDivisor(broadcast.getOperand(), isCount);
  isCount = isa_and_present<CountOp>(op);
  auto constant = dyn_cast_if_present<ConstantOp>(op);
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat())
    return std::nullopt;
  Type element = dense.getElementType();
  if (isa<FloatType>(element))
    return dense.getSplatValue<APFloat>().convertToDouble();
  if (auto integer = dyn_cast<IntegerType>(element))
    return (double)(integer.isUnsigned()
                        ? dense.getSplatValue<APInt>().getZExtValue()
                        : dense.getSplatValue<APInt>().getSExtValue());
  return std::nullopt;
}

/// How many elements `reduction` reduces into each of its results.
int64_t reducedCount(Operation *reduction) {
  Value operand = reduction->getOperand(0);
  auto axes = reduction->getAttrOfType<DenseI64ArrayAttr>("axes");
  int64_t count = 1;
  for (int64_t axis : axes.asArrayRef())
    count *= cast<ShapedType>(operand.getType()).getDimSize(axis);
  return count;
}

Type elementTypeOf(Value value) {
  return cast<ShapedType>(value.getType()).getElementType();
}

/// The reduction a stored value ends with, when its blocks' partial
/// results combine (see StoreAccesses::combine): a sum, max or min, cast
/// (castsCommute); or a sum divided by a number: by the count of what it
/// sums, a mean (each block divides by its own count); by another constant
/// of magnitude at least 1, a sum still (dividing distributes over the sum,
/// and makes no block's part overflow).
std::pair<Operation *, CombineKind> finalReduction(Value stored) {
  SmallVector<std::pair<Type, Type>> casts;
  Value value = stored;
  auto peelCasts = [&] {
    while (auto cast = value.getDefiningOp<CastOp>()) {
      casts.push_back({elementTypeOf(cast.getOperand()), elementTypeOf(value)});
      value = cast.getOperand();
    }
  };
  peelCasts();
  bool divided = false, byCount = false;
  std::optional<double> divisor;
  if (auto div = value.getDefiningOp<DivOp>()) {
    divisor = splatDivisor(div.getRhs(), byCount);
    if (divisor || byCount) {
      divided = true;
      value = div.getLhs();
      peelCasts();
    }
  }
  Operation *op = value.getDefiningOp();
  CombineKind kind = op ? combineOf(op) : CombineKind::None;
  if (divided && kind != CombineKind::Sum)
    kind = CombineKind::None;
  else if (divided && (byCount || *divisor == (double)reducedCount(op)))
    kind = CombineKind::Mean;
  else if (divided && !(std::abs(*divisor) >= 1.0))
    kind = CombineKind::None; // a block's part divided may overflow
  std::reverse(casts.begin(), casts.end());
  if (kind == CombineKind::None || !castsCommute(casts, kind))
    return {nullptr, CombineKind::None};
  return {op, kind};
}

/// The walk from one store.
class StoreWalk {
public:
  StoreWalk(StoreAccesses &result) : result(result) {}

  LogicalResult run(StoreOp store) {
    auto [reduction, kind] = finalReduction(store.getValue());
    finalOp = reduction;
    storedShape = llvm::to_vector(shape(store.getValue()));
    IndexMap identity;
    for (int64_t d = 0, e = rank(store.getValue()); d < e; ++d)
      identity.push_back({Kind::Stored, d, 1, 0});
    identityMap = identity;
    push(store.getValue(), identity);
    while (!worklist.empty()) {
      auto [value, map] = worklist.pop_back_val();
      if (failed(visit(value, map)))
        return failure();
    }
    if (!result.combined.empty())
      result.combine = kind;
    // In a fixed order (the walk's depends on the IR's).
    auto key = [](const ReadAccess &read) {
      std::vector<int64_t> key{read.ref};
      for (const IndexTerm &t : read.indices)
        key.insert(key.end(), {(int64_t)t.kind, t.var, t.stride, t.offset});
      return key;
    };
    llvm::sort(result.reads, [&](const ReadAccess &a, const ReadAccess &b) {
      return key(a) < key(b);
    });
    return success();
  }

private:
  static int64_t rank(Value value) {
    return cast<ShapedType>(value.getType()).getRank();
  }
  static ArrayRef<int64_t> shape(Value value) {
    return cast<ShapedType>(value.getType()).getShape();
  }

  void push(Value value, IndexMap map) {
    std::vector<int64_t> key;
    for (const IndexTerm &t : map)
      key.insert(key.end(), {(int64_t)t.kind, t.var, t.stride, t.offset});
    if (visited.insert({value.getAsOpaquePointer(), std::move(key)}).second)
      worklist.push_back({value, std::move(map)});
  }

  void pushUnknown(Value value) {
    if (auto type = dyn_cast<RankedTensorType>(value.getType()))
      push(value, IndexMap(type.getRank(), unknownTerm()));
  }

  int64_t newReduction(CombineKind kind, int64_t size) {
    int64_t id = result.reductions.size();
    result.reductions.push_back({id, kind, size});
    return id;
  }

  LogicalResult visit(Value value, const IndexMap &map);
  void visitReduction(Operation *op, Value operand, ArrayRef<int64_t> axes,
                      bool keepDims, const IndexMap &map);
  void visitMatmul(MatmulOp op, const IndexMap &map);
  void recordWrittenParts(InsertSliceOp insert, const IndexMap &map);
  void addPart(WrittenPart part);

  StoreAccesses &result;
  SmallVector<int64_t> storedShape;
  Operation *finalOp = nullptr;
  IndexMap identityMap;
  SmallVector<std::pair<Value, IndexMap>> worklist;
  std::set<std::pair<const void *, std::vector<int64_t>>> visited;
};

LogicalResult StoreWalk::visit(Value value, const IndexMap &map) {
  if (visited.size() > kMaxVisits)
    return emitError(value.getLoc())
           << "the kernel reads its arrays in more than " << kMaxVisits
           << " distinct patterns";
  Operation *op = value.getDefiningOp();
  if (!op)
    return emitError(value.getLoc()) << "a tensor that no operation defines";
  if (auto load = dyn_cast<LoadOp>(op)) {
    auto ref = dyn_cast<BlockArgument>(load.getRef());
    if (!ref)
      return load.emitOpError() << "loads a ref that is not a parameter";
    ReadAccess read{ref.getArgNumber(), map};
    if (!llvm::any_of(result.reads, [&](const ReadAccess &r) {
          return r.ref == read.ref && r.indices == read.indices;
        }))
      result.reads.push_back(std::move(read));
    return success();
  }
  if (isa<ConstantOp, CountOp>(op))
    return success();
  if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
    ArrayRef<int64_t> from = shape(broadcast.getOperand());
    ArrayRef<int64_t> to = shape(value);
    size_t lead = to.size() - from.size();
    IndexMap operandMap;
    for (auto [d, size] : llvm::enumerate(from))
      operandMap.push_back(size == 1 && to[d + lead] != 1
                               ? IndexTerm{Kind::Constant, -1, 1, 0}
                               : map[d + lead]);
    push(broadcast.getOperand(), operandMap);
    return success();
  }
  if (auto slice = dyn_cast<ExtractSliceOp>(op)) {
    if (!slice.getDynamicOffsets().empty() ||
        !slice.getDynamicSizes().empty()) {
      pushUnknown(slice.getSource());
      return success();
    }
    SmallVector<int64_t> kept = keptDimensions(slice.getSizes(), shape(value));
    IndexMap sourceMap;
    for (auto [d, from] : llvm::enumerate(kept)) {
      IndexTerm term =
          from < 0 ? IndexTerm{Kind::Constant, -1, 1, 0} : map[from];
      sourceMap.push_back(
          throughSlice(term, slice.getOffsets()[d], slice.getStrides()[d]));
    }
    push(slice.getSource(), sourceMap);
    return success();
  }
  if (auto insert = dyn_cast<InsertSliceOp>(op)) {
    recordWrittenParts(insert, map);
    push(insert.getDest(), map);
    if (!insert.getDynamicOffsets().empty() ||
        !insert.getDynamicSizes().empty()) {
      pushUnknown(insert.getSource());
      return success();
    }
    // Index i of the source is index offset + stride * i of the result.
    SmallVector<int64_t> kept =
        keptDimensions(insert.getSizes(), shape(insert.getSource()));
    IndexMap sourceMap(rank(insert.getSource()), unknownTerm());
    for (auto [d, to] : llvm::enumerate(kept)) {
      if (to < 0)
        continue;
      IndexTerm term = map[d];
      int64_t offset = insert.getOffsets()[d];
      if (insert.getStrides()[d] == 1 && term.kind != Kind::Unknown)
        term.offset -= offset;
      else
        term = unknownTerm(term.kind == Kind::Stored ? term.var : -1);
      sourceMap[to] = term;
    }
    push(insert.getSource(), sourceMap);
    return success();
  }
  if (auto sum = dyn_cast<ReduceSumOp>(op)) {
    visitReduction(op, sum.getOperand(), sum.getAxes(), sum.getKeepDims(), map);
    return success();
  }
  if (auto max = dyn_cast<ReduceMaxOp>(op)) {
    visitReduction(op, max.getOperand(), max.getAxes(), max.getKeepDims(), map);
    return success();
  }
  if (auto min = dyn_cast<ReduceMinOp>(op)) {
    visitReduction(op, min.getOperand(), min.getAxes(), min.getKeepDims(), map);
    return success();
  }
  if (auto matmul = dyn_cast<MatmulOp>(op)) {
    visitMatmul(matmul, map);
    return success();
  }
  if (op->hasTrait<OpTrait::Elementwise>()) {
    for (Value operand : op->getOperands()) {
      if (!isa<RankedTensorType>(operand.getType()))
        continue;
      if (rank(operand) == (int64_t)map.size())
        push(operand, map);
      else if (rank(operand) == 0)
        push(operand, {});
      else
        pushUnknown(operand);
    }
    return success();
  }
  // An operation this analysis does not know: anything may depend on
  // anything.
  for (Value operand : op->getOperands())
    pushUnknown(operand);
  return success();
}

void StoreWalk::visitReduction(Operation *op, Value operand,
                               ArrayRef<int64_t> axes, bool keepDims,
                               const IndexMap &map) {
  bool final = op == finalOp && map == identityMap;
  IndexMap operandMap;
  size_t next = 0;
  for (int64_t d = 0, e = rank(operand); d < e; ++d) {
    if (!llvm::is_contained(axes, d)) {
      operandMap.push_back(map[next++]);
      continue;
    }
    int64_t id = newReduction(combineOf(op), shape(operand)[d]);
    if (final)
      result.combined.push_back(id);
    operandMap.push_back({Kind::Reduced, id, 1, 0});
    if (keepDims)
      ++next;
  }
  push(operand, operandMap);
}

void StoreWalk::recordWrittenParts(InsertSliceOp insert, const IndexMap &map) {
  if (!insert.getDynamicOffsets().empty() ||
      !insert.getDynamicSizes().empty()) {
    for (const IndexTerm &term : map)
      if (term.kind != Kind::Constant)
        addPart({term, -1, -1});
    return;
  }
  ArrayRef<int64_t> full = shape(insert.getDest());
  for (auto [d, term] : llvm::enumerate(map)) {
    int64_t offset = insert.getOffsets()[d], size = insert.getSizes()[d];
    int64_t stride = insert.getStrides()[d];
    if ((offset == 0 && size == full[d] && stride == 1) ||
        term.kind == Kind::Constant)
      continue;
    if (stride != 1 || term.stride != 1 || term.kind == Kind::Unknown) {
      addPart({term, -1, -1});
      continue;
    }
    // Index i of the slice's destination is index i - term.offset of
    // the range of term's index.
    int64_t range = term.kind == Kind::Stored
                        ? storedShape[term.var]
                        : result.reductions[term.var].size;
    int64_t first = offset - term.offset;
    addPart({term, first, range - (first + size)});
  }
}

void StoreWalk::addPart(WrittenPart part) {
  if (!llvm::is_contained(result.parts, part))
    result.parts.push_back(part);
}

void StoreWalk::visitMatmul(MatmulOp op, const IndexMap &map) {
  Value lhs = op.getLhs(), rhs = op.getRhs();
  int64_t lhsRank = rank(lhs), rhsRank = rank(rhs);
  int64_t contracted = shape(lhs).back();
  IndexTerm k{Kind::Reduced, newReduction(CombineKind::Sum, contracted), 1, 0};
  // The result: batch dimensions, then lhs's rows (when 2-D or more), then
  // rhs's columns (when 2-D or more).
  int64_t batch = (int64_t)map.size() - (lhsRank > 1) - (rhsRank > 1);
  ArrayRef<IndexTerm> batchTerms(map.data(), batch);
  IndexMap lhsMap, rhsMap;
  if (lhsRank > 1) {
    lhsMap.append(batchTerms.end() - (lhsRank - 2), batchTerms.end());
    lhsMap.push_back(map[batch]);
  }
  lhsMap.push_back(k);
  if (rhsRank > 1) {
    rhsMap.append(batchTerms.end() - (rhsRank - 2), batchTerms.end());
    rhsMap.push_back(k);
    rhsMap.push_back(map.back());
  } else {
    rhsMap.push_back(k);
  }
  push(lhs, lhsMap);
  push(rhs, rhsMap);
}

} // namespace

FailureOr<std::vector<StoreAccesses>>
mlir::pk::analyzeAccesses(KernelOp kernel) {
  std::vector<StoreAccesses> stores;
  for (StoreOp store : kernel.getBodyBlock().getOps<StoreOp>()) {
    auto ref = dyn_cast<BlockArgument>(store.getRef());
    if (!ref)
      return store.emitOpError() << "stores to a ref that is not a parameter";
    if (!cast<ShapedType>(store.getValue().getType()).hasStaticShape())
      return store.emitOpError()
             << "stores an array of dynamic shape: the analysis of accesses "
                "needs static shapes";
    if (llvm::any_of(stores, [&](const StoreAccesses &s) {
          return s.ref == ref.getArgNumber();
        }))
      return store.emitOpError()
             << "stores to a ref stored before: the analysis of accesses "
                "needs the kernel through pk-forward-stores";
    StoreAccesses &result = stores.emplace_back();
    result.ref = ref.getArgNumber();
    if (failed(StoreWalk(result).run(store)))
      return failure();
  }
  return stores;
}
