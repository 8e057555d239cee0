//===- KernelTest.cpp - JIT, guard cache, semantics and errors ------------===//

#include "picokernel/Kernel/Kernel.h"
#include "picokernel/Frontend/TraceIR.h"
#include "picokernel/Runtime/CompiledKernel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include <unistd.h>

namespace {

using pk::all;
using pk::ArrayView;
using pk::Ref;

template <typename T> pk::DType dtypeOf();
template <> pk::DType dtypeOf<float>() { return pk::f32; }
template <> pk::DType dtypeOf<double>() { return pk::f64; }
template <> pk::DType dtypeOf<int32_t>() { return pk::i32; }
template <> pk::DType dtypeOf<int64_t>() { return pk::i64; }
template <> pk::DType dtypeOf<int8_t>() { return pk::i8; }
template <> pk::DType dtypeOf<bool>() { return pk::boolean; }

/// A row-major array owning its data, viewable as a pk::ArrayView.
template <typename T> struct Array {
  // std::vector<bool> packs bits; NumPy's bool is one byte.
  using Storage = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

  Array(pk::Shape shape, Storage fill = Storage()) : shape(std::move(shape)) {
    int64_t n = 1;
    for (int64_t d : this->shape)
      n *= d;
    data.assign(size_t(n), fill);
  }
  ArrayView view() { return {data.data(), dtypeOf<T>(), shape}; }
  pk::Shape shape;
  std::vector<Storage> data;
};

template <typename T> Array<T> random(pk::Shape shape, unsigned seed) {
  Array<T> array(std::move(shape));
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(-20, 20);
  for (T &x : array.data)
    x = T(dist(gen)) / T(4);
  return array;
}

pk::Kernel fmaKernel(pk::KernelOptions options = {}) {
  return pk::Kernel(
      "fma",
      [](Ref a, Ref b, Ref c, Ref o) { o[all] = a[all] * b[all] + c[all]; },
      {"a", "b", "c", "o"}, options);
}

TEST(Kernel, SeedFmaMatchesAPlainLoop) {
  pk::Kernel fma = fmaKernel();
  for (int64_t n : {1, 4, 1000, 4099}) {
    auto a = random<float>({n}, 1), b = random<float>({n}, 2),
         c = random<float>({n}, 3);
    Array<float> o({n});
    fma({a.view(), b.view(), c.view(), o.view()});
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(o.data[i], a.data[i] * b.data[i] + c.data[i]) << i;
  }
}

TEST(Kernel, CacheHitsAndMissesFollowShapesAndDTypes) {
  pk::Kernel fma = fmaKernel();
  Array<float> a({8}, 1), b({8}, 2), c({8}, 3), o({8});
  fma({a.view(), b.view(), c.view(), o.view()});
  fma({a.view(), b.view(), c.view(), o.view()});
  EXPECT_EQ(fma.stats().misses, 1u);
  EXPECT_EQ(fma.stats().hits, 1u);
  EXPECT_EQ(o.data[0], 5.0f);

  Array<float> a2({16}, 1), b2({16}, 2), c2({16}, 3), o2({16});
  fma({a2.view(), b2.view(), c2.view(), o2.view()});
  Array<double> ad({8}, 1), bd({8}, 2), cd({8}, 3), od({8});
  fma({ad.view(), bd.view(), cd.view(), od.view()});
  pk::CacheStats stats = fma.stats();
  EXPECT_EQ(stats.misses, 3u);
  EXPECT_EQ(stats.entries, 3u);
  EXPECT_GT(stats.pipelineSeconds, 0.0);
  EXPECT_GT(stats.codegenSeconds, 0.0);
  EXPECT_EQ(od.data[7], 5.0);
}

TEST(Kernel, RunIfCompiledNeverCompiles) {
  pk::Kernel fma = fmaKernel();
  Array<float> a({8}, 1), b({8}, 2), c({8}, 3), o({8}, 7);
  std::vector<pk::ArrayView> views = {a.view(), b.view(), c.view(), o.view()};
  EXPECT_FALSE(fma.runIfCompiled(views));
  EXPECT_EQ(fma.stats().misses, 0u);
  EXPECT_EQ(o.data[0], 7.0f); // not run
  fma(views);
  o.data[0] = 7.0f;
  EXPECT_TRUE(fma.runIfCompiled(views));
  EXPECT_EQ(o.data[0], 5.0f);
  EXPECT_EQ(fma.stats().misses, 1u);
  // Other shapes are misses again; argument errors still throw.
  Array<float> a2({9}, 1), b2({9}, 2), c2({9}, 3), o2({9});
  std::vector<pk::ArrayView> others = {a2.view(), b2.view(), c2.view(),
                                       o2.view()};
  EXPECT_FALSE(fma.runIfCompiled(others));
  std::vector<pk::ArrayView> tooFew = {a.view(), b.view(), c.view()};
  EXPECT_THROW(fma.runIfCompiled(tooFew), pk::ArgumentError);
}

TEST(Kernel, RecompilesAreLoggedWithTheirReason) {
  pk::Kernel fma = fmaKernel();
  Array<float> a({8}, 1), b({8}, 2), c({8}, 3), o({8});
  Array<float> a2({5}, 1), b2({5}, 2), c2({5}, 3), o2({5});
  Array<double> od({5});
  setenv("PK_LOG_COMPILES", "1", 1);
  testing::internal::CaptureStderr();
  fma({a.view(), b.view(), c.view(), o.view()});
  fma({a2.view(), b2.view(), c2.view(), o2.view()});
  fma({a2.view(), b2.view(), c2.view(), od.view()});
  std::string log = testing::internal::GetCapturedStderr();
  unsetenv("PK_LOG_COMPILES");
  EXPECT_NE(log.find("picokernel: compiling kernel 'fma' for (a: (8,) float32, "
                     "b: (8,) float32, c: (8,) float32, o: (8,) float32): "
                     "first compile"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("shape of 'a' (8,) -> (5,); shape of 'b' (8,) -> (5,); "
                     "shape of 'c' (8,) -> (5,); shape of 'o' (8,) -> (5,)"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("dtype of 'o' float32 -> float64"), std::string::npos)
      << log;
}

TEST(Kernel, BroadcastingCastsAndScalars) {
  pk::Kernel k("affine", [](Ref x, Ref row, Ref i, Ref o) {
    o[all] = (x[all] + row[all]) * 0.5 - i[all];
  });
  auto x = random<double>({3, 4}, 5), row = random<double>({4}, 6);
  Array<int32_t> i({3, 1});
  std::iota(i.data.begin(), i.data.end(), 1);
  Array<double> o({3, 4});
  k({x.view(), row.view(), i.view(), o.view()});
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c)
      ASSERT_EQ(o.data[r * 4 + c],
                (x.data[r * 4 + c] + row.data[c]) * 0.5 - double(r + 1));
}

TEST(Kernel, IntegersWrapAndDivideTrulyLikeNumPy) {
  pk::Kernel k("ints", [](Ref a, Ref b, Ref sum, Ref ratio) {
    sum[all] = a[all] + b[all];
    ratio[all] = a[all] / b[all];
  });
  Array<int8_t> a({3}), b({3}), sum({3});
  a.data = {127, -128, 7};
  b.data = {1, -1, 2};
  Array<double> ratio({3});
  k({a.view(), b.view(), sum.view(), ratio.view()});
  EXPECT_EQ(sum.data, (std::vector<int8_t>{-128, 127, 9}));
  EXPECT_EQ(ratio.data, (std::vector<double>{127.0, 128.0, 3.5}));
}

TEST(Kernel, BooleanLogicAndCastsToBool) {
  pk::Kernel k("logic", [](Ref p, Ref q, Ref x, Ref either, Ref nonzero) {
    either[all] = p[all] + q[all];
    nonzero[all] = pk::cast(x[all], pk::boolean);
  });
  Array<bool> p({4}), q({4}), either({4}), nonzero({4});
  p.data = {0, 1, 0, 1};
  q.data = {0, 0, 1, 1};
  Array<float> x({4});
  x.data = {0.0f, -0.0f, 0.5f, NAN};
  k({p.view(), q.view(), x.view(), either.view(), nonzero.view()});
  EXPECT_EQ(either.data, (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(nonzero.data, (std::vector<uint8_t>{0, 0, 1, 1}));
}

TEST(Kernel, ComparisonsAndWhereFollowNumPy) {
  pk::Kernel k("choose", [](Ref x, Ref y, Ref o, Ref m) {
    pk::Value a = x[all], b = y[all];
    o[all] = pk::where(a > b, a, 2 * b) + pk::maximum(a, b) -
             pk::minimum(a, 0.5) + pk::abs(a);
    m[all] = (a <= b) + (a != b);
  });
  Array<double> x({5}), y({5}), o({5});
  x.data = {1.0, -2.0, NAN, 0.5, -0.0};
  y.data = {0.5, -2.0, 1.0, NAN, 0.0};
  Array<bool> m({5});
  k({x.view(), y.view(), o.view(), m.view()});
  for (int i = 0; i < 5; ++i) {
    double a = x.data[i], b = y.data[i];
    double max = std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
    double min = std::isnan(a) ? NAN : std::min(a, 0.5);
    double expected = (a > b ? a : 2 * b) + max - min + std::fabs(a);
    if (std::isnan(expected))
      EXPECT_TRUE(std::isnan(o.data[i])) << i;
    else
      EXPECT_EQ(o.data[i], expected) << i;
    EXPECT_EQ(bool(m.data[i]), (a <= b) || (a != b)) << i;
  }
}

TEST(Kernel, FloorDivisionAndRemainderFollowNumPy) {
  pk::Kernel k("divmod", [](Ref x, Ref y, Ref q, Ref r) {
    q[all] = pk::floorDivide(x[all], y[all]);
    r[all] = x[all] % y[all];
  });
  // Python's rules: rounding towards -inf, the remainder takes the
  // divisor's sign; NumPy's x // 0 == x % 0 == 0 and MIN // -1 == MIN.
  Array<int32_t> x({6}), y({6}), q({6}), r({6});
  x.data = {7, -7, 7, -7, 5, INT32_MIN};
  y.data = {2, 2, -2, -2, 0, -1};
  k({x.view(), y.view(), q.view(), r.view()});
  EXPECT_EQ(q.data, (std::vector<int32_t>{3, -4, -4, 3, 0, INT32_MIN}));
  EXPECT_EQ(r.data, (std::vector<int32_t>{1, 1, -1, -1, 0, 0}));

  Array<double> fx({4}), fy({4}), fq({4}), fr({4});
  fx.data = {7.5, -7.5, 1.0, -1.0};
  fy.data = {2.0, 2.0, 0.0, INFINITY};
  k({fx.view(), fy.view(), fq.view(), fr.view()});
  EXPECT_EQ(fq.data[0], 3.0);
  EXPECT_EQ(fr.data[0], 1.5);
  EXPECT_EQ(fq.data[1], -4.0);
  EXPECT_EQ(fr.data[1], 0.5);
  EXPECT_EQ(fq.data[2], INFINITY);
  EXPECT_TRUE(std::isnan(fr.data[2]));
  EXPECT_EQ(fq.data[3], -1.0);
  EXPECT_EQ(fr.data[3], INFINITY);

  pk::Kernel wrap("wrap", [](Ref x, Ref o) {
    o[all] = x[all];
    o[all] %= 360;
  });
  Array<int32_t> angles({3}), wrapped({3});
  angles.data = {-90, 725, 360};
  wrap({angles.view(), wrapped.view()});
  EXPECT_EQ(wrapped.data, (std::vector<int32_t>{270, 5, 0}));
}

TEST(Kernel, SoftmaxInOneKernel) {
  pk::Kernel softmax("softmax", [](Ref x, Ref o) {
    pk::Value e = pk::exp(x[all] - pk::amax(x[all], {-1}, true));
    o[all] = e / pk::sum(e, {-1}, true);
  });
  auto x = random<double>({3, 5}, 21);
  Array<double> o({3, 5});
  softmax({x.view(), o.view()});
  for (int r = 0; r < 3; ++r) {
    double max = -INFINITY, total = 0;
    for (int c = 0; c < 5; ++c)
      max = std::max(max, x.data[r * 5 + c]);
    for (int c = 0; c < 5; ++c)
      total += std::exp(x.data[r * 5 + c] - max);
    for (int c = 0; c < 5; ++c)
      EXPECT_NEAR(o.data[r * 5 + c], std::exp(x.data[r * 5 + c] - max) / total,
                  1e-15);
  }
}

TEST(Kernel, MatmulShapes) {
  pk::Kernel k("mm", [](Ref a, Ref b, Ref v, Ref bias, Ref o, Ref ov, Ref dot) {
    o[all] = pk::matmul(a[all], b[all]) + bias[all];
    ov[all] = pk::matmul(a[all], v[all]);
    dot[all] = pk::matmul(v[all], v[all]);
  });
  auto a = random<float>({2, 3, 4}, 7), b = random<float>({4, 5}, 8),
       v = random<float>({4}, 9), bias = random<float>({5}, 10);
  Array<float> o({2, 3, 5}), ov({2, 3}), dot({});
  k({a.view(), b.view(), v.view(), bias.view(), o.view(), ov.view(),
     dot.view()});
  for (int batch = 0; batch < 2; ++batch)
    for (int m = 0; m < 3; ++m) {
      float mv = 0;
      for (int kk = 0; kk < 4; ++kk)
        mv += a.data[(batch * 3 + m) * 4 + kk] * v.data[kk];
      ASSERT_FLOAT_EQ(ov.data[batch * 3 + m], mv);
      for (int n = 0; n < 5; ++n) {
        float sum = 0;
        for (int kk = 0; kk < 4; ++kk)
          sum += a.data[(batch * 3 + m) * 4 + kk] * b.data[kk * 5 + n];
        ASSERT_FLOAT_EQ(o.data[(batch * 3 + m) * 5 + n], sum + bias.data[n]);
      }
    }
  float expected = 0;
  for (float x : v.data)
    expected += x * x;
  EXPECT_FLOAT_EQ(dot.data[0], expected);
}

TEST(Kernel, OutputMayBeAnInput) {
  pk::Kernel fma = fmaKernel();
  auto a = random<float>({64}, 11), b = random<float>({64}, 12),
       c = random<float>({64}, 13);
  std::vector<float> expected(64);
  for (int i = 0; i < 64; ++i)
    expected[i] = a.data[i] * b.data[i] + c.data[i];
  fma({a.view(), b.view(), c.view(), a.view()}); // fma(a, b, c, out=a)
  EXPECT_EQ(a.data, expected);

  // A matmul into its own operand reads the operand before writing it.
  pk::Kernel square("square",
                    [](Ref x, Ref o) { o[all] = pk::matmul(x[all], x[all]); });
  Array<double> x({2, 2});
  x.data = {1, 2, 3, 4};
  square({x.view(), x.view()});
  EXPECT_EQ(x.data, (std::vector<double>{7, 10, 15, 22}));
  EXPECT_EQ(square.stats().misses, 1u);
}

TEST(Kernel, EveryStoreCountsAndLaterLoadsSeeIt) {
  pk::Kernel k("twice", [](Ref x, Ref o, Ref p) {
    o[all] = x[all];
    o[all] = o[all] + 1;
    p[all] = o[all] * 10;
    o[all] *= 2;
  });
  Array<int32_t> x({3}), o({3}), p({3});
  x.data = {1, 2, 3};
  k({x.view(), o.view(), p.view()});
  EXPECT_EQ(o.data, (std::vector<int32_t>{4, 6, 8}));
  EXPECT_EQ(p.data, (std::vector<int32_t>{20, 30, 40}));
}

TEST(Kernel, SlicesReadAndWriteParts) {
  using pk::none;
  using pk::slice;
  pk::Kernel k("parts", [](Ref m, Ref o, Ref p) {
    // o[1:3, ::2] = m[0, 3::-1][:2] * 10 + m[1:3, 1::2]  (broadcast row)
    o[{slice(1, 3), slice(none, none, 2)}] =
        m[{0, slice(3, none, -1)}][slice(none, 2)] * 10 +
        m[{slice(1, 3), slice(1, none, 2)}];
    // p[1:] = p[:-1] reads what it overwrites; p[0] = m[2, -1]
    p[slice(1, none)] = p[slice(none, -1)];
    p[0] = m[{2, -1}];
  });
  Array<int32_t> m({3, 4}), o({3, 4}, -1), p({5});
  std::iota(m.data.begin(), m.data.end(), 0); // m[i, j] = 4i + j
  std::iota(p.data.begin(), p.data.end(), 100);
  k({m.view(), o.view(), p.view()});
  // m[0, 3::-1][:2] = (3, 2); m[1:3, 1::2] = ((5, 7), (9, 11)).
  EXPECT_EQ(o.data, (std::vector<int32_t>{-1, -1, -1, -1, //
                                          35, -1, 27, -1, //
                                          39, -1, 31, -1}));
  EXPECT_EQ(p.data, (std::vector<int32_t>{11, 100, 101, 102, 103}));
}

TEST(Kernel, TwoLiveIntermediatesNeverShareStorage) {
  pk::Kernel k("sums", [](Ref a, Ref b, Ref c, Ref d, Ref o) {
    o[all] = (a[all] + b[all]) * (c[all] + d[all]);
  });
  Array<int64_t> a({1}, 1), b({1}, 2), c({1}, 3), d({1}, 4), o({1});
  k({a.view(), b.view(), c.view(), d.view(), o.view()});
  EXPECT_EQ(o.data[0], 21);
}

TEST(Kernel, LargeKernelsRunOnAllCores) {
  pk::KernelOptions options;
  options.compile.parallelThreshold = 1 << 10;
  pk::Kernel fma = fmaKernel(options);
  int64_t n = 100003;
  auto a = random<float>({n}, 14), b = random<float>({n}, 15),
       c = random<float>({n}, 16);
  Array<float> o({n});
  fma({a.view(), b.view(), c.view(), o.view()});
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(o.data[i], a.data[i] * b.data[i] + c.data[i]) << i;

  auto module =
      fma.trace(std::vector<ArrayView>{a.view(), b.view(), c.view(), o.view()});
  auto compiled =
      pk::CompiledKernel::compile(pk::irOf(module), options.compile);
  EXPECT_TRUE(compiled->usesThreads());
  auto small =
      fma.trace(std::vector<ArrayView>{a.view(), b.view(), c.view(), o.view()});
  pk::CompileOptions serial;
  serial.parallelThreshold = 0;
  EXPECT_FALSE(
      pk::CompiledKernel::compile(pk::irOf(small), serial)->usesThreads());
}

// A kernel's modules, for the caller: traced (in the shared context or one
// of their own) and the last compiled one, in a context of its own by
// default; each can be printed and lowered, and an empty one is an error
// to lower.
TEST(Kernel, TracedModulesLiveInTheContextAsked) {
  pk::Kernel fma = fmaKernel();
  EXPECT_FALSE(fma.lastCompiledModule());
  auto a = random<float>({8}, 1), b = random<float>({8}, 2),
       c = random<float>({8}, 3);
  Array<float> o({8});
  std::vector<ArrayView> arrays = {a.view(), b.view(), c.view(), o.view()};
  fma(arrays);

  pk::Module last = fma.lastCompiledModule(pk::TraceContext::Own);
  ASSERT_TRUE(last);
  EXPECT_NE(pk::irOf(last).getContext(), &pk::defaultContext());
  EXPECT_EQ(pk::irOf(fma.lastCompiledModule()).getContext(),
            &pk::defaultContext());
  pk::Module shared = fma.trace(arrays);
  EXPECT_EQ(pk::irOf(shared).getContext(), &pk::defaultContext());
  pk::Module own = fma.trace(arrays, pk::TraceContext::Own);
  EXPECT_NE(pk::irOf(own).getContext(), &pk::defaultContext());
  EXPECT_EQ(pk::printModule(last), pk::printModule(own));

  std::string llvm = pk::lowerToStage(own, "llvm");
  EXPECT_NE(llvm.find("llvm.func"), std::string::npos);
  EXPECT_EQ(pk::lowerToStage(shared, "llvm"), llvm);
  EXPECT_THROW(pk::lowerToStage(pk::Module(), "llvm"), pk::CompileError);
  EXPECT_THROW(pk::lowerToStage(own, "no-such-stage"), pk::CompileError);

  // clearCache forgets the last compile too; a moved-from kernel throws.
  fma.clearCache();
  EXPECT_FALSE(fma.lastCompiledSignature());
  EXPECT_FALSE(fma.lastCompiledModule());
  pk::Kernel moved = std::move(fma);
  EXPECT_TRUE(moved.trace(arrays));
  EXPECT_THROW(fma.lastCompiledModule(), std::logic_error); // NOLINT
  EXPECT_THROW(fma(arrays), std::logic_error);              // NOLINT
}

TEST(Kernel, ZeroSizeArrays) {
  pk::Kernel fma = fmaKernel();
  Array<float> a({0}), b({0}), c({0}), o({0});
  fma({a.view(), b.view(), c.view(), o.view()});
  EXPECT_EQ(fma.stats().misses, 1u);
}

/// Runs `fma` once on random arrays of length n (from seeds); returns how
/// many elements are wrong.
int wrongFmaElements(const pk::Kernel &fma, int64_t n, int seedA, int seedB,
                     int seedC) {
  auto a = random<float>({n}, seedA), b = random<float>({n}, seedB),
       c = random<float>({n}, seedC);
  Array<float> o({n});
  fma({a.view(), b.view(), c.view(), o.view()});
  int wrong = 0;
  for (int64_t i = 0; i < n; ++i)
    wrong += o.data[i] != a.data[i] * b.data[i] + c.data[i];
  return wrong;
}

TEST(Kernel, ConcurrentCallsCompileEachKeyOnce) {
  pk::KernelOptions options;
  options.dynamic = pk::DynamicSizes::Never;
  pk::Kernel fma = fmaKernel(options);
  constexpr int kThreads = 8, kCalls = 40;
  std::vector<int64_t> sizes = {3, 17, 64, 1000};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int call = 0; call < kCalls; ++call)
        wrong += wrongFmaElements(fma, sizes[(t + call) % sizes.size()], t,
                                  call, t + call);
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(wrong.load(), 0);
  pk::CacheStats stats = fma.stats();
  EXPECT_EQ(stats.misses, sizes.size());
  EXPECT_EQ(stats.hits + stats.misses, uint64_t(kThreads * kCalls));
}

TEST(Kernel, DynamicSizesServeEverySizeFromOneCompile) {
  // Always: one compile from the first call, however many threads race.
  pk::KernelOptions options;
  options.dynamic = pk::DynamicSizes::Always;
  pk::Kernel fma = fmaKernel(options);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int64_t n = 2 + t; n < 300; n += 7)
        wrong += wrongFmaElements(fma, n, t, int(n), t + 1);
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(fma.stats().misses, 1u);
  std::optional<pk::Signature> last = fma.lastCompiledSignature();
  ASSERT_TRUE(last);
  EXPECT_EQ((*last)[0].shape, pk::Shape{pk::kDynamicSize});

  // Automatic: static first, dynamic from the second size on; Never: one
  // compile per size.
  for (pk::DynamicSizes policy :
       {pk::DynamicSizes::Automatic, pk::DynamicSizes::Never}) {
    options.dynamic = policy;
    pk::Kernel kernel = fmaKernel(options);
    for (int64_t n : {10, 11, 12, 13})
      EXPECT_EQ(wrongFmaElements(kernel, n, 1, 2, 3), 0);
    EXPECT_EQ(kernel.stats().misses,
              policy == pk::DynamicSizes::Never ? 4u : 2u);
  }
}

TEST(Kernel, FixedSlicesServeEveryLongSizeFromOneCompile) {
  // x[:4] takes the same elements of every x of 4 or more: one variant
  // from 4 on (5, 9, 100, 50), one per shorter size (3, 2), whose answers
  // NumPy's clamping gives.
  using pk::none;
  using pk::slice;
  pk::KernelOptions options;
  options.dynamic = pk::DynamicSizes::Always;
  pk::Kernel head(
      "head", [](Ref x, Ref o) { o[all] = x[slice(none, 4)] * 2; }, {"x", "o"},
      options);
  for (int64_t n : {5, 9, 100, 3, 2, 50}) {
    Array<double> x = random<double>({n}, unsigned(n));
    int64_t kept = std::min<int64_t>(n, 4);
    Array<double> o({kept});
    head({x.view(), o.view()});
    for (int64_t i = 0; i < kept; ++i)
      EXPECT_EQ(o.data[i], x.data[i] * 2) << "n=" << n << " i=" << i;
  }
  EXPECT_EQ(head.stats().misses, 3u);

  // x[-3:] starts 3 before the end of every x of 3 or more.
  pk::Kernel tail(
      "tail", [](Ref x, Ref o) { o[all] = x[slice(-3, none)] + x[-1]; },
      {"x", "o"}, options);
  for (int64_t n : {5, 9, 100, 4, 50}) {
    Array<double> x = random<double>({n}, unsigned(n));
    Array<double> o({3});
    tail({x.view(), o.view()});
    for (int64_t i = 0; i < 3; ++i)
      EXPECT_EQ(o.data[i], x.data[n - 3 + i] + x.data[n - 1])
          << "n=" << n << " i=" << i;
  }
  EXPECT_EQ(tail.stats().misses, 1u);
}

TEST(Kernel, SizesComputedFromOthersServeEverySizeFromOneCompile) {
  // o has one element less than x: one variant computes o's size from x's
  // (x of 3 or more; o of 1 element is a size of its own); an o of
  // another size is an error.
  using pk::none;
  using pk::slice;
  pk::KernelOptions options;
  options.dynamic = pk::DynamicSizes::Always;
  pk::Kernel diff(
      "diff",
      [](Ref x, Ref o) { o[all] = x[slice(1, none)] - x[slice(none, -1)]; },
      {"x", "o"}, options);
  for (int64_t n : {5, 9, 100, 2, 50}) {
    Array<double> x = random<double>({n}, unsigned(n));
    Array<double> o({n - 1});
    diff({x.view(), o.view()});
    for (int64_t i = 0; i + 1 < n; ++i)
      EXPECT_EQ(o.data[i], x.data[i + 1] - x.data[i]) << "n=" << n;
  }
  EXPECT_EQ(diff.stats().misses, 2u);
  Array<double> x = random<double>({10}, 1u), o({10});
  EXPECT_THROW(diff({x.view(), o.view()}), std::exception);
}

TEST(Kernel, NegativeParallelThresholdIsRejected) {
  pk::KernelOptions options;
  options.compile.parallelThreshold = -1;
  EXPECT_THROW(fmaKernel(options), std::invalid_argument);
  options.compile.parallelThreshold = 0; // always serial
  EXPECT_EQ(wrongFmaElements(fmaKernel(options), 100000, 1, 2, 3), 0);
}

TEST(Kernel, DynamicMatmulServesEverySizeFromOneCompile) {
  // Products too small to pack, packed ones whose tiles divide C and ones
  // they pad, with a consumer: one compile, exact sums (quarters of small
  // integers).
  pk::KernelOptions options;
  options.dynamic = pk::DynamicSizes::Always;
  pk::Kernel k(
      "matmul_bias",
      [](Ref a, Ref b, Ref bias, Ref o) {
        o[all] = pk::matmul(a[all], b[all]) + bias[all];
      },
      {"a", "b", "bias", "o"}, options);
  struct Sizes {
    int64_t m, k, n;
  };
  for (auto [m, kk, n] : {Sizes{5, 3, 7}, Sizes{64, 40, 96}, Sizes{70, 33, 50},
                          Sizes{9, 4, 17}, Sizes{128, 300, 64}}) {
    auto a = random<double>({m, kk}, unsigned(m)),
         b = random<double>({kk, n}, unsigned(n)),
         bias = random<double>({n}, unsigned(kk));
    Array<double> o({m, n});
    k({a.view(), b.view(), bias.view(), o.view()});
    int wrong = 0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = bias.data[j];
        for (int64_t l = 0; l < kk; ++l)
          sum += a.data[i * kk + l] * b.data[l * n + j];
        wrong += o.data[i * n + j] != sum;
      }
    EXPECT_EQ(wrong, 0) << m << "x" << kk << " @ " << kk << "x" << n;
  }
  EXPECT_EQ(k.stats().misses, 1u);
}

TEST(Kernel, ConcurrentCallsOfSeveralKernelsAndShapes) {
  using pk::none;
  using pk::slice;
  // Three kernels of different kinds, shared by 8 threads that call them on
  // mixed shapes: every result right, every (kernel, shape) compiled at
  // most once, plus one kernel for every size.
  pk::Kernel fma = fmaKernel();
  pk::Kernel rowSums(
      "row_sums", [](Ref x, Ref o) { o[all] = pk::sum(x[all] * 2.0, {-1}); });
  pk::Kernel stencil("stencil", [](Ref x, Ref o) {
    o[slice(1, -1)] = x[slice(2, none)] - x[slice(none, -2)];
  });
  constexpr int kThreads = 8, kCalls = 30;
  const std::vector<int64_t> sizes = {3, 40, 1000, 40000};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int call = 0; call < kCalls; ++call) {
        int64_t n = sizes[(t * 7 + call) % sizes.size()];
        switch ((t + call) % 3) {
        case 0: {
          auto a = random<float>({n}, t), b = random<float>({n}, call),
               c = random<float>({n}, t + call);
          Array<float> o({n});
          fma({a.view(), b.view(), c.view(), o.view()});
          for (int64_t i = 0; i < n; ++i)
            wrong += o.data[i] != a.data[i] * b.data[i] + c.data[i];
          break;
        }
        case 1: {
          auto x = random<double>({4, n}, t);
          Array<double> o({4});
          rowSums({x.view(), o.view()});
          for (int64_t r = 0; r < 4; ++r) {
            double sum = 0; // quarters of small integers: exact sums
            for (int64_t i = 0; i < n; ++i)
              sum += x.data[r * n + i] * 2.0;
            wrong += o.data[r] != sum;
          }
          break;
        }
        default: {
          Array<int32_t> x({n}), o({n}, -1);
          std::iota(x.data.begin(), x.data.end(), t);
          stencil({x.view(), o.view()});
          for (int64_t i = 0; i < n; ++i)
            wrong += o.data[i] != (i == 0 || i == n - 1 ? -1 : 2);
        }
        }
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(wrong.load(), 0);
  for (const pk::Kernel *kernel : {&fma, &rowSums, &stencil}) {
    pk::CacheStats stats = kernel->stats();
    // Each shape compiled at most once (racing first calls may each get a
    // static kernel) and one dynamic variant.
    EXPECT_LE(stats.misses, sizes.size() + 1) << kernel->name();
    EXPECT_EQ(stats.misses, stats.entries) << kernel->name();
  }
  EXPECT_EQ(fma.stats().hits + fma.stats().misses + rowSums.stats().hits +
                rowSums.stats().misses + stencil.stats().hits +
                stencil.stats().misses,
            uint64_t(kThreads * kCalls));
}

/// Resident memory of this process, in MiB.
double residentMiB() {
  std::ifstream statm("/proc/self/statm");
  long total = 0, resident = 0;
  statm >> total >> resident;
  return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

TEST(Kernel, CompileEvictCyclesKeepMemoryBounded) {
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "ASan's quarantine keeps freed memory resident; "
                  "LeakSanitizer checks this build for leaks instead";
#endif
#endif
  pk::KernelOptions options;
  options.maxCacheEntries = 2;
  options.dynamic = pk::DynamicSizes::Never; // a compile per size
  pk::Kernel fma = fmaKernel(options);
  auto cycle = [&](int64_t n) {
    Array<float> a({n}, 1), b({n}, 2), c({n}, 3), o({n});
    fma({a.view(), b.view(), c.view(), o.view()});
    ASSERT_EQ(o.data[0], 5.0f);
  };
  for (int64_t n = 1; n <= 40; ++n) // warm up allocators and caches
    cycle(n);
  double before = residentMiB();
  for (int64_t n = 41; n <= 240; ++n)
    cycle(n);
  double growth = residentMiB() - before;
  EXPECT_EQ(fma.stats().evictions, 238u);
  // A leaked JIT'd kernel costs well over 100 KiB: 200 of them would show.
  EXPECT_LT(growth, 16.0) << "RSS grew " << growth << " MiB over 200 cycles";
}

TEST(Kernel, CacheIsBoundedLeastRecentlyUsedFirst) {
  pk::KernelOptions options;
  options.maxCacheEntries = 2;
  options.dynamic = pk::DynamicSizes::Never; // a compile per size
  pk::Kernel fma = fmaKernel(options);
  auto run = [&](int64_t n) {
    Array<float> a({n}, 1), b({n}, 2), c({n}, 3), o({n});
    fma({a.view(), b.view(), c.view(), o.view()});
    ASSERT_EQ(o.data.empty() ? 5.0f : o.data[0], 5.0f);
  };
  run(1);
  run(2);
  run(1); // 1 is now more recent than 2
  run(3); // evicts 2
  run(1); // still cached
  EXPECT_EQ(fma.stats().misses, 3u);
  EXPECT_EQ(fma.stats().evictions, 1u);
  EXPECT_EQ(fma.stats().entries, 2u);
  run(2); // compiled again
  EXPECT_EQ(fma.stats().misses, 4u);
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

template <typename E> std::string errorOf(const std::function<void()> &body) {
  try {
    body();
  } catch (const E &error) {
    return error.what();
  }
  return "";
}

TEST(KernelErrors, WrongNumberOfArrays) {
  pk::Kernel fma = fmaKernel();
  Array<float> a({4});
  EXPECT_EQ(errorOf<pk::ArgumentError>([&] { fma({a.view(), a.view()}); }),
            "kernel 'fma' takes 4 arrays, got 2");
}

TEST(KernelErrors, NonContiguousArrays) {
  pk::Kernel fma = fmaKernel();
  Array<float> a({4, 4}), o({4, 2});
  std::vector<int64_t> shape = {4, 2}, strides = {4, 2};
  ArrayView every_other{a.data.data(), pk::f32, shape, strides};
  EXPECT_EQ(errorOf<pk::ArgumentError>(
                [&] { fma({every_other, o.view(), o.view(), o.view()}); }),
            "argument 'a' is not C-contiguous (strides (4, 2) for shape (4, "
            "2)); the CPU backend runs on contiguous arrays");
}

TEST(KernelErrors, PartialOverlapWithTheOutput) {
  pk::Kernel copy("shift", [](Ref x, Ref o) { o[all] = x[all] + 1; });
  Array<float> buffer({9});
  std::vector<int64_t> shape = {8};
  ArrayView x{buffer.data.data(), pk::f32, shape};
  ArrayView o{buffer.data.data() + 1, pk::f32, shape};
  EXPECT_EQ(errorOf<pk::OverlapError>([&] { copy({x, o}); }),
            "arguments 'arg0' and 'arg1' overlap in memory without being the "
            "same array, and kernel 'shift' writes to one of them; pass "
            "disjoint arrays or the same array twice");
}

TEST(KernelErrors, ReadOnlyArraysAreNeverWritten) {
  pk::Kernel fma = fmaKernel();
  Array<float> a({4}, 1), o({4});
  ArrayView constant = a.view();
  constant.readOnly = true;
  fma({constant, constant, constant, o.view()}); // reading is fine
  EXPECT_EQ(o.data[0], 2.0f);
  ArrayView output = o.view();
  output.readOnly = true;
  EXPECT_EQ(errorOf<pk::ArgumentError>(
                [&] { fma({a.view(), a.view(), a.view(), output}); }),
            "argument 'o' is read-only, but kernel 'fma' writes to it");
  EXPECT_EQ(fma.writtenArguments(
                std::vector<ArrayView>{a.view(), a.view(), a.view(), o.view()}),
            (std::vector<bool>{false, false, false, true}));
  // The output given as an input too: that argument is written.
  EXPECT_EQ(fma.writtenArguments(
                std::vector<ArrayView>{o.view(), a.view(), a.view(), o.view()}),
            (std::vector<bool>{true, false, false, true}));
}

TEST(KernelErrors, TraceErrorsReachTheCaller) {
  pk::Kernel bad("bad", [](Ref a, Ref o) { o[all] = a[all]; });
  Array<float> a({2, 3}), o({3});
  EXPECT_NE(errorOf<pk::TraceError>([&] { bad({a.view(), o.view()}); })
                .find("store to 'arg1': a value of shape (2, 3) cannot be "
                      "stored into ref 'arg1' of shape (3,)"),
            std::string::npos);
  // Nothing was cached; the next call with good shapes works.
  Array<float> o2({2, 3});
  bad({a.view(), o2.view()});
  EXPECT_EQ(bad.stats().entries, 1u);
}

TEST(KernelErrors, NullDataAndNegativeShapes) {
  pk::Kernel fma = fmaKernel();
  std::vector<int64_t> shape = {4}, negative = {-1};
  Array<float> a({4});
  ArrayView null{nullptr, pk::f32, shape};
  EXPECT_EQ(errorOf<pk::ArgumentError>(
                [&] { fma({null, a.view(), a.view(), a.view()}); }),
            "argument 'a' has no data (null pointer)");
  ArrayView bad{a.data.data(), pk::f32, negative};
  EXPECT_EQ(errorOf<pk::ArgumentError>(
                [&] { fma({a.view(), bad, a.view(), a.view()}); }),
            "argument 'b' has shape (-1,) with a negative dimension");
}

TEST(KernelErrors, ShapesWhoseSizeOverflows) {
  pk::Kernel fma = fmaKernel();
  Array<float> a({4});
  // 2^32 * 2^32 elements wrap to exactly 0 in 64 bits: still not empty.
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{int64_t(1) << 32, int64_t(1) << 32},
        std::vector<int64_t>{int64_t(1) << 62},
        std::vector<int64_t>{3, INT64_MAX}}) {
    ArrayView huge{a.data.data(), pk::f32, shape};
    std::string message =
        errorOf<pk::ArgumentError>([&] { fma({huge, huge, huge, huge}); });
    EXPECT_NE(message.find("whose size in bytes does not fit in 64 bits"),
              std::string::npos)
        << message;
  }
  std::vector<int64_t> tooManyDims(33, 1);
  ArrayView deep{a.data.data(), pk::f32, tooManyDims};
  EXPECT_EQ(errorOf<pk::ArgumentError>(
                [&] { fma({deep, a.view(), a.view(), a.view()}); }),
            "argument 'a' has 33 dimensions; at most 32 are supported");
  // A zero dimension empties the array, whatever the others are.
  std::vector<int64_t> empty = {int64_t(1) << 20, 0, int64_t(1) << 40};
  ArrayView none{nullptr, pk::f32, empty};
  fma({none, none, none, none});
}

} // namespace

TEST(Kernel, IntegerPowersWrapLikeNumPy) {
  pk::Kernel cube("cube", [](Ref x, Ref o) { o[all] = pk::pow(x[all], 3); });
  Array<int8_t> x({4}), o({4});
  x.data = {-7, 2, 5, 127};
  cube({x.view(), o.view()});
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(o.data[i], int8_t(x.data[i] * x.data[i] * x.data[i])) << i;

  pk::Kernel negative("negative",
                      [](Ref x, Ref o) { o[all] = pk::pow(x[all], -1); });
  EXPECT_NE(errorOf<pk::TraceError>([&] {
              negative({x.view(), o.view()});
            }).find("integers to negative integer powers are not allowed"),
            std::string::npos);
}
