// Operator calls: argument binding errors, dtype and device checks, out= and
// in-place checks, native kernels on a device, 0-dim CPU tensors joining a
// device, custom operators.
#include <string>
#include <vector>

#include "bp_test_util.h"

using namespace bptest;
using ::testing::HasSubstr;

namespace {

class DispatchTest : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    // The host provides CPU kernels (the CPU plugin is not needed here).
    ASSERT_EQ(bp_op_register_kernel(ctx_, Op("add.Tensor"), 0, HostAddF32, nullptr, 0, nullptr), BP_STATUS_OK);
    ASSERT_EQ(bp_op_register_kernel(ctx_, Op("mul.Tensor"), 0, HostMulF32, nullptr, 0, nullptr), BP_STATUS_OK);
  }
};

TEST_F(DispatchTest, UnknownOperator) {
  bp_op_t* op = nullptr;
  EXPECT_EQ(bp_op_find(ctx_, "add.Tensr", &op), BP_STATUS_NOT_FOUND);
  EXPECT_THAT(LastError(), HasSubstr("add.Tensr"));
}

TEST_F(DispatchTest, OperatorListAndInfo) {
  int32_t n = 0;
  ASSERT_EQ(bp_op_count(ctx_, &n), BP_STATUS_OK);
  EXPECT_GT(n, 50);
  bp_op_t* op = nullptr;
  ASSERT_EQ(bp_op_at(ctx_, 0, &op), BP_STATUS_OK);
  bp_op_info_t info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(bp_op_info(Op("add.Tensor"), &info), BP_STATUS_OK);
  EXPECT_STREQ(info.name, "add.Tensor");
  EXPECT_STREQ(info.kind, "pointwise");
  EXPECT_EQ(info.num_arguments, 3);
  EXPECT_EQ(info.num_returns, 1);
  EXPECT_EQ(bp_op_at(ctx_, n, &op), BP_STATUS_OUT_OF_RANGE);
  EXPECT_EQ(bp_op_find(ctx_, "add_.Tensor", &op), BP_STATUS_OK);
  EXPECT_EQ(bp_op_find(ctx_, "add.out", &op), BP_STATUS_OK);
}

TEST_F(DispatchTest, AddOnCpuWithDefaultsAndBroadcast) {
  bp_tensor_t* a = F32(kCpu, {2, 3}, {1, 2, 3, 4, 5, 6});
  bp_tensor_t* b = F32(kCpu, {3}, {10, 20, 30});
  bp_tensor_t* r = Call("add.Tensor", {T(a), T(b)});
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(Read(r), (std::vector<float>{11, 22, 33, 14, 25, 36}));
  r = Call("add.Tensor", {T(a), T(b), I(2)});
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(Read(r), (std::vector<float>{21, 42, 63, 24, 45, 66}));
  uint64_t native = 0;
  ASSERT_EQ(bp_native_count(ctx_, Op("add.Tensor"), 0, &native), BP_STATUS_OK);
  EXPECT_EQ(native, 2u);
}

TEST_F(DispatchTest, WrongArgumentCountAndKind) {
  bp_tensor_t* a = F32(kCpu, {2}, {1, 2});
  Call("add.Tensor", {T(a)}, BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("add.Tensor"));
  EXPECT_THAT(LastError(), HasSubstr("missing argument 'other'"));
  Call("add.Tensor", {T(a), T(a), I(1), I(1)}, BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("at most 3 arguments, got 4"));
  Call("add.Tensor", {T(a), I(3)}, BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("argument 'other' expected Tensor, got int"));
  Call("add.Tensor", {T(a), T(a), S("x")}, BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("argument 'alpha' expected Scalar"));
  Call("add.Tensor", {T(a), T(nullptr)}, BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("argument 'other' is a NULL tensor"));
  // Asking for more results than the operator returns.
  bp_tensor_t* rs[2] = {};
  bp_value_t args[] = {T(a), T(a)};
  EXPECT_EQ(bp_op_call(ctx_, Op("add.Tensor"), args, 2, rs, 2), BP_STATUS_INVALID_ARGUMENT);
}

TEST_F(DispatchTest, DtypeNotTakenNamesWhatItTakes) {
  bool data[2] = {true, false};
  int64_t n = 2;
  bp_tensor_t* b = nullptr;
  ASSERT_EQ(bp_tensor_from_host(ctx_, kCpu, 1, &n, kBool, data, 2, &b), BP_STATUS_OK);
  Own(b);
  // The claims are the compute dtypes: bool ** bool computes in bool.
  Call("pow.Tensor_Tensor", {T(b), T(b)}, BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("argument 'self' has dtype bool"));
  EXPECT_THAT(LastError(),
              HasSubstr("pow.Tensor_Tensor takes uint8, int8, int32, int64, float16, bfloat16, float32, float64"));
}

