//===- Generalize.cpp - one kernel for every size from two traces ---------===//

#include "Generalizer.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::pk;

namespace pk {
namespace {

/// The operations that take dynamic sizes; any other with a dynamic operand
/// or result keeps the kernel static.
bool takesDynamicSizes(Operation *op) {
  return op->hasTrait<OpTrait::Elementwise>() ||
         isa<KernelOp, ReturnOp, LoadOp, StoreOp, DimOp, CountOp, BroadcastOp,
             ConstantOp, ReduceSumOp, ReduceMaxOp, ReduceMinOp, ExtractSliceOp,
             InsertSliceOp, MatmulOp>(op);
}

/// An integer or float attribute's value.
std::optional<double> numberOf(Attribute attr) {
  if (auto integer = dyn_cast<IntegerAttr>(attr))
    return double(integer.getValue().getSExtValue());
  if (auto real = dyn_cast<FloatAttr>(attr))
    return real.getValueAsDouble();
  return std::nullopt;
}

bool hasDynamicSizes(Type type) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    return !shaped.hasStaticShape();
  if (auto ref = dyn_cast<RefType>(type))
    return llvm::any_of(ref.getShape(), ShapedType::isDynamic);
  return false;
}

} // namespace

FailureOr<SmallVector<int64_t>> Generalizer::mergeShape(ArrayRef<int64_t> a,
                                                        ArrayRef<int64_t> b) {
  if (a.size() != b.size())
    return failure();
  SmallVector<int64_t> merged;
  for (auto [x, y] : llvm::zip(a, b)) {
    if (x == y) {
      merged.push_back(x);
      continue;
    }
    if (!sizeFor(x, y))
      return failure();
    merged.push_back(ShapedType::kDynamic);
  }
  return merged;
}

FailureOr<Type> Generalizer::merge(Type a, Type b) {
  if (a == b)
    return a;
  // Tensors and refs: the same element type, shapes merged.
  auto mergeShaped = [&](auto x, auto y, auto rebuild) -> FailureOr<Type> {
    if (!y || x.getElementType() != y.getElementType())
      return failure();
    auto shape = mergeShape(x.getShape(), y.getShape());
    if (failed(shape))
      return failure();
    return rebuild(*shape, x.getElementType());
  };
  if (auto tensorA = dyn_cast<RankedTensorType>(a))
    return mergeShaped(tensorA, dyn_cast<RankedTensorType>(b),
                       [](ArrayRef<int64_t> shape, Type element) -> Type {
                         return RankedTensorType::get(shape, element);
                       });
  if (auto refA = dyn_cast<RefType>(a))
    return mergeShaped(refA, dyn_cast<RefType>(b),
                       [&](ArrayRef<int64_t> shape, Type element) -> Type {
                         return RefType::get(a.getContext(), shape, element);
                       });
  if (auto functionA = dyn_cast<FunctionType>(a)) {
    auto functionB = dyn_cast<FunctionType>(b);
    if (!functionB || functionA.getNumInputs() != functionB.getNumInputs() ||
        functionA.getNumResults() != 0 || functionB.getNumResults() != 0)
      return failure();
    SmallVector<Type> inputs;
    for (auto [x, y] :
         llvm::zip(functionA.getInputs(), functionB.getInputs())) {
      FailureOr<Type> input = merge(x, y);
      if (failed(input))
        return failure();
      inputs.push_back(*input);
    }
    return Type(FunctionType::get(a.getContext(), inputs, {}));
  }
  return failure();
}

