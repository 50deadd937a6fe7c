// View operators are core metadata operations sharing storage; reshape copies
// when no view exists; kernels and the CPU fallback read and write
// non-contiguous views of private device memory correctly.
#include "bp_test_util.h"

using namespace bptest;
using ::testing::HasSubstr;

namespace {

class ViewTest : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    ASSERT_EQ(bp_op_register_kernel(ctx_, Op("mul.Tensor"), 0, HostMulF32, nullptr, 0, nullptr), BP_STATUS_OK);
    dev_ = LoadTestdev();
  }
  bp_device_t dev_{};
};

TEST_F(ViewTest, TransposeSharesStorage) {
  std::vector<float> v = {1, 2, 3, 4, 5, 6};
  bp_tensor_t* a = F32(kCpu, {2, 3}, v);
  bp_tensor_t* t = Call("transpose.int", {T(a), I(0), I(1)});
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(bp_tensor_sizes(t)[0], 3);
  EXPECT_EQ(bp_tensor_strides(t)[0], 1);
  EXPECT_EQ(bp_tensor_strides(t)[1], 3);
  EXPECT_FALSE(bp_tensor_is_contiguous(t));
  EXPECT_EQ(Read(t), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  // Writing through the view changes the base.
  bp_tensor_t* ones = F32(kCpu, {3, 2}, {9, 9, 9, 9, 9, 9});
  bp_value_t args[] = {T(t), T(ones)};
  ASSERT_EQ(bp_op_call(ctx_, Op("copy_"), args, 2, nullptr, 0), BP_STATUS_OK);
  EXPECT_EQ(Read(a), (std::vector<float>(6, 9)));
  int32_t kind = -1;
  ASSERT_EQ(bp_op_dispatch_kind(ctx_, Op("transpose.int"), dev_.backend, &kind), BP_STATUS_OK);
  EXPECT_EQ(kind, BP_DISPATCH_CORE);
}

TEST_F(ViewTest, ViewRefusesWhatOnlyReshapeCanDo) {
  bp_tensor_t* a = F32(dev_, {2, 3}, {1, 2, 3, 4, 5, 6});
  bp_tensor_t* t = Call("transpose.int", {T(a), I(0), I(1)});
  ASSERT_NE(t, nullptr);
  std::vector<int64_t> flat = {6};
  Call("view", {T(t), L(flat)}, BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("reshape"));
  bp_tensor_t* r = Call("reshape", {T(t), L(flat)});
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(bp_tensor_is_contiguous(r));
  EXPECT_EQ(bp_tensor_device(r).backend, dev_.backend);
  EXPECT_EQ(Read(r), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  // A viewable reshape shares storage.
  std::vector<int64_t> three_two = {3, 2};
  bp_tensor_t* v = Call("reshape", {T(a), L(three_two)});
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(Read(v), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST_F(ViewTest, FallbackInplaceOnTransposedDeviceView) {
  bp_tensor_t* a = F32(dev_, {2, 3}, {1, 2, 3, 4, 5, 6});
  bp_tensor_t* t = Call("transpose.int", {T(a), I(0), I(1)});  // [3, 2], strides [1, 3]
  bp_tensor_t* f = F32(dev_, {3, 2}, {10, 100, 10, 100, 10, 100});
  bp_tensor_t* r = Call("mul_.Tensor", {T(t), T(f)});
  EXPECT_EQ(r, t);
  // t[i][j] = a[j][i]; t *= f  =>  a[0][:] *= 10, a[1][:] *= 100.
  EXPECT_EQ(Read(a), (std::vector<float>{10, 20, 30, 400, 500, 600}));
  uint64_t n = 0;
  ASSERT_EQ(bp_fallback_count(ctx_, Op("mul_.Tensor"), dev_.backend, &n), BP_STATUS_OK);
  EXPECT_EQ(n, 1u);
}

TEST_F(ViewTest, FallbackOutIntoNarrowedDeviceView) {
  bp_tensor_t* base = F32(dev_, {4}, {-1, -1, -1, -1});
  bp_tensor_t* mid = Call("narrow", {T(base), I(0), I(1), I(2)});
  ASSERT_NE(mid, nullptr);
  EXPECT_EQ(bp_tensor_storage_offset(mid), 1);
  bp_tensor_t* x = F32(dev_, {2}, {3, 4});
  Call("mul.out", {T(x), T(x), T(mid)});
  // Elements outside the view are untouched.
  EXPECT_EQ(Read(base), (std::vector<float>{-1, 9, 16, -1}));
}

TEST_F(ViewTest, NativeKernelReadsBroadcastAndStridedViews) {
  bp_tensor_t* a = F32(dev_, {2, 3}, {1, 2, 3, 4, 5, 6});
  bp_tensor_t* t = Call("transpose.int", {T(a), I(0), I(1)});  // [3, 2]
  bp_tensor_t* row = F32(dev_, {2}, {100, 200});
  bp_tensor_t* r = Call("add.Tensor", {T(t), T(row)});
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(Read(r), (std::vector<float>{101, 204, 102, 205, 103, 206}));
  uint64_t n = 0;
  ASSERT_EQ(bp_native_count(ctx_, Op("add.Tensor"), dev_.backend, &n), BP_STATUS_OK);
  EXPECT_EQ(n, 1u);
}

TEST_F(ViewTest, ExpandAndSelect) {
  bp_tensor_t* a = F32(kCpu, {3}, {1, 2, 3});
  std::vector<int64_t> sizes = {2, 3};
  bp_tensor_t* e = Call("expand", {T(a), L(sizes)});
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(bp_tensor_strides(e)[0], 0);
  EXPECT_EQ(Read(e), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  bp_tensor_t* s = Call("select.int", {T(a), I(0), I(-1)});
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(bp_tensor_ndim(s), 0);
  EXPECT_EQ(Read(s), (std::vector<float>{3}));
}

}  // namespace