TEST_F(DispatchTest, DeviceMixIsAnErrorNamingBothDevices) {
  bp_device_t dev = LoadTestdev();
  bp_tensor_t* a = F32(kCpu, {2}, {1, 2});
  bp_tensor_t* b = F32(dev, {2}, {3, 4});
  Call("add.Tensor", {T(a), T(b)}, BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("cpu:0"));
  EXPECT_THAT(LastError(), HasSubstr("testdev:0"));
}

TEST_F(DispatchTest, NativeKernelOnPrivateMemoryDevice) {
  bp_device_t dev = LoadTestdev();
  bp_tensor_t* a = F32(dev, {2, 2}, {1, 2, 3, 4});
  bp_tensor_t* b = F32(dev, {2}, {10, 20});
  bp_tensor_t* r = Call("add.Tensor", {T(a), T(b), D(0.5)});
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(bp_tensor_device(r).backend, dev.backend);
  EXPECT_EQ(Read(r), (std::vector<float>{6, 12, 8, 14}));
  uint64_t native = 0, fallback = 0;
  ASSERT_EQ(bp_native_count(ctx_, Op("add.Tensor"), dev.backend, &native), BP_STATUS_OK);
  ASSERT_EQ(bp_fallback_count(ctx_, Op("add.Tensor"), dev.backend, &fallback), BP_STATUS_OK);
  EXPECT_EQ(native, 1u);
  EXPECT_EQ(fallback, 0u);
}

TEST_F(DispatchTest, ZeroDimCpuTensorJoinsTheDevice) {
  bp_device_t dev = LoadTestdev();
  bp_tensor_t* a = F32(dev, {3}, {1, 2, 3});
  float s = 100;
  bp_tensor_t* scalar = nullptr;
  ASSERT_EQ(bp_tensor_from_host(ctx_, kCpu, 0, nullptr, kF32, &s, sizeof(s), &scalar), BP_STATUS_OK);
  Own(scalar);
  bp_tensor_t* r = Call("add.Tensor", {T(a), T(scalar)});
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(bp_tensor_device(r).backend, dev.backend);
  EXPECT_EQ(Read(r), (std::vector<float>{101, 102, 103}));
}

TEST_F(DispatchTest, OutVariantChecksShapeAndDtypeAndLeavesOutUntouched) {
  bp_tensor_t* a = F32(kCpu, {2, 2}, {1, 2, 3, 4});
  bp_tensor_t* bad_shape = F32(kCpu, {3}, {7, 7, 7});
  Call("add.out", {T(a), T(a), I(1), T(bad_shape)}, BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("add.out"));
  EXPECT_THAT(LastError(), HasSubstr("argument 'out' has sizes [3]"));
  EXPECT_THAT(LastError(), HasSubstr("expected sizes [2, 2]"));
  EXPECT_EQ(Read(bad_shape), (std::vector<float>{7, 7, 7}));

  double d[4] = {7, 7, 7, 7};
  int64_t sizes[2] = {2, 2};
  bp_tensor_t* bad_dtype = nullptr;
  ASSERT_EQ(bp_tensor_from_host(ctx_, kCpu, 2, sizes, kF64, d, sizeof(d), &bad_dtype), BP_STATUS_OK);
  Own(bad_dtype);
  Call("add.out", {T(a), T(a), I(1), T(bad_dtype)}, BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("dtype float64"));
  double back[4];
  ASSERT_EQ(bp_tensor_to_host(bad_dtype, back, sizeof(back)), BP_STATUS_OK);
  EXPECT_EQ(back[0], 7.0);

  bp_tensor_t* out = F32(kCpu, {2, 2}, {0, 0, 0, 0});
  bp_tensor_t* r = Call("add.out", {T(a), T(a), I(1), T(out)});
  EXPECT_EQ(r, out);  // the result is the out tensor itself
  EXPECT_EQ(Read(out), (std::vector<float>{2, 4, 6, 8}));
}

TEST_F(DispatchTest, InplaceChecksSizesAndCasting) {
  bp_tensor_t* a = F32(kCpu, {2}, {1, 2});
  bp_tensor_t* big = F32(kCpu, {2, 2}, {1, 1, 1, 1});
  Call("add_.Tensor", {T(a), T(big)}, BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("add_.Tensor"));
  EXPECT_EQ(Read(a), (std::vector<float>{1, 2}));
  bp_tensor_t* r = Call("add_.Tensor", {T(a), T(a)});
  EXPECT_EQ(r, a);
  EXPECT_EQ(Read(a), (std::vector<float>{2, 4}));
  // float result into an int64 tensor cannot be cast.
  int64_t iv[2] = {1, 2};
  int64_t n = 2;
  bp_tensor_t* ints = nullptr;
  ASSERT_EQ(bp_tensor_from_host(ctx_, kCpu, 1, &n, kI64, iv, sizeof(iv), &ints), BP_STATUS_OK);
  Own(ints);
  Call("add_.Tensor", {T(ints), T(a)}, BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("can't be cast"));
}

