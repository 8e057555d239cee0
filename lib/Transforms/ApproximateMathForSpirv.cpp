//===- ApproximateMathForSpirv.cpp - math ops GLSL lacks ------------------===//

#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include <cmath>

namespace mlir::pk {
#define GEN_PASS_DEF_PKAPPROXIMATEMATHFORSPIRV
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

/// |x| ** y for a finite, positive float32 |x| in float64 arithmetic:
/// log|x| as the exponent times log 2 plus atanh's series for the
/// significand, y log|x| rounded once, and exp of that reduced by log 2 to
/// a Taylor polynomial. The float64 result is within 1e-14 of the true one,
/// so the float32 result is correctly rounded but for near-ties. In
/// float32, exp(y * log|x|) loses |y log|x|| / 2 ulps to the rounding of
/// the product alone (up to 44 for results near the overflow).
Value powMagnitudeInFloat64(ImplicitLocOpBuilder &b, Value ax, Value y) {
  Type f64 = b.getF64Type(), i64 = b.getI64Type();
  auto c = [&](double v) -> Value {
    return arith::ConstantOp::create(b, f64, b.getF64FloatAttr(v));
  };
  auto i64c = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, i64, b.getI64IntegerAttr(v));
  };
  auto add = [&](Value l, Value r) -> Value {
    return arith::AddFOp::create(b, l, r);
  };
  auto mul = [&](Value l, Value r) -> Value {
    return arith::MulFOp::create(b, l, r);
  };
  auto select = [&](Value cond, Value t, Value f) -> Value {
    return arith::SelectOp::create(b, cond, t, f);
  };
  Value x = arith::ExtFOp::create(b, f64, ax);
  // x = 2^e * m with m in [sqrt(1/2), sqrt(2)) (float32 subnormals are
  // normal in float64).
  Value bits = arith::BitcastOp::create(b, i64, x);
  Value exponent = arith::SubIOp::create(
      b, arith::ShRUIOp::create(b, bits, i64c(52)), i64c(1023));
  Value significand = arith::BitcastOp::create(
      b, f64,
      arith::OrIOp::create(
          b, arith::AndIOp::create(b, bits, i64c((1LL << 52) - 1)),
          i64c(1023LL << 52)));
  Value large = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, significand,
                                      c(M_SQRT2));
  significand = select(large, mul(significand, c(0.5)), significand);
  exponent =
      select(large, arith::AddIOp::create(b, exponent, i64c(1)), exponent);
  // log(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172: the series
  // 2 (s + s^3/3 + ... + s^17/17) leaves less than 1e-15.
  Value s = arith::DivFOp::create(
      b, arith::SubFOp::create(b, significand, c(1)), add(significand, c(1)));
  Value s2 = mul(s, s);
  Value series = c(2.0 / 17);
  for (int k = 15; k >= 1; k -= 2)
    series = add(mul(series, s2), c(2.0 / k));
  Value log = add(mul(arith::SIToFPOp::create(b, f64, exponent), c(M_LN2)),
                  mul(series, s));
  // t = y log|x|, kept within +-200 (the float32 result is 0 or inf long
  // before): exp(t) = 2^k exp(r), k = round(t / log 2), |r| <= log(2) / 2,
  // exp(r) by its Taylor polynomial to r^12 / 12! (below 1e-14).
  Value t = mul(arith::ExtFOp::create(b, f64, y), log);
  t = arith::MaxNumFOp::create(b, arith::MinNumFOp::create(b, t, c(200)),
                               c(-200));
  Value k = arith::FPToSIOp::create(
      b, i64,
      add(mul(t, c(1 / M_LN2)), math::CopySignOp::create(b, c(0.5), t)));
  Value kf = arith::SIToFPOp::create(b, f64, k);
  // log 2 in two parts, the first with 32 trailing zero bits (k log2High
  // is exact).
  constexpr double log2High = 6.93147180369123816490e-01;
  constexpr double log2Low = 1.90821492927058770002e-10;
  Value r = arith::SubFOp::create(
      b, arith::SubFOp::create(b, t, mul(kf, c(log2High))),
      mul(kf, c(log2Low)));
  Value polynomial = c(1.0 / 479001600); // 1 / 12!
  double factorial = 479001600;
  for (int n = 11; n >= 0; --n) {
    factorial /= n + 1;
    polynomial = add(mul(polynomial, r), c(1.0 / factorial));
  }
  Value scale = arith::BitcastOp::create(
      b, f64,
      arith::ShLIOp::create(b, arith::AddIOp::create(b, k, i64c(1023)),
                            i64c(52)));
  return arith::TruncFOp::create(b, b.getF32Type(), mul(polynomial, scale));
}

