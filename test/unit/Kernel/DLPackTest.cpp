//===- DLPackTest.cpp - DLPack tensors as kernel arguments ----------------===//

#include "picokernel/Kernel/DLPack.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace {

// dlpack.h's structs and enumerators as its specification lays them out
// (DLPack 0.8 and 1.x), declared here as a program that includes dlpack.h
// would see them.
typedef enum {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
  kDLCUDAManaged = 13
} DLDeviceType;
typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;
typedef enum {
  kDLInt = 0U,
  kDLUInt = 1U,
  kDLFloat = 2U,
  kDLBfloat = 4U,
  kDLComplex = 5U,
  kDLBool = 6U
} DLDataTypeCode;
typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;
typedef struct {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides;
  uint64_t byte_offset;
} DLTensor;

/// A DLTensor over `data` with `shape` (and `strides`, if given).
DLTensor tensor(void *data, DLDataType dtype, std::vector<int64_t> &shape,
                std::vector<int64_t> *strides = nullptr) {
  return {data,  {kDLCPU, 0},  int32_t(shape.size()),
          dtype, shape.data(), strides ? strides->data() : nullptr,
          0};
}

const DLDataType kF32{kDLFloat, 32, 1};

pk::Kernel makeFma() {
  return pk::Kernel("fma", [](pk::Ref a, pk::Ref b, pk::Ref o) {
    o[pk::all] = a[pk::all] * b[pk::all] + 1.0;
  });
}

TEST(DLPack, TensorsRunAKernelWithoutCopies) {
  std::vector<int64_t> shape = {2, 3};
  std::vector<float> a = {1, 2, 3, 4, 5, 6}, b(6, 2.0f), o(6, -1.0f);
  DLTensor ta = tensor(a.data(), kF32, shape),
           tb = tensor(b.data(), kF32, shape),
           to = tensor(o.data(), kF32, shape);
  makeFma()({pk::fromDLPack(ta), pk::fromDLPack(tb), pk::fromDLPack(to)});
  EXPECT_EQ(o, (std::vector<float>{3, 5, 7, 9, 11, 13}));
}

TEST(DLPack, ByteOffsetAndCompactStridesAreRead) {
  // The last four floats of a buffer, as a (2, 2) tensor with explicit
  // row-major strides.
  std::vector<int64_t> shape = {2, 2}, strides = {2, 1};
  std::vector<float> a = {100, 100, 1, 2, 3, 4}, o(4);
  DLTensor ta = tensor(a.data(), kF32, shape, &strides);
  ta.byte_offset = 2 * sizeof(float);
  DLTensor to = tensor(o.data(), kF32, shape);
  pk::Kernel twice("twice",
                   [](pk::Ref x, pk::Ref y) { y[pk::all] = x[pk::all] * 2.0; });
  twice({pk::fromDLPack(ta), pk::fromDLPack(to)});
  EXPECT_EQ(o, (std::vector<float>{2, 4, 6, 8}));
  pk::ArrayView view = pk::fromDLPack(ta);
  EXPECT_EQ(view.data, static_cast<void *>(a.data() + 2));
  ASSERT_EQ(view.strides.size(), 2u);
  EXPECT_EQ(view.strides[0], 2);
}

TEST(DLPack, StridedTensorsAreTheKernelsClearError) {
  std::vector<int64_t> shape = {3}, strides = {2};
  std::vector<float> a(6, 1.0f), o(3);
  DLTensor ta = tensor(a.data(), kF32, shape, &strides),
           to = tensor(o.data(), kF32, shape);
  pk::Kernel copy("copy",
                  [](pk::Ref x, pk::Ref y) { y[pk::all] = x[pk::all]; });
  EXPECT_THROW(copy({pk::fromDLPack(ta), pk::fromDLPack(to)}),
               pk::ArgumentError);
}

TEST(DLPack, EmptyTensorsRunWhateverTheirStrides) {
  // NumPy exports a (2, 0) array with strides (0, 0), PyTorch with (1, 1).
  for (std::vector<int64_t> strides :
       {std::vector<int64_t>{0, 0}, std::vector<int64_t>{1, 1}}) {
    std::vector<int64_t> shape = {2, 0};
    float a = 0, o = 0;
    DLTensor ta = tensor(&a, kF32, shape, &strides),
             to = tensor(&o, kF32, shape, &strides);
    pk::Kernel copy("copy",
                    [](pk::Ref x, pk::Ref y) { y[pk::all] = x[pk::all]; });
    EXPECT_NO_THROW(copy({pk::fromDLPack(ta), pk::fromDLPack(to)}))
        << strides[0];
  }
}