TEST_F(DispatchTest, NoKernelAnywhereIsUnimplemented) {
  bp_tensor_t* a = F32(kCpu, {2}, {1, 2});
  Call("sub.Tensor", {T(a), T(a)}, BP_STATUS_UNIMPLEMENTED);
  EXPECT_THAT(LastError(), HasSubstr("sub.Tensor"));
  EXPECT_THAT(LastError(), HasSubstr("'cpu'"));
  bp_device_t dev = LoadTestdev();
  bp_tensor_t* b = F32(dev, {2}, {1, 2});
  Call("sub.Tensor", {T(b), T(b)}, BP_STATUS_UNIMPLEMENTED);
  EXPECT_THAT(LastError(), HasSubstr("testdev"));
}

TEST_F(DispatchTest, CompositesRunThroughCopy) {
  bp_device_t dev = LoadTestdev();
  bp_tensor_t* a = F32(dev, {3}, {1.5f, -2.25f, 3});
  bp_tensor_t* d = Call("to.dtype", {T(a), Dt(kF64)});
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(bp_tensor_device(d).backend, dev.backend);
  double back[3];
  ASSERT_EQ(bp_tensor_to_host(d, back, sizeof(back)), BP_STATUS_OK);
  EXPECT_EQ(back[0], 1.5);
  EXPECT_EQ(back[1], -2.25);
  bp_tensor_t* same = Call("to.dtype", {T(a), Dt(kF32)});
  EXPECT_EQ(same, a);
  bp_tensor_t* c = Call("clone", {T(a)});
  ASSERT_NE(c, nullptr);
  EXPECT_NE(c, a);
  EXPECT_EQ(Read(c), Read(a));
  EXPECT_EQ(Call("contiguous", {T(a)}), a);
}

TEST_F(DispatchTest, CopyAcrossDevicesConvertsAndBroadcasts) {
  bp_device_t dev = LoadTestdev();
  bp_tensor_t* dst = F32(dev, {2, 3}, {0, 0, 0, 0, 0, 0});
  double src[3] = {1, 2, 3};
  int64_t n = 3;
  bp_tensor_t* s = nullptr;
  ASSERT_EQ(bp_tensor_from_host(ctx_, kCpu, 1, &n, kF64, src, sizeof(src), &s), BP_STATUS_OK);
  Own(s);
  bp_tensor_t* r = Call("copy_", {T(dst), T(s)});
  EXPECT_EQ(r, dst);
  EXPECT_EQ(Read(dst), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  bp_tensor_t* wrong = F32(kCpu, {4}, {1, 2, 3, 4});
  Call("copy_", {T(dst), T(wrong)}, BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("cannot broadcast"));
}

// A custom operator: scale(Tensor self, float factor) -> Tensor, CPU only.
bp_status_t ScaleMeta(const bp_meta_call_t* call) {
  const DLTensor* x = call->args[0].u.tensor;
  call->out_specs[0].dtype = x->dtype;
  call->out_specs[0].ndim = x->ndim;
  for (int32_t i = 0; i < x->ndim; ++i) call->out_specs[0].sizes[i] = x->shape[i];
  return BP_STATUS_OK;
}
bp_status_t ScaleKernel(const bp_kernel_call_t* call) {
  const DLTensor* x = call->args[0].u.tensor;
  double f = call->args[1].u.d;
  const DLTensor* o = call->outputs[0];
  for (int64_t i = 0, n = Numel(o); i < n; ++i) *HostElem<float>(o, i) = static_cast<float>(*HostElem<float>(x, i) * f);
  return BP_STATUS_OK;
}

TEST_F(DispatchTest, CustomOperatorOnCpuAndThroughFallback) {
  bp_op_t* op = nullptr;
  ASSERT_EQ(bp_op_define(ctx_, "testns::scale(Tensor self, float factor=2.0) -> Tensor", ScaleKernel, nullptr,
                         ScaleMeta, nullptr, &op),
            BP_STATUS_OK)
      << LastError();
  EXPECT_EQ(bp_op_define(ctx_, "testns::scale(Tensor self) -> Tensor", ScaleKernel, nullptr, ScaleMeta, nullptr,
                         nullptr),
            BP_STATUS_ALREADY_EXISTS);
  bp_op_info_t info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(bp_op_info(op, &info), BP_STATUS_OK);
  EXPECT_STREQ(info.kind, "custom");
  bp_tensor_t* a = F32(kCpu, {3}, {1, 2, 3});
  bp_tensor_t* r = Call("testns::scale", {T(a)});
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(Read(r), (std::vector<float>{2, 4, 6}));
  bp_device_t dev = LoadTestdev();
  bp_tensor_t* b = F32(dev, {2}, {5, 6});
  r = Call("testns::scale", {T(b), D(0.5)});
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(bp_tensor_device(r).backend, dev.backend);
  EXPECT_EQ(Read(r), (std::vector<float>{2.5f, 3}));
  uint64_t fallback = 0;
  ASSERT_EQ(bp_fallback_count(ctx_, op, dev.backend, &fallback), BP_STATUS_OK);
  EXPECT_EQ(fallback, 1u);
}

}  // namespace