/// C's pow (NumPy's `**` on floats) from exp and log of |x|, which GLSL
/// defines only for x > 0 (lavapipe gave 0 for (-2.0) ** 2.5 and for
/// 0.0 ** -0.5), with every special case of C99's F.9.4.4 made explicit.
/// With `float64`, |x| ** y is computed in float64 arithmetic
/// (powMagnitudeInFloat64), else as float32 exp(y * log|x|).
struct ExpandPow : public OpRewritePattern<math::PowFOp> {
  ExpandPow(MLIRContext *context, bool float64)
      : OpRewritePattern(context), float64(float64) {}
  bool float64;

  LogicalResult matchAndRewrite(math::PowFOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return failure();
    Location loc = op.getLoc();
    ImplicitLocOpBuilder b(loc, rewriter);
    Value x = op.getLhs(), y = op.getRhs();
    auto constant = [&](double value) -> Value {
      return arith::ConstantOp::create(b, type,
                                       rewriter.getFloatAttr(type, value));
    };
    auto cmp = [&](arith::CmpFPredicate predicate, Value lhs, Value rhs) {
      return arith::CmpFOp::create(b, predicate, lhs, rhs).getResult();
    };
    auto select = [&](Value condition, Value lhs, Value rhs) {
      return arith::SelectOp::create(b, condition, lhs, rhs).getResult();
    };
    auto both = [&](Value lhs, Value rhs) {
      return arith::AndIOp::create(b, lhs, rhs).getResult();
    };
    Value zero = constant(0.0), one = constant(1.0), half = constant(0.5);
    Value infinity = constant(std::numeric_limits<double>::infinity());
    Value nan = constant(std::numeric_limits<double>::quiet_NaN());
    Value ax = math::AbsFOp::create(b, x), ay = math::AbsFOp::create(b, y);

    // y's parity: an integer (floor(y) == y, false for inf and NaN) that
    // is odd (floats of 2^24 and more are all even).
    Value isInteger =
        cmp(arith::CmpFPredicate::OEQ, math::FloorOp::create(b, y), y);
    Value halfY = arith::MulFOp::create(b, y, half);
    Value isOdd = both(isInteger, cmp(arith::CmpFPredicate::ONE,
                                      math::FloorOp::create(b, halfY), halfY));
    Value negative = cmp(arith::CmpFPredicate::OLT, x, zero);
    Value yNegative = cmp(arith::CmpFPredicate::OLT, y, zero);

    // |x| ** y for finite, positive |x|, with y's sign for an odd power of
    // a negative x, NaN for a non-integer power of one.
    Value magnitude =
        float64 && !isa<VectorType>(type)
            ? powMagnitudeInFloat64(b, ax, y)
            : Value(math::ExpOp::create(
                  b, arith::MulFOp::create(b, y, math::LogOp::create(b, ax))));
    Value result = select(
        negative,
        select(isInteger,
               select(isOdd, arith::NegFOp::create(b, magnitude), magnitude),
               nan),
        magnitude);
    // x = +-0 or +-inf: 0 or inf by whether x is 0 and y negative, negated
    // for an odd y and x's sign bit set (-0.0 ** 3 is -0.0).
    Value xZero = cmp(arith::CmpFPredicate::OEQ, ax, zero);
    Value xInfinite = cmp(arith::CmpFPredicate::OEQ, ax, infinity);
    Value edge =
        select(arith::XOrIOp::create(b, xZero, yNegative), zero, infinity);
    Value signBit = cmp(arith::CmpFPredicate::OLT,
                        math::CopySignOp::create(b, one, x), zero);
    edge = select(both(isOdd, signBit), arith::NegFOp::create(b, edge), edge);
    result = select(arith::OrIOp::create(b, xZero, xInfinite), edge, result);
    // y = +-inf: 0, 1 or inf by |x| against 1.
    Value yInfinite = cmp(arith::CmpFPredicate::OEQ, ay, infinity);
    Value above = cmp(arith::CmpFPredicate::OGT, ax, one);
    Value infinitePower = select(
        cmp(arith::CmpFPredicate::OEQ, ax, one), one,
        select(arith::XOrIOp::create(b, above, yNegative), infinity, zero));
    result = select(both(yInfinite, cmp(arith::CmpFPredicate::ORD, x, x)),
                    infinitePower, result);
    // NaN in, NaN out; but x ** 0 and 1 ** y are 1 whatever the other.
    Value anyNan = cmp(arith::CmpFPredicate::UNO, x, y);
    result = select(anyNan, nan, result);
    Value isOne =
        arith::OrIOp::create(b, cmp(arith::CmpFPredicate::OEQ, y, zero),
                             cmp(arith::CmpFPredicate::OEQ, x, one));
    rewriter.replaceOp(op, select(isOne, one, result));
    return success();
  }
};

