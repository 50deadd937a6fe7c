// The asynchronous device error contract (issue 42 item 15, docs/streams.md
// "Asynchronous errors"), on vendor_sim asynchronous with a relu that faults
// on the device (BP_VENDOR_SIM_FAULT_OP=relu): the launch returns OK; the
// stream's synchronize reports the fault naming the operator, every time
// (sticky); the faulted output reads back as an error, not OK; the stream and
// the plugin can still be released. Also: a capture whose thread exited
// without ending it does not keep its stream from being destroyed.
// bp-test: public-api
#include <gmock/gmock.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "bp_test_util.h"

using namespace bptest;
using ::testing::HasSubstr;

namespace {

class AsyncFaultTest : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    const std::string cpu = std::string(BP_BUILD_PLUGIN_DIR) + "/libbackplane_cpu.so";
    const std::string vendor = std::string(BP_BUILD_PLUGIN_DIR) + "/libbackplane_vendor_sim.so";
    ASSERT_EQ(bp_plugin_load(ctx_, cpu.c_str(), nullptr), BP_STATUS_OK) << LastError();
    setenv("BP_VENDOR_SIM_ASYNC", "1", 1);
    setenv("BP_VENDOR_SIM_FAULT_OP", "relu", 1);
    const bp_status_t rc = bp_plugin_load(ctx_, vendor.c_str(), &plugin_);  // it reads them at init
    unsetenv("BP_VENDOR_SIM_ASYNC");
    unsetenv("BP_VENDOR_SIM_FAULT_OP");
    ASSERT_EQ(rc, BP_STATUS_OK) << LastError();
    ASSERT_EQ(bp_device_parse(ctx_, "vendor_sim:0", &dev_), BP_STATUS_OK) << LastError();
    ASSERT_EQ(bp_stream_create(ctx_, dev_, &s_), BP_STATUS_OK) << LastError();
    ASSERT_EQ(bp_stream_get_default(ctx_, dev_, &default_), BP_STATUS_OK) << LastError();
  }
  void TearDown() override {
    bp_set_current_stream(default_);
    if (s_ != nullptr) bp_stream_destroy(s_);
    ContextTest::TearDown();
  }
  // relu(x) enqueued on s_ (it faults on the device); x is made on the default stream.
  bp_tensor_t* FaultingRelu(bp_tensor_t** out_x) {
    bp_tensor_t* x = F32(dev_, {4}, {-1, 2, -3, 4});
    EXPECT_EQ(bp_set_current_stream(s_), BP_STATUS_OK) << LastError();
    bp_tensor_t* r = Call("relu", {T(x)});  // the launch itself succeeds
    EXPECT_EQ(bp_set_current_stream(default_), BP_STATUS_OK) << LastError();
    *out_x = x;
    return r;
  }

  bp_plugin_t* plugin_ = nullptr;
  bp_device_t dev_{};
  bp_stream_handle_t* s_ = nullptr;
  bp_stream_handle_t* default_ = nullptr;
};

TEST_F(AsyncFaultTest, SynchronizeReportsTheFaultNamingTheOperatorEveryTime) {
  bp_tensor_t* x = nullptr;
  ASSERT_NE(FaultingRelu(&x), nullptr);
  EXPECT_EQ(bp_stream_synchronize(s_), BP_STATUS_INTERNAL);
  EXPECT_THAT(LastError(), HasSubstr("device fault in operator 'relu'"));
  EXPECT_EQ(bp_stream_synchronize(s_), BP_STATUS_INTERNAL) << "the fault is sticky";
  EXPECT_THAT(LastError(), HasSubstr("'relu'"));
  // Another stream is not affected.
  EXPECT_EQ(bp_stream_synchronize(default_), BP_STATUS_OK) << LastError();
  EXPECT_EQ(Read(x), (std::vector<float>{-1, 2, -3, 4}));
}

TEST_F(AsyncFaultTest, TheFaultedOutputReadsBackAsAnError) {
  bp_tensor_t* x = nullptr;
  bp_tensor_t* r = FaultingRelu(&x);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(bp_stream_synchronize(s_), BP_STATUS_INTERNAL);
  // Read on the (healthy) default stream: the bytes are not a result.
  std::vector<float> out(4, 7.0f);
  EXPECT_NE(bp_tensor_to_host(r, out.data(), out.size() * sizeof(float)), BP_STATUS_OK)
      << "the faulted output read back with OK";
  EXPECT_THAT(LastError(), HasSubstr("device fault in operator 'relu'"));
  // Its copy to the host device fails the same way.
  bp_tensor_t* on_host = nullptr;
  EXPECT_NE(bp_tensor_to_device(r, bp_device_t{0, 0}, &on_host), BP_STATUS_OK);
  EXPECT_THAT(LastError(), HasSubstr("'relu'"));
  // Healthy tensors still read back.
  EXPECT_EQ(Read(x), (std::vector<float>{-1, 2, -3, 4}));
}

TEST_F(AsyncFaultTest, AStreamAndThePluginWithAStickyFaultCanBeReleased) {
  bp_tensor_t* x = nullptr;
  bp_tensor_t* r = FaultingRelu(&x);
  ASSERT_NE(r, nullptr);
  // Not synchronized first: destroy meets the fault itself, releases anyway.
  EXPECT_EQ(bp_stream_destroy(s_), BP_STATUS_OK) << LastError();
  s_ = nullptr;
  EXPECT_GE(CountLogs("released the stream although its work ended with an error"), 1);
  for (bp_tensor_t* t : owned_) bp_tensor_release(t);
  owned_.clear();
  EXPECT_EQ(bp_plugin_unload(ctx_, plugin_), BP_STATUS_OK) << LastError();
}

TEST_F(AsyncFaultTest, ACaptureWhoseThreadExitedDoesNotKeepTheStream) {
  bp_tensor_t* x = F32(dev_, {4}, {-1, 2, -3, 4});
  bp_op_t* add = Op("add.Tensor");
  bp_status_t begun = BP_STATUS_INTERNAL, called = BP_STATUS_INTERNAL;
  std::thread t([&] {
    bp_set_current_stream(s_);
    begun = bp_graph_begin_capture(s_);
    bp_value_t args[2] = {T(x), T(x)};
    bp_tensor_t* y = nullptr;
    called = bp_op_call(ctx_, add, args, 2, &y, 1);
    bp_tensor_release(y);
    // exits still capturing: no bp_graph_end_capture
  });
  t.join();
  ASSERT_EQ(begun, BP_STATUS_OK);
  ASSERT_EQ(called, BP_STATUS_OK);
  EXPECT_EQ(bp_stream_destroy(s_), BP_STATUS_OK) << LastError();
  s_ = nullptr;
}

TEST_F(AsyncFaultTest, ACaptureOfALiveThreadStillRefusesDestroy) {
  ASSERT_EQ(bp_set_current_stream(s_), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_graph_begin_capture(s_), BP_STATUS_OK) << LastError();
  EXPECT_EQ(bp_stream_destroy(s_), BP_STATUS_FAILED_PRECONDITION);
  ASSERT_EQ(bp_set_current_stream(default_), BP_STATUS_OK) << LastError();
  bp_graph_t* g = nullptr;
  EXPECT_EQ(bp_graph_end_capture(s_, &g), BP_STATUS_OK) << LastError();
  bp_graph_destroy(g);
}

}  // namespace