LogicalResult Generalizer::compare(Operation *a, Operation *b) {
  StringRef name = a->getName().getStringRef();
  if (a->getName() != b->getName() ||
      a->getNumOperands() != b->getNumOperands() ||
      a->getNumResults() != b->getNumResults() ||
      a->getNumRegions() != b->getNumRegions())
    return fail("its operations depend on the sizes");
  for (auto [x, y] : llvm::zip(a->getOperands(), b->getOperands()))
    if (idsA.lookup(x) != idsB.lookup(y))
      return fail("its operations depend on the sizes");

  // A slice's bounds were compared first, in run().
  bool isSlice = isa<ExtractSliceOp, InsertSliceOp>(a);

  auto note = [&](Value x, Value y) -> LogicalResult {
    FailureOr<Type> type = merge(x.getType(), y.getType());
    if (failed(type))
      return fail("a size in its '" + name +
                  "' is computed from the input sizes in a way that only "
                  "some sizes allow (an indexed size, a product, two "
                  "slices that agree only for these lengths)");
    if (*type != x.getType())
      newTypes.push_back({x, *type});
    partners[x] = y;
    return success();
  };
  auto number = [](llvm::DenseMap<Value, unsigned> &ids, Value value) {
    ids.try_emplace(value, ids.size() + 1);
  };
  for (auto [x, y] : llvm::zip(a->getResults(), b->getResults())) {
    if (failed(note(x, y)))
      return failure();
    number(idsA, x);
    number(idsB, y);
  }
  for (auto [regionA, regionB] : llvm::zip(a->getRegions(), b->getRegions()))
    for (auto [blockA, blockB] : llvm::zip(regionA, regionB)) {
      if (blockA.getNumArguments() != blockB.getNumArguments())
        return fail("its operations depend on the sizes");
      for (auto [x, y] :
           llvm::zip(blockA.getArguments(), blockB.getArguments())) {
        if (failed(note(x, y)))
          return failure();
        number(idsA, x);
        number(idsB, y);
      }
    }

  DictionaryAttr attrsA = a->getAttrDictionary(),
                 attrsB = b->getAttrDictionary();
  if (attrsA.size() != attrsB.size())
    return fail("its operations depend on the sizes");
  for (auto [x, y] : llvm::zip(attrsA, attrsB)) {
    if (x.getName() != y.getName())
      return fail("its operations depend on the sizes");
    if (x.getValue() == y.getValue() ||
        (isSlice && llvm::is_contained({"offsets", "sizes", "strides"},
                                       x.getName().strref())))
      continue;
    auto typeA = dyn_cast<TypeAttr>(x.getValue());
    auto typeB = dyn_cast<TypeAttr>(y.getValue());
    if (isa<KernelOp>(a) && typeA && typeB) {
      FailureOr<Type> type = merge(typeA.getValue(), typeB.getValue());
      if (failed(type) || !isa<FunctionType>(*type))
        return fail("its parameters depend on the sizes");
      newKernelType = cast<FunctionType>(*type);
      continue;
    }
    // A scalar operand is a splat of the operation's shape.
    auto splatA = dyn_cast<SplatElementsAttr>(x.getValue());
    auto splatB = dyn_cast<SplatElementsAttr>(y.getValue());
    if (splatA && splatB &&
        splatA.getSplatValue<Attribute>() == splatB.getSplatValue<Attribute>())
      continue;
    if (splatA && splatB && isa<ConstantOp>(a)) {
      std::optional<double> first = numberOf(splatA.getSplatValue<Attribute>());
      std::optional<double> second =
          numberOf(splatB.getSplatValue<Attribute>());
      // A count of elements (a mean's divisor): computed from the sizes.
      if (first && second)
        if (std::optional<CountPlan> plan =
                matchCount(*first, *second, seenSizes())) {
          counts.push_back({cast<ConstantOp>(a), std::move(*plan)});
          continue;
        }
      // A size as a number otherwise (a count not exact in its type): that
      // size stays static.
      int k = first ? classOf(int64_t(*first)) : -1;
      if (k >= 0 && second && *first == double(symbols[k].first) &&
          *second == double(symbols[k].second)) {
        keepSizeStatic(symbols[k].first,
                       "it uses a size as a number (a mean's count)");
        continue;
      }
    }
    return fail("the '" + x.getName().strref() + "' of its '" + name +
                "' depends on the sizes");
  }
  return success();
}

FailureOr<std::optional<SizeExpr>> Generalizer::sizeOfDim(Value value,
                                                          int64_t d) const {
  Value partner = partners.lookup(value);
  if (!partner)
    return failure();
  int64_t x = cast<ShapedType>(value.getType()).getDimSize(d);
  int64_t y = cast<ShapedType>(partner.getType()).getDimSize(d);
  if (x == y)
    return std::optional<SizeExpr>();
  std::optional<SizeExpr> size = sizeFor(x, y);
  if (!size)
    return failure();
  return size;
}

