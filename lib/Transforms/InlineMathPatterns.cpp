//===- InlineMathPatterns.cpp - exp, log, tanh, erf as inline arithmetic --===//
//
// Cephes' expf, logf and double exp (Stephen L. Moshier's minimax
// polynomials, about 1 ulp), and a float32 tanh and erf from expf's
// polynomial (as expm1), written with arith ops on scalars or vectors so
// that loops over them vectorize at the target's full width. Unlike
// upstream's approximations, they keep NumPy's results at the ends of the
// range: exp's subnormal results (x down to -103.97) and log of subnormals.
//
//===----------------------------------------------------------------------===//

#include "InlineMathPatterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace {

/// Float (f32 or f64) and same-width integer arithmetic on values of one
/// shape: a scalar or a vector, whose constants are splats. Adds and
/// multiplies may contract into FMAs.
class FloatOps {
public:
  FloatOps(ImplicitLocOpBuilder &b, Type type)
      : b(b), floatType(type), element(getElementTypeOrSelf(type)) {
    width = element.getIntOrFloatBitWidth();
    Type integer = b.getIntegerType(width);
    auto vector = dyn_cast<VectorType>(type);
    intType = vector ? Type(vector.clone(integer)) : integer;
  }

  Value f(double value) {
    return constant(floatType, b.getFloatAttr(element, value));
  }
  Value i(int64_t value) {
    return constant(intType, b.getIntegerAttr(b.getIntegerType(width), value));
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
  Value horner(Value x, ArrayRef<double> c) {
    Value sum = f(c.front());
    for (double coefficient : c.drop_front())
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
  /// 2^k for integers k in the normal exponents' range, from its bits.
  Value exp2(Value k) {
    bool single = width == 32;
    Value biased = arith::AddIOp::create(b, k, i(single ? 127 : 1023));
    return fromBits(arith::ShLIOp::create(b, biased, i(single ? 23 : 52)));
  }

  ImplicitLocOpBuilder &b;
  Type floatType, element, intType;
  unsigned width;

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

/// Whether `type` is `element` or a vector of it.
bool isFloatOf(Type type, Type element) {
  return getElementTypeOrSelf(type) == element &&
         (type == element || isa<VectorType>(type));
}

/// Replaces a unary math op on float32 (and float64 with `withFloat64`),
/// scalar or vector, by the arithmetic `expand` builds from its operand.
template <typename OpTy, bool withFloat64 = false>
struct InlineMathPattern : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  virtual Value expand(FloatOps &m, Value x) const = 0;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const final {
    Type type = op.getType();
    if (!isFloatOf(type, rewriter.getF32Type()) &&
        !(withFloat64 && isFloatOf(type, rewriter.getF64Type())))
      return failure();
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    FloatOps m(b, type);
    rewriter.replaceOp(op, expand(m, op.getOperand()));
    return success();
  }
};

/// r = x - k ln 2 for k = round(x / ln 2) (|r| <= ln 2 / 2), with ln 2 in
/// two parts, the first exact in k * ln2Hi: for |x| below about 2^22
/// (float32) or 2^42 (float64).
Value expRemainder(FloatOps &m, Value x, Value k) {
  if (m.width == 32)
    return m.sub(m.sub(x, m.mul(k, m.f(0.693359375))),
                 m.mul(k, m.f(-2.12194440e-4)));
  return m.sub(m.sub(x, m.mul(k, m.f(6.93145751953125e-1))),
               m.mul(k, m.f(1.42860682030941723212e-6)));
}

/// e^r - 1 for float32 |r| <= ln 2 / 2: r + r^2 P(r) with Cephes' minimax
/// polynomial, without the cancellation of subtracting 1 from e^r.
Value expm1F32(FloatOps &m, Value r) {
  Value poly = m.horner(r, {1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3,
                            4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1});
  return m.add(m.mul(m.mul(r, r), poly), r);
}

/// exp(x) = 2^k * e^r with k = round(x / ln 2) and r = x - k ln 2 (ln 2 in
/// two parts, the first exact in k * ln2Hi), |r| <= ln 2 / 2: float32 with
/// a minimax polynomial, float64 with Cephes' Pade form
/// 1 + 2 r P(r^2) / (Q(r^2) - r P(r^2)) (libmvec's vector exp is 3 ulp off).
/// 2^k is applied as two powers 2^(k/2) that are always normal numbers, so
/// results that overflow become inf and subnormal ones are rounded once; or,
/// with `scaleWithLdexp` (targets with AVX-512, where a vector ldexp is one
/// instruction, vscalefps), scalars as ldexp(e^r, k), rounded once as well.
struct ExpPattern : public InlineMathPattern<math::ExpOp, true> {
  ExpPattern(MLIRContext *context, bool scaleWithLdexp)
      : InlineMathPattern(context), scaleWithLdexp(scaleWithLdexp) {}
  bool scaleWithLdexp;

  Value expand(FloatOps &m, Value x) const override {
    ImplicitLocOpBuilder &b = m.b;
    bool single = m.width == 32;
    // exp(x) is 0 below the smallest subnormal and inf above the largest
    // float; the clamp keeps k in range, NaN is restored last.
    Value clamped = arith::MinNumFOp::create(
        b, arith::MaxNumFOp::create(b, x, m.f(single ? -104.0 : -746.0)),
        m.f(single ? 89.0 : 710.0));
    Value kf = math::RoundEvenOp::create(
        b, m.mul(clamped, m.f(single ? 1.44269504 : 1.4426950408889634)));
    Value r = expRemainder(m, clamped, kf);
    Value er;
    if (single) {
      er = m.add(expm1F32(m, r), m.f(1.0));
    } else {
      Value rr = m.mul(r, r);
      Value p = m.mul(
          r, m.horner(rr, {1.26177193074810590878e-4, 3.02994407707441961300e-2,
                           9.99999999999999999910e-1}));
      Value q =
          m.horner(rr, {3.00198505138664455042e-6, 2.52448340349684104192e-3,
                        2.27265548208155028766e-1, 2.00000000000000000009e0});
      Value ratio = arith::DivFOp::create(b, p, m.sub(q, p));
      er = m.add(m.f(1.0), m.add(ratio, ratio));
    }
    Value result;
    // The LLVM dialect's ldexp takes scalars (loops vectorize it), with an
    // i32 exponent for either width.
    if (scaleWithLdexp && !isa<VectorType>(m.floatType)) {
      Value k = arith::FPToSIOp::create(b, b.getI32Type(), kf);
      result = LLVM::LoadExpOp::create(b, m.floatType, er, k);
    } else {
      Value k = arith::FPToSIOp::create(b, m.intType, kf);
      Value half = arith::ShRSIOp::create(b, k, m.i(1));
      Value rest = arith::SubIOp::create(b, k, half);
      result = m.mul(m.mul(er, m.exp2(half)), m.exp2(rest));
    }
    Value isNan = m.compare(arith::CmpFPredicate::UNO, x, x);
    return m.select(isNan, x, result);
  }
};

/// log(x) = e ln 2 + log(1 + f) with x = 2^e (1 + f), 1 + f in
/// [sqrt(1/2), sqrt(2)); subnormal x is scaled by 2^23 first.
struct LogF32 : public InlineMathPattern<math::LogOp> {
  using InlineMathPattern::InlineMathPattern;

  Value expand(FloatOps &m, Value x) const override {
    ImplicitLocOpBuilder &b = m.b;
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
    return m.select(m.compare(arith::CmpFPredicate::ULT, x, m.f(0.0f)),
                    m.f(std::numeric_limits<float>::quiet_NaN()), result);
  }
};

/// e^t - 1 for float32 t in [-87, 0], exact for small |t| (no
/// cancellation): 2^k (e^r - 1) + 2^k - 1. Rounding t / ln 2 by adding
/// 1.5 * 2^23 + 127 leaves k + 127 in the low bits, and 2^k is those bits
/// shifted into the exponent (no conversion). NaN passes every step.
Value expm1NonPositiveF32(FloatOps &m, Value t) {
  Value shifter = m.f(12582912.0f + 127.0f);
  Value shifted = m.add(m.mul(t, m.f(1.44269504f)), shifter);
  Value k = m.sub(shifted, shifter);
  Value scale =
      m.fromBits(arith::ShLIOp::create(m.b, m.toBits(shifted), m.i(23)));
  return m.add(m.mul(scale, expm1F32(m, expRemainder(m, t, k))),
               m.sub(scale, m.f(1.0f)));
}

/// min(|x|, limit), keeping NaN (one vminps).
Value clampedMagnitude(FloatOps &m, Value x, float limit) {
  Value magnitude = math::AbsFOp::create(m.b, x);
  return m.select(m.compare(arith::CmpFPredicate::OLT, m.f(limit), magnitude),
                  m.f(limit), magnitude);
}

/// tanh(|x|) = -m / (2 + m) with m = e^(-2|x|) - 1 (expm1, exact for small
/// |x|: no cancellation, no second branch), with x's sign. |x| is clamped
/// at 10, where tanh rounds to 1. NaN passes the clamp and every step.
/// Within 2 ulp of the correctly rounded result on every float32 (checked
/// exhaustively). (Upstream's rational approximation is cheaper but 5 ulp
/// off near |x| = 5; so are rational fits of the same cost once rounded to
/// float32.)
struct TanhF32 : public InlineMathPattern<math::TanhOp> {
  using InlineMathPattern::InlineMathPattern;

  Value expand(FloatOps &m, Value x) const override {
    Value expm1 = expm1NonPositiveF32(
        m, m.mul(clampedMagnitude(m, x, 10.0f), m.f(-2.0f)));
    Value result = arith::DivFOp::create(m.b, expm1, m.sub(m.f(-2.0f), expm1));
    return math::CopySignOp::create(m.b, result, x);
  }
};

/// erf(|x|) = -expm1(-y) with y = -log(erfc(|x|)) = |x| S(|x|), S a
/// polynomial of degree 10 (minimax in relative error, 6e-9 on [0, 3.92])
/// whose constant term, 2 / sqrt(pi), is in two parts (one float32 is 5e-8
/// off: an ulp for small x); then x's sign (copysign ignores -expm1's).
/// No cancellation for small |x| (expm1) and no branch; |x| is clamped at
/// 3.92, from where erf rounds to 1. NaN passes the clamp and every step.
/// Within 2 ulp of the correctly rounded result on every float32 (checked
/// exhaustively; libmvec's AVX-512 erff is 4 ulp off near 3.65).
struct ErfF32 : public InlineMathPattern<math::ErfOp> {
  using InlineMathPattern::InlineMathPattern;

  Value expand(FloatOps &m, Value x) const override {
    Value a = clampedMagnitude(m, x, 3.92f);
    // -y = a (-2 / sqrt(pi))_hi + a (-(2 / sqrt(pi))_lo - c1 a - ...).
    Value tail =
        m.horner(a, {1.077592700e-07, -2.676463509e-06, 2.966155625e-05,
                     -1.920143550e-04, 7.818643935e-04, -1.838454744e-03,
                     2.722425852e-04, 1.911431551e-02, -1.027716845e-01,
                     -6.366196871e-01, 5.863538277e-08});
    Value negativeY = m.add(m.mul(a, m.f(-1.128379226)), m.mul(a, tail));
    return math::CopySignOp::create(m.b, expm1NonPositiveF32(m, negativeY), x);
  }
};

} // namespace

void mlir::pk::populateInlineMathPatterns(RewritePatternSet &patterns,
                                          bool scaleWithLdexp) {
  patterns.add<ExpPattern>(patterns.getContext(), scaleWithLdexp);
  patterns.add<LogF32, TanhF32, ErfF32>(patterns.getContext());
}
