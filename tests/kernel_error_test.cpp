// Per-call kernel errors (ABI 1.2): a kernel's message travels with its call
// (bp_kernel_call_t.fail, through plugin_kit.h's bp_kit_fail) to the caller's
// bp_last_error_message(); a kernel that fails silently gets the generic
// message, never an earlier unrelated error's; a plugin negotiated at 1.0
// still reports through the thread-local host->set_error.
#include <string>

#include "bp_test_util.h"

using namespace bptest;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

class KernelErrorTest : public ContextTest {
 protected:
  // Calls `op` on `self` and expects it to fail with `code`; returns the message.
  std::string CallFails(const char* op, bp_tensor_t* self, bp_status_t code) {
    bp_value_t args[] = {T(self)};
    bp_tensor_t* r = nullptr;
    EXPECT_EQ(bp_op_call(ctx_, Op(op), args, 1, &r, 1), code) << LastError();
    EXPECT_EQ(r, nullptr);
    EXPECT_EQ(bp_last_error_status(), code);
    return LastError();
  }
  // Leaves an unrelated error in this thread's last error.
  void LeaveUnrelatedError() {
    bp_op_t* op = nullptr;
    ASSERT_EQ(bp_op_find(ctx_, "no_such_operator_here", &op), BP_STATUS_NOT_FOUND);
    ASSERT_THAT(LastError(), HasSubstr("no_such_operator_here"));
  }
};

// The kernel reports from a worker thread of its own: the thread-local last
// error of that thread dies with it, so only the message attached to the call
// can reach the caller. Same on the CPU and through the CPU fallback.
TEST_F(KernelErrorTest, PerCallMessageReachesTheCaller) {
  bp_device_t dev = LoadTestdev();
  for (bp_device_t where : {kCpu, dev}) {
    LeaveUnrelatedError();
    bp_tensor_t* x = F32(where, {2}, {1, 2});
    EXPECT_EQ(CallFails("testdev::fail_in_worker", x, BP_STATUS_INVALID_ARGUMENT),
              "testdev::fail_in_worker: argument 'self': expected a tensor this kernel likes, got any tensor");
  }
}

TEST_F(KernelErrorTest, PerCallMessageIsCapped) {
  LoadTestdev();
  std::string msg = CallFails("testdev::fail_long", F32(kCpu, {1}, {1}), BP_STATUS_OUT_OF_RANGE);
  EXPECT_EQ(msg.size(), static_cast<size_t>(BP_KERNEL_ERROR_MAX_MESSAGE));
  EXPECT_EQ(msg.rfind("testdev::fail_long: xxx", 0), 0u) << msg.substr(0, 40);
}

// No message: the generic one naming operator, backend and status; the
// unrelated error left in the thread-local before the call is not taken.
TEST_F(KernelErrorTest, SilentFailureGetsTheGenericMessage) {
  bp_device_t dev = LoadTestdev();
  LeaveUnrelatedError();
  std::string msg = CallFails("testdev::fail_silently", F32(kCpu, {2}, {1, 2}), BP_STATUS_INTERNAL);
  EXPECT_THAT(msg, HasSubstr("testdev::fail_silently: kernel on backend '"));
  EXPECT_THAT(msg, HasSubstr("failed with INTERNAL"));
  EXPECT_THAT(msg, Not(HasSubstr("no_such_operator_here")));
  // A kernel's message does not leak into the next silent failure either.
  CallFails("testdev::fail_in_worker", F32(kCpu, {1}, {1}), BP_STATUS_INVALID_ARGUMENT);
  msg = CallFails("testdev::fail_silently", F32(dev, {1}, {1}), BP_STATUS_INTERNAL);
  EXPECT_THAT(msg, Not(HasSubstr("fail_in_worker")));
  EXPECT_THAT(msg, HasSubstr("testdev::fail_silently"));
}

// A plugin that negotiated ABI 1.0 knows nothing of bp_kernel_call_t.fail; its
// kernel's host->set_error message still reaches the caller.
TEST_F(KernelErrorTest, OlderMinorPluginStillReportsThroughSetError) {
  unsetenv("OLDMINOR_ANSWER");
  bp_plugin_t* p = nullptr;
  ASSERT_EQ(bp_plugin_load(ctx_, PluginPath("bp_old_minor").c_str(), &p), BP_STATUS_OK) << LastError();
  EXPECT_EQ(CallFails("oldminor::fail", F32(kCpu, {2}, {1, 2}), BP_STATUS_INVALID_ARGUMENT),
            "oldminor::fail: argument 'self': refused by a 1.0 plugin");
  EXPECT_EQ(bp_plugin_unload(ctx_, p), BP_STATUS_OK) << LastError();
}

}  // namespace
