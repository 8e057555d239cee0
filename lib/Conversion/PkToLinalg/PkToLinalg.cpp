//===- PkToLinalg.cpp - lower pk kernels to linalg on tensors -------------===//

#include "picokernel/Conversion/PkToLinalg/PkToLinalg.h"
#include "picokernel/Conversion/Passes.h"
#include "picokernel/Dialect/Pk/IR/PkOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

namespace mlir::pk {
#define GEN_PASS_DEF_CONVERTPKTOLINALG
#include "picokernel/Conversion/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using namespace mlir::pk;

PkToLinalgTypeConverter::PkToLinalgTypeConverter() {
  addConversion([](Type type) { return type; });
  addConversion([](RefType ref) -> Type {
    return MemRefType::get(ref.getShape(), ref.getElementType());
  });
}

namespace {

/// The tensor holding a converted ref's contents, if the kernel loads it: the
/// one `to_tensor` that the kernel lowering created for the memref.
Value loadedTensor(Value memref) {
  for (Operation *user : memref.getUsers())
    if (auto toTensor = dyn_cast<bufferization::ToTensorOp>(user))
      return toTensor.getResult();
  return {};
}

//===----------------------------------------------------------------------===//
// Kernel structure and memory
//===----------------------------------------------------------------------===//

struct KernelLowering : public OpConversionPattern<KernelOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(KernelOp kernel, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const TypeConverter &converter = *getTypeConverter();
    Block &body = kernel.getBodyBlock();
    TypeConverter::SignatureConversion signature(body.getNumArguments());
    if (failed(converter.convertSignatureArgs(kernel.getArgumentTypes(),
                                              signature)))
      return rewriter.notifyMatchFailure(kernel, "unconvertible arguments");

    SmallVector<bool> loaded, stored;
    for (BlockArgument ref : body.getArguments()) {
      loaded.push_back(llvm::any_of(ref.getUsers(), llvm::IsaPred<LoadOp>));
      stored.push_back(kernel.isStoredTo(ref.getArgNumber()));
    }

    auto func = func::FuncOp::create(
        rewriter, kernel.getLoc(), kernel.getSymName(),
        rewriter.getFunctionType(signature.getConvertedTypes(), {}));
    // The runtime calls kernels through their C interface.
    func->setAttr("llvm.emit_c_interface", rewriter.getUnitAttr());
    rewriter.inlineRegionBefore(kernel.getBody(), func.getBody(), func.end());
    Block *entry = rewriter.applySignatureConversion(&func.getBody().front(),
                                                     signature, &converter);

    // One tensor per loaded ref, read at entry: pk-forward-stores has made
    // every load precede the stores. A ref the kernel also stores to is
    // writable: one-shot bufferization may then update it in place (a store
    // to a slice writes just the slice) wherever its old contents are not
    // read afterwards. Inputs are never written.
    rewriter.setInsertionPointToStart(entry);
    for (auto [index, isLoaded] : llvm::enumerate(loaded)) {
      if (!isLoaded)
        continue;
      Value memref = entry->getArgument(index);
      auto memrefType = cast<MemRefType>(memref.getType());
      bufferization::ToTensorOp::create(
          rewriter, memref.getLoc(),
          RankedTensorType::get(memrefType.getShape(),
                                memrefType.getElementType()),
          memref, /*restrict=*/rewriter.getUnitAttr(),
          /*writable=*/stored[index] ? rewriter.getUnitAttr() : UnitAttr());
    }
    rewriter.eraseOp(kernel);
    return success();
  }
};

struct ReturnLowering : public OpConversionPattern<ReturnOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ReturnOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<func::ReturnOp>(op);
    return success();
  }
};

struct LoadLowering : public OpConversionPattern<LoadOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(LoadOp load, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value tensor = loadedTensor(adaptor.getRef());
    if (!tensor)
      return rewriter.notifyMatchFailure(load, "the kernel was not lowered");
    rewriter.replaceOp(load, tensor);
    return success();
  }
};

struct StoreLowering : public OpConversionPattern<StoreOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(StoreOp store, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // A ref that is only written is the destination of its value: with
    // `restrict`, empty-tensor elimination computes straight into it. A ref
    // that is also read keeps its contents until the end (no `restrict`):
    // the value is computed aside and copied in.
    bool alsoLoaded = bool(loadedTensor(adaptor.getRef()));
    bufferization::MaterializeInDestinationOp::create(
        rewriter, store.getLoc(), /*result=*/Type(), adaptor.getValue(),
        adaptor.getRef(), /*restrict=*/!alsoLoaded, /*writable=*/true);
    rewriter.eraseOp(store);
    return success();
  }
};

struct ConstantLowering : public OpConversionPattern<ConstantOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, op.getType(),
                                                   op.getValue());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Elementwise operations: linalg.generic with parallel iterators
//===----------------------------------------------------------------------===//

/// Computes one result element from the operands' elements.
using ScalarBuilder =
    function_ref<Value(OpBuilder &, Location, ValueRange, Type)>;