/// The fraction bits of 2/pi in 32-bit windows, each starting 8 bits after
/// the previous one (window k holds bits 8k - 24 to 8k + 7 of 0.A2F9836E...).
constexpr uint32_t kTwoOverPi[24] = {
    0xa2,       0xa2f9,     0xa2f983,   0xa2f9836e, 0xf9836e4e, 0x836e4e44,
    0x6e4e4415, 0x4e441529, 0x441529fc, 0x1529fc27, 0x29fc2757, 0xfc2757d1,
    0x2757d1f5, 0x57d1f534, 0xd1f534dd, 0xf534ddc0, 0x34ddc0db, 0xddc0db62,
    0xc0db6295, 0xdb629599, 0x6295993c, 0x95993c43, 0x993c4390, 0x3c439041};

/// float32 sin and cos accurate for every argument: GLSL's are only good
/// near zero (lavapipe's sin(1e10) was off by 100%). Arguments of 2 and
/// more are reduced exactly modulo pi/2 with integer arithmetic (the
/// Payne-Hanek method: |x|'s 24-bit significand times 96 bits of 2/pi
/// chosen by its exponent gives the quadrant and 62 fraction bits), so
/// GLSL only sees [-pi/4, pi/4].
void expandTrigonometry(Operation *op) {
  bool isSin = isa<math::SinOp>(op);
  Value x = op->getOperand(0);
  if (!x.getType().isF32())
    return;
  OpBuilder rewriter(op);
  ImplicitLocOpBuilder b(op->getLoc(), rewriter);
  Type i32 = b.getI32Type(), i64 = b.getI64Type(), f32 = b.getF32Type();
  auto i32c = [&](uint32_t v) -> Value {
    return arith::ConstantOp::create(b, i32, b.getI32IntegerAttr(int32_t(v)));
  };
  auto i64c = [&](uint64_t v) -> Value {
    return arith::ConstantOp::create(b, i64, b.getI64IntegerAttr(int64_t(v)));
  };
  auto f32c = [&](double v) -> Value {
    return arith::ConstantOp::create(b, f32, b.getF32FloatAttr(float(v)));
  };
  auto select = [&](Value c, Value t, Value f) -> Value {
    return arith::SelectOp::create(b, c, t, f);
  };
  auto eq = [&](Value l, Value r) -> Value {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, l, r);
  };

  Value ax = math::AbsFOp::create(b, x);
  Value bits = arith::BitcastOp::create(b, i32, ax);
  Value index = arith::AndIOp::create(
      b, arith::ShRUIOp::create(b, bits, i32c(26)), i32c(15));
  Value shift = arith::AndIOp::create(
      b, arith::ShRUIOp::create(b, bits, i32c(23)), i32c(7));
  Value significand = arith::ShLIOp::create(
      b,
      arith::OrIOp::create(b, arith::AndIOp::create(b, bits, i32c(0xffffff)),
                           i32c(0x800000)),
      shift);
  // The three windows of 2/pi at index, index + 4 and index + 8.
  auto window = [&](unsigned offset) {
    Value value = i32c(kTwoOverPi[offset]);
    for (unsigned k = 1; k < 16; ++k)
      value = select(eq(index, i32c(k)), i32c(kTwoOverPi[k + offset]), value);
    return value;
  };
  Value wide = arith::ExtUIOp::create(b, i64, significand);
  Value low = arith::ShLIOp::create(
      b,
      arith::ExtUIOp::create(b, i64,
                             arith::MulIOp::create(b, significand, window(0))),
      i64c(32));
  Value middle =
      arith::MulIOp::create(b, wide, arith::ExtUIOp::create(b, i64, window(4)));
  Value high =
      arith::MulIOp::create(b, wide, arith::ExtUIOp::create(b, i64, window(8)));
  // |x| * 2/pi as a fixed-point number with 2 integer and 62 fraction bits.
  Value product = arith::AddIOp::create(
      b,
      arith::OrIOp::create(b, arith::ShRUIOp::create(b, high, i64c(32)), low),
      middle);
  Value quadrant = arith::ShRUIOp::create(
      b, arith::AddIOp::create(b, product, i64c(uint64_t(1) << 61)), i64c(62));
  Value remainder = arith::SubIOp::create(
      b, product, arith::ShLIOp::create(b, quadrant, i64c(62)));
  Value reduced =
      arith::MulFOp::create(b, arith::SIToFPOp::create(b, f32, remainder),
                            f32c(1.5707963267948966 * 0x1p-62));

  Value s = math::SinOp::create(b, reduced),
        c = math::CosOp::create(b, reduced);
  Value q = arith::TruncIOp::create(b, i32, quadrant);
  Value minusS = arith::NegFOp::create(b, s),
        minusC = arith::NegFOp::create(b, c);
  auto byQuadrant = [&](Value v0, Value v1, Value v2, Value v3) {
    return select(eq(q, i32c(0)), v0,
                  select(eq(q, i32c(1)), v1, select(eq(q, i32c(2)), v2, v3)));
  };
  Value large = isSin ? byQuadrant(s, c, minusS, minusC)
                      : byQuadrant(c, minusS, minusC, s);
  if (isSin) // sin is odd; the reduction saw |x|
    large = select(
        arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, x, f32c(0.0)),
        arith::NegFOp::create(b, large), large);
  Value infinite =
      arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, ax, f32c(INFINITY));
  large = select(infinite, f32c(NAN), large);
  // Below 2 (and NaN) GLSL's own function is accurate.
  Value small =
      arith::CmpFOp::create(b, arith::CmpFPredicate::ULT, ax, f32c(2.0));
  Value direct = isSin ? Value(math::SinOp::create(b, x))
                       : Value(math::CosOp::create(b, x));
  Value result = select(small, direct, large);
  op->getResult(0).replaceAllUsesWith(result);
  op->erase();
}

