//===- PkOps.cpp - picokernel dialect operations --------------------------===//

#include "picokernel/Dialect/Pk/IR/PkOps.h"
#include "picokernel/Dialect/Pk/IR/SizeClasses.h"
#include "picokernel/Support/Shape.h"

#include "mlir/Dialect/CommonFolders.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::pk;
using ::pk::formatShape;

#define GET_OP_CLASSES
#include "picokernel/Dialect/Pk/IR/PkOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Dialect-wide canonicalization
//===----------------------------------------------------------------------===//

namespace {
/// An array without elements has no values to compute: any side-effect-free
/// pk operation (or a load) producing one is an empty constant. This keeps
/// zero-size slices, reductions and arithmetic away from the loop and view
/// machinery below, where empty dimensions are easy to get wrong.
struct EmptyArraysAreConstants : public RewritePattern {
  EmptyArraysAreConstants(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isa<PkDialect>(op->getDialect()) || isa<ConstantOp>(op) ||
        op->getNumResults() != 1 || (!isPure(op) && !isa<LoadOp>(op)))
      return failure();
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!type || !type.hasStaticShape() || type.getNumElements() != 0)
      return failure();
    rewriter.replaceOpWithNewOp<ConstantOp>(
        op, DenseElementsAttr::get(type, ArrayRef<Attribute>()));
    return success();
  }
};
} // namespace

void PkDialect::getCanonicalizationPatterns(RewritePatternSet &results) const {
  results.add<EmptyArraysAreConstants>(getContext());
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

void KernelOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                     FunctionType type) {
  state.addAttribute(SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(name));
  state.addAttribute(getFunctionTypeAttrName(state.name), TypeAttr::get(type));
  state.addRegion();
}

std::string KernelOp::getParameterName(unsigned index) {
  BlockArgument arg = getBodyBlock().getArgument(index);
  if (auto name = dyn_cast<NameLoc>(arg.getLoc()))
    return name.getName().str();
  return "arg" + std::to_string(index);
}

bool KernelOp::isStoredTo(unsigned index) {
  return llvm::any_of(getBodyBlock().getArgument(index).getUsers(),
                      llvm::IsaPred<StoreOp>);
}

bool KernelOp::hasDynamicSizes() {
  return llvm::any_of(getArgumentTypes(), [](Type type) {
    return llvm::any_of(cast<RefType>(type).getShape(), ShapedType::isDynamic);
  });
}

ParseResult KernelOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildFunctionType =
      [](Builder &builder, ArrayRef<Type> argTypes, ArrayRef<Type> results,
         function_interface_impl::VariadicFlag,
         std::string &) { return builder.getFunctionType(argTypes, results); };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false,
      getFunctionTypeAttrName(result.name), buildFunctionType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void KernelOp::print(OpAsmPrinter &printer) {
  function_interface_impl::printFunctionOp(
      printer, *this, /*isVariadic=*/false, getFunctionTypeAttrName(),
      getArgAttrsAttrName(), getResAttrsAttrName());
}

LogicalResult KernelOp::verify() {
  FunctionType type = getFunctionType();
  if (type.getNumInputs() == 0)
    return emitOpError("must take at least one ref: the output");
  for (auto [i, argType] : llvm::enumerate(type.getInputs()))
    if (!isa<RefType>(argType))
      return emitOpError() << "argument #" << i
                           << " must be a !pk.ref (kernel parameters are "
                              "references to arrays), got "
                           << argType;
  if (type.getNumResults() != 0)
    return emitOpError() << "must not return values (kernels write their "
                            "results into refs), got "
                         << type.getNumResults() << " result type(s)";
  return success();
}

LogicalResult KernelOp::verifyRegions() {
  bool stores = false;
  for (Operation &op : getBodyBlock()) {
    if (!isa_and_nonnull<PkDialect>(op.getDialect()))
      return op.emitOpError()
             << "is not allowed in a kernel: a kernel body is straight-line "
                "code of pk operations";
    stores |= isa<StoreOp>(op);
  }
  if (!stores)
    return emitOpError("must store to at least one ref (a kernel without a "
                       "store computes nothing)");
  return verifySizeClasses(*this);
}