TEST(DLPack, EveryDTypePicokernelHasMaps) {
  struct Case {
    DLDataType dtype;
    pk::DType expected;
  } cases[] = {{{kDLInt, 8, 1}, pk::i8},      {{kDLInt, 16, 1}, pk::i16},
               {{kDLInt, 32, 1}, pk::i32},    {{kDLInt, 64, 1}, pk::i64},
               {{kDLUInt, 8, 1}, pk::u8},     {{kDLUInt, 16, 1}, pk::u16},
               {{kDLUInt, 32, 1}, pk::u32},   {{kDLUInt, 64, 1}, pk::u64},
               {{kDLFloat, 16, 1}, pk::f16},  {{kDLFloat, 32, 1}, pk::f32},
               {{kDLFloat, 64, 1}, pk::f64},  {{kDLBfloat, 16, 1}, pk::bf16},
               {{kDLBool, 8, 1}, pk::boolean}};
  std::vector<int64_t> shape = {4};
  alignas(8) char data[64] = {};
  for (const Case &c : cases) {
    DLTensor t = tensor(data, c.dtype, shape);
    EXPECT_EQ(pk::fromDLPack(t).dtype, c.expected)
        << int(c.dtype.code) << " " << int(c.dtype.bits);
  }
}

TEST(DLPack, ScalarsAndReadOnlyTensors) {
  std::vector<int64_t> noShape;
  float x = 2.5f;
  DLTensor t = tensor(&x, kF32, noShape);
  t.shape = nullptr; // a 0-d tensor may have no shape array
  pk::ArrayView view = pk::fromDLPack(t, /*readOnly=*/true);
  EXPECT_TRUE(view.shape.empty());
  EXPECT_TRUE(view.strides.empty());
  EXPECT_TRUE(view.readOnly);

  std::vector<int64_t> shape = {2};
  std::vector<float> a = {1, 2}, b = {3, 4};
  DLTensor ta = tensor(a.data(), kF32, shape),
           tb = tensor(b.data(), kF32, shape);
  // Writing to a tensor passed as read-only is refused.
  EXPECT_THROW(makeFma()({pk::fromDLPack(ta), pk::fromDLPack(ta),
                          pk::fromDLPack(tb, /*readOnly=*/true)}),
               pk::ArgumentError);
  EXPECT_EQ(b, (std::vector<float>{3, 4}));
}

TEST(DLPack, TensorsPicokernelCannotTakeAreClearErrors) {
  std::vector<int64_t> shape = {4};
  alignas(8) char data[64] = {};
  auto message = [&](DLTensor t) {
    try {
      pk::fromDLPack(t);
    } catch (const pk::ArgumentError &error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  DLTensor onGpu = tensor(data, kF32, shape);
  onGpu.device.device_type = kDLCUDA;
  EXPECT_NE(message(onGpu).find("device type 2 is not in host memory"),
            std::string::npos)
      << message(onGpu);
  DLTensor pinned = tensor(data, kF32, shape);
  pinned.device.device_type = kDLCUDAHost;
  EXPECT_EQ(message(pinned), "no error");
  DLTensor managed = tensor(data, kF32, shape);
  managed.device.device_type = kDLCUDAManaged;
  EXPECT_EQ(message(managed), "no error");
  EXPECT_NE(message(tensor(data, {kDLComplex, 64, 1}, shape))
                .find("dtype complex64 has no picokernel dtype"),
            std::string::npos);
  EXPECT_NE(message(tensor(data, {kDLFloat, 32, 4}, shape))
                .find("dtype float32x4 has"),
            std::string::npos);
  EXPECT_NE(message(tensor(data, {kDLFloat, 8, 1}, shape)).find("float8"),
            std::string::npos);
  EXPECT_NE(message(tensor(data, {kDLBool, 1, 1}, shape)).find("bool1"),
            std::string::npos);
  EXPECT_NE(message(tensor(data, {17, 8, 1}, shape))
                .find("dtype code 17 (8 bits) has"),
            std::string::npos);
  DLTensor negative = tensor(data, kF32, shape);
  negative.ndim = -1;
  EXPECT_NE(message(negative).find("-1 dimensions"), std::string::npos);
  // A null pointer stays null whatever the offset: the kernel names it.
  DLTensor null = tensor(nullptr, kF32, shape);
  null.byte_offset = 64;
  EXPECT_EQ(pk::fromDLPack(null).data, nullptr);
  std::vector<float> o(4);
  DLTensor to = tensor(o.data(), kF32, shape);
  EXPECT_THROW(makeFma()({pk::fromDLPack(null), pk::fromDLPack(null),
                          pk::fromDLPack(to)}),
               pk::ArgumentError);
  DLTensor noShape = tensor(data, kF32, shape);
  noShape.shape = nullptr;
  EXPECT_NE(message(noShape).find("no shape"), std::string::npos);
}

} // namespace