template <typename SliceOp>
LogicalResult Generalizer::compareSlices(SliceOp a, SliceOp b) {
  auto whole = [](SliceOp op) {
    if constexpr (std::is_same_v<SliceOp, InsertSliceOp>)
      return op.getDest();
    else
      return op.getSource();
  };
  StringRef name = a->getName().getStringRef();
  ArrayRef<int64_t> fullA = whole(a).getType().getShape();
  ArrayRef<int64_t> fullB = whole(b).getType().getShape();
  auto index = a->template getAttrOfType<ArrayAttr>(kIndexAttrName);
  SlicePlan plan{a, {}, {}, {}, {}};
  bool dynamic = false;
  for (auto [d, x, y] : llvm::enumerate(fullA, fullB)) {
    plan.sizes.emplace_back();
    plan.offsets.emplace_back();
    plan.starts.push_back(a.getOffsets()[d]);
    plan.steps.push_back(a.getStrides()[d]);
    if (x == y) {
      // A static dimension: the same slice in both traces.
      if (a.getOffsets()[d] != b.getOffsets()[d] ||
          a.getSizes()[d] != b.getSizes()[d] ||
          a.getStrides()[d] != b.getStrides()[d])
        return fail("the bounds of its '" + name + "' depend on the sizes");
      continue;
    }
    std::optional<SizeExpr> full = sizeFor(x, y);
    if (!full || !index || index.size() != fullA.size())
      return fail("a size in its '" + name + "' is not an input's");
    int cls = full->cls;
    auto keep = [&](StringRef why) {
      keepSizeStatic(symbols[cls].first, why);
      return success();
    };
    FailureOr<SliceDimension> dimension = planSliceDimension(index[d], *full);
    if (failed(dimension))
      return fail("its '" + name + "' does not follow its index");
    if (std::optional<int64_t> fixed = dimension->fixedSize) {
      // The same slice of every long enough dimension: static, where the
      // first trace's dimension holds all of it (the kernel then needs
      // that many elements: SizeClasses' minimum). Else the first size is
      // too short and stays static (the second is longer).
      std::optional<int64_t> back = dimension->fromEnd;
      auto holds = [&](SliceOp op, int64_t full) {
        int64_t start = back ? full - *back : dimension->start;
        return op.getSizes()[d] == *fixed &&
               (*fixed == 0 ||
                (op.getOffsets()[d] == start &&
                 (*fixed == 1 || op.getStrides()[d] == dimension->step)));
      };
      if (!holds(a, x) || !holds(b, y))
        return keep("a size is too short for the slice [" +
                    formatSliceIndex(index[d]) +
                    "] taken of it, which longer sizes hold");
      if (back && *fixed > 0) {
        plan.offsets.back() = dimension->offset;
        dynamic = true;
      }
      continue;
    }
    if (!dimension->size)
      return keep(dimension->keepStatic);
    SizeExpr size = *dimension->size;
    int64_t sizeA = a.getSizes()[d], sizeB = b.getSizes()[d];
    // (A backwards slice from the end starts that far before it.)
    std::optional<int64_t> back = dimension->fromEnd;
    if (size.at(symbols[cls].first) != sizeA ||
        size.at(symbols[cls].second) != sizeB ||
        (sizeA > 0 &&
         a.getOffsets()[d] != (back ? x - *back : dimension->start)) ||
        (sizeB > 0 && back && b.getOffsets()[d] != y - *back))
      return fail("its '" + name + "' does not follow its index");
    // Equal in both traces (empty, or a step longer than both): the
    // size may still change, and cannot be told from the traces.
    if (sizeA == sizeB)
      return keep("it slices a dimension whose size varies with a step "
                  "too long (or a start too late) to tell its length");
    learn(sizeA, sizeB, size);
    plan.sizes.back() = size;
    plan.starts.back() = dimension->start;
    plan.steps.back() = dimension->step;
    if (back)
      plan.offsets.back() = dimension->offset;
    dynamic = true;
  }
  if (!dynamic)
    return success();
  // The value inserted must have the slice's sizes for every size.
  if constexpr (std::is_same_v<SliceOp, InsertSliceOp>) {
    ArrayRef<int64_t> inserted = a.getSource().getType().getShape();
    ArrayRef<int64_t> insertedB = b.getSource().getType().getShape();
    for (auto [x, y] : llvm::zip(inserted, insertedB))
      if (x != y && !sizeFor(x, y))
        return fail("the value stored to a slice matches its size only for "
                    "some lengths");
  }
  slices.push_back(std::move(plan));
  return success();
}

LogicalResult Generalizer::compareAllSlices(ArrayRef<Operation *> opsA,
                                            ArrayRef<Operation *> opsB) {
  for (auto [a, b] : llvm::zip(opsA, opsB)) {
    if (a->getName() != b->getName())
      return fail("its operations depend on the sizes");
    LogicalResult compared = success();
    if (auto slice = dyn_cast<ExtractSliceOp>(a))
      compared = compareSlices(slice, cast<ExtractSliceOp>(b));
    else if (auto slice = dyn_cast<InsertSliceOp>(a))
      compared = compareSlices(slice, cast<InsertSliceOp>(b));
    if (failed(compared))
      return failure();
  }
  // Sizes too short for a slice stay static before their values are
  // compared (they would not merge).
  if (!keepStatic.empty())
    return fail(keepStaticReason);
  return success();
}

