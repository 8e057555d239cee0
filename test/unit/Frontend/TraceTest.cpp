//===- TraceTest.cpp - the C++ tracing frontend ---------------------------===//

#include "picokernel/picokernel.h"

#include "picokernel/Dialect/Pk/IR/PkOps.h"
#include "picokernel/Frontend/TraceIR.h"

#include "mlir/IR/Location.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>

namespace {

using pk::all;
using pk::Ref;

pk::Signature vectors(int64_t n, pk::DType dtype,
                      std::initializer_list<const char *> names) {
  pk::Signature signature;
  for (const char *name : names)
    signature.push_back({name, {n}, dtype});
  return signature;
}

/// The message of the TraceError that `body` throws ("" if none), and the
/// line it names.
struct Failure {
  std::string message;
  unsigned line = 0;
  std::string file;
};

Failure failureOf(const std::function<void()> &body) {
  try {
    body();
  } catch (const pk::TraceError &error) {
    return {error.message(), error.where().line, error.where().file};
  }
  return {};
}

// `o_ref[...] = a_ref[...] * b_ref[...] + c_ref[...]`, the seed's kernel.
TEST(Trace, SeedFmaGivesTheExpectedIR) {
  auto module = pk::trace(
      "fma",
      [](Ref a, Ref b, Ref c, Ref o) { o[all] = a[all] * b[all] + c[all]; },
      vectors(4, pk::f32, {"a", "b", "c", "o"}));
  EXPECT_EQ(pk::printModule(module),
            R"(module {
  pk.kernel @fma(%a: !pk.ref<4xf32>, %b: !pk.ref<4xf32>, %c: !pk.ref<4xf32>, %o: !pk.ref<4xf32>) {
    %0 = pk.load %a : !pk.ref<4xf32> -> tensor<4xf32>
    %1 = pk.load %b : !pk.ref<4xf32> -> tensor<4xf32>
    %2 = pk.mul %0, %1 : tensor<4xf32>
    %3 = pk.load %c : !pk.ref<4xf32> -> tensor<4xf32>
    %4 = pk.add %2, %3 : tensor<4xf32>
    pk.store %4, %o : tensor<4xf32> -> !pk.ref<4xf32>
    pk.return
  }
}
)");
  EXPECT_EQ(pk::listing(module), R"(kernel fma(a, b, c, o):
  v0<4:float32> = LOAD [a]()
  v1<4:float32> = LOAD [b]()
  v2<4:float32> = MUL(v0, v1)
  v3<4:float32> = LOAD [c]()
  v4<4:float32> = ADD(v2, v3)
  STORE [o](v4))");
}

TEST(Trace, OperationsCarryTheUsersSourceLine) {
  unsigned line = 0;
  auto module = pk::trace(
      "scale",
      [&](Ref x, Ref o) {
        line = __LINE__ + 1;
        o[all] = x[all] * 3.0;
      },
      vectors(8, pk::f64, {"x", "o"}));
  mlir::pk::MulOp mul;
  pk::irOf(module)->walk([&](mlir::pk::MulOp op) { mul = op; });
  ASSERT_TRUE(mul);
  auto loc = llvm::dyn_cast<mlir::FileLineColLoc>(mul.getLoc());
  ASSERT_TRUE(loc);
  EXPECT_EQ(loc.getLine(), line);
  EXPECT_TRUE(llvm::StringRef(loc.getFilename()).ends_with("TraceTest.cpp"));
}

TEST(Trace, TwoLiveIntermediatesStayDistinct) {
  auto module = pk::trace(
      "sums",
      [](Ref a, Ref b, Ref c, Ref d, Ref o) {
        o[all] = (a[all] + b[all]) * (c[all] + d[all]);
      },
      vectors(4, pk::i32, {"a", "b", "c", "d", "o"}));
  EXPECT_EQ(pk::listing(module), R"(kernel sums(a, b, c, d, o):
  v0<4:int32> = LOAD [a]()
  v1<4:int32> = LOAD [b]()
  v2<4:int32> = ADD(v0, v1)
  v3<4:int32> = LOAD [c]()
  v4<4:int32> = LOAD [d]()
  v5<4:int32> = ADD(v3, v4)
  v6<4:int32> = MUL(v2, v5)
  STORE [o](v6))");
}

TEST(Trace, NumbersAreWeaklyTyped) {
  auto module = pk::trace("weak",
                          [](Ref x, Ref i, Ref m, Ref o32, Ref o64, Ref oi) {
                            o32[all] =
                                x[all] * 2.0 + 1;    // float32 stays float32
                            o64[all] = i[all] * 0.5; // int32 * float -> float64
                            oi[all] = m[all] + 1;    // bool + int -> int64
                          },
                          {{"x", {3}, pk::f32},
                           {"i", {3}, pk::i32},
                           {"m", {3}, pk::boolean},
                           {"o32", {3}, pk::f32},
                           {"o64", {3}, pk::f64},
                           {"oi", {3}, pk::i64}});
  EXPECT_EQ(pk::listing(module), R"(kernel weak(x, i, m, o32, o64, oi):
  v0<3:float32> = LOAD [x]()
  v1<:float32> = CONST(2.0)
  v2<3:float32> = MUL(v0, v1)
  v3<:float32> = CONST(1.0)
  v4<3:float32> = ADD(v2, v3)
  STORE [o32](v4)
  v5<3:int32> = LOAD [i]()
  v6<3:float64> = CAST(v5)
  v7<:float64> = CONST(0.5)
  v8<3:float64> = MUL(v6, v7)
  STORE [o64](v8)
  v9<3:bool> = LOAD [m]()
  v10<3:int64> = CAST(v9)
  v11<:int64> = CONST(1)
  v12<3:int64> = ADD(v10, v11)
  STORE [oi](v12))");
}