/// A linalg.generic computing `result[i] = body(inputs[map_k(i)]...)` into a
/// fresh tensor, with identity maps unless `inputMaps` says otherwise.
Value buildElementwise(OpBuilder &builder, Location loc,
                       RankedTensorType resultType, ValueRange inputs,
                       ArrayRef<AffineMap> inputMaps, ScalarBuilder body) {
  unsigned rank = resultType.getRank();
  SmallVector<AffineMap> maps(inputMaps);
  while (maps.size() < inputs.size())
    maps.push_back(builder.getMultiDimIdentityMap(rank));
  maps.push_back(builder.getMultiDimIdentityMap(rank));
  Value init = tensor::EmptyOp::create(builder, loc, resultType.getShape(),
                                       resultType.getElementType());
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      builder, loc, resultType, inputs, init, maps, iterators,
      [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
        Value result =
            body(b, bodyLoc, args.drop_back(), resultType.getElementType());
        linalg::YieldOp::create(b, bodyLoc, result);
      });
  return generic.getResult(0);
}

/// Lowers an elementwise pk op to a generic whose body computes
/// `body(operand elements..., result element type)`.
template <typename PkOp, Value (*body)(OpBuilder &, Location, ValueRange, Type)>
struct ElementwiseLowering : public OpConversionPattern<PkOp> {
  using OpConversionPattern<PkOp>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(PkOp op, typename PkOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value result = buildElementwise(rewriter, op.getLoc(),
                                    cast<RankedTensorType>(op.getType()),
                                    adaptor.getOperands(), {}, body);
    rewriter.replaceOp(op, result);
    return success();
  }
};

template <typename FloatOp, typename IntOp>
Value floatOrIntBody(OpBuilder &b, Location loc, ValueRange args,
                     Type element) {
  if (isa<FloatType>(element))
    return FloatOp::create(b, loc, args[0], args[1]);
  return IntOp::create(b, loc, args[0], args[1]);
}

/// maximum/minimum: NaN-propagating for floats, signed for integers,
/// logical or/and for booleans (SPIR-V has no i1 max or min).
template <typename FloatOp, typename SignedOp, typename BoolOp>
Value extremumBody(OpBuilder &b, Location loc, ValueRange args, Type element) {
  if (isa<FloatType>(element))
    return FloatOp::create(b, loc, args[0], args[1]);
  if (element.isInteger(1))
    return BoolOp::create(b, loc, args[0], args[1]);
  return SignedOp::create(b, loc, args[0], args[1]);
}

/// Comparisons: ordered float predicates (false with NaN; `ne` unordered,
/// true with NaN), signed integers, unsigned booleans.
template <arith::CmpFPredicate floatPredicate,
          arith::CmpIPredicate signedPredicate,
          arith::CmpIPredicate unsignedPredicate>
Value compareBody(OpBuilder &b, Location loc, ValueRange args, Type) {
  Type element = args[0].getType();
  if (isa<FloatType>(element))
    return arith::CmpFOp::create(b, loc, floatPredicate, args[0], args[1]);
  return arith::CmpIOp::create(
      b, loc, element.isInteger(1) ? unsignedPredicate : signedPredicate,
      args[0], args[1]);
}

Value absBody(OpBuilder &b, Location loc, ValueRange args, Type element) {
  if (isa<FloatType>(element))
    return math::AbsFOp::create(b, loc, args[0]);
  if (element.isInteger(1))
    return args[0];
  return math::AbsIOp::create(b, loc, args[0]);
}

/// A unary float op as one math op in a generic body.
template <typename MathOp>
Value mathBody(OpBuilder &b, Location loc, ValueRange args, Type) {
  return MathOp::create(b, loc, args[0]);
}

/// log1p and expm1 from log and exp without losing the small arguments they
/// exist for: math-to-llvm and math-to-spirv expand math.log1p as log(1 + x)
/// and math.expm1 as exp(x) - 1, which return 0 for x = 1e-10 in float32.
/// Goldberg's and Kahan's corrections divide out the rounding of 1 + x and
/// of exp(x), leaving the error of log/exp (a few ulps).
Value log1pBody(OpBuilder &b, Location loc, ValueRange args, Type type) {
  Value x = args[0];
  Value one = arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, 1));
  Value infinity = arith::ConstantOp::create(
      b, loc, type,
      b.getFloatAttr(type, std::numeric_limits<double>::infinity()));
  Value u = arith::AddFOp::create(b, loc, one, x);
  // log(u) * (x / (u - 1)); exact x where 1 + x rounds to 1, log(u) at +inf.
  // The ratio is about 1, so the product cannot overflow for large x.
  Value corrected = arith::MulFOp::create(
      b, loc, math::LogOp::create(b, loc, u),
      arith::DivFOp::create(b, loc, x, arith::SubFOp::create(b, loc, u, one)));
  Value uIsOne =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, u, one);
  Value uIsInfinite =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, u, infinity);
  Value result = arith::SelectOp::create(b, loc, uIsInfinite, u, corrected);
  return arith::SelectOp::create(b, loc, uIsOne, x, result);
}

