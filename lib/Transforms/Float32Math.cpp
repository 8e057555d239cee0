//===- Float32Math.cpp - float32 exp, log, tanh as inline arithmetic ------===//
//
// Cephes' expf, logf and tanhf (Stephen L. Moshier's minimax polynomials,
// about 1 ulp), written with arith ops on scalars or vectors so that loops over
// them vectorize at the target's full width. Unlike upstream's
// approximations, they keep NumPy's results at the ends of the range:
// exp's subnormal results (x down to -103.97) and log of subnormals.
//
//===----------------------------------------------------------------------===//

#include "Float32Math.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace {

/// Float32 (and int32) arithmetic on values of one shape: a scalar or a
/// vector, whose constants are splats. Adds and multiplies may contract
/// into FMAs.
class Float32Ops {
public:
  Float32Ops(ImplicitLocOpBuilder &b, Type type) : b(b), floatType(type) {
    Type i32 = b.getI32Type();
    auto vector = dyn_cast<VectorType>(type);
    intType = vector ? Type(vector.clone(i32)) : i32;
  }

  Value f(float value) { return constant(floatType, b.getF32FloatAttr(value)); }
  Value i(int32_t value) {
    return constant(intType, b.getI32IntegerAttr(value));
  }
  Value add(Value x, Value y) {
    return arith::AddFOp::create(b, x, y, contract);
  }
  Value sub(Value x, Value y) {
    return arith::SubFOp::create(b, x, y, contract);
  }
  Value mul(Value x, Value y) {
    return arith::MulFOp::create(b, x, y, contract);
  }
  /// c[0] * x^n + c[1] * x^(n-1) + ... + c[n], by Horner's rule.
  Value horner(Value x, ArrayRef<float> c) {
    Value sum = f(c.front());
    for (float coefficient : c.drop_front())
      sum = add(mul(sum, x), f(coefficient));
    return sum;
  }
  Value compare(arith::CmpFPredicate predicate, Value x, Value y) {
    return arith::CmpFOp::create(b, predicate, x, y);
  }
  Value select(Value condition, Value x, Value y) {
    return arith::SelectOp::create(b, condition, x, y);
  }
  Value toBits(Value x) { return arith::BitcastOp::create(b, intType, x); }
  Value fromBits(Value x) { return arith::BitcastOp::create(b, floatType, x); }
  /// 2^k for integers k in [-126, 127], as the float's bits.
  Value exp2(Value k) {
    Value biased = arith::AddIOp::create(b, k, i(127));
    return fromBits(arith::ShLIOp::create(b, biased, i(23)));
  }

  ImplicitLocOpBuilder &b;
  Type floatType, intType;

private:
  Value constant(Type type, TypedAttr scalar) {
    if (auto shaped = dyn_cast<ShapedType>(type))
      return arith::ConstantOp::create(
          b, DenseElementsAttr::get(shaped, ArrayRef<Attribute>{scalar}));
    return arith::ConstantOp::create(b, scalar);
  }

  static constexpr arith::FastMathFlags contract =
      arith::FastMathFlags::contract;
};

/// Whether `type` is f32 or a vector of f32.
bool isFloat32(Type type) {
  return getElementTypeOrSelf(type).isF32() &&
         (type.isF32() || isa<VectorType>(type));
}

/// exp(x) = 2^k * e^r with k = round(x / ln 2) and r = x - k ln 2 (ln 2 in
/// two parts, the first exact in k * ln2Hi), |r| <= ln 2 / 2. 2^k is applied
/// as two powers 2^(k/2) that are always normal numbers, so results that
/// overflow become inf and subnormal ones are rounded once.
struct ExpF32 : public OpRewritePattern<math::ExpOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::ExpOp op,
                                PatternRewriter &rewriter) const override {
    if (!isFloat32(op.getType()))
      return failure();
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Float32Ops m(b, op.getType());
    Value x = op.getOperand();
    // exp(x) is 0 below -103.98 and inf above 88.73; NaN is restored last.
    Value clamped = arith::MinNumFOp::create(
        b, arith::MaxNumFOp::create(b, x, m.f(-104.0f)), m.f(89.0f));
    Value kf = math::RoundEvenOp::create(b, m.mul(clamped, m.f(1.44269504f)));
    Value r = m.sub(m.sub(clamped, m.mul(kf, m.f(0.693359375f))),
                    m.mul(kf, m.f(-2.12194440e-4f)));
    Value poly =
        m.horner(r, {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                     4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f});
    Value er = m.add(m.add(m.mul(m.mul(r, r), poly), r), m.f(1.0f));
    Value k = arith::FPToSIOp::create(b, m.intType, kf);
    Value half = arith::ShRSIOp::create(b, k, m.i(1));
    Value rest = arith::SubIOp::create(b, k, half);
    Value result = m.mul(m.mul(er, m.exp2(half)), m.exp2(rest));
    Value isNan = m.compare(arith::CmpFPredicate::UNO, x, x);
    rewriter.replaceOp(op, m.select(isNan, x, result));
    return success();
  }
};