TEST(Trace, ArraysPromoteLikeNumPy) {
  EXPECT_EQ(pk::promoteTypes(pk::i32, pk::f32), pk::f64);
  EXPECT_EQ(pk::promoteTypes(pk::i16, pk::f16), pk::f32);
  EXPECT_EQ(pk::promoteTypes(pk::i8, pk::f16), pk::f16);
  EXPECT_EQ(pk::promoteTypes(pk::i8, pk::i64), pk::i64);
  EXPECT_EQ(pk::promoteTypes(pk::boolean, pk::i8), pk::i8);
  EXPECT_EQ(pk::promoteTypes(pk::f16, pk::bf16), pk::f32);
  EXPECT_EQ(pk::promoteTypes(pk::f32, pk::f64), pk::f64);
  // Unsigned integers (NEP 50): the wider of a kind; with a signed one the
  // smallest signed integer holding both; uint64 with a signed: float64.
  EXPECT_EQ(pk::promoteTypes(pk::u8, pk::u32), pk::u32);
  EXPECT_EQ(pk::promoteTypes(pk::u8, pk::i8), pk::i16);
  EXPECT_EQ(pk::promoteTypes(pk::i32, pk::u16), pk::i32);
  EXPECT_EQ(pk::promoteTypes(pk::u32, pk::i32), pk::i64);
  EXPECT_EQ(pk::promoteTypes(pk::u64, pk::i8), pk::f64);
  EXPECT_EQ(pk::promoteTypes(pk::boolean, pk::u16), pk::u16);
  EXPECT_EQ(pk::promoteTypes(pk::u8, pk::f16), pk::f16);
  EXPECT_EQ(pk::promoteTypes(pk::u16, pk::f16), pk::f32);
  EXPECT_EQ(pk::promoteTypes(pk::u32, pk::f32), pk::f64);
  EXPECT_TRUE(pk::canCastSameKind(pk::u8, pk::i8));
  EXPECT_FALSE(pk::canCastSameKind(pk::i8, pk::u64));
  EXPECT_TRUE(pk::canCastSameKind(pk::u64, pk::f16));
  EXPECT_EQ(pk::parseDType("uint16"), pk::u16);
  EXPECT_EQ(pk::parseDType("ui64"), pk::u64);

  auto module = pk::trace(
      "mixed", [](Ref x, Ref y, Ref o) { o[all] = x[all] + y[all]; },
      {{"x", {2}, pk::f32}, {"y", {2}, pk::i32}, {"o", {2}, pk::f64}});
  EXPECT_NE(pk::listing(module).find("v2<2:float64> = CAST(v0)"),
            std::string::npos);
  EXPECT_NE(pk::listing(module).find("v3<2:float64> = CAST(v1)"),
            std::string::npos);
}

TEST(Trace, TypedNumbersTakePartInPromotion) {
  auto module = pk::trace(
      "typed", [](Ref x, Ref o) { o[all] = x[all] * pk::typed(2.0, pk::f64); },
      {{"x", {2}, pk::f32}, {"o", {2}, pk::f64}});
  EXPECT_EQ(pk::listing(module), R"(kernel typed(x, o):
  v0<2:float32> = LOAD [x]()
  v1<2:float64> = CAST(v0)
  v2<:float64> = CONST(2.0)
  v3<2:float64> = MUL(v1, v2)
  STORE [o](v3))");
}

TEST(Trace, IntegerDivisionIsTrueDivision) {
  auto module = pk::trace(
      "ratio", [](Ref x, Ref y, Ref o) { o[all] = x[all] / y[all]; },
      {{"x", {2}, pk::i64}, {"y", {2}, pk::i64}, {"o", {2}, pk::f64}});
  std::string text = pk::listing(module);
  EXPECT_NE(text.find("v4<2:float64> = TRUEDIV(v2, v3)"), std::string::npos)
      << text;
}

TEST(Trace, BroadcastingIsExplicit) {
  auto module = pk::trace(
      "outer", [](Ref row, Ref col, Ref o) { o[all] = row[all] + col[all]; },
      {{"row", {3}, pk::f32},
       {"col", {2, 1}, pk::f32},
       {"o", {2, 3}, pk::f32}});
  EXPECT_EQ(pk::listing(module), R"(kernel outer(row, col, o):
  v0<3:float32> = LOAD [row]()
  v1<2,1:float32> = LOAD [col]()
  v2<2,3:float32> = BROADCAST(v0)
  v3<2,3:float32> = BROADCAST(v1)
  v4<2,3:float32> = ADD(v2, v3)
  STORE [o](v4))");
}

TEST(Trace, StoresBroadcastAndConvertToTheRef) {
  auto module = pk::trace(
      "fill",
      [](Ref row, Ref o, Ref z) {
        o[all] = row[all];
        z[all] = 0;
      },
      {{"row", {3}, pk::f64}, {"o", {2, 3}, pk::f32}, {"z", {2}, pk::i8}});
  EXPECT_EQ(pk::listing(module), R"(kernel fill(row, o, z):
  v0<3:float64> = LOAD [row]()
  v1<3:float32> = CAST(v0)
  v2<2,3:float32> = BROADCAST(v1)
  STORE [o](v2)
  v3<:int8> = CONST(0)
  STORE [z](v3))");
}