//===----------------------------------------------------------------------===//
// LoadOp / StoreOp
//===----------------------------------------------------------------------===//

LogicalResult LoadOp::verify() {
  RankedTensorType expected = getRef().getType().getTensorType();
  if (getResult().getType() != expected)
    return emitOpError() << "result type " << getResult().getType()
                         << " does not match the ref's array type " << expected;
  return success();
}

LogicalResult StoreOp::verify() {
  auto valueType = cast<RankedTensorType>(getValue().getType());
  RefType refType = getRef().getType();
  if (valueType.getShape() != refType.getShape())
    return emitOpError() << "stored value of shape "
                         << formatShape(valueType.getShape())
                         << " does not match the ref's shape "
                         << formatShape(refType.getShape());
  if (valueType.getElementType() != refType.getElementType())
    return emitOpError() << "stored element type " << valueType.getElementType()
                         << " does not match the ref's element type "
                         << refType.getElementType();
  return success();
}

//===----------------------------------------------------------------------===//
// CastOp / SelectOp
//===----------------------------------------------------------------------===//

// Elementwise ops keep their operands' shape exactly: a `?` size is not a
// static one (nothing would check at run time that they agree).
static LogicalResult verifySameShape(Operation *op, Value operand,
                                     StringRef what) {
  ArrayRef<int64_t> from = cast<RankedTensorType>(operand.getType()).getShape();
  ArrayRef<int64_t> to =
      cast<RankedTensorType>(op->getResult(0).getType()).getShape();
  if (from == to)
    return success();
  return op->emitOpError() << what << " of shape " << formatShape(from)
                           << " does not match the result's shape "
                           << formatShape(to);
}

LogicalResult CastOp::verify() {
  return verifySameShape(*this, getOperand(), "operand");
}

LogicalResult SelectOp::verify() {
  return verifySameShape(*this, getCondition(), "condition");
}

//===----------------------------------------------------------------------===//
// ConstantOp / BroadcastOp
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult BroadcastOp::verify() {
  ArrayRef<int64_t> from = getOperand().getType().getShape();
  ArrayRef<int64_t> to = getResult().getType().getShape();
  auto fail = [&]() {
    return emitOpError() << "cannot broadcast shape " << formatShape(from)
                         << " to " << formatShape(to) << ": ";
  };
  if (from.size() > to.size())
    return fail() << "the result has fewer dimensions than the operand";
  int64_t dynamic = llvm::count_if(to, ShapedType::isDynamic);
  if (int64_t(getSizes().size()) != dynamic)
    return emitOpError() << "takes one size per dynamic result dimension: "
                         << dynamic << " for " << formatShape(to) << ", got "
                         << getSizes().size();
  size_t offset = to.size() - from.size();
  for (auto [i, dim] : llvm::enumerate(from))
    if (dim != 1 && dim != to[offset + i])
      return fail() << "operand dimension " << i << " is " << dim
                    << " but result dimension " << offset + i << " is "
                    << to[offset + i]
                    << " (NumPy broadcasting needs them equal or the "
                       "operand's to be 1)";
  return success();
}

OpFoldResult BroadcastOp::fold(FoldAdaptor adaptor) {
  // (A dynamic `?` to `?` keeps its size: the operand's is the result's.)
  if (getOperand().getType() == getType())
    return getOperand();
  auto splat = dyn_cast_or_null<SplatElementsAttr>(adaptor.getOperand());
  if (splat && getType().hasStaticShape())
    return SplatElementsAttr::get(getType(), splat.getSplatValue<Attribute>());
  // A broadcast of a broadcast is one broadcast: fold in place.
  if (auto inner = getOperand().getDefiningOp<BroadcastOp>()) {
    getOperandMutable().assign(inner.getOperand());
    return getResult();
  }
  return {};
}

LogicalResult DimOp::verify() {
  int64_t rank = getRef().getType().getRank();
  // I64Attr reads back as uint64_t.
  int64_t index = getIndex();
  if (index < 0 || index >= rank)
    return emitOpError() << "dimension " << index
                         << " is out of range for a ref of rank " << rank;
  return success();
}

