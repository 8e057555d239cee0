//===- VulkanTest.cpp - kernels on a Vulkan device (lavapipe in CI) -------===//

#include "picokernel/Kernel/Kernel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace {

using pk::all;
using pk::ArrayView;
using pk::Ref;

pk::KernelOptions onVulkan() {
  pk::KernelOptions options;
  options.backend = pk::Backend::Vulkan;
  return options;
}

class Vulkan : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why;
    if (!pk::vulkanAvailable(&why))
      GTEST_SKIP() << "no Vulkan device: " << why;
  }
};

std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(-40, 40);
  std::vector<float> values(n);
  for (float &x : values)
    x = float(dist(gen)) / 8.0f;
  return values;
}

// A build without the Vulkan runtime (PK_ENABLE_VULKAN=OFF) says so when a
// kernel asks for it, at the call, as a VulkanError naming the option.
TEST(VulkanNotBuilt, BackendVulkanRaisesAClearError) {
  if (PK_VULKAN_BUILT)
    GTEST_SKIP() << "this build has the Vulkan runtime";
  std::string why;
  EXPECT_FALSE(pk::vulkanAvailable(&why));
  EXPECT_NE(why.find("PK_ENABLE_VULKAN=OFF"), std::string::npos) << why;
  pk::Kernel gpu(
      "copy", [](Ref x, Ref o) { o[all] = x[all] + 1.0f; }, {"x", "o"},
      onVulkan());
  std::vector<float> x(8, 1.0f), o(8, 0.0f);
  std::vector<int64_t> shape = {8};
  try {
    gpu({{x.data(), pk::f32, shape}, {o.data(), pk::f32, shape}});
    FAIL() << "a Vulkan kernel ran in a build without the Vulkan runtime";
  } catch (const pk::VulkanError &error) {
    EXPECT_NE(std::string(error.what()).find("PK_ENABLE_VULKAN=OFF"),
              std::string::npos)
        << error.what();
  }
  EXPECT_EQ(o, std::vector<float>(8, 0.0f));
}

TEST_F(Vulkan, SeedFmaMatchesTheCpu) {
  pk::Kernel gpu(
      "fma",
      [](Ref a, Ref b, Ref c, Ref o) { o[all] = a[all] * b[all] + c[all]; },
      {"a", "b", "c", "o"}, onVulkan());
  for (int64_t n : {4, 1000, 100003}) {
    auto a = randomFloats(n, 1), b = randomFloats(n, 2), c = randomFloats(n, 3);
    std::vector<float> o(n);
    std::vector<int64_t> shape = {n};
    gpu({{a.data(), pk::f32, shape},
         {b.data(), pk::f32, shape},
         {c.data(), pk::f32, shape},
         {o.data(), pk::f32, shape}});
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(o[i], a[i] * b[i] + c[i]) << "n=" << n << " i=" << i;
  }
  EXPECT_FALSE(pk::vulkanDeviceName().empty());
}

// Dynamic sizes: one compile serves every size, the host computing the
// grid and the kernel's size argument per call; sizes that come back reuse
// nothing stale.
TEST_F(Vulkan, DynamicSizesServeEverySizeFromOneCompile) {
  pk::KernelOptions options = onVulkan();
  options.dynamic = pk::DynamicSizes::Always;
  pk::Kernel gpu(
      "stencil",
      [](Ref x, Ref o) {
        using pk::none;
        using pk::slice;
        o[slice(1, -1)] =
            x[slice(2, none)] - x[slice(1, -1)] * 2.0f + x[slice(none, -2)];
      },
      {"x", "o"}, options);
  for (int64_t n : {3, 64, 65, 1000, 3, 70001, 64}) {
    std::vector<float> x = randomFloats(n, unsigned(n)), o(n, 5.0f);
    std::vector<int64_t> shape = {n};
    gpu({{x.data(), pk::f32, shape}, {o.data(), pk::f32, shape}});
    ASSERT_EQ(o[0], 5.0f);
    ASSERT_EQ(o[n - 1], 5.0f);
    for (int64_t i = 1; i + 1 < n; ++i)
      ASSERT_EQ(o[i], x[i + 1] - x[i] * 2.0f + x[i - 1])
          << "n=" << n << " i=" << i;
  }
  EXPECT_EQ(gpu.stats().misses, 1u);
}