/// float32 log of subnormal arguments and exp of subnormal results: GLSL's
/// lose them (lavapipe: log(1e-40) = -88.02, not -92.10; exp(-95) = 0, not
/// 5.5e-42). Arguments are scaled by 2^24 into the normal range and the
/// results scaled back: log(x) = log(x * 2^24) - 24 log 2, exp(x) =
/// exp(x + 17) * e^-17 (x + 17 is exact there, where x + 24 log 2 was
/// off by 27 units of the subnormal result).
void expandSubnormals(Operation *op) {
  Value x = op->getOperand(0);
  if (!x.getType().isF32())
    return;
  OpBuilder rewriter(op);
  ImplicitLocOpBuilder b(op->getLoc(), rewriter);
  auto f32c = [&](double v) -> Value {
    return arith::ConstantOp::create(b, b.getF32Type(),
                                     b.getF32FloatAttr(float(v)));
  };
  Value result;
  if (isa<math::LogOp>(op)) {
    Value small =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, x, f32c(0x1p-126));
    Value scaled = arith::SelectOp::create(
        b, small, arith::MulFOp::create(b, x, f32c(0x1p24)), x);
    Value log = math::LogOp::create(b, scaled);
    result = arith::SelectOp::create(
        b, small, arith::SubFOp::create(b, log, f32c(24 * M_LN2)), log);
  } else {
    // Below log(2^-126) the result is subnormal.
    Value small = arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, x,
                                        f32c(-87.33654475));
    Value shifted = arith::SelectOp::create(
        b, small, arith::AddFOp::create(b, x, f32c(17.0)), x);
    Value exp = math::ExpOp::create(b, shifted);
    result = arith::SelectOp::create(
        b, small, arith::MulFOp::create(b, exp, f32c(std::exp(-17.0))), exp);
  }
  op->getResult(0).replaceAllUsesWith(result);
  op->erase();
}