TEST(Trace, EveryStoreCountsInOrder) {
  auto module = pk::trace(
      "twice",
      [](Ref x, Ref o) {
        o[all] = x[all];
        o[all] = o[all] + 1.0f;
        o[all] *= 2;
      },
      vectors(2, pk::f32, {"x", "o"}));
  EXPECT_EQ(pk::listing(module), R"(kernel twice(x, o):
  v0<2:float32> = LOAD [x]()
  STORE [o](v0)
  v1<2:float32> = LOAD [o]()
  v2<:float32> = CONST(1.0)
  v3<2:float32> = ADD(v1, v2)
  STORE [o](v3)
  v4<2:float32> = LOAD [o]()
  v5<:float32> = CONST(2.0)
  v6<2:float32> = MUL(v4, v5)
  STORE [o](v6))");
}

TEST(Trace, HostLoopsAndHelpersRunAtTraceTime) {
  auto square = [](const pk::Value &v) { return v * v; };
  auto module = pk::trace(
      "poly",
      [&](Ref x, Ref o) {
        pk::Value acc = x[all];
        for (int i = 0; i < 3; ++i)
          acc = acc + square(x[all]);
        o[all] = -acc;
      },
      vectors(4, pk::f32, {"x", "o"}));
  std::string text = pk::listing(module);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 12) << text;
  EXPECT_NE(text.find("NEG("), std::string::npos);
}

TEST(Trace, KernelsMayTakeAVectorOfRefs) {
  auto module = pk::trace(
      "sum_all",
      [](const std::vector<Ref> &refs) {
        pk::Value total = refs[0][all];
        for (size_t i = 1; i + 1 < refs.size(); ++i)
          total = total + refs[i][all];
        refs.back()[all] = total;
      },
      vectors(4, pk::f32, {"a", "b", "c", "d", "o"}));
  std::string text = pk::listing(module);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 8) << text;
}