TEST_F(Vulkan, BroadcastCastsAndMatmulWithATemporary) {
  pk::Kernel gpu(
      "affine",
      [](Ref x, Ref w, Ref bias, Ref o) {
        o[all] = pk::matmul(pk::cast(x[all], pk::f32), w[all]) + bias[all];
      },
      {}, onVulkan());
  std::vector<int16_t> x = {1, 2, 3, 4, 5, 6};                 // 2x3
  std::vector<float> w = {1, 0, 2, 0, 1, 3, 1, 1, 0, 2, 2, 1}; // 3x4
  std::vector<float> bias = {0.5f, -1, 2, 0};
  std::vector<float> o(8);
  std::vector<int64_t> xs = {2, 3}, ws = {3, 4}, bs = {4}, os = {2, 4};
  gpu({{x.data(), pk::i16, xs},
       {w.data(), pk::f32, ws},
       {bias.data(), pk::f32, bs},
       {o.data(), pk::f32, os}});
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 4; ++c) {
      float sum = bias[c];
      for (int k = 0; k < 3; ++k)
        sum += float(x[r * 3 + k]) * w[k * 4 + c];
      EXPECT_FLOAT_EQ(o[r * 4 + c], sum) << r << "," << c;
    }
}

TEST_F(Vulkan, InPlaceUpdatesAndAliasing) {
  pk::Kernel gpu(
      "update", [](Ref x, Ref o) { o[all] = o[all] * 2 + x[all]; }, {},
      onVulkan());
  std::vector<double> x = {1, 2, 3}, o = {10, 20, 30};
  std::vector<int64_t> shape = {3};
  gpu({{x.data(), pk::f64, shape}, {o.data(), pk::f64, shape}});
  EXPECT_EQ(o, (std::vector<double>{21, 42, 63}));
  gpu({{o.data(), pk::f64, shape}, {o.data(), pk::f64, shape}}); // o = 3 o
  EXPECT_EQ(o, (std::vector<double>{63, 126, 189}));
}

TEST_F(Vulkan, ComparisonsAndWhere) {
  auto body = [](Ref x, Ref o) {
    pk::Value a = x[all];
    o[all] = pk::where(a > 0, a, a * 0.25) + pk::abs(pk::minimum(a, 1));
  };
  pk::Kernel gpu("leaky", body, {}, onVulkan());
  pk::Kernel cpu("leaky", body);
  auto x = randomFloats(1000, 7);
  std::vector<float> fromGpu(1000), fromCpu(1000);
  std::vector<int64_t> shape = {1000};
  gpu({{x.data(), pk::f32, shape}, {fromGpu.data(), pk::f32, shape}});
  cpu({{x.data(), pk::f32, shape}, {fromCpu.data(), pk::f32, shape}});
  EXPECT_EQ(fromGpu, fromCpu);
}

TEST_F(Vulkan, LargeGridsAreSplitIntoSeveralDispatches) {
  // More workgroups of 64 than the 65535 one dispatch may have.
  int64_t n = 65536 * 64 + 100;
  pk::Kernel gpu(
      "scale", [](Ref x, Ref o) { o[all] = x[all] * 3 - 1; }, {}, onVulkan());
  std::vector<int32_t> x(n), o(n, 0);
  for (int64_t i = 0; i < n; ++i)
    x[i] = int32_t(i % 1000);
  std::vector<int64_t> shape = {n};
  gpu({{x.data(), pk::i32, shape}, {o.data(), pk::i32, shape}});
  for (int64_t i = 0; i < n; i += 4099)
    ASSERT_EQ(o[i], x[i] * 3 - 1) << i;
  EXPECT_EQ(o[n - 1], x[n - 1] * 3 - 1);
}

TEST_F(Vulkan, BuffersOverTheDeviceLimitAreRejected) {
  pk::Kernel gpu(
      "copy", [](Ref x, Ref o) { o[all] = x[all] + 1; }, {}, onVulkan());
  std::vector<int8_t> tiny(1);
  std::vector<int64_t> shape = {int64_t(1) << 32}; // 4 GiB of int8
  try {
    gpu({{tiny.data(), pk::i8, shape}, {tiny.data(), pk::i8, shape}});
    FAIL() << "expected a VulkanError";
  } catch (const pk::VulkanError &error) {
    EXPECT_NE(std::string(error.what()).find("storage buffer limit"),
              std::string::npos)
        << error.what();
  }
}

} // namespace
