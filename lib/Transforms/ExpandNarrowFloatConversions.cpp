//===- ExpandNarrowFloatConversions.cpp - f16/bf16 without helpers --------===//

#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKEXPANDNARROWFLOATCONVERSIONS
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

/// `type` (a scalar or a vector) with element type `element`.
Type withElement(Type type, Type element) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    return shaped.clone(element);
  return element;
}

Value splat(OpBuilder &b, Location loc, Type type, TypedAttr scalar) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    return arith::ConstantOp::create(b, loc,
                                     SplatElementsAttr::get(shaped, scalar));
  return arith::ConstantOp::create(b, loc, scalar);
}

/// f64 -> f32 rounded to odd: truncation toward zero, with the last bit set
/// when the result is inexact. Rounding that once more to a format with at
/// most 22 significand bits gives the correctly rounded result.
Value truncateToOdd(OpBuilder &b, Location loc, Value wide) {
  Type wideType = wide.getType();
  Type f32 = withElement(wideType, b.getF32Type());
  Type i32 = withElement(wideType, b.getI32Type());
  Value nearest = arith::TruncFOp::create(b, loc, f32, wide);
  Value back = arith::ExtFOp::create(b, loc, wideType, nearest);
  auto compare = [&](arith::CmpFPredicate predicate, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, predicate, x, y).getResult();
  };
  Value inexact = compare(arith::CmpFPredicate::ONE, back, wide);
  Value awayFromZero =
      compare(arith::CmpFPredicate::OGT, math::AbsFOp::create(b, loc, back),
              math::AbsFOp::create(b, loc, wide));
  Value bits = arith::BitcastOp::create(b, loc, i32, nearest);
  Value one = splat(b, loc, i32, b.getI32IntegerAttr(1));
  // One step toward zero in magnitude (the bits are sign and magnitude).
  Value towardZero = arith::SelectOp::create(
      b, loc, arith::AndIOp::create(b, loc, inexact, awayFromZero),
      arith::SubIOp::create(b, loc, bits, one), bits);
  Value odd = arith::SelectOp::create(
      b, loc, inexact, arith::OrIOp::create(b, loc, towardZero, one),
      towardZero);
  return arith::BitcastOp::create(b, loc, f32, odd);
}

struct TruncateF64ToHalf : public OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Type from = getElementTypeOrSelf(op.getIn().getType());
    Type to = getElementTypeOrSelf(op.getType());
    if (!from.isF64() || (!to.isF16() && !to.isBF16()))
      return failure();
    Location loc = op.getLoc();
    Value narrow = truncateToOdd(rewriter, loc, op.getIn());
    rewriter.replaceOpWithNewOp<arith::TruncFOp>(op, op.getType(), narrow);
    return success();
  }
};

/// bf16 -> f64 through f32 (exact), so that the bf16 expansion sees f32.
struct ExtendHalfToF64 : public OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    Type from = getElementTypeOrSelf(op.getIn().getType());
    Type to = getElementTypeOrSelf(op.getType());
    if (!from.isBF16() || !to.isF64())
      return failure();
    Value wide = arith::ExtFOp::create(
        rewriter, op.getLoc(),
        withElement(op.getIn().getType(), rewriter.getF32Type()), op.getIn());
    rewriter.replaceOpWithNewOp<arith::ExtFOp>(op, op.getType(), wide);
    return success();
  }
};

struct ExpandNarrowFloatConversionsPass
    : public mlir::pk::impl::PkExpandNarrowFloatConversionsBase<
          ExpandNarrowFloatConversionsPass> {
  void runOnOperation() override {
    // arith-emulate-unsupported-floats marks its conversions `contract`,
    // which lets extf(truncf(x)) fold to x: bf16 rounding between two
    // emulated operations would be lost (NumPy rounds after each).
    getOperation()->walk([](Operation *op) {
      if (isa<arith::ExtFOp, arith::TruncFOp>(op))
        if (auto flags = dyn_cast<arith::ArithFastMathInterface>(op))
          op->setAttr(flags.getFastMathAttrName(),
                      arith::FastMathFlagsAttr::get(
                          op->getContext(), arith::FastMathFlags::none));
    });
    RewritePatternSet patterns(&getContext());
    patterns.add<TruncateF64ToHalf, ExtendHalfToF64>(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