Value expm1Body(OpBuilder &b, Location loc, ValueRange args, Type type) {
  Value x = args[0];
  Value one = arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, 1));
  Value minusOne =
      arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, -1));
  Value infinity = arith::ConstantOp::create(
      b, loc, type,
      b.getFloatAttr(type, std::numeric_limits<double>::infinity()));
  Value u = math::ExpOp::create(b, loc, x);
  Value uMinusOne = arith::SubFOp::create(b, loc, u, one);
  // (u - 1) * (x / log(u)); exact x where exp(x) rounds to 1, -1 where it
  // underflows to 0 (u - 1 == -1), +inf where it overflows. The ratio is
  // about 1: (u - 1) * x overflowed for x > 80 in float32 (inf / log(u)).
  Value corrected = arith::MulFOp::create(
      b, loc, uMinusOne,
      arith::DivFOp::create(b, loc, x, math::LogOp::create(b, loc, u)));
  auto equals = [&](Value lhs, Value rhs) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, lhs, rhs)
        .getResult();
  };
  Value result =
      arith::SelectOp::create(b, loc, equals(u, infinity), u, corrected);
  result = arith::SelectOp::create(b, loc, equals(uMinusOne, minusOne),
                                   minusOne, result);
  return arith::SelectOp::create(b, loc, equals(u, one), x, result);
}

Value sigmoidBody(OpBuilder &b, Location loc, ValueRange args, Type element) {
  Value one =
      arith::ConstantOp::create(b, loc, element, b.getFloatAttr(element, 1.0));
  Value negated = arith::NegFOp::create(b, loc, args[0]);
  Value exp = math::ExpOp::create(b, loc, negated);
  Value sum = arith::AddFOp::create(b, loc, one, exp);
  return arith::DivFOp::create(b, loc, one, sum);
}

/// A float body computed in float32 for float16 and bfloat16 operands and
/// rounded once, as NumPy computes its half-precision math functions: a
/// body of several operations rounding to 11 (or 8) bits at every step
/// loses most of them (float16 expm1(1e-3) came out 9.78e-4).
template <Value (*body)(OpBuilder &, Location, ValueRange, Type)>
Value inFloat32(OpBuilder &b, Location loc, ValueRange args, Type element) {
  if (!element.isF16() && !element.isBF16())
    return body(b, loc, args, element);
  Type f32 = b.getF32Type();
  SmallVector<Value> wide;
  for (Value arg : args)
    wide.push_back(arith::ExtFOp::create(b, loc, f32, arg));
  return arith::TruncFOp::create(b, loc, element, body(b, loc, wide, f32));
}

/// Floor division and its remainder with NumPy's results: `quotient` is
/// `lhs // rhs`, `remainder` is `lhs % rhs` (the sign of the divisor).
struct FloorDivision {
  Value quotient, remainder;
};

/// NumPy's npy_divmod: fmod, then move the remainder to the divisor's sign;
/// the quotient is computed from the exact difference and rounded to the
/// nearest integer so that it stays consistent with the remainder.
FloorDivision buildFloatFloorDivision(OpBuilder &b, Location loc, Value lhs,
                                      Value rhs) {
  Type type = lhs.getType();
  auto constant = [&](double value) -> Value {
    return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
  };
  auto compare = [&](arith::CmpFPredicate predicate, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, predicate, x, y).getResult();
  };
  Value zero = constant(0.0), one = constant(1.0);
  // fmod(x, ±inf) is x for finite x; stated explicitly because SPIR-V's
  // OpFRem may compute x - y * trunc(x / y), which is NaN there.
  Value infinity = constant(std::numeric_limits<double>::infinity());
  Value divisorIsInfinite = compare(
      arith::CmpFPredicate::OEQ, math::AbsFOp::create(b, loc, rhs), infinity);
  Value dividendIsFinite = compare(arith::CmpFPredicate::OLT,
                                   math::AbsFOp::create(b, loc, lhs), infinity);
  Value mod = arith::SelectOp::create(
      b, loc,
      arith::AndIOp::create(b, loc, divisorIsInfinite, dividendIsFinite), lhs,
      arith::RemFOp::create(b, loc, lhs, rhs));
  Value div = arith::DivFOp::create(
      b, loc, arith::SubFOp::create(b, loc, lhs, mod), rhs);
  // A nonzero remainder (NaN counts) whose sign differs from the divisor's.
  Value signsDiffer = arith::XOrIOp::create(
      b, loc, compare(arith::CmpFPredicate::OLT, rhs, zero),
      compare(arith::CmpFPredicate::OLT, mod, zero));
  Value modIsNonzero = compare(arith::CmpFPredicate::UNE, mod, zero);
  Value adjust = arith::AndIOp::create(b, loc, modIsNonzero, signsDiffer);
  mod = arith::SelectOp::create(
      b, loc, adjust, arith::AddFOp::create(b, loc, mod, rhs),
      arith::SelectOp::create(b, loc, modIsNonzero, mod,
                              math::CopySignOp::create(b, loc, zero, rhs)));
  div = arith::SelectOp::create(b, loc, adjust,
                                arith::SubFOp::create(b, loc, div, one), div);
  Value floored = math::FloorOp::create(b, loc, div);
  Value roundUp =
      compare(arith::CmpFPredicate::OGT,
              arith::SubFOp::create(b, loc, div, floored), constant(0.5));
  floored = arith::SelectOp::create(
      b, loc, roundUp, arith::AddFOp::create(b, loc, floored, one), floored);
  Value zeroQuotient = math::CopySignOp::create(
      b, loc, zero, arith::DivFOp::create(b, loc, lhs, rhs));
  Value quotient = arith::SelectOp::create(
      b, loc, compare(arith::CmpFPredicate::UNE, div, zero), floored,
      zeroQuotient);
  // x // 0 is x / 0 (±inf or NaN), as NumPy's floor_divide returns.
  Value divisorIsZero = compare(arith::CmpFPredicate::OEQ, rhs, zero);
  quotient = arith::SelectOp::create(
      b, loc, divisorIsZero, arith::DivFOp::create(b, loc, lhs, rhs), quotient);
  return {quotient, mod};
}

