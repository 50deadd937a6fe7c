// The pointwise fast path of bp_op_call: what a kernel receives (0-dim
// operands broadcast by stride 0, outputs as strided views, scalars as given),
// results and their lifetime, and calls it leaves to the generic path (their
// errors stay the generic messages).
#include <string>
#include <thread>
#include <vector>

#include "bp_test_util.h"

using namespace bptest;
using ::testing::HasSubstr;

namespace {

// What one kernel call looked like.
struct Seen {
  int calls = 0;
  std::string op_name;
  int32_t num_args = 0, num_outputs = 0;
  std::vector<std::vector<int64_t>> shapes, strides;  // args (tensors), then outputs[0]
  std::vector<int32_t> kinds;
  int64_t alpha_i = 0;
  double alpha_d = 0;
  DLDataType out_dtype{};
};
Seen g_seen;

void Record(const bp_kernel_call_t* call) {
  g_seen = Seen{};
  g_seen.op_name = call->op_name;
  g_seen.num_args = call->num_args;
  g_seen.num_outputs = call->num_outputs;
  auto add = [](const DLTensor* t) {
    g_seen.shapes.emplace_back(t->shape, t->shape + t->ndim);
    g_seen.strides.emplace_back(t->strides, t->strides + t->ndim);
  };
  for (int32_t i = 0; i < call->num_args; ++i) {
    g_seen.kinds.push_back(call->args[i].kind);
    if (call->args[i].kind == BP_VALUE_TENSOR) add(call->args[i].u.tensor);
  }
  add(call->outputs[0]);
  g_seen.out_dtype = call->outputs[0]->dtype;
  if (call->num_args > 2 && call->args[2].kind == BP_VALUE_INT) g_seen.alpha_i = call->args[2].u.i;
  if (call->num_args > 2 && call->args[2].kind == BP_VALUE_DOUBLE) g_seen.alpha_d = call->args[2].u.d;
}

bp_status_t RecordingAdd(const bp_kernel_call_t* call) {
  Record(call);
  return HostAddF32(call);
}

bp_status_t RecordingEq(const bp_kernel_call_t* call) {
  Record(call);
  const DLTensor* x = call->args[0].u.tensor;
  const DLTensor* y = call->args[1].u.tensor;
  const DLTensor* o = call->outputs[0];
  for (int64_t i = 0, n = Numel(o); i < n; ++i) *HostElem<uint8_t>(o, i) = *HostElem<float>(x, i) == *HostElem<float>(y, i);
  return BP_STATUS_OK;
}

class DispatchFastTest : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    ASSERT_EQ(bp_op_register_kernel(ctx_, Op("add.Tensor"), 0, RecordingAdd, nullptr, 0, nullptr), BP_STATUS_OK);
    ASSERT_EQ(bp_op_register_kernel(ctx_, Op("eq.Tensor"), 0, RecordingEq, nullptr, 0, nullptr), BP_STATUS_OK);
  }
};

TEST_F(DispatchFastTest, SameSizesKernelSeesTensorsAsTheyAreAndScalarsAsGiven) {
  bp_tensor_t* a = F32(kCpu, {2, 3}, {1, 2, 3, 4, 5, 6});
  bp_tensor_t* b = F32(kCpu, {2, 3}, {10, 20, 30, 40, 50, 60});
  bp_tensor_t* r = Call("add.Tensor", {T(a), T(b), D(0.5)});
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(Read(r), (std::vector<float>{6, 12, 18, 24, 30, 36}));
  EXPECT_EQ(g_seen.op_name, "add.Tensor");
  EXPECT_EQ(g_seen.num_args, 3);
  EXPECT_EQ(g_seen.num_outputs, 1);
  EXPECT_EQ(g_seen.kinds, (std::vector<int32_t>{BP_VALUE_TENSOR, BP_VALUE_TENSOR, BP_VALUE_DOUBLE}));
  EXPECT_EQ(g_seen.alpha_d, 0.5);
  for (const auto& s : g_seen.shapes) EXPECT_EQ(s, (std::vector<int64_t>{2, 3}));
  for (const auto& s : g_seen.strides) EXPECT_EQ(s, (std::vector<int64_t>{3, 1}));
  EXPECT_TRUE(bp_tensor_is_contiguous(r));
}