TEST(Trace, MatmulFollowsNumPyShapes) {
  auto module =
      pk::trace("mm",
                [](Ref a, Ref b, Ref v, Ref o, Ref ov, Ref os) {
                  o[all] = pk::matmul(a[all], b[all]);  // (5,2,3) @ (3,4)
                  ov[all] = pk::matmul(v[all], b[all]); // (3,) @ (3,4)
                  os[all] = pk::matmul(v[all], v[all]); // (3,) @ (3,)
                },
                {{"a", {5, 2, 3}, pk::f32},
                 {"b", {3, 4}, pk::f32},
                 {"v", {3}, pk::f32},
                 {"o", {5, 2, 4}, pk::f32},
                 {"ov", {4}, pk::f32},
                 {"os", {}, pk::f32}});
  std::string text = pk::printModule(module);
  EXPECT_NE(text.find("pk.broadcast %1 : tensor<3x4xf32> -> tensor<5x3x4xf32>"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("tensor<5x2x3xf32>, tensor<5x3x4xf32> -> tensor<5x2x4xf32>"),
      std::string::npos);
  EXPECT_NE(text.find("tensor<3xf32>, tensor<3x4xf32> -> tensor<4xf32>"),
            std::string::npos);
  EXPECT_NE(text.find("tensor<3xf32>, tensor<3xf32> -> tensor<f32>"),
            std::string::npos);
}

TEST(Trace, BooleanArithmeticIsLogical) {
  auto module = pk::trace(
      "logic",
      [](Ref p, Ref q, Ref either, Ref both) {
        either[all] = p[all] + q[all];
        both[all] = p[all] * q[all];
      },
      vectors(4, pk::boolean, {"p", "q", "either", "both"}));
  std::string text = pk::listing(module);
  EXPECT_NE(text.find("v4<4:int8> = ADD(v2, v3)"), std::string::npos) << text;
  EXPECT_NE(text.find("v5<4:bool> = CAST(v4)"), std::string::npos) << text;
}

TEST(Trace, MathFunctionsComputeInFloatLikeNumPy) {
  auto module = pk::trace("m",
                          [](Ref i, Ref x, Ref o, Ref p) {
                            o[all] = pk::exp(i[all]);
                            p[all] = pk::where(x[all] > 0, pk::sqrt(x[all]),
                                               pk::pow(x[all], 2.0));
                          },
                          {{"i", {2}, pk::i32},
                           {"x", {2}, pk::f32},
                           {"o", {2}, pk::f64},
                           {"p", {2}, pk::f32}});
  EXPECT_EQ(pk::listing(module), R"(kernel m(i, x, o, p):
  v0<2:int32> = LOAD [i]()
  v1<2:float64> = CAST(v0)
  v2<2:float64> = EXP(v1)
  STORE [o](v2)
  v3<2:float32> = LOAD [x]()
  v4<:float32> = CONST(0.0)
  v5<2:bool> = GT(v3, v4)
  v6<2:float32> = LOAD [x]()
  v7<2:float32> = SQRT(v6)
  v8<2:float32> = LOAD [x]()
  v9<2:float32> = MUL(v8, v8)
  v10<2:float32> = SELECT(v5, v7, v9)
  STORE [p](v10))");
}

TEST(Trace, ModuleRoundTripsThroughTheParser) {
  auto module = pk::trace(
      "fma",
      [](Ref a, Ref b, Ref c, Ref o) { o[all] = a[all] * b[all] + c[all]; },
      vectors(4, pk::f32, {"a", "b", "c", "o"}));
  EXPECT_TRUE(mlir::succeeded(mlir::verify(pk::irOf(module))));
  auto kernels = pk::irOf(module).getOps<mlir::pk::KernelOp>();
  ASSERT_EQ(std::distance(kernels.begin(), kernels.end()), 1);
  EXPECT_EQ((*kernels.begin()).getSymName(), "fma");
}

//===----------------------------------------------------------------------===//
// Errors: each is a TraceError naming the operation and the user's line.
//===----------------------------------------------------------------------===//

TEST(Trace, SlicesFollowNumPyBasicIndexing) {
  using pk::none;
  using pk::slice;
  auto module = pk::trace(
      "slices",
      [](Ref a, Ref m, Ref o) {
        o[all] = 0;
        // o[1:3] = a[:2] + m[2, 1::2]
        o[slice(1, 3)] = a[slice(none, 2)] + m[{2, slice(1, none, 2)}];
        // o[::-1] += m[-1]  (negative positions count from the end)
        o[slice(none, none, -1)] += m[-1];
      },
      {{"a", {4}, pk::f32}, {"m", {3, 4}, pk::f32}, {"o", {4}, pk::f32}});
  EXPECT_EQ(pk::listing(module), R"(kernel slices(a, m, o):
  v0<:float32> = CONST(0.0)
  STORE [o](v0)
  v1<4:float32> = LOAD [a]()
  v2<2:float32> = SLICE(v1)[0:2]
  v3<3,4:float32> = LOAD [m]()
  v4<2:float32> = SLICE(v3)[2:3, 1:5:2]
  v5<2:float32> = ADD(v2, v4)
  v6<4:float32> = LOAD [o]()
  v7<4:float32> = INSERT_SLICE(v5, v6)[1:3]
  STORE [o](v7)
  v8<3,4:float32> = LOAD [m]()
  v9<4:float32> = SLICE(v8)[2:3, 0:4]
  v10<4:float32> = LOAD [o]()
  v11<4:float32> = SLICE(v10)[3::-1]
  v12<4:float32> = ADD(v11, v9)
  v13<4:float32> = LOAD [o]()
  v14<4:float32> = INSERT_SLICE(v12, v13)[3::-1]
  STORE [o](v14))");
}

TEST(Trace, SliceBoundsAreClampedLikePython) {
  using pk::none;
  using pk::slice;
  pk::trace("clamped",
            [](Ref a, Ref o) {
              EXPECT_EQ(a[slice(-100, 100)].shape(), pk::Shape{5});
              EXPECT_EQ(a[slice(3, 1)].shape(), pk::Shape{0});
              EXPECT_EQ(a[slice(none, none, -2)].shape(), pk::Shape{3});
              EXPECT_EQ(a[slice(10, -10, -1)].shape(), pk::Shape{5});
              EXPECT_EQ(a[slice(1, none, INT64_MAX)].shape(), pk::Shape{1});
              EXPECT_EQ(a[slice(none, none, INT64_MIN)].shape(), pk::Shape{1});
              // Value slicing composes: a[1:][::2] is a[1::2].
              EXPECT_EQ(a[slice(1, none)][slice(none, none, 2)].shape(),
                        pk::Shape{2});
              o[all] = a[all];
            },
            {{"a", {5}, pk::i32}, {"o", {5}, pk::i32}});
}

TEST(TraceErrors, IncompatibleBroadcastShapes) {
  unsigned line = 0;
  Failure failure = failureOf([&] {
    pk::trace(
        "bad",
        [&](Ref a, Ref b, Ref o) {
          line = __LINE__ + 1;
          o[all] = a[all] + b[all];
        },
        {{"a", {2, 3}, pk::f32}, {"b", {4}, pk::f32}, {"o", {2, 3}, pk::f32}});
  });
  EXPECT_EQ(failure.message, "add: operands of shapes (2, 3) and (4,) cannot "
                             "be broadcast together");
  EXPECT_EQ(failure.line, line);
  EXPECT_TRUE(llvm::StringRef(failure.file).ends_with("TraceTest.cpp"));
}

TEST(TraceErrors, MatmulDimensionMismatch) {
  unsigned line = 0;
  Failure failure = failureOf([&] {
    pk::trace("bad",
              [&](Ref a, Ref b, Ref o) {
                line = __LINE__ + 1;
                o[all] = pk::matmul(a[all], b[all]);
              },
              {{"a", {2, 3}, pk::f32},
               {"b", {4, 5}, pk::f32},
               {"o", {2, 5}, pk::f32}});
  });
  EXPECT_EQ(failure.message, "matmul: shapes (2, 3) @ (4, 5) do not align: "
                             "the contracted dimensions are 3 and 4");
  EXPECT_EQ(failure.line, line);
}

TEST(TraceErrors, MatmulBatchMismatchAndScalars) {
  EXPECT_EQ(
      failureOf([] {
        pk::trace(
            "bad",
            [](Ref a, Ref b, Ref o) { o[all] = pk::matmul(a[all], b[all]); },
            {{"a", {2, 2, 3}, pk::f32},
             {"b", {5, 3, 4}, pk::f32},
             {"o", {2, 2, 4}, pk::f32}});
      }).message,
      "matmul: batch dimensions (2,) and (5,) of shapes (2, 2, 3) @ (5, 3, 4) "
      "cannot be broadcast together");
  EXPECT_EQ(failureOf([] {
              pk::trace(
                  "bad", [](Ref a, Ref o) { o[all] = pk::matmul(a[all], 2.0); },
                  vectors(3, pk::f32, {"a", "o"}));
            }).message,
            "matmul: operands must be arrays of at least one dimension "
            "(NumPy's @ rejects scalars with a ValueError; use * to scale)");
}

TEST(TraceErrors, DTypeRulesWithNoPromotion) {
  EXPECT_EQ(failureOf([] {
              pk::trace(
                  "bad", [](Ref p, Ref o) { o[all] = p[all] - p[all]; },
                  vectors(3, pk::boolean, {"p", "o"}));
            }).message,
            "subtract: boolean subtract, the `-` operator, is not supported "
            "(as in NumPy); cast to a number type first with pk::cast");
  EXPECT_EQ(failureOf([] {
              pk::trace(
                  "bad", [](Ref p, Ref o) { o[all] = -p[all]; },
                  vectors(3, pk::boolean, {"p", "o"}));
            }).message,
            "negative: the boolean negative, the `-` operator, is not "
            "supported (as in NumPy); cast to a number type first with "
            "pk::cast");
  EXPECT_EQ(failureOf([] {
              pk::trace(
                  "bad", [](Ref x, Ref o) { o[all] = x[all] + 300; },
                  vectors(3, pk::i8, {"x", "o"}));
            }).message,
            "add: integer scalar 300 is out of bounds for int8 (NumPy raises "
            "OverflowError)");
  // Unsigned arrays hold no negative C++ numbers, and uint8 nothing past 255.
  EXPECT_EQ(failureOf([] {
              pk::trace(
                  "bad", [](Ref x, Ref o) { o[all] = x[all] - (-1); },
                  vectors(3, pk::u16, {"x", "o"}));
            }).message,
            "subtract: integer scalar -1 is out of bounds for uint16 (NumPy "
            "raises OverflowError)");
  EXPECT_EQ(failureOf([] {
              pk::trace(
                  "bad", [](Ref x, Ref o) { o[all] = x[all] * 256; },
                  vectors(3, pk::u8, {"x", "o"}));
            }).message,
            "multiply: integer scalar 256 is out of bounds for uint8 (NumPy "
            "raises OverflowError)");
}

TEST(Trace, UnsignedIntegersWrapAndCompareByValue) {
  auto module = pk::trace(
      "bytes",
      [](Ref x, Ref o, Ref m) {
        o[all] = x[all] + 255;
        m[all] = x[all] < -1;
      },
      {{"x", {2}, pk::u8}, {"o", {2}, pk::u8}, {"m", {2}, pk::boolean}});
  std::string listing = pk::listing(module);
  EXPECT_NE(listing.find("v1<:uint8> = CONST(255)"), std::string::npos)
      << listing;
  EXPECT_NE(listing.find("v2<2:uint8> = ADD(v0, v1)"), std::string::npos)
      << listing;
  // uint8 < -1 compares in int64, where -1 is below every uint8.
  EXPECT_NE(listing.find("<2:int64> = CAST("), std::string::npos) << listing;
}

TEST(TraceErrors, KernelWithoutStore) {
  unsigned line = __LINE__ + 2;
  Failure failure = failureOf([] {
    pk::trace(
        "lazy", [](Ref a, Ref o) { pk::Value unused = a[all] * 2; },
        vectors(3, pk::f32, {"a", "o"}));
  });
  EXPECT_EQ(failure.message,
            "trace: kernel 'lazy' stores to no ref: a kernel must store its "
            "result into a ref (`o[...] = value` in Python, `o[pk::all] = "
            "value` in C++)");
  EXPECT_EQ(failure.line, line);
}

TEST(TraceErrors, StoredShapeMustFitTheRef) {
  EXPECT_EQ(failureOf([] {
              pk::trace("bad", [](Ref a, Ref o) { o[all] = a[all]; },
                        {{"a", {2, 3}, pk::f32}, {"o", {3}, pk::f32}});
            }).message,
            "store to 'o': a value of shape (2, 3) cannot be stored into ref "
            "'o' of shape (3,)");
}

TEST(TraceErrors, IndexingIsCheckedWhenTraced) {
  using pk::slice;
  pk::Signature signature = {{"m", {3, 4}, pk::f32}, {"o", {4}, pk::f32}};
  auto failure = [&](std::function<void(Ref, Ref)> body) {
    return failureOf([&] { pk::trace("bad", body, signature); }).message;
  };
  EXPECT_EQ(failure([](Ref m, Ref o) { o[all] = m[{0, 1, 2}]; }),
            "indexing: too many indices for array: array is 2-dimensional, "
            "but 3 were indexed");
  EXPECT_EQ(failure([](Ref m, Ref o) { o[all] = m[3]; }),
            "indexing: index 3 is out of bounds for axis 0 with size 3");
  EXPECT_EQ(failure([](Ref m, Ref o) { o[all] = m[{0, -5}]; }),
            "indexing: index -5 is out of bounds for axis 1 with size 4");
  EXPECT_EQ(failure([](Ref m, Ref o) { o[all] = m[slice(0, 2, 0)][0]; }),
            "indexing: slice step cannot be zero");
  EXPECT_EQ(failure([](Ref m, Ref o) { o[slice(1, 3)] = m[0]; }),
            "store to 'o': a value of shape (4,) cannot be stored into a "
            "slice of ref 'o' of shape (2,)");
  EXPECT_EQ(failure([](Ref m, Ref o) { o[7] = m[0][0]; }),
            "indexing: index 7 is out of bounds for axis 0 with size 4");

  try {
    pk::trace("bad", [](Ref m, Ref o) { o[all] = m[5]; }, signature);
    FAIL() << "expected an error";
  } catch (const pk::TraceError &error) {
    EXPECT_EQ(error.category(), pk::TraceError::Category::Index);
    EXPECT_EQ(error.where().file, __FILE__); // the line of `m[5]`
  }
}

TEST(TraceErrors, ValueUsedOutsideItsTrace) {
  pk::Value leaked;
  pk::trace(
      "first",
      [&](Ref a, Ref o) {
        leaked = a[all];
        o[all] = leaked;
      },
      vectors(3, pk::f32, {"a", "o"}));
  EXPECT_EQ(failureOf([&] { (void)leaked.shape(); }).message,
            "shape: kernel 'first' is no longer being traced: its values and "
            "refs cannot be used after the trace ended");
  EXPECT_EQ(failureOf([&] { (void)leaked.ndim(); }).message,
            "ndim: kernel 'first' is no longer being traced: its values and "
            "refs cannot be used after the trace ended");
  EXPECT_EQ(failureOf([&] { (void)pk::Value().ndim(); }).message,
            "ndim: use of an empty pk::Value (default-constructed)");

  pk::Value foreign;
  Failure failure = failureOf([&] {
    pk::trace(
        "outer",
        [&](Ref a, Ref o) {
          foreign = a[all];
          pk::trace(
              "inner", [&](Ref b, Ref p) { p[all] = b[all] + foreign; },
              vectors(3, pk::f32, {"b", "p"}));
          o[all] = foreign;
        },
        vectors(3, pk::f32, {"a", "o"}));
  });
  EXPECT_EQ(failure.message,
            "add: operands come from the traces of kernels 'inner' and "
            "'outer': a value belongs to the trace that made it");
  // Stored into another trace's ref, also when that trace has a context
  // of its own.
  for (pk::TraceContext inner :
       {pk::TraceContext::Shared, pk::TraceContext::Own}) {
    failure = failureOf([&] {
      pk::trace(
          "outer",
          [&](Ref a, Ref o) {
            foreign = a[all] * 2;
            pk::trace(
                inner, "inner", [&](Ref, Ref p) { p[all] = foreign; },
                vectors(3, pk::f32, {"b", "p"}));
            o[all] = foreign;
          },
          vectors(3, pk::f32, {"a", "o"}));
    });
    EXPECT_EQ(failure.message,
              "store to 'p': the value stored comes from the trace of "
              "kernel 'outer', not from that of kernel 'inner': a value "
              "belongs to the trace that made it");
  }
}

// pk::Module owns what it holds: an empty one prints and lists as nothing,
// and one traced in a context of its own keeps that context while it, or a
// value of its trace, lives (the value then reports the ended trace).
TEST(Trace, ModulesOwnTheirIR) {
  pk::Module empty;
  EXPECT_FALSE(empty);
  EXPECT_EQ(pk::printModule(empty), "");
  EXPECT_EQ(pk::listing(empty), "");

  pk::Value leaked;
  auto twice = [&](Ref a, Ref o) {
    leaked = a[all] * 2;
    o[all] = leaked;
  };
  pk::Module shared =
      pk::trace("twice", twice, vectors(3, pk::f32, {"a", "o"}));
  pk::Module own = pk::trace(pk::TraceContext::Own, "twice", twice,
                             vectors(3, pk::f32, {"a", "o"}));
  EXPECT_EQ(pk::irOf(shared).getContext(), &pk::defaultContext());
  EXPECT_NE(pk::irOf(own).getContext(), &pk::defaultContext());
  EXPECT_EQ(pk::printModule(own), pk::printModule(shared));
  EXPECT_EQ(pk::listing(own), pk::listing(shared));

  pk::Module moved = std::move(own);
  EXPECT_TRUE(moved);
  // The module and its IR go; the context stays for the leaked value.
  moved = pk::Module();
  EXPECT_FALSE(moved);
  EXPECT_EQ(failureOf([&] { (void)leaked.shape(); }).message,
            "shape: kernel 'twice' is no longer being traced: its values and "
            "refs cannot be used after the trace ended");
  // A tracer driven directly, as language bindings do, in its own context.
  pk::Tracer tracer("direct", vectors(2, pk::f64, {"x", "y"}), {},
                    pk::TraceContext::Own);
  tracer.refs()[1][all] = pk::exp(tracer.refs()[0][all]);
  pk::Module direct = tracer.finish();
  EXPECT_NE(pk::irOf(direct).getContext(), &pk::defaultContext());
  EXPECT_NE(pk::listing(direct).find("EXP(v0)"), std::string::npos)
      << pk::listing(direct);
}

TEST(TraceErrors, KernelThatThrowsLeavesNothingBehind) {
  pk::Value escaped;
  EXPECT_THROW(pk::trace(
                   "raises",
                   [&](Ref a, Ref o) {
                     escaped = a[all] + 1;
                     throw std::runtime_error("user error midway");
                   },
                   vectors(3, pk::f32, {"a", "o"})),
               std::runtime_error);
  EXPECT_EQ(failureOf([&] { (void)escaped.dtype(); }).message,
            "dtype: kernel 'raises' is no longer being traced: its values and "
            "refs cannot be used after the trace ended");
  // Tracing again afterwards works as usual.
  auto module = pk::trace(
      "raises", [](Ref a, Ref o) { o[all] = a[all] + 1; },
      vectors(3, pk::f32, {"a", "o"}));
  EXPECT_TRUE(module);
}

TEST(Trace, ConstantArraysAreStronglyTyped) {
  std::vector<uint8_t> bytes(3 * sizeof(int16_t));
  int16_t values[3] = {1, -2, 300};
  std::memcpy(bytes.data(), values, bytes.size());
  auto module = pk::trace("weights",
                          [&](Ref x, Ref o) {
                            o[all] = x[all] * pk::Operand::fromArray(
                                                  pk::i16, {3}, bytes,
                                                  pk::SourceLoc::current());
                          },
                          {{"x", {2, 3}, pk::i8}, {"o", {2, 3}, pk::i16}});
  EXPECT_EQ(pk::listing(module), R"(kernel weights(x, o):
  v0<2,3:int8> = LOAD [x]()
  v1<2,3:int16> = CAST(v0)
  v2<3:int16> = CONST([1, -2, 300])
  v3<2,3:int16> = BROADCAST(v2)
  v4<2,3:int16> = MUL(v1, v3)
  STORE [o](v4))");
}

TEST(TraceErrors, StoresFollowSameKindCasting) {
  pk::TraceError::Category category = pk::TraceError::Category::Value;
  std::string message;
  try {
    pk::trace("bad", [](Ref x, Ref o) { o[all] = x[all] * 0.5; },
              {{"x", {3}, pk::i32}, {"o", {3}, pk::i32}});
  } catch (const pk::TraceError &error) {
    message = error.message();
    category = error.category();
  }
  EXPECT_EQ(message, "store to 'o': cannot store float64 values into ref 'o' "
                     "of dtype int32 (NumPy's same_kind casting); convert "
                     "explicitly with cast");
  EXPECT_EQ(category, pk::TraceError::Category::Type);
}

TEST(TraceErrors, SignatureProblems) {
  EXPECT_EQ(failureOf([] {
              pk::trace(
                  "bad", [](Ref a, Ref o) { o[all] = a[all]; },
                  vectors(3, pk::f32, {"a", "b", "o"}));
            }).message,
            "trace: kernel 'bad' takes 2 refs but the signature describes 3 "
            "arrays");
  EXPECT_EQ(failureOf([] {
              pk::trace(
                  "bad", [](Ref a, Ref o) { o[all] = a[all]; },
                  vectors(3, pk::f32, {"x", "x"}));
            }).message,
            "trace: two parameters are named 'x'");
  EXPECT_EQ(failureOf([] {
              pk::trace("bad", [](Ref a, Ref o) { o[all] = a[all]; },
                        {{"a", {2, -1}, pk::f32}, {"o", {2}, pk::f32}});
            }).message,
            "trace: parameter 'a' has a negative dimension in shape (2, -1)");
  EXPECT_EQ(failureOf([] {
              pk::trace(
                  "bad", [](Ref a, Ref o) { o[all] = a[all]; },
                  {{"a", {int64_t(1) << 62, 4}, pk::f32}, {"o", {2}, pk::f32}});
            }).message,
            "trace: parameter 'a' of shape (4611686018427387904, 4) and dtype "
            "float32 is too large: its size in bytes overflows int64");
}

TEST(TraceErrors, EmptyValue) {
  EXPECT_EQ(failureOf([] {
              pk::trace(
                  "bad",
                  [](Ref a, Ref o) {
                    pk::Value nothing;
                    o[all] = a[all] + nothing;
                  },
                  vectors(3, pk::f32, {"a", "o"}));
            }).message,
            "add: use of an empty pk::Value (default-constructed)");
}

// NumPy's reductions: no axes reduce nothing (the value, in the reduction's
// dtype), 0-d values take axis -1 (not for mean), an empty max is an error.
TEST(Trace, ReductionsOverNoAxesAndOverZeroD) {
  auto module = pk::trace("r",
                          [](Ref a, Ref s, Ref z, Ref m) {
                            s[all] = pk::sum(a[all], pk::Axes::none());
                            m[all] = pk::amax(z[all], -1, /*keepdims=*/true) +
                                     pk::sum(z[all]);
                          },
                          {{"a", {3}, pk::i32},
                           {"s", {3}, pk::i64},
                           {"z", {}, pk::f32},
                           {"m", {}, pk::f32}});
  EXPECT_EQ(pk::listing(module), R"(kernel r(a, s, z, m):
  v0<3:int32> = LOAD [a]()
  v1<3:int64> = CAST(v0)
  STORE [s](v1)
  v2<:float32> = LOAD [z]()
  v3<:float32> = LOAD [z]()
  v4<:float32> = ADD(v2, v3)
  STORE [m](v4))");
  Failure empty = failureOf([] {
    pk::trace("bad", [](Ref a, Ref o) { o[all] = pk::amax(a[all], 0); },
              {{"a", {0, 3}, pk::f32}, {"o", {3}, pk::f32}});
  });
  EXPECT_EQ(empty.message, "max: zero-size array to reduction operation "
                           "maximum which has no identity");
  Failure axis = failureOf([] {
    pk::trace("bad", [](Ref a, Ref o) { o[all] = pk::mean(a[all], -1); },
              {{"a", {}, pk::f32}, {"o", {}, pk::f32}});
  });
  EXPECT_EQ(axis.message,
            "mean: axis -1 is out of bounds for array of dimension 0");
}

// NEP 50 for two C++ numbers: bool < int64 < float64.
TEST(Trace, WhereOfTwoNumbersPromotesLikeNumPy) {
  auto module = pk::trace(
      "w",
      [](Ref c, Ref o, Ref p) {
        o[all] = pk::where(c[all], 1, 0.5);
        p[all] = pk::where(c[all], 1, 2);
      },
      {{"c", {2}, pk::DType::Bool}, {"o", {2}, pk::f64}, {"p", {2}, pk::i64}});
  EXPECT_EQ(pk::listing(module), R"(kernel w(c, o, p):
  v0<2:bool> = LOAD [c]()
  v1<:float64> = CONST(1.0)
  v2<:float64> = CONST(0.5)
  v3<2:float64> = SELECT(v0, v1, v2)
  STORE [o](v3)
  v4<2:bool> = LOAD [c]()
  v5<:int64> = CONST(1)
  v6<:int64> = CONST(2)
  v7<2:int64> = SELECT(v4, v5, v6)
  STORE [p](v7))");
}

// float16 products accumulate in float32; floor of integers is the value;
// an int8 compared with 1000 compares in int64 (NumPy 2 evaluates it).
TEST(Trace, NumPy2Dtypes) {
  auto module = pk::trace("d",
                          [](Ref a, Ref b, Ref i, Ref o, Ref f, Ref l) {
                            o[all] = pk::matmul(a[all], b[all]);
                            f[all] = pk::floor(i[all]);
                            l[all] = i[all] < 1000;
                          },
                          {{"a", {1, 2}, pk::f16},
                           {"b", {2, 1}, pk::f16},
                           {"i", {2}, pk::i8},
                           {"o", {1, 1}, pk::f16},
                           {"f", {2}, pk::i8},
                           {"l", {2}, pk::DType::Bool}});
  std::string listing = pk::listing(module);
  EXPECT_NE(listing.find("v4<1,1:float32> = MATMUL(v2, v3)"), std::string::npos)
      << listing;
  EXPECT_EQ(listing.find("FLOOR"), std::string::npos) << listing;
  EXPECT_NE(listing.find("= LT(v"), std::string::npos);
  EXPECT_NE(listing.find("<:int64> = CONST(1000)"), std::string::npos)
      << listing;
}

// NumPy's assignment drops leading unit dimensions of the value; one
// element takes a scalar only.
TEST(Trace, StoresDropLeadingUnitDimensions) {
  auto module = pk::trace("s", [](Ref a, Ref o) { o[all] = a[all]; },
                          {{"a", {1, 1, 3}, pk::f32}, {"o", {3}, pk::f32}});
  EXPECT_TRUE(mlir::succeeded(mlir::verify(pk::irOf(module))));
  Failure element = failureOf([] {
    pk::trace("bad", [](Ref a, Ref o) { o[1] = a[all]; },
              {{"a", {1}, pk::f32}, {"o", {3}, pk::f32}});
  });
  EXPECT_EQ(element.message,
            "store to 'o': setting an array element with a sequence: ref "
            "'o'[...] with an integer per dimension is one element, but the "
            "value has shape (1,)");
}

// `ref[pk::all] = v` stores; a named copy of `ref[pk::all]` is a value that
// cannot be assigned to by accident.
static_assert(std::is_assignable_v<pk::RefElement &&, pk::Value>);
static_assert(std::is_assignable_v<pk::RefElement &&, pk::RefElement>);
static_assert(std::is_assignable_v<pk::RefElement &&, double>);
static_assert(!std::is_assignable_v<pk::RefElement &, pk::Value>);
static_assert(!std::is_assignable_v<pk::RefElement &, pk::RefElement>);

} // namespace