LogicalResult CountOp::verify() {
  if (getType().getRank() != 0)
    return emitOpError() << "must give a 0-d array (a number), not "
                         << getType() << ": broadcast it to a shape";
  if (getSizes().empty())
    return emitOpError()
           << "counts no size: a count of known size is a pk.constant";
  // I64Attr reads back as uint64_t.
  if (int64_t(getFactor()) < 0)
    return emitOpError() << "factor " << int64_t(getFactor())
                         << " is negative: a count is not";
  return success();
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getOperand().getType() == getType())
    return getOperand();
  // A cast of a cast is not folded: each conversion may round or wrap.
  return {};
}

//===----------------------------------------------------------------------===//
// Elementwise arithmetic
//===----------------------------------------------------------------------===//

namespace {
/// Non-splat constants are folded only up to this many elements, so that
/// folding never grows a kernel into a huge attribute.
constexpr int64_t kMaxFoldedElements = 1 << 16;

bool isSmallConstant(Attribute attr) {
  auto elements = dyn_cast_or_null<ElementsAttr>(attr);
  return elements && (elements.isSplat() ||
                      elements.getNumElements() <= kMaxFoldedElements);
}

/// Folds an elementwise operation on constants. APFloat arithmetic rounds to
/// nearest-even in the element's own format, exactly as the hardware does,
/// and APInt arithmetic wraps, as NumPy's integer arrays do.
template <typename FloatFn, typename IntFn>
OpFoldResult foldElementwise(ArrayRef<Attribute> operands, Type resultType,
                             FloatFn floatFn, IntFn intFn) {
  if (!llvm::all_of(operands, isSmallConstant))
    return {};
  Type elementType = getElementTypeOrSelf(resultType);
  if (isa<FloatType>(elementType)) {
    if constexpr (std::is_invocable_v<FloatFn, APFloat, APFloat>)
      return constFoldBinaryOp<FloatAttr, APFloat, void>(operands, resultType,
                                                         floatFn);
    else
      return constFoldUnaryOp<FloatAttr, APFloat, void>(operands, resultType,
                                                        floatFn);
  }
  if constexpr (std::is_invocable_v<IntFn, APInt, APInt>)
    return constFoldBinaryOp<IntegerAttr, APInt, void>(operands, resultType,
                                                       intFn);
  else
    return constFoldUnaryOp<IntegerAttr, APInt, void>(operands, resultType,
                                                      intFn);
}

/// Identities such as `x + 0 -> x` hold exactly for integers only: for
/// floats, `-0.0 + 0.0` is `+0.0` and `x * 1.0` quiets a signaling NaN.
bool isIntegerConstant(Type type, Attribute attr,
                       bool (*predicate)(const APInt &)) {
  APInt value;
  return attr && isa<IntegerType>(getElementTypeOrSelf(type)) &&
         matchPattern(attr, m_ConstantInt(&value)) && predicate(value);
}

bool isZero(const APInt &value) { return value.isZero(); }
bool isOne(const APInt &value) { return value.isOne(); }
} // namespace

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  if (isIntegerConstant(getType(), adaptor.getRhs(), isZero))
    return getLhs();
  return foldElementwise(
      adaptor.getOperands(), getType(),
      [](const APFloat &a, const APFloat &b) { return a + b; },
      [](const APInt &a, const APInt &b) { return a + b; });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (isIntegerConstant(getType(), adaptor.getRhs(), isZero))
    return getLhs();
  return foldElementwise(
      adaptor.getOperands(), getType(),
      [](const APFloat &a, const APFloat &b) { return a - b; },
      [](const APInt &a, const APInt &b) { return a - b; });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (isIntegerConstant(getType(), adaptor.getRhs(), isOne))
    return getLhs();
  return foldElementwise(
      adaptor.getOperands(), getType(),
      [](const APFloat &a, const APFloat &b) { return a * b; },
      [](const APInt &a, const APInt &b) { return a * b; });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (!llvm::all_of(adaptor.getOperands(), isSmallConstant))
    return {};
  return constFoldBinaryOp<FloatAttr, APFloat, void>(
      adaptor.getOperands(), getType(),
      [](const APFloat &a, const APFloat &b) { return a / b; });
}