TEST_F(DispatchFastTest, ZeroDimOperandArrivesBroadcastByStrideZero) {
  bp_tensor_t* a = F32(kCpu, {2, 3}, {1, 2, 3, 4, 5, 6});
  bp_tensor_t* s = F32(kCpu, {}, {100});
  bp_tensor_t* r = Call("add.Tensor", {T(s), T(a)});  // the 0-dim one first: sizes come from `other`
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(Read(r), (std::vector<float>{101, 102, 103, 104, 105, 106}));
  ASSERT_EQ(g_seen.shapes.size(), 3u);
  EXPECT_EQ(g_seen.shapes[0], (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(g_seen.strides[0], (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(g_seen.strides[1], (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(g_seen.alpha_i, 1);  // the schema default, as an INT
  EXPECT_EQ(bp_tensor_ndim(r), 2);
}

TEST_F(DispatchFastTest, InplaceOnATransposedViewWritesThroughTheView) {
  bp_tensor_t* a = F32(kCpu, {2, 3}, {1, 2, 3, 4, 5, 6});
  bp_tensor_t* t = Call("transpose.int", {T(a), I(0), I(1)});
  ASSERT_NE(t, nullptr);
  bp_tensor_t* b = F32(kCpu, {3, 2}, {10, 40, 20, 50, 30, 60});
  bp_tensor_t* r = Call("add_.Tensor", {T(t), T(b)});
  EXPECT_EQ(r, t);  // the result is self
  EXPECT_EQ(g_seen.strides.back(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(Read(a), (std::vector<float>{11, 22, 33, 44, 55, 66}));
}

TEST_F(DispatchFastTest, ComparisonAllocatesABoolOutput) {
  bp_tensor_t* a = F32(kCpu, {3}, {1, 2, 3});
  bp_tensor_t* b = F32(kCpu, {3}, {1, 0, 3});
  bp_tensor_t* r = Call("eq.Tensor", {T(a), T(b)});
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(g_seen.out_dtype.code == kBool.code && g_seen.out_dtype.bits == 8);
  DLDataType dt = bp_tensor_dtype(r);
  EXPECT_TRUE(dt.code == kBool.code && dt.bits == 8 && dt.lanes == 1);
  uint8_t back[3] = {};
  ASSERT_EQ(bp_tensor_to_host(r, back, sizeof(back)), BP_STATUS_OK) << LastError();
  EXPECT_EQ(back[0], 1);
  EXPECT_EQ(back[1], 0);
  EXPECT_EQ(back[2], 1);
}

TEST_F(DispatchFastTest, AViewOutlivesTheFreshResultItWasTakenFrom) {
  bp_tensor_t* a = F32(kCpu, {2, 2}, {1, 2, 3, 4});
  bp_tensor_t* r = nullptr;
  std::vector<bp_value_t> args = {T(a), T(a)};
  ASSERT_EQ(bp_op_call(ctx_, Op("add.Tensor"), args.data(), 2, &r, 1), BP_STATUS_OK) << LastError();
  bp_tensor_t* v = Call("transpose.int", {T(r), I(0), I(1)});
  ASSERT_NE(v, nullptr);
  bp_tensor_release(r);  // the view keeps the storage
  EXPECT_EQ(Read(v), (std::vector<float>{2, 6, 4, 8}));
}

TEST_F(DispatchFastTest, AResultAndItsViewReleasedOnTwoThreadsFreeTheMemoryOnce) {
  bp_tensor_t* a = F32(kCpu, {4}, {1, 2, 3, 4});
  std::vector<bp_value_t> args = {T(a), T(a)};
  for (int i = 0; i < 500; ++i) {
    bp_tensor_t* r = nullptr;
    ASSERT_EQ(bp_op_call(ctx_, Op("add.Tensor"), args.data(), 2, &r, 1), BP_STATUS_OK) << LastError();
    bp_tensor_t* v = nullptr;
    std::vector<bp_value_t> vargs = {T(r), I(0), I(0)};
    ASSERT_EQ(bp_op_call(ctx_, Op("transpose.int"), vargs.data(), 3, &v, 1), BP_STATUS_OK) << LastError();
    std::thread other([v] { bp_tensor_release(v); });
    bp_tensor_release(r);
    other.join();
  }
  bp_allocator_stats_t s{};
  s.struct_size = sizeof(s);
  ASSERT_EQ(bp_allocator_stats(ctx_, kCpu, &s), BP_STATUS_OK);
  EXPECT_EQ(s.allocated_bytes, 512u);  // only `a` is left; every result's block came back
  EXPECT_LE(s.device_allocations, 3u);  // results reuse one cached block
}

TEST_F(DispatchFastTest, CallsTheFastPathDoesNotTakeKeepTheGenericMessages) {
  int32_t iv[2] = {1, 2};
  int64_t sizes[1] = {2};
  bp_tensor_t* i = nullptr;
  ASSERT_EQ(bp_tensor_from_host(ctx_, kCpu, 1, sizes, kI32, iv, sizeof(iv), &i), BP_STATUS_OK);
  Own(i);
  Call("add.Tensor", {T(i), T(i), D(2.5)}, BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("argument 'alpha' must not be a floating point number"));
  bp_tensor_t* f = F32(kCpu, {2}, {1, 2});
  bp_tensor_t* out = F32(kCpu, {3}, {7, 7, 7});
  Call("add.out", {T(f), T(f), I(1), T(out)}, BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("argument 'out' has sizes [3]"));
  EXPECT_EQ(Read(out), (std::vector<float>{7, 7, 7}));
  // Mixed dtypes promote through the generic path and still run the kernel.
  bp_tensor_t* r = Call("add.Tensor", {T(f), T(i)});
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(Read(r), (std::vector<float>{2, 4}));
}

}  // namespace