/// Signed integers: truncating division corrected towards negative
/// infinity. Division by 0 and the overflowing MIN / -1 are undefined in
/// LLVM and SPIR-V, so those divisors are replaced by 1 and the results
/// NumPy gives (0; for -1 the wrapping negation and 0) selected afterwards.
FloorDivision buildIntegerFloorDivision(OpBuilder &b, Location loc, Value lhs,
                                        Value rhs) {
  Type type = lhs.getType();
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantOp::create(b, loc, type,
                                     b.getIntegerAttr(type, value));
  };
  auto equals = [&](Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y)
        .getResult();
  };
  Value zero = constant(0), one = constant(1), minusOne = constant(-1);
  Value divisorIsZero = equals(rhs, zero);
  Value divisorIsMinusOne = equals(rhs, minusOne);
  Value safeDivisor = arith::SelectOp::create(
      b, loc, arith::OrIOp::create(b, loc, divisorIsZero, divisorIsMinusOne),
      one, rhs);
  Value quotient = arith::DivSIOp::create(b, loc, lhs, safeDivisor);
  // Not arith.remsi: its SPIR-V lowering takes absolute values and gets the
  // sign wrong for the most negative dividend. This product cannot overflow.
  Value remainder = arith::SubIOp::create(
      b, loc, lhs, arith::MulIOp::create(b, loc, quotient, safeDivisor));
  Value signsDiffer = arith::XOrIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, remainder, zero),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, safeDivisor,
                            zero));
  Value adjust = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, remainder, zero),
      signsDiffer);
  quotient = arith::SelectOp::create(
      b, loc, adjust, arith::SubIOp::create(b, loc, quotient, one), quotient);
  remainder = arith::SelectOp::create(
      b, loc, adjust, arith::AddIOp::create(b, loc, remainder, safeDivisor),
      remainder);
  quotient = arith::SelectOp::create(b, loc, divisorIsMinusOne,
                                     arith::SubIOp::create(b, loc, zero, lhs),
                                     quotient);
  quotient = arith::SelectOp::create(b, loc, divisorIsZero, zero, quotient);
  return {quotient, remainder};
}

template <Value FloorDivision::*part>
Value floorDivisionBody(OpBuilder &b, Location loc, ValueRange args,
                        Type element) {
  if (!isa<FloatType>(element))
    return buildIntegerFloorDivision(b, loc, args[0], args[1]).*part;
  if (element.getIntOrFloatBitWidth() >= 32)
    return buildFloatFloorDivision(b, loc, args[0], args[1]).*part;
  // NumPy divides float16 in float32 and rounds the result once.
  Type f32 = b.getF32Type();
  Value result = buildFloatFloorDivision(
                     b, loc, arith::ExtFOp::create(b, loc, f32, args[0]),
                     arith::ExtFOp::create(b, loc, f32, args[1]))
                     .*part;
  return arith::TruncFOp::create(b, loc, element, result);
}

enum class Reduction { Sum, Max, Min };

/// A reduction as a linalg.generic with reduction iterators over the axes,
/// accumulating from the operation's identity; kept dimensions are
/// re-inserted with tensor.expand_shape (a view, no copy).
template <typename PkOp, Reduction kind>
struct ReduceLowering : public OpConversionPattern<PkOp> {
  using OpConversionPattern<PkOp>::OpConversionPattern;

  static TypedAttr identity(OpBuilder &b, Type element) {
    if (auto floatType = dyn_cast<FloatType>(element)) {
      if (kind == Reduction::Sum)
        return b.getFloatAttr(element, 0.0);
      return b.getFloatAttr(element,
                            APFloat::getInf(floatType.getFloatSemantics(),
                                            kind == Reduction::Max));
    }
    unsigned width = element.getIntOrFloatBitWidth();
    if (kind == Reduction::Sum)
      return b.getIntegerAttr(element, 0);
    if (width == 1) // booleans: max is "any", min is "all"
      return b.getIntegerAttr(element, kind == Reduction::Max ? 0 : 1);
    return b.getIntegerAttr(element, kind == Reduction::Max
                                         ? APInt::getSignedMinValue(width)
                                         : APInt::getSignedMaxValue(width));
  }