OpFoldResult RemOp::fold(FoldAdaptor adaptor) {
  // x % 0.0 is NaN for every x (NaN, infinities and zeros included).
  auto divisor = dyn_cast_or_null<SplatElementsAttr>(adaptor.getRhs());
  if (!divisor || !isa<FloatType>(divisor.getElementType()) ||
      !divisor.getSplatValue<APFloat>().isZero())
    return {};
  auto type = cast<ShapedType>(getType());
  if (!type.hasStaticShape())
    return {};
  return SplatElementsAttr::get(
      type, APFloat::getNaN(divisor.getSplatValue<APFloat>().getSemantics()));
}

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getOperand().getDefiningOp<NegOp>())
    return inner.getOperand();
  return foldElementwise(
      adaptor.getOperands(), getType(), [](const APFloat &a) { return -a; },
      [](const APInt &a) { return -a; });
}

//===----------------------------------------------------------------------===//
// Comparisons
//===----------------------------------------------------------------------===//

namespace {
/// `cast(x) < c`, with x an integer widened by the cast and c a constant:
/// compared in x's own type when c fits it (no conversion to do, narrower
/// vectors), and a constant result when it does not (every x is on the same
/// side of c). NumPy promotes `int32_array < np.int64(2)` to int64.
template <typename CompareOp>
struct NarrowIntegerComparison : public OpRewritePattern<CompareOp> {
  using OpRewritePattern<CompareOp>::OpRewritePattern;

  static bool holds(const APInt &lhs, const APInt &rhs) {
    if constexpr (std::is_same_v<CompareOp, LessOp>)
      return lhs.slt(rhs);
    else if constexpr (std::is_same_v<CompareOp, LessEqualOp>)
      return lhs.sle(rhs);
    else if constexpr (std::is_same_v<CompareOp, GreaterOp>)
      return lhs.sgt(rhs);
    else if constexpr (std::is_same_v<CompareOp, GreaterEqualOp>)
      return lhs.sge(rhs);
    else if constexpr (std::is_same_v<CompareOp, EqualOp>)
      return lhs == rhs;
    else
      return lhs != rhs;
  }

  LogicalResult matchAndRewrite(CompareOp op,
                                PatternRewriter &rewriter) const override {
    for (bool castOnLeft : {true, false}) {
      Value castSide = castOnLeft ? op.getLhs() : op.getRhs();
      Value constantSide = castOnLeft ? op.getRhs() : op.getLhs();
      auto cast = castSide.getDefiningOp<CastOp>();
      SplatElementsAttr splat;
      if (!cast || !matchPattern(constantSide, m_Constant(&splat)))
        continue;
      auto narrow = dyn_cast<IntegerType>(
          getElementTypeOrSelf(cast.getOperand().getType()));
      auto wide = dyn_cast<IntegerType>(getElementTypeOrSelf(cast.getType()));
      // Signed integers only: the comparisons below are signed.
      if (!narrow || !wide || narrow.getWidth() <= 1 ||
          narrow.getWidth() >= wide.getWidth() || narrow.isUnsigned() ||
          wide.isUnsigned())
        continue;
      APInt value = splat.getSplatValue<APInt>();
      unsigned bits = narrow.getWidth();
      auto narrowType = cast.getOperand().getType();
      if (value.isSignedIntN(bits)) {
        Value constant = ConstantOp::create(
            rewriter, op.getLoc(),
            DenseElementsAttr::get(narrowType, value.trunc(bits)));
        Value x = cast.getOperand();
        rewriter.replaceOpWithNewOp<CompareOp>(op, castOnLeft ? x : constant,
                                               castOnLeft ? constant : x);
        return success();
      }
      // Out of x's range: x compares with c as 0 (one of its values) does.
      APInt zero(value.getBitWidth(), 0);
      bool result = castOnLeft ? holds(zero, value) : holds(value, zero);
      rewriter.replaceOpWithNewOp<ConstantOp>(
          op, DenseElementsAttr::get(op.getType(), result));
      return success();
    }
    return failure();
  }
};
} // namespace

