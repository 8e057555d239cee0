//===- ExactRemFForSpirv.cpp - fmod without OpFRem ------------------------===//

#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace mlir::pk {
#define GEN_PASS_DEF_PKEXACTREMFFORSPIRV
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

/// The layout of a binary floating-point format.
struct FloatFormat {
  unsigned width;         // bits in all
  unsigned mantissaBits;  // explicitly stored significand bits
  unsigned quotientChunk; // quotient bits per iteration in 64-bit integers
};

/// fmod(x, y) for f32 or f64 scalars, exactly.
Value buildExactRemainder(OpBuilder &b, Location loc, Value x, Value y,
                          const FloatFormat &format) {
  Type floatType = x.getType();
  Type i64 = b.getI64Type();
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, value);
  };
  auto bits = [&](Value value) -> Value {
    Value raw =
        arith::BitcastOp::create(b, loc, b.getIntegerType(format.width), value);
    return format.width == 64 ? raw : arith::ExtUIOp::create(b, loc, i64, raw);
  };
  auto cmp = [&](arith::CmpIPredicate predicate, Value l, Value r) -> Value {
    return arith::CmpIOp::create(b, loc, predicate, l, r);
  };
  auto select = [&](Value condition, Value t, Value f) -> Value {
    return arith::SelectOp::create(b, loc, condition, t, f);
  };
  unsigned m = format.mantissaBits;
  int64_t exponentMask = (int64_t(1) << (format.width - 1 - m)) - 1;
  Value absMask =
      constant(format.width == 64 ? std::numeric_limits<int64_t>::max()
                                  : (int64_t(1) << (format.width - 1)) - 1);
  Value infinityBits = constant(exponentMask << m);

  Value ax = arith::AndIOp::create(b, loc, bits(x), absMask);
  Value ay = arith::AndIOp::create(b, loc, bits(y), absMask);
  // fmod is NaN for y = 0, x = ±inf and NaN operands.
  Value isNaN = arith::OrIOp::create(
      b, loc,
      arith::OrIOp::create(b, loc,
                           cmp(arith::CmpIPredicate::eq, ay, constant(0)),
                           cmp(arith::CmpIPredicate::uge, ax, infinityBits)),
      cmp(arith::CmpIPredicate::ugt, ay, infinityBits));
  Value xIsSmaller = cmp(arith::CmpIPredicate::ult, ax, ay);

  // x = mx * 2^(ex - bias - m), y likewise; subnormals have exponent 1 and no
  // implicit bit.
  Value mantissaBits = constant(m);
  Value implicitBit = constant(int64_t(1) << m);
  Value mantissaMask = constant((int64_t(1) << m) - 1);
  Value one = constant(1);
  auto split = [&](Value magnitude) -> std::pair<Value, Value> {
    Value exponent = arith::ShRUIOp::create(b, loc, magnitude, mantissaBits);
    Value isSubnormal = cmp(arith::CmpIPredicate::eq, exponent, constant(0));
    Value significand = select(
        isSubnormal, magnitude,
        arith::OrIOp::create(
            b, loc, arith::AndIOp::create(b, loc, magnitude, mantissaMask),
            implicitBit));
    return {arith::MaxSIOp::create(b, loc, exponent, one), significand};
  };
  auto [ex, mx] = split(ax);
  auto [ey, my] = split(ay);
  // Special cases divide by 1 instead of 0; their result is replaced below.
  my = select(arith::OrIOp::create(b, loc, isNaN, xIsSmaller), one, my);

  // (mx * 2^(ex - ey)) mod my, a chunk of quotient bits at a time: the
  // running remainder is below my < 2^(m+1), so shifting it by the chunk
  // stays below 2^63. The loop runs at least once (its last shift may be 0):
  // SPIR-V loops that run zero times lose their initial value on lavapipe.
  Value steps = arith::MaxSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, ex, ey), constant(0));
  Type index = b.getIndexType();
  Value chunk = constant(format.quotientChunk);
  auto loop = scf::ForOp::create(
      b, loc, arith::ConstantIndexOp::create(b, loc, 0),
      arith::IndexCastOp::create(b, loc, index,
                                 arith::AddIOp::create(b, loc, steps, one)),
      arith::ConstantIndexOp::create(b, loc, format.quotientChunk),
      ValueRange{mx},
      [&](OpBuilder &nb, Location nloc, Value iv, ValueRange args) {
        Value done = arith::IndexCastOp::create(nb, nloc, i64, iv);
        Value shift = arith::MinSIOp::create(
            nb, nloc, chunk, arith::SubIOp::create(nb, nloc, steps, done));
        Value reduced = arith::RemUIOp::create(nb, nloc, args[0], my);
        scf::YieldOp::create(
            nb, nloc,
            ValueRange{arith::ShLIOp::create(nb, nloc, reduced, shift)});
      });
  // ex - ey is at most the largest biased exponent of a finite value less
  // one (ey >= 1).
  int64_t mostSteps = (exponentMask - 1) - 1;
  loop->setAttr(mlir::pk::kMaxTripCountAttrName,
                b.getI64IntegerAttr(mostSteps / format.quotientChunk + 1));
  Value remainder = arith::RemUIOp::create(b, loc, loop.getResult(0), my);

  // remainder * 2^(ey - bias - m): the significand converts exactly, and the
  // power of two is a float (subnormal when ey <= m), so the product is the
  // exact, representable result.
  Value scaleExponent = arith::SubIOp::create(b, loc, ey, mantissaBits);
  Value scaleBits =
      select(cmp(arith::CmpIPredicate::sge, scaleExponent, one),
             arith::ShLIOp::create(b, loc, scaleExponent, mantissaBits),
             arith::ShLIOp::create(b, loc, one,
                                   arith::SubIOp::create(b, loc, ey, one)));
  if (format.width != 64)
    scaleBits = arith::TruncIOp::create(b, loc, b.getIntegerType(format.width),
                                        scaleBits);
  Value scale = arith::BitcastOp::create(b, loc, floatType, scaleBits);
  Value magnitude = arith::MulFOp::create(
      b, loc, arith::UIToFPOp::create(b, loc, floatType, remainder), scale);
  Value result = math::CopySignOp::create(b, loc, magnitude, x);
  result = select(xIsSmaller, x, result);
  // C's fmod is a NaN there: a quiet NaN constant (computing one, as
  // (x * y) / (x * y), let Mesa's optimizer fold it away when y was 0).
  Value nan = arith::ConstantOp::create(
      b, loc, floatType,
      b.getFloatAttr(
          floatType,
          APFloat::getQNaN(cast<FloatType>(floatType).getFloatSemantics())));
  return select(isNaN, nan, result);
}

struct ExactRemF : public OpRewritePattern<arith::RemFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::RemFOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!isa<FloatType>(type))
      return rewriter.notifyMatchFailure(op, "vectors are not expected here");
    Location loc = op.getLoc();
    Value x = op.getLhs(), y = op.getRhs();
    if (type.isF64()) {
      rewriter.replaceOp(
          op, buildExactRemainder(rewriter, loc, x, y, {64, 52, 10}));
      return success();
    }
    // Narrower formats: their remainder is exact in float32 too.
    Type f32 = rewriter.getF32Type();
    if (!type.isF32()) {
      x = arith::ExtFOp::create(rewriter, loc, f32, x);
      y = arith::ExtFOp::create(rewriter, loc, f32, y);
    }
    Value result = buildExactRemainder(rewriter, loc, x, y, {32, 23, 39});
    if (!type.isF32())
      result = arith::TruncFOp::create(rewriter, loc, type, result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ExactRemFForSpirvPass
    : public mlir::pk::impl::PkExactRemFForSpirvBase<ExactRemFForSpirvPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExactRemF>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