  static Value combine(OpBuilder &b, Location loc, Value acc, Value x) {
    Type element = x.getType();
    bool isFloat = isa<FloatType>(element), isBool = element.isInteger(1);
    switch (kind) {
    case Reduction::Sum:
      // Reassociation lets LLVM keep several partial sums in vector lanes
      // (a chain of dependent adds runs at one add per latency): the sum is
      // then blocked, closer to NumPy's pairwise sum than a serial one.
      return isFloat ? Value(arith::AddFOp::create(
                           b, loc, acc, x, arith::FastMathFlags::reassoc))
                     : Value(arith::AddIOp::create(b, loc, acc, x));
    case Reduction::Max:
      // NaN-propagating maximum and minimum are associative: the flag only
      // lets LLVM vectorize.
      return isFloat  ? Value(arith::MaximumFOp::create(
                           b, loc, acc, x, arith::FastMathFlags::reassoc))
             : isBool ? Value(arith::OrIOp::create(b, loc, acc, x))
                      : Value(arith::MaxSIOp::create(b, loc, acc, x));
    case Reduction::Min:
      return isFloat  ? Value(arith::MinimumFOp::create(
                           b, loc, acc, x, arith::FastMathFlags::reassoc))
             : isBool ? Value(arith::AndIOp::create(b, loc, acc, x))
                      : Value(arith::MinSIOp::create(b, loc, acc, x));
    }
    llvm_unreachable("unknown reduction");
  }

  LogicalResult
  matchAndRewrite(PkOp op, typename PkOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto operandType = cast<RankedTensorType>(op.getOperand().getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    Type element = operandType.getElementType();
    int64_t rank = operandType.getRank();

    SmallVector<int64_t> reducedShape;
    SmallVector<AffineExpr> outputExprs;
    SmallVector<utils::IteratorType> iterators;
    for (int64_t d = 0; d < rank; ++d) {
      if (op.isReduced(d)) {
        iterators.push_back(utils::IteratorType::reduction);
        continue;
      }
      iterators.push_back(utils::IteratorType::parallel);
      reducedShape.push_back(operandType.getDimSize(d));
      outputExprs.push_back(rewriter.getAffineDimExpr(d));
    }
    auto reducedType = RankedTensorType::get(reducedShape, element);
    Value empty = tensor::EmptyOp::create(rewriter, loc, reducedShape, element);
    Value start = arith::ConstantOp::create(rewriter, loc, element,
                                            identity(rewriter, element));
    Value init =
        linalg::FillOp::create(rewriter, loc, start, empty).getResult(0);
    SmallVector<AffineMap> maps = {
        rewriter.getMultiDimIdentityMap(rank),
        AffineMap::get(rank, 0, outputExprs, rewriter.getContext())};
    Value reduced =
        linalg::GenericOp::create(
            rewriter, loc, reducedType, adaptor.getOperand(), init, maps,
            iterators,
            [](OpBuilder &b, Location bodyLoc, ValueRange args) {
              linalg::YieldOp::create(b, bodyLoc,
                                      combine(b, bodyLoc, args[1], args[0]));
            })
            .getResult(0);
    if (reducedType != resultType) {
      // keep_dims: each reduced dimension joins the group of the kept
      // dimension before it (leading ones the first group).
      SmallVector<ReassociationIndices> groups(reducedShape.size());
      ReassociationIndices leading;
      int64_t group = -1;
      for (int64_t d = 0; d < rank; ++d) {
        if (!op.isReduced(d)) {
          groups[++group].append(leading.begin(), leading.end());
          leading.clear();
          groups[group].push_back(d);
        } else if (group < 0) {
          leading.push_back(d);
        } else {
          groups[group].push_back(d);
        }
      }
      reduced = tensor::ExpandShapeOp::create(rewriter, loc, resultType,
                                              reduced, groups);
    }
    rewriter.replaceOp(op, reduced);
    return success();
  }
};

Value selectBody(OpBuilder &b, Location loc, ValueRange args, Type) {
  return arith::SelectOp::create(b, loc, args[0], args[1], args[2]);
}

Value negBody(OpBuilder &b, Location loc, ValueRange args, Type element) {
  if (isa<FloatType>(element))
    return arith::NegFOp::create(b, loc, args[0]);
  Value zero =
      arith::ConstantOp::create(b, loc, element, b.getIntegerAttr(element, 0));
  return arith::SubIOp::create(b, loc, zero, args[0]);
}

/// One element converted as NumPy's astype does (see pk.cast).
Value convertElement(OpBuilder &b, Location loc, Value value, Type to) {
  Type from = value.getType();
  if (from == to)
    return value;
  auto fromInt = dyn_cast<IntegerType>(from);
  auto toInt = dyn_cast<IntegerType>(to);
  if (toInt && toInt.getWidth() == 1) {
    // To bool: nonzero (a NaN is nonzero).
    if (fromInt)
      return arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ne, value,
          arith::ConstantOp::create(b, loc, from, b.getIntegerAttr(from, 0)));
    return arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::UNE, value,
        arith::ConstantOp::create(b, loc, from, b.getFloatAttr(from, 0.0)));
  }
  bool fromBool = fromInt && fromInt.getWidth() == 1;
  if (fromInt && toInt) {
    if (toInt.getWidth() < fromInt.getWidth())
      return arith::TruncIOp::create(b, loc, to, value);
    if (fromBool)
      return arith::ExtUIOp::create(b, loc, to, value);
    return arith::ExtSIOp::create(b, loc, to, value);
  }
  if (fromInt) {
    if (fromBool)
      return arith::UIToFPOp::create(b, loc, to, value);
    return arith::SIToFPOp::create(b, loc, to, value);
  }
  if (toInt)
    return arith::FPToSIOp::create(b, loc, to, value);
  if (to.getIntOrFloatBitWidth() > from.getIntOrFloatBitWidth() ||
      (from.isF16() && to.isBF16()) || (from.isBF16() && to.isF16())) {
    // f16 <-> bf16 goes through f32, which holds both exactly.
    if (from.getIntOrFloatBitWidth() == to.getIntOrFloatBitWidth()) {
      Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
      return arith::TruncFOp::create(b, loc, to, wide);
    }
    return arith::ExtFOp::create(b, loc, to, value);
  }
  return arith::TruncFOp::create(b, loc, to, value);
}

