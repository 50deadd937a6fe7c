// fork() after the OpenCL device was used (issue 42 item 13): the child's
// device operations on the parent's context fail at once naming fork()
// (the OpenCL driver's queues and threads are the parent's; clFinish in the
// child would wait forever). Part of opencl_e2e_test.
#include <chrono>
#include <vector>

#include "fork_child_helper.h"
#include "opencl_context_test.h"

namespace bptest {
namespace {

class OpenclForkTest : public OpenclContextTest {
 protected:
  void SetUp() override {
    OpenclContextTest::SetUp();
    LoadOpencl();
  }
};

TEST_F(OpenclForkTest, ChildGetsAClearErrorNotAHang) {
  if (IsSkipped() || HasFatalFailure()) return;
  bp_tensor_t* x = F32(dev_, {4}, {-1, 2, -3, 4});
  bp_tensor_t* r = Call("relu", {T(x)});
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(Read(r), (std::vector<float>{0, 2, 0, 4}));
  bp_context_t* ctx = ctx_;
  const bp_device_t dev = dev_;
  bp_op_t* relu = Op("relu");
  const int rc = RunInForkedChild(
      [&]() -> int {
        int bad = ExpectForkRefusal(bp_device_synchronize(ctx, dev), "bp_device_synchronize", 1);
        float out[4];
        bad |= ExpectForkRefusal(bp_tensor_to_host(r, out, sizeof out), "bp_tensor_to_host", 2);
        bp_value_t args[1] = {T(x)};
        bp_tensor_t* y = nullptr;
        bad |= ExpectForkRefusal(bp_op_call(ctx, relu, args, 1, &y, 1), "bp_op_call", 4);
        return bad;
      },
      std::chrono::seconds(20));
  EXPECT_EQ(rc, 0) << "-1: the child hung (killed at the deadline); -2: it crashed; else the bits of the failed "
                      "checks (its stderr says which)";
  EXPECT_EQ(Read(r), (std::vector<float>{0, 2, 0, 4}));
}

}  // namespace
}  // namespace bptest