struct ApproximateMathForSpirvPass
    : public mlir::pk::impl::PkApproximateMathForSpirvBase<
          ApproximateMathForSpirvPass> {
  using PkApproximateMathForSpirvBase::PkApproximateMathForSpirvBase;

  void runOnOperation() override {
    // GLSL's extended instructions have no float64 transcendentals: say so
    // in the user's terms, at the user's line.
    WalkResult wide = getOperation()->walk([](Operation *op) {
      if (!isa<math::ExpOp, math::Exp2Op, math::LogOp, math::Log2Op,
               math::SinOp, math::CosOp, math::TanhOp, math::PowFOp,
               math::ErfOp>(op) ||
          !getElementTypeOrSelf(op->getResult(0).getType()).isF64())
        return WalkResult::advance();
      op->emitError() << "float64 " << op->getName().stripDialect()
                      << " is not available on Vulkan (GLSL has no float64 "
                         "exp, log, sin, cos, tanh, pow or erf): compute in "
                         "float32, or use the CPU backend";
      return WalkResult::interrupt();
    });
    if (wide.wasInterrupted())
      return signalPassFailure();
    // erf is odd, but the polynomial gives +0 for -0: take the sign from x.
    getOperation()->walk([](math::ErfOp erf) {
      OpBuilder builder(erf->getContext());
      builder.setInsertionPointAfter(erf);
      auto signed_ = math::CopySignOp::create(
          builder, erf.getLoc(), erf.getResult(), erf.getOperand());
      erf.getResult().replaceAllUsesExcept(signed_, signed_);
    });
    // The tanh approximation saturates at 0.9999998 (it clamps x to
    // +-7.99): float32 tanh is exactly +-1 from |x| = 9.02 on.
    getOperation()->walk([](math::TanhOp tanh) {
      if (!getElementTypeOrSelf(tanh.getType()).isF32())
        return;
      OpBuilder builder(tanh->getContext());
      builder.setInsertionPointAfter(tanh);
      Location loc = tanh.getLoc();
      Type type = tanh.getType();
      Value x = tanh.getOperand();
      Value one = arith::ConstantOp::create(builder, loc, type,
                                            builder.getFloatAttr(type, 1.0));
      Value limit = arith::ConstantOp::create(builder, loc, type,
                                              builder.getFloatAttr(type, 9.0));
      Value saturated =
          arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::OGE,
                                math::AbsFOp::create(builder, loc, x), limit);
      auto result = arith::SelectOp::create(
          builder, loc, saturated,
          math::CopySignOp::create(builder, loc, one, x), tanh.getResult());
      tanh.getResult().replaceAllUsesExcept(result, result);
    });
    // pow first: its expansion takes logs and exps of its own.
    RewritePatternSet powers(&getContext());
    powers.add<ExpandPow>(&getContext(), float64);
    if (failed(applyPatternsGreedily(getOperation(), std::move(powers))))
      return signalPassFailure();
    SmallVector<Operation *> trigonometry, logsAndExps;
    getOperation()->walk([&](Operation *op) {
      if (isa<math::SinOp, math::CosOp>(op))
        trigonometry.push_back(op);
      if (isa<math::LogOp, math::ExpOp>(op))
        logsAndExps.push_back(op);
    });
    for (Operation *op : trigonometry)
      expandTrigonometry(op);
    for (Operation *op : logsAndExps)
      expandSubnormals(op);
    RewritePatternSet patterns(&getContext());
    populatePolynomialApproximateErfPattern(patterns);
    // GLSL's tanh is (e^2x - 1) / (e^2x + 1) on some devices: 3e-8 for
    // tanh(1e-30). MLIR's rational approximation keeps tiny x as x.
    populatePolynomialApproximateTanhPattern(patterns);
    // GLSL's exp and log are loose (lavapipe: exp within 64 ulps, log
    // within 2^-21 absolute, 278000 ulps near 1); MLIR's float32
    // polynomials with Cody-Waite reduction are within 4 ulps and 2.
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      name.consume_front("math.");
      return name == "exp" || name == "log";
    });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