LogicalResult Generalizer::run(ModuleOp traced, ModuleOp perturbed) {
  SmallVector<Operation *> opsA, opsB;
  traced.walk<WalkOrder::PreOrder>([&](Operation *op) { opsA.push_back(op); });
  perturbed.walk<WalkOrder::PreOrder>(
      [&](Operation *op) { opsB.push_back(op); });
  if (opsA.size() != opsB.size())
    return fail("its operations depend on the sizes");
  for (auto [k, symbol] : llvm::enumerate(symbols)) {
    int base = k < derivedFrom.size() ? derivedFrom[k] : -1;
    if (base < 0) {
      learn(symbol.first, symbol.second, SizeExpr{int(k), 0, 1});
      continue;
    }
    // A size less than its base's by the same constant in both traces.
    int64_t less = symbols[base].first - symbol.first;
    if (less <= 0 || symbols[base].second - symbol.second != less ||
        derivedFrom[base] >= 0)
      return fail("its sizes are related in a way it does not take");
    learn(symbol.first, symbol.second, SizeExpr{base, less, 1});
  }
  // Slices first: their sizes are known before the values of those sizes
  // (a scalar broadcast to a slice) are met.
  if (failed(compareAllSlices(opsA, opsB)))
    return failure();
  for (auto [a, b] : llvm::zip(opsA, opsB))
    if (failed(compare(a, b)))
      return failure();

  auto kernels = llvm::to_vector(traced.getOps<KernelOp>());
  if (kernels.size() != 1)
    return fail("the module holds " + Twine(kernels.size()) + " kernels");
  kernel = kernels.front();
  for (Type type : kernel.getArgumentTypes()) {
    ArrayRef<int64_t> shape = cast<RefType>(type).getShape();
    parameterShapes.emplace_back(shape.begin(), shape.end());
  }
  // Checked before any rewrite, on the merged types.
  llvm::DenseMap<Value, Type> merged(newTypes.begin(), newTypes.end());
  auto typeOf = [&](Value value) {
    Type type = merged.lookup(value);
    return type ? type : value.getType();
  };
  // The first size of dimension d of `value`'s class, where dynamic.
  auto classSize = [&](Value value, int64_t d) -> std::optional<int64_t> {
    FailureOr<std::optional<SizeExpr>> size = sizeOfDim(value, d);
    if (failed(size) || !*size)
      return std::nullopt;
    return symbols[(*size)->cls].first;
  };
  for (Operation *op : opsA) {
    // Long sums are blocked (pairwise, in parallel) by their length, as
    // NumPy's are; pk-split-reductions blocks one dynamic reduced length
    // (adjacent reduced dimensions fold into one). Sums over several
    // dynamic dimensions that are not adjacent keep them static.
    if (auto sum = dyn_cast<ReduceSumOp>(op)) {
      auto shape = cast<RankedTensorType>(typeOf(sum.getOperand())).getShape();
      SmallVector<int64_t> dynamicReduced;
      for (auto [d, size] : llvm::enumerate(shape))
        if (sum.isReduced(d) && ShapedType::isDynamic(size))
          dynamicReduced.push_back(d);
      auto reduced =
          llvm::make_filter_range(llvm::seq<int64_t>(0, shape.size()),
                                  [&](int64_t d) { return sum.isReduced(d); });
      SmallVector<int64_t> axes(reduced.begin(), reduced.end());
      bool adjacent = axes.empty() ||
                      axes.back() - axes.front() + 1 == int64_t(axes.size());
      if (dynamicReduced.size() > 1 && !adjacent)
        for (int64_t d : dynamicReduced)
          if (std::optional<int64_t> n = classSize(sum.getOperand(), d))
            keepSizeStatic(*n, "it sums over several dimensions whose sizes "
                               "vary and that are not adjacent (a sum is "
                               "blocked by its length, for NumPy's "
                               "accuracy)");
    }
    if (takesDynamicSizes(op))
      continue;
    bool dynamic =
        llvm::any_of(op->getOperands(),
                     [&](Value v) { return hasDynamicSizes(typeOf(v)); }) ||
        llvm::any_of(op->getResults(),
                     [&](Value v) { return hasDynamicSizes(typeOf(v)); });
    if (dynamic)
      return fail("its '" + op->getName().getStringRef() +
                  "' does not take dynamic sizes yet");
  }
  if (!keepStatic.empty())
    return fail(keepStaticReason);
  rewriteSizedOps();
  rewriteSlices();
  dropRecordedIndices(traced);
  return success();
}

void dropRecordedIndices(ModuleOp module) {
  module.walk([](Operation *op) {
    if (isa<ExtractSliceOp, InsertSliceOp>(op))
      op->removeAttr(kIndexAttrName);
  });
}

LogicalResult generalizeSizes(ModuleOp traced, ModuleOp perturbed,
                              ArrayRef<SizeSymbol> symbols, std::string &reason,
                              SmallVectorImpl<int64_t> &keepStatic,
                              ArrayRef<int> derivedFrom) {
  return Generalizer(symbols, reason, keepStatic, derivedFrom)
      .run(traced, perturbed);
}

} // namespace pk