Value castBody(OpBuilder &b, Location loc, ValueRange args, Type element) {
  return convertElement(b, loc, args[0], element);
}

struct BroadcastLowering : public OpConversionPattern<BroadcastOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(BroadcastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ArrayRef<int64_t> from = op.getOperand().getType().getShape();
    ArrayRef<int64_t> to = op.getType().getShape();
    // NumPy alignment: operand dimension i is result dimension offset + i;
    // a stretched dimension of size 1 always reads index 0.
    size_t offset = to.size() - from.size();
    SmallVector<AffineExpr> exprs;
    for (auto [i, dim] : llvm::enumerate(from))
      exprs.push_back(dim == 1 && to[offset + i] != 1
                          ? rewriter.getAffineConstantExpr(0)
                          : rewriter.getAffineDimExpr(offset + i));
    AffineMap map = AffineMap::get(to.size(), 0, exprs, rewriter.getContext());
    Value result = buildElementwise(
        rewriter, op.getLoc(), op.getType(), adaptor.getOperand(), map,
        [](OpBuilder &, Location, ValueRange args, Type) { return args[0]; });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Slices: tensor.extract_slice / insert_slice, which bufferize to subviews
//===----------------------------------------------------------------------===//

/// A pk slice as tensor slices see it: strides are positive there, so a
/// dimension with a negative stride reads the same elements starting from
/// its other end, and is reversed separately. The tensor slice keeps every
/// dimension (`sizes`); the dimensions pk drops are reshaped away on their
/// own, because rank-reducing slices of strided views can be ambiguous
/// about which unit dimension they drop (MLIR 22's SubViewOp::getDroppedDims
/// crashed on `o[0, ::2, :]` of a (1, 13, 1) array).
struct ForwardSlice {
  SmallVector<OpFoldResult> offsets, sizes, strides;
  /// For each dimension of the slice value (after dropped dimensions), the
  /// number of elements when it walks backwards, or 0.
  SmallVector<int64_t> reversedSizes;
  /// The full-rank tensor type of the slice.
  RankedTensorType fullType;
  /// How the full-rank dimensions group into the slice value's dimensions
  /// (each dropped unit dimension joins a kept neighbour).
  SmallVector<ReassociationIndices> reassociation;
  bool dropsDimensions = false;

  bool anyReversed() const {
    return llvm::any_of(reversedSizes, [](int64_t size) { return size > 1; });
  }
};

template <typename SliceOp>
ForwardSlice forwardSlice(Builder &builder, SliceOp op,
                          RankedTensorType sliceType) {
  ForwardSlice slice;
  ArrayRef<int64_t> sliceShape = sliceType.getShape();
  size_t kept = 0;
  ReassociationIndices pending;
  for (auto [d, offset, size, stride] : llvm::enumerate(
           op.getOffsets(), op.getSizes(), op.getStrides())) {
    bool backwards = stride < 0 && size > 0;
    pending.push_back(d);
    // Same greedy matching of kept dimensions as the verifier.
    if (kept < sliceShape.size() && sliceShape[kept] == size) {
      slice.reversedSizes.push_back(backwards ? size : 0);
      slice.reassociation.push_back(pending);
      pending.clear();
      ++kept;
    }
    // An empty slice may start anywhere in pk; tensor slices want bounds.
    int64_t first = size == 0   ? 0
                    : backwards ? offset + (size - 1) * stride
                                : offset;
    int64_t step = size <= 1 ? 1 : backwards ? -stride : stride;
    slice.offsets.push_back(builder.getIndexAttr(first));
    slice.sizes.push_back(builder.getIndexAttr(size));
    slice.strides.push_back(builder.getIndexAttr(step));
  }
  if (!pending.empty() && !slice.reassociation.empty())
    llvm::append_range(slice.reassociation.back(), pending);
  slice.dropsDimensions = sliceShape.size() != op.getSizes().size();
  slice.fullType =
      RankedTensorType::get(op.getSizes(), sliceType.getElementType());
  return slice;
}

/// `value` with dimension d read backwards wherever reversedSizes[d] > 1.
Value reverseDimensions(OpBuilder &builder, Location loc, Value value,
                        ArrayRef<int64_t> reversedSizes) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<AffineExpr> exprs;
  for (auto [d, size] : llvm::enumerate(reversedSizes)) {
    AffineExpr index = builder.getAffineDimExpr(d);
    exprs.push_back(size > 1 ? builder.getAffineConstantExpr(size - 1) - index
                             : index);
  }
  AffineMap map =
      AffineMap::get(type.getRank(), 0, exprs, builder.getContext());
  return buildElementwise(
      builder, loc, type, value, map,
      [](OpBuilder &, Location, ValueRange args, Type) { return args[0]; });
}

