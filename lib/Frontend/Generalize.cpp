//===- Generalize.cpp - one kernel for every size from two traces ---------===//

#include "picokernel/Frontend/Generalize.h"
#include "picokernel/Dialect/Pk/IR/PkOps.h"
#include "picokernel/Support/Defaults.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::pk;

namespace pk {
namespace {

/// The operations that take dynamic sizes; any other with a dynamic operand
/// or result keeps the kernel static.
bool takesDynamicSizes(Operation *op) {
  return op->hasTrait<OpTrait::Elementwise>() ||
         isa<KernelOp, ReturnOp, LoadOp, StoreOp, DimOp, BroadcastOp,
             ConstantOp, ReduceSumOp, ReduceMaxOp, ReduceMinOp>(op);
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

class Generalizer {
public:
  Generalizer(ArrayRef<SizeSymbol> symbols, std::string &reason,
              SmallVectorImpl<int64_t> &keepStatic)
      : symbols(symbols), reason(reason), keepStatic(keepStatic) {}

  LogicalResult run(ModuleOp traced, ModuleOp perturbed);

private:
  LogicalResult fail(const Twine &why) {
    reason = why.str();
    return failure();
  }
  /// The class of a dynamic size, from its value in the first trace.
  int classOf(int64_t size) const {
    for (auto [k, symbol] : llvm::enumerate(symbols))
      if (symbol.first == size)
        return int(k);
    return -1;
  }
  /// Keeps the class of first value `size` static, for `why` (the first
  /// reason is the one given).
  void keepSizeStatic(int64_t size, StringRef why) {
    if (keepStatic.empty())
      keepStaticReason = why.str();
    if (!llvm::is_contained(keepStatic, size))
      keepStatic.push_back(size);
  }
  FailureOr<SmallVector<int64_t>> mergeShape(ArrayRef<int64_t> a,
                                             ArrayRef<int64_t> b);
  FailureOr<Type> merge(Type a, Type b);
  LogicalResult compare(Operation *a, Operation *b);
  /// pk.dim of the first parameter with a dimension of class `k`.
  Value sizeOfClass(int k);
  void rewriteSizedOps();

  ArrayRef<SizeSymbol> symbols;
  std::string &reason;
  SmallVectorImpl<int64_t> &keepStatic;
  std::string keepStaticReason;
  KernelOp kernel;
  /// Each parameter's shape in the first trace.
  SmallVector<SmallVector<int64_t>> parameterShapes;
  llvm::DenseMap<Value, unsigned> idsA, idsB;
  /// The merged type of each value of the first trace that changes.
  SmallVector<std::pair<Value, Type>> newTypes;
  std::optional<FunctionType> newKernelType;
  llvm::DenseMap<int, Value> classSizes;
};

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
    int k = classOf(x);
    if (k < 0 || symbols[k].second != y)
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

  auto note = [&](Value x, Value y) -> LogicalResult {
    FailureOr<Type> type = merge(x.getType(), y.getType());
    if (failed(type))
      return fail("a size in its '" + name +
                  "' is computed from the input sizes (a slice, a mean, an "
                  "indexed size): only sizes equal to an input's can vary");
    if (*type != x.getType())
      newTypes.push_back({x, *type});
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
    if (x.getValue() == y.getValue())
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
    // A size as a number (a mean's count): that size stays static.
    if (splatA && splatB) {
      std::optional<double> a = numberOf(splatA.getSplatValue<Attribute>());
      std::optional<double> b = numberOf(splatB.getSplatValue<Attribute>());
      int k = a ? classOf(int64_t(*a)) : -1;
      if (k >= 0 && b && *a == double(symbols[k].first) &&
          *b == double(symbols[k].second)) {
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

Value Generalizer::sizeOfClass(int k) {
  if (Value size = classSizes.lookup(k))
    return size;
  Block &body = kernel.getBodyBlock();
  for (auto [index, shape] : llvm::enumerate(parameterShapes))
    for (auto [d, size] : llvm::enumerate(shape))
      if (size == symbols[k].first &&
          cast<RefType>(kernel.getArgumentTypes()[index]).getShape()[d] ==
              ShapedType::kDynamic) {
        OpBuilder builder = OpBuilder::atBlockBegin(&body);
        Value dim = DimOp::create(builder, kernel.getLoc(),
                                  body.getArgument(index), int64_t(d));
        classSizes[k] = dim;
        return dim;
      }
  llvm_unreachable("every size class is some parameter's size");
}

void Generalizer::rewriteSizedOps() {
  // The sizes of the dynamic dimensions of `original`, once dynamic.
  auto sizesFor = [&](ArrayRef<int64_t> original, RankedTensorType merged) {
    SmallVector<Value> sizes;
    for (auto [size, mergedSize] : llvm::zip(original, merged.getShape()))
      if (ShapedType::isDynamic(mergedSize))
        sizes.push_back(sizeOfClass(classOf(size)));
    return sizes;
  };
  SmallVector<std::pair<Operation *, SmallVector<int64_t>>> sized;
  for (auto [value, type] : newTypes)
    if (Operation *op = value.getDefiningOp();
        op && isa<BroadcastOp, ConstantOp>(op))
      sized.push_back(
          {op, SmallVector<int64_t>(
                   cast<RankedTensorType>(value.getType()).getShape())});
  for (auto [value, type] : newTypes)
    value.setType(type);
  if (newKernelType)
    kernel.setFunctionType(*newKernelType);

  for (auto &[op, original] : sized) {
    auto merged = cast<RankedTensorType>(op->getResult(0).getType());
    SmallVector<Value> sizes = sizesFor(original, merged);
    if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
      broadcast.getSizesMutable().assign(sizes);
      continue;
    }
    // A splat of a dynamic shape: a scalar broadcast to it.
    auto constant = cast<ConstantOp>(op);
    auto splat = cast<SplatElementsAttr>(constant.getValue());
    OpBuilder builder(constant);
    auto scalarType = RankedTensorType::get({}, merged.getElementType());
    Value scalar = ConstantOp::create(
        builder, constant.getLoc(),
        SplatElementsAttr::get(scalarType, splat.getSplatValue<Attribute>()));
    Value broadcast =
        BroadcastOp::create(builder, constant.getLoc(), merged, scalar, sizes);
    constant.getResult().replaceAllUsesWith(broadcast);
    constant.erase();
  }
}

LogicalResult Generalizer::run(ModuleOp traced, ModuleOp perturbed) {
  SmallVector<Operation *> opsA, opsB;
  traced.walk<WalkOrder::PreOrder>([&](Operation *op) { opsA.push_back(op); });
  perturbed.walk<WalkOrder::PreOrder>(
      [&](Operation *op) { opsB.push_back(op); });
  if (opsA.size() != opsB.size())
    return fail("its operations depend on the sizes");
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
  for (Operation *op : opsA) {
    // Long sums are blocked (pairwise, in parallel) by their length, as
    // NumPy's are: a sum over a dynamic dimension would lose that.
    // The blocks are split for static shapes only: a sum long enough to
    // be split keeps all its sizes static.
    if (auto sum = dyn_cast<ReduceSumOp>(op)) {
      auto shape = cast<RankedTensorType>(typeOf(sum.getOperand())).getShape();
      ArrayRef<int64_t> first = sum.getOperand().getType().getShape();
      int64_t length = 1, splitFrom = 2 * ::pk::defaults::kReductionBlock;
      for (auto [d, size] : llvm::enumerate(first))
        if (sum.isReduced(d))
          length =
              size > splitFrom ? splitFrom : std::min(length * size, splitFrom);
      bool split = length >= splitFrom;
      for (auto [d, size] : llvm::enumerate(shape))
        if (ShapedType::isDynamic(size) && (sum.isReduced(d) || split))
          keepSizeStatic(first[d], sum.isReduced(d)
                                       ? "it sums over a dimension whose size "
                                         "varies (a sum is blocked by its "
                                         "length, for NumPy's accuracy)"
                                       : "it sums long rows (blocked by "
                                         "their length) whose count varies");
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
  return success();
}

} // namespace

LogicalResult generalizeSizes(ModuleOp traced, ModuleOp perturbed,
                              ArrayRef<SizeSymbol> symbols, std::string &reason,
                              SmallVectorImpl<int64_t> &keepStatic) {
  return Generalizer(symbols, reason, keepStatic).run(traced, perturbed);
}

} // namespace pk
