// Guard mode (issue 23 item 13): with BACKPLANE_GUARD=1 the caching allocator
// puts canary bytes after every block; an uninstrumented kernel that writes
// past its output is reported at the next synchronize (DATA_LOSS) or when the
// block is released (a warning), naming the operator.
#include <cstdlib>
#include <string>

#include "bp_test_util.h"

using namespace bptest;
using ::testing::HasSubstr;

namespace {

class GuardModeTest : public ContextTest {
 protected:
  // Guard mode is read when a device's allocator is created: before the context.
  void SetUp() override {
    ASSERT_EQ(setenv("BACKPLANE_GUARD", "1", 1), 0);
    ContextTest::SetUp();
  }
  void TearDown() override {
    ContextTest::TearDown();
    unsetenv("BACKPLANE_GUARD");
    unsetenv("BP_FAULT");
  }
  // Loads the fault plugin with `fault` (its add.Tensor misbehaves) and
  // returns its device: memory reached only through its copies here.
  bp_device_t LoadFault(const char* fault) {
    EXPECT_EQ(setenv("BP_FAULT", fault, 1), 0);
    EXPECT_EQ(bp_plugin_load(ctx_, PluginPath("bp_fault").c_str(), nullptr), BP_STATUS_OK) << LastError();
    bp_device_t d{};
    EXPECT_EQ(bp_device_parse(ctx_, "fault:0", &d), BP_STATUS_OK) << LastError();
    return d;
  }
};

class GuardOverrunTest : public GuardModeTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(GuardOverrunTest, SynchronizeReportsTheOperatorThatWrotePastItsOutput) {
  const bp_device_t dev = LoadFault(GetParam());
  bp_tensor_t* a = F32(dev, {4}, {1, 2, 3, 4});
  bp_tensor_t* sum = Call("add.Tensor", {T(a), T(a), I(1)});
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ(bp_device_synchronize(ctx_, dev), BP_STATUS_DATA_LOSS);
  EXPECT_THAT(LastError(), HasSubstr("bp_device_synchronize: guard: a kernel wrote past the end of its output"));
  EXPECT_THAT(LastError(), HasSubstr("after the 16 bytes of a block on fault:0"));
  EXPECT_THAT(LastError(), HasSubstr("operator 'add.Tensor' on backend 'fault'"));
  // Reported once: the canary is rewritten, and the next synchronize is clean.
  EXPECT_EQ(bp_device_synchronize(ctx_, dev), BP_STATUS_OK) << LastError();
}

TEST_P(GuardOverrunTest, ReleaseWarnsNamingTheOperator) {
  const bp_device_t dev = LoadFault(GetParam());
  bp_tensor_t* a = F32(dev, {4}, {1, 2, 3, 4});
  bp_tensor_t* sum = nullptr;
  bp_value_t args[] = {T(a), T(a), I(1)};
  ASSERT_EQ(bp_op_call(ctx_, Op("add.Tensor"), args, 3, &sum, 1), BP_STATUS_OK) << LastError();
  bp_tensor_release(sum);  // never synchronized: the release finds it
  EXPECT_EQ(CountLogs("operator 'add.Tensor' on backend 'fault' (found when the block was released)"), 1);
}

INSTANTIATE_TEST_SUITE_P(OneAndHundredFloats, GuardOverrunTest,
                         ::testing::Values("kernel_overrun_1", "kernel_overrun_100"));

TEST_F(GuardModeTest, KernelsThatStayInsideTheirOutputsReportNothing) {
  const bp_device_t dev = LoadFault("none");
  bp_tensor_t* a = F32(dev, {3}, {1, 2, 3});
  EXPECT_EQ(Read(Call("add.Tensor", {T(a), T(a), I(1)})), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(bp_device_synchronize(ctx_, dev), BP_STATUS_OK) << LastError();
  EXPECT_EQ(CountLogs("guard:"), 0);
}

// Host memory (the cpu device): the canary is written and read directly.
bp_status_t OverrunCpu(const bp_kernel_call_t* call) {
  const DLTensor* x = call->args[0].u.tensor;
  const DLTensor* o = call->outputs[0];
  const int64_t n = Numel(o);
  float* out = HostElem<float>(o, 0);
  for (int64_t i = 0; i < n; ++i) out[i] = *HostElem<float>(x, i);
  out[n] = 7.0f;  // one float too many
  return BP_STATUS_OK;
}

bp_status_t SameShapeMeta(const bp_meta_call_t* call) {
  const DLTensor* x = call->args[0].u.tensor;
  call->out_specs[0].dtype = x->dtype;
  call->out_specs[0].ndim = x->ndim;
  for (int32_t i = 0; i < x->ndim; ++i) call->out_specs[0].sizes[i] = x->shape[i];
  return BP_STATUS_OK;
}

TEST_F(GuardModeTest, HostMemoryOverrunIsReportedToo) {
  bp_op_t* op = nullptr;
  ASSERT_EQ(
      bp_op_define(ctx_, "guardtest::overrun(Tensor self) -> Tensor", OverrunCpu, nullptr, SameShapeMeta, nullptr, &op),
      BP_STATUS_OK)
      << LastError();
  bp_tensor_t* x = F32(kCpu, {5}, {1, 2, 3, 4, 5});
  ASSERT_NE(Call("guardtest::overrun", {T(x)}), nullptr);
  EXPECT_EQ(bp_device_synchronize(ctx_, kCpu), BP_STATUS_DATA_LOSS);
  EXPECT_THAT(LastError(), HasSubstr("after the 20 bytes of a block on cpu:0"));
  EXPECT_THAT(LastError(), HasSubstr("operator 'guardtest::overrun'"));
}

}  // namespace