#define PK_COMPARE_CANONICALIZER(Op)                                           \
  void Op::getCanonicalizationPatterns(RewritePatternSet &results,             \
                                       MLIRContext *context) {                 \
    results.add<NarrowIntegerComparison<Op>>(context);                         \
  }
PK_COMPARE_CANONICALIZER(LessOp)
PK_COMPARE_CANONICALIZER(LessEqualOp)
PK_COMPARE_CANONICALIZER(GreaterOp)
PK_COMPARE_CANONICALIZER(GreaterEqualOp)
PK_COMPARE_CANONICALIZER(EqualOp)
PK_COMPARE_CANONICALIZER(NotEqualOp)
#undef PK_COMPARE_CANONICALIZER

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

template <typename ReduceOp> static LogicalResult verifyReduce(ReduceOp op) {
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(op.getOperand().getType()).getShape();
  ArrayRef<int64_t> axes = op.getAxes();
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (axis < 0 || axis >= int64_t(shape.size()))
      return op.emitOpError() << "axis " << axis << " is out of range for an "
                              << "operand of rank " << shape.size();
    if (llvm::is_contained(axes.drop_front(i + 1), axis))
      return op.emitOpError() << "axis " << axis << " is repeated";
  }
  SmallVector<int64_t> expected;
  for (auto [dim, size] : llvm::enumerate(shape)) {
    if (!op.isReduced(dim))
      expected.push_back(size);
    else if (op.getKeepDims())
      expected.push_back(1);
  }
  ArrayRef<int64_t> result = cast<RankedTensorType>(op.getType()).getShape();
  if (result != ArrayRef<int64_t>(expected))
    return op.emitOpError()
           << "result shape " << formatShape(result) << " does not match "
           << formatShape(expected) << ", the shape of " << formatShape(shape)
           << " reduced over the axes"
           << (op.getKeepDims() ? " with kept dimensions" : "");
  return success();
}

LogicalResult ReduceSumOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMaxOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMinOp::verify() { return verifyReduce(*this); }

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::verify() {
  ArrayRef<int64_t> lhs = getLhs().getType().getShape();
  ArrayRef<int64_t> rhs = getRhs().getType().getShape();
  if (lhs.empty() || rhs.empty())
    return emitOpError() << "operands must be at least 1-D (NumPy's @ rejects "
                            "scalars), got shapes "
                         << formatShape(lhs) << " and " << formatShape(rhs);

  size_t lhsContracted = lhs.size() - 1;
  size_t rhsContracted = rhs.size() == 1 ? 0 : rhs.size() - 2;
  if (lhs[lhsContracted] != rhs[rhsContracted])
    return emitOpError() << "contracting dimensions differ: lhs dimension "
                         << lhsContracted << " is " << lhs[lhsContracted]
                         << " but rhs dimension " << rhsContracted << " is "
                         << rhs[rhsContracted] << " (shapes "
                         << formatShape(lhs) << " @ " << formatShape(rhs)
                         << ")";

  ArrayRef<int64_t> lhsBatch = lhs.drop_back(std::min<size_t>(2, lhs.size()));
  ArrayRef<int64_t> rhsBatch = rhs.drop_back(std::min<size_t>(2, rhs.size()));
  if (lhs.size() >= 2 && rhs.size() >= 2 && lhsBatch != rhsBatch)
    return emitOpError() << "batch dimensions " << formatShape(lhsBatch)
                         << " of lhs and " << formatShape(rhsBatch)
                         << " of rhs differ (broadcast them explicitly with "
                            "pk.broadcast)";

  SmallVector<int64_t> expected(lhs.size() >= 2 ? lhsBatch : rhsBatch);
  if (lhs.size() >= 2)
    expected.push_back(lhs[lhs.size() - 2]);
  if (rhs.size() >= 2)
    expected.push_back(rhs.back());
  ArrayRef<int64_t> result = getResult().getType().getShape();
  if (result != ArrayRef<int64_t>(expected))
    return emitOpError() << "result shape " << formatShape(result)
                         << " does not match " << formatShape(expected)
                         << ", the shape of " << formatShape(lhs) << " @ "
                         << formatShape(rhs);
  return success();
}
