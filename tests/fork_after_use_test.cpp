// fork() after a device was used (issue 42 item 13): in the child, every
// device operation on the parent's context fails at once with
// FAILED_PRECONDITION naming fork(), instead of waiting forever for the
// asynchronous vendor_sim's device threads, which the child does not have.
// A context the child creates works.
// bp-test: public-api
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bp_test_util.h"
#include "fork_child_helper.h"

using namespace bptest;

namespace {

class ForkAfterUseTest : public VendorSimTest {
 protected:
  void SetUp() override {
    setenv("BP_VENDOR_SIM_ASYNC", "1", 1);
    VendorSimTest::SetUp();  // the plugin reads it at init
    unsetenv("BP_VENDOR_SIM_ASYNC");
  }
};

TEST_F(ForkAfterUseTest, ChildGetsAClearErrorNotAHang) {
  if (IsSkipped() || HasFatalFailure()) return;
  bp_stream_handle_t* s = nullptr;
  ASSERT_EQ(bp_stream_create(ctx_, dev_, &s), BP_STATUS_OK) << LastError();
  bp_tensor_t* x = F32(dev_, {4}, {-1, 2, -3, 4});
  bp_tensor_t* r = Call("relu", {T(x)});
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(Read(r), (std::vector<float>{0, 2, 0, 4}));  // the device was used
  bp_op_t* relu = Op("relu");
  bp_context_t* ctx = ctx_;
  const bp_device_t dev = dev_;
  const int rc = RunInForkedChild(
      [&]() -> int {
        int bad = 0;
        bp_stream_handle_t* def = nullptr;
        bad |= ExpectForkRefusal(bp_stream_get_default(ctx, dev, &def), "bp_stream_get_default", 1);
        bad |= ExpectForkRefusal(bp_stream_synchronize(s), "bp_stream_synchronize", 2);
        float out[4];
        bad |= ExpectForkRefusal(bp_tensor_to_host(r, out, sizeof out), "bp_tensor_to_host", 4);
        bp_value_t args[1] = {T(x)};
        bp_tensor_t* y = nullptr;
        bad |= ExpectForkRefusal(bp_op_call(ctx, relu, args, 1, &y, 1), "bp_op_call", 8);
        bad |= ExpectForkRefusal(bp_device_synchronize(ctx, dev), "bp_device_synchronize", 16);
        bp_tensor_t* z = nullptr;
        const int64_t n = 4;
        const float h[4] = {1, 2, 3, 4};
        bad |= ExpectForkRefusal(bp_tensor_from_host(ctx, dev, 1, &n, DLDataType{kDLFloat, 32, 1}, h, sizeof h, &z),
                                 "bp_tensor_from_host", 32);
        bad |= ExpectForkRefusal(bp_stream_destroy(s), "bp_stream_destroy", 64);
        // Destroying the parent's context in the child returns at once.
        bp_context_destroy(ctx);
        // A context of the child's own works.
        bp_context_t* mine = nullptr;
        if (bp_context_create(nullptr, &mine) != BP_STATUS_OK) return bad | 128;
        bp_tensor_t* t = nullptr;
        if (bp_tensor_from_host(mine, bp_device_t{0, 0}, 1, &n, DLDataType{kDLFloat, 32, 1}, h, sizeof h, &t) !=
            BP_STATUS_OK) {
          fprintf(stderr, "child: its own context: %s\n", bp_last_error_message());
          return bad | 128;
        }
        bp_tensor_release(t);
        bp_context_destroy(mine);
        return bad;
      },
      std::chrono::seconds(20));
  EXPECT_EQ(rc, 0) << "-1: the child hung (killed at the deadline); -2: it crashed; else the bits of the failed "
                      "checks (its stderr says which)";
  // The parent's context is untouched by the child.
  EXPECT_EQ(bp_stream_synchronize(s), BP_STATUS_OK) << LastError();
  EXPECT_EQ(Read(r), (std::vector<float>{0, 2, 0, 4}));
  EXPECT_EQ(bp_stream_destroy(s), BP_STATUS_OK) << LastError();
}

}  // namespace