/// log(x) = e ln 2 + log(1 + f) with x = 2^e (1 + f), 1 + f in
/// [sqrt(1/2), sqrt(2)); subnormal x is scaled by 2^23 first.
struct LogF32 : public OpRewritePattern<math::LogOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::LogOp op,
                                PatternRewriter &rewriter) const override {
    if (!isFloat32(op.getType()))
      return failure();
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Float32Ops m(b, op.getType());
    Value x = op.getOperand();
    Value subnormal =
        m.compare(arith::CmpFPredicate::OLT, x, m.f(1.17549435e-38f));
    Value scaled = m.select(subnormal, m.mul(x, m.f(8388608.0f)), x);
    Value bits = m.toBits(scaled);
    // x = 2^e * mantissa with the mantissa in [0.5, 1).
    Value exponent = arith::SubIOp::create(
        b,
        arith::AndIOp::create(b, arith::ShRUIOp::create(b, bits, m.i(23)),
                              m.i(0xff)),
        m.i(126));
    exponent = arith::SubIOp::create(b, exponent,
                                     m.select(subnormal, m.i(23), m.i(0)));
    Value mantissa = m.fromBits(arith::OrIOp::create(
        b, arith::AndIOp::create(b, bits, m.i(0x007fffff)), m.i(0x3f000000)));
    // Below sqrt(1/2): one power of two less, twice the mantissa.
    Value low =
        m.compare(arith::CmpFPredicate::OLT, mantissa, m.f(0.707106781f));
    exponent =
        arith::SubIOp::create(b, exponent, m.select(low, m.i(1), m.i(0)));
    Value f =
        m.sub(m.select(low, m.add(mantissa, mantissa), mantissa), m.f(1.0f));
    Value z = m.mul(f, f);
    Value poly =
        m.horner(f, {7.0376836292e-2f, -1.1514610310e-1f, 1.1676998740e-1f,
                     -1.2420140846e-1f, 1.4249322787e-1f, -1.6668057665e-1f,
                     2.0000714765e-1f, -2.4999993993e-1f, 3.3333331174e-1f});
    Value e = arith::SIToFPOp::create(b, m.floatType, exponent);
    Value y = m.mul(m.mul(f, z), poly);
    y = m.add(y, m.mul(e, m.f(-2.12194440e-4f)));
    y = m.add(y, m.mul(z, m.f(-0.5f)));
    Value result = m.add(m.add(f, y), m.mul(e, m.f(0.693359375f)));
    // log(+inf) = inf, log(+-0) = -inf, log(x < 0) and log(NaN) = NaN.
    float inf = std::numeric_limits<float>::infinity();
    result = m.select(m.compare(arith::CmpFPredicate::OEQ, x, m.f(inf)),
                      m.f(inf), result);
    result = m.select(m.compare(arith::CmpFPredicate::OEQ, x, m.f(0.0f)),
                      m.f(-inf), result);
    result = m.select(m.compare(arith::CmpFPredicate::ULT, x, m.f(0.0f)),
                      m.f(std::numeric_limits<float>::quiet_NaN()), result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// tanh(x) = x + x^3 P(x^2) for |x| < 0.625, else
/// sign(x) (1 - 2 / (exp(2|x|) + 1)), which saturates to +-1 as exp
/// overflows. (Upstream's rational approximation is cheaper but 5 ulp off
/// near |x| = 5.)
struct TanhF32 : public OpRewritePattern<math::TanhOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::TanhOp op,
                                PatternRewriter &rewriter) const override {
    if (!isFloat32(op.getType()))
      return failure();
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Float32Ops m(b, op.getType());
    Value x = op.getOperand();
    Value z = m.mul(x, x);
    Value poly =
        m.horner(z, {-5.70498872745e-3f, 2.06390887954e-2f, -5.37397155531e-2f,
                     1.33314422036e-1f, -3.33332819422e-1f});
    Value small = m.add(m.mul(m.mul(poly, z), x), x);
    Value magnitude = math::AbsFOp::create(b, x);
    Value e = math::ExpOp::create(b, m.add(magnitude, magnitude));
    Value large = m.sub(
        m.f(1.0f), arith::DivFOp::create(b, m.f(2.0f), m.add(e, m.f(1.0f))));
    Value isSmall =
        m.compare(arith::CmpFPredicate::OLT, magnitude, m.f(0.625f));
    // NaN fails the comparison and propagates through the large branch; the
    // sign is x's (tanh(-0) = -0, which x + x^3 P rounds to +0).
    rewriter.replaceOp(
        op, math::CopySignOp::create(b, m.select(isSmall, small, large), x));
    return success();
  }
};

} // namespace

void mlir::pk::populateFloat32MathPatterns(RewritePatternSet &patterns) {
  patterns.add<ExpF32, LogF32, TanhF32>(patterns.getContext());
}