// Integers beyond int64 (uint64_t above INT64_MAX, Python ints of 2^63 and
// more): converted to a float dtype, compared with integers by their sign,
// an overflow error as an integer; an integer power's exponent must fit
// the base's dtype, and a 0-d array takes axis 0 only as an integer.
TEST(Trace, IntegersBeyondInt64) {
  const uint64_t huge = uint64_t(1) << 63;
  auto module = pk::trace("big",
                          [&](Ref f, Ref i, Ref o, Ref c) {
                            o[all] = f[all] + huge;
                            c[all] = i[all] < huge;
                          },
                          {{"f", {2}, pk::f32},
                           {"i", {2}, pk::i8},
                           {"o", {2}, pk::f32},
                           {"c", {2}, pk::DType::Bool}});
  EXPECT_EQ(pk::listing(module), R"(kernel big(f, i, o, c):
  v0<2:float32> = LOAD [f]()
  v1<:float32> = CONST(9.223372e+18)
  v2<2:float32> = ADD(v0, v1)
  STORE [o](v2)
  v3<:bool> = CONST(true)
  STORE [c](v3))");
  // np.where converts integers below 2^64 as C does: the low bits.
  auto wrapped = pk::trace(
      "wrap",
      [&](Ref a, Ref o) { o[all] = pk::where(a[all], a[all], huge + 255); },
      vectors(2, pk::i8, {"a", "o"}));
  EXPECT_NE(pk::listing(wrapped).find("CONST(-1)"), std::string::npos)
      << pk::listing(wrapped);
  Failure integer = failureOf([&] {
    pk::trace(
        "bad", [&](Ref a, Ref o) { o[all] = a[all] + huge; },
        vectors(2, pk::i64, {"a", "o"}));
  });
  EXPECT_EQ(integer.message,
            "add: integer 9223372036854775808 does not fit in int64 "
            "(NumPy raises OverflowError: Python int too large to convert to "
            "C long)");
  Failure power = failureOf([] {
    pk::trace(
        "bad", [](Ref a, Ref o) { o[all] = pk::pow(a[all], 128); },
        vectors(2, pk::i8, {"a", "o"}));
  });
  EXPECT_EQ(power.message, "power: Python integer 128 out of bounds for int8 "
                           "(NumPy raises OverflowError)");
  Failure axis = failureOf([] {
    pk::trace("bad",
              [](Ref a, Ref o) { o[all] = pk::sum(a[all], pk::Axes({0})); },
              {{"a", {}, pk::f32}, {"o", {}, pk::f32}});
  });
  EXPECT_EQ(axis.message,
            "sum: axis 0 is out of bounds for array of dimension 0");
}