struct ExtractSliceLowering : public OpConversionPattern<ExtractSliceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ExtractSliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getType());
    ForwardSlice slice = forwardSlice(rewriter, op, resultType);
    Value result = tensor::ExtractSliceOp::create(
        rewriter, loc, slice.fullType, adaptor.getSource(), slice.offsets,
        slice.sizes, slice.strides);
    if (slice.dropsDimensions)
      result = tensor::CollapseShapeOp::create(rewriter, loc, resultType,
                                               result, slice.reassociation);
    if (slice.anyReversed())
      result = reverseDimensions(rewriter, loc, result, slice.reversedSizes);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct InsertSliceLowering : public OpConversionPattern<InsertSliceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(InsertSliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ForwardSlice slice = forwardSlice(rewriter, op, op.getSource().getType());
    Value source = adaptor.getSource();
    if (slice.anyReversed())
      source = reverseDimensions(rewriter, loc, source, slice.reversedSizes);
    if (slice.dropsDimensions)
      source = tensor::ExpandShapeOp::create(rewriter, loc, slice.fullType,
                                             source, slice.reassociation);
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        op, source, adaptor.getDest(), slice.offsets, slice.sizes,
        slice.strides);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

struct MatmulLowering : public OpConversionPattern<MatmulOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getType());
    Type element = resultType.getElementType();
    Value zero = arith::ConstantOp::create(rewriter, loc, element,
                                           rewriter.getZeroAttr(element));
    Value empty =
        tensor::EmptyOp::create(rewriter, loc, resultType.getShape(), element);
    Value init =
        linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);

    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    int64_t lhsRank = op.getLhs().getType().getRank();
    int64_t rhsRank = op.getRhs().getType().getRank();
    SmallVector<Value, 2> inputs{lhs, rhs};
    Operation *product = nullptr;
    if (lhsRank == 2 && rhsRank == 2)
      product =
          linalg::MatmulOp::create(rewriter, loc, resultType, inputs, init);
    else if (lhsRank == 3 && rhsRank == 3)
      product = linalg::BatchMatmulOp::create(rewriter, loc, resultType, inputs,
                                              init);
    else if (lhsRank == 2 && rhsRank == 1)
      product =
          linalg::MatvecOp::create(rewriter, loc, resultType, inputs, init);
    else if (lhsRank == 1 && rhsRank == 2)
      product =
          linalg::VecmatOp::create(rewriter, loc, resultType, inputs, init);
    else if (lhsRank == 1 && rhsRank == 1)
      product = linalg::DotOp::create(rewriter, loc, resultType, inputs, init);
    else
      product = buildContraction(rewriter, loc, resultType, lhs, rhs, lhsRank,
                                 rhsRank, init);
    rewriter.replaceOp(op, product->getResult(0));
    return success();
  }

  /// The batched shapes the named ops do not cover (more than one batch
  /// dimension, or a batched operand with a vector), as one generic.
  static Operation *buildContraction(OpBuilder &b, Location loc,
                                     RankedTensorType resultType, Value lhs,
                                     Value rhs, int64_t lhsRank,
                                     int64_t rhsRank, Value init) {
    int64_t batch = std::max(lhsRank, rhsRank) - 2;
    bool hasM = lhsRank >= 2, hasN = rhsRank >= 2;
    // Loop order: batch..., [m], [n], k.
    unsigned numLoops = batch + hasM + hasN + 1;
    auto dim = [&](unsigned i) { return b.getAffineDimExpr(i); };
    SmallVector<AffineExpr> batchExprs;
    for (int64_t i = 0; i < batch; ++i)
      batchExprs.push_back(dim(i));
    AffineExpr m = dim(batch), n = dim(batch + hasM), k = dim(numLoops - 1);

    SmallVector<AffineExpr> lhsExprs, rhsExprs, outExprs(batchExprs);
    if (lhsRank >= 2) {
      lhsExprs = batchExprs;
      lhsExprs.append({m, k});
      outExprs.push_back(m);
    } else {
      lhsExprs = {k};
    }
    if (rhsRank >= 2) {
      rhsExprs = batchExprs;
      rhsExprs.append({k, n});
      outExprs.push_back(n);
    } else {
      rhsExprs = {k};
    }
    MLIRContext *context = b.getContext();
    SmallVector<AffineMap> maps = {
        AffineMap::get(numLoops, 0, lhsExprs, context),
        AffineMap::get(numLoops, 0, rhsExprs, context),
        AffineMap::get(numLoops, 0, outExprs, context)};
    SmallVector<utils::IteratorType> iterators(numLoops - 1,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    return linalg::GenericOp::create(
        b, loc, resultType, ValueRange{lhs, rhs}, init, maps, iterators,
        [](OpBuilder &nb, Location nloc, ValueRange args) {
          Value sum;
          if (isa<FloatType>(args[0].getType())) {
            Value prod = arith::MulFOp::create(nb, nloc, args[0], args[1]);
            sum = arith::AddFOp::create(nb, nloc, args[2], prod);
          } else {
            Value prod = arith::MulIOp::create(nb, nloc, args[0], args[1]);
            sum = arith::AddIOp::create(nb, nloc, args[2], prod);
          }
          linalg::YieldOp::create(nb, nloc, sum);
        });
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct ConvertPkToLinalgPass
    : public mlir::pk::impl::ConvertPkToLinalgBase<ConvertPkToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    PkToLinalgTypeConverter typeConverter;
    RewritePatternSet patterns(context);
    populatePkToLinalgConversionPatterns(typeConverter, patterns);

    ConversionTarget target(*context);
    target.addIllegalDialect<PkDialect>();
    target.addLegalDialect<
        arith::ArithDialect, bufferization::BufferizationDialect,
        func::FuncDialect, linalg::LinalgDialect, math::MathDialect,
        memref::MemRefDialect, tensor::TensorDialect>();
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::pk::populatePkToLinalgConversionPatterns(
    const TypeConverter &typeConverter, RewritePatternSet &patterns) {
  patterns.add<
      KernelLowering, ReturnLowering, LoadLowering, StoreLowering,
      ConstantLowering, ElementwiseLowering<NegOp, negBody>,
      ElementwiseLowering<CastOp, castBody>, BroadcastLowering,
      ExtractSliceLowering, InsertSliceLowering, MatmulLowering,
      ElementwiseLowering<AddOp, floatOrIntBody<arith::AddFOp, arith::AddIOp>>,
      ElementwiseLowering<SubOp, floatOrIntBody<arith::SubFOp, arith::SubIOp>>,
      ElementwiseLowering<MulOp, floatOrIntBody<arith::MulFOp, arith::MulIOp>>,
      ElementwiseLowering<DivOp, floatOrIntBody<arith::DivFOp, arith::DivFOp>>,
      ElementwiseLowering<FloorDivOp,
                          floorDivisionBody<&FloorDivision::quotient>>,
      ElementwiseLowering<RemOp, floorDivisionBody<&FloorDivision::remainder>>,
      ElementwiseLowering<
          MaximumOp,
          extremumBody<arith::MaximumFOp, arith::MaxSIOp, arith::OrIOp>>,
      ElementwiseLowering<
          MinimumOp,
          extremumBody<arith::MinimumFOp, arith::MinSIOp, arith::AndIOp>>,
      ElementwiseLowering<AbsOp, absBody>,
      ElementwiseLowering<SelectOp, selectBody>,
      ElementwiseLowering<SigmoidOp, inFloat32<sigmoidBody>>,
      ReduceLowering<ReduceSumOp, Reduction::Sum>,
      ReduceLowering<ReduceMaxOp, Reduction::Max>,
      ReduceLowering<ReduceMinOp, Reduction::Min>,
      ElementwiseLowering<ExpOp, inFloat32<mathBody<math::ExpOp>>>,
      ElementwiseLowering<LogOp, inFloat32<mathBody<math::LogOp>>>,
      ElementwiseLowering<Log1pOp, inFloat32<log1pBody>>,
      ElementwiseLowering<Expm1Op, inFloat32<expm1Body>>,
      ElementwiseLowering<SqrtOp, mathBody<math::SqrtOp>>,
      ElementwiseLowering<RsqrtOp, inFloat32<mathBody<math::RsqrtOp>>>,
      ElementwiseLowering<TanhOp, inFloat32<mathBody<math::TanhOp>>>,
      ElementwiseLowering<ErfOp, inFloat32<mathBody<math::ErfOp>>>,
      ElementwiseLowering<SinOp, inFloat32<mathBody<math::SinOp>>>,
      ElementwiseLowering<CosOp, inFloat32<mathBody<math::CosOp>>>,
      ElementwiseLowering<FloorOp, mathBody<math::FloorOp>>,
      ElementwiseLowering<CeilOp, mathBody<math::CeilOp>>,
      ElementwiseLowering<PowOp,
                          inFloat32<floatOrIntBody<math::PowFOp, math::PowFOp>>>,
      ElementwiseLowering<LessOp, compareBody<arith::CmpFPredicate::OLT,
                                              arith::CmpIPredicate::slt,
                                              arith::CmpIPredicate::ult>>,
      ElementwiseLowering<LessEqualOp, compareBody<arith::CmpFPredicate::OLE,
                                                   arith::CmpIPredicate::sle,
                                                   arith::CmpIPredicate::ule>>,
      ElementwiseLowering<GreaterOp, compareBody<arith::CmpFPredicate::OGT,
                                                 arith::CmpIPredicate::sgt,
                                                 arith::CmpIPredicate::ugt>>,
      ElementwiseLowering<
          GreaterEqualOp,
          compareBody<arith::CmpFPredicate::OGE, arith::CmpIPredicate::sge,
                      arith::CmpIPredicate::uge>>,
      ElementwiseLowering<EqualOp, compareBody<arith::CmpFPredicate::OEQ,
                                               arith::CmpIPredicate::eq,
                                               arith::CmpIPredicate::eq>>,
      ElementwiseLowering<NotEqualOp, compareBody<arith::CmpFPredicate::UNE,
                                                  arith::CmpIPredicate::ne,
                                                  arith::CmpIPredicate::ne>>>(
      typeConverter, patterns.getContext());
}
