// Tensors: creation checks, host/device round trips through private device
// memory, dtype conversion (float16/bfloat16), strided host views from
// DLPack, zero-copy DLPack import/export with the deleter called exactly once.
#include <cmath>
#include <cstring>
#include <limits>

#include "bp_test_util.h"

using namespace bptest;
using ::testing::HasSubstr;

namespace {

class TensorTest : public ContextTest {};

TEST_F(TensorTest, EmptyChecksSizesAndDtype) {
  bp_tensor_t* t = nullptr;
  int64_t neg = -1;
  EXPECT_EQ(bp_tensor_empty(ctx_, kCpu, 1, &neg, kF32, &t), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("must be >= 0"));
  int64_t huge[2] = {int64_t(1) << 40, int64_t(1) << 40};
  EXPECT_EQ(bp_tensor_empty(ctx_, kCpu, 2, huge, kF32, &t), BP_STATUS_OUT_OF_RANGE);
  int64_t bytes_overflow = int64_t(1) << 62;
  EXPECT_EQ(bp_tensor_empty(ctx_, kCpu, 1, &bytes_overflow, kF32, &t), BP_STATUS_OUT_OF_RANGE);
  EXPECT_THAT(LastError(), HasSubstr("overflows int64"));
  int64_t two = 2;
  DLDataType lanes{kDLFloat, 32, 4};
  EXPECT_EQ(bp_tensor_empty(ctx_, kCpu, 1, &two, lanes, &t), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(bp_tensor_empty(ctx_, kCpu, BP_MAX_NDIM + 1, &two, kF32, &t), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(bp_tensor_empty(ctx_, bp_device_t{0, 1}, 1, &two, kF32, &t), BP_STATUS_NOT_FOUND);
  EXPECT_EQ(t, nullptr);  // untouched on error
  ASSERT_EQ(bp_tensor_empty(ctx_, kCpu, 1, &two, kF32, &t), BP_STATUS_OK);
  EXPECT_EQ(bp_tensor_ndim(t), 1);
  EXPECT_EQ(bp_tensor_numel(t), 2);
  EXPECT_TRUE(bp_tensor_is_contiguous(t));
  bp_tensor_release(t);
}

TEST_F(TensorTest, HostDeviceRoundTrip) {
  bp_device_t dev = LoadTestdev();
  bp_tensor_t* a = F32(dev, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(Read(a), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  bp_tensor_t* c = nullptr;
  ASSERT_EQ(bp_tensor_to_device(a, kCpu, &c), BP_STATUS_OK);
  Own(c);
  EXPECT_EQ(bp_tensor_device(c).backend, 0);
  EXPECT_EQ(Read(c), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  bp_tensor_t* d = nullptr;
  ASSERT_EQ(bp_tensor_to_device(c, dev, &d), BP_STATUS_OK);
  Own(d);
  EXPECT_EQ(Read(d), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  float small[2];
  EXPECT_EQ(bp_tensor_to_host(a, small, sizeof(small)), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("nbytes must be numel * itemsize = 24"));
  std::vector<float> wrong(5);
  int64_t sizes[2] = {2, 3};
  bp_tensor_t* t = nullptr;
  EXPECT_EQ(bp_tensor_from_host(ctx_, dev, 2, sizes, kF32, wrong.data(), 20, &t), BP_STATUS_INVALID_ARGUMENT);
}

TEST_F(TensorTest, HalfAndBFloat16Conversions) {
  bp_device_t dev = LoadTestdev();
  const float inf = std::numeric_limits<float>::infinity();
  bp_tensor_t* a = F32(dev, {6}, {1.0f, -2.5f, 65504.0f, 1e-7f, inf, 3.14159f});
  for (DLDataType half : {kF16, kBF16}) {
    bp_tensor_t* h = Call("to.dtype", {T(a), Dt(half)});
    ASSERT_NE(h, nullptr);
    bp_tensor_t* back = Call("to.dtype", {T(h), Dt(kF32)});
    ASSERT_NE(back, nullptr);
    std::vector<float> v = Read(back);
    EXPECT_EQ(v[0], 1.0f);
    EXPECT_EQ(v[1], -2.5f);
    EXPECT_TRUE(std::isinf(v[4]));
    if (half.code == kDLFloat) {
      EXPECT_EQ(v[2], 65504.0f);
      EXPECT_NEAR(v[3], 1.19e-7f, 1e-9f);  // float16 subnormal
      EXPECT_EQ(v[5], 3.140625f);
    } else {
      EXPECT_EQ(v[5], 3.140625f);
      EXPECT_NEAR(v[3], 1e-7f, 1e-9f);
    }
  }
  // float -> int truncates toward zero; NaN does not crash.
  bp_tensor_t* f = F32(kCpu, {3}, {2.9f, -2.9f, std::nanf("")});
  bp_tensor_t* i = Call("to.dtype", {T(f), Dt(kI32)});
  int32_t iv[3];
  ASSERT_EQ(bp_tensor_to_host(i, iv, sizeof(iv)), BP_STATUS_OK);
  EXPECT_EQ(iv[0], 2);
  EXPECT_EQ(iv[1], -2);
}

struct DeleterLog {
  int calls = 0;
};

void CountingDeleter(DLManagedTensor* m) {
  static_cast<DeleterLog*>(m->manager_ctx)->calls++;
}

TEST_F(TensorTest, DlpackImportIsZeroCopyAndStrided) {
  float data[6] = {1, 2, 3, 4, 5, 6};
  int64_t shape[2] = {3, 2};
  int64_t strides[2] = {1, 3};  // the transpose of a row-major [2, 3]
  DeleterLog log;
  DLManagedTensor m{};
  m.dl_tensor.data = data;
  m.dl_tensor.device = {kDLCPU, 0};
  m.dl_tensor.ndim = 2;
  m.dl_tensor.dtype = kF32;
  m.dl_tensor.shape = shape;
  m.dl_tensor.strides = strides;
  m.manager_ctx = &log;
  m.deleter = CountingDeleter;
  bp_tensor_t* t = nullptr;
  ASSERT_EQ(bp_tensor_from_dlpack(ctx_, &m, &t), BP_STATUS_OK) << LastError();
  EXPECT_FALSE(bp_tensor_is_contiguous(t));
  EXPECT_EQ(Read(t), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  // Zero copy: writes through the original buffer are visible.
  data[0] = 10;
  EXPECT_EQ(Read(t)[0], 10);
  // A clone is contiguous.
  bp_tensor_t* c = Call("contiguous", {T(t)});
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(bp_tensor_is_contiguous(c));
  EXPECT_EQ(Read(c), (std::vector<float>{10, 4, 2, 5, 3, 6}));
  // Device copy of a strided host tensor.
  bp_device_t dev = LoadTestdev();
  bp_tensor_t* d = nullptr;
  ASSERT_EQ(bp_tensor_to_device(t, dev, &d), BP_STATUS_OK);
  Own(d);
  EXPECT_EQ(Read(d), (std::vector<float>{10, 4, 2, 5, 3, 6}));
  // Copy back into the strided host tensor (scatter).
  bp_tensor_t* src = F32(dev, {3, 2}, {0, 1, 2, 3, 4, 5});
  bp_value_t cargs[] = {T(t), T(src)};
  ASSERT_EQ(bp_op_call(ctx_, Op("copy_"), cargs, 2, nullptr, 0), BP_STATUS_OK) << LastError();
  EXPECT_EQ(data[0], 0);
  EXPECT_EQ(data[3], 1);
  EXPECT_EQ(data[1], 2);
  bp_tensor_retain(t);
  bp_tensor_release(t);
  EXPECT_EQ(log.calls, 0);
  bp_tensor_release(t);
  EXPECT_EQ(log.calls, 1);
}

TEST_F(TensorTest, DlpackImportErrorsLeaveOwnershipWithCaller) {
  float data[2] = {1, 2};
  int64_t shape[1] = {2};
  DeleterLog log;
  DLManagedTensor m{};
  m.dl_tensor.data = data;
  m.dl_tensor.device = {kDLCPU, 0};
  m.dl_tensor.ndim = 1;
  m.dl_tensor.dtype = DLDataType{kDLFloat, 32, 2};
  m.dl_tensor.shape = shape;
  m.manager_ctx = &log;
  m.deleter = CountingDeleter;
  bp_tensor_t* t = nullptr;
  EXPECT_EQ(bp_tensor_from_dlpack(ctx_, &m, &t), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("lanes"));
  m.dl_tensor.dtype = kF32;
  m.dl_tensor.device = {kDLVulkan, 0};
  EXPECT_EQ(bp_tensor_from_dlpack(ctx_, &m, &t), BP_STATUS_NOT_FOUND);
  EXPECT_EQ(log.calls, 0);
}

TEST_F(TensorTest, DlpackExportHoldsTheStorage) {
  bp_device_t dev = LoadTestdev();
  bp_tensor_t* a = nullptr;
  float v[3] = {1, 2, 3};
  int64_t n = 3;
  ASSERT_EQ(bp_tensor_from_host(ctx_, dev, 1, &n, kF32, v, sizeof(v), &a), BP_STATUS_OK);
  DLManagedTensor* m = nullptr;
  ASSERT_EQ(bp_tensor_to_dlpack(a, &m), BP_STATUS_OK);
  bp_tensor_release(a);  // the export keeps the storage alive
  EXPECT_EQ(m->dl_tensor.device.device_type, kDLExtDev);
  EXPECT_EQ(m->dl_tensor.ndim, 1);
  EXPECT_EQ(m->dl_tensor.shape[0], 3);
  // Re-import the export: same memory, readable.
  bp_tensor_t* back = nullptr;
  ASSERT_EQ(bp_tensor_from_dlpack(ctx_, m, &back), BP_STATUS_OK) << LastError();
  EXPECT_EQ(Read(back), (std::vector<float>{1, 2, 3}));
  bp_tensor_release(back);  // calls the export's deleter exactly once
  bp_allocator_stats_t s{};
  s.struct_size = sizeof(s);
  ASSERT_EQ(bp_allocator_stats(ctx_, dev, &s), BP_STATUS_OK);
  EXPECT_EQ(s.allocated_bytes, 0u);
}

}  // namespace
