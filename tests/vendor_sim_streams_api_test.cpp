// vendor_sim's streams and events end to end, through the public API
// (backplane/streams.h): the core hands each kernel the calling thread's
// current stream, and the plugin runs it on that stream's own device thread
// (BP_VENDOR_SIM_ASYNC=1), each kernel lasting BP_VENDOR_SIM_KERNEL_US. So
// two streams really overlap, and only bp_stream_wait_event orders them.
// The plugin's table alone is tested in vendor_sim_streams_test.cpp.
// bp-test: public-api
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "bp_test_util.h"

using namespace bptest;

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kKernelMs = 150;

double MsSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

class VendorSimStreamsApiTest : public VendorSimTest {
 protected:
  void SetUp() override {
    setenv("BP_VENDOR_SIM_ASYNC", "1", 1);
    setenv("BP_VENDOR_SIM_KERNEL_US", std::to_string(kKernelMs * 1000).c_str(), 1);
    VendorSimTest::SetUp();  // the plugin reads them at init
    unsetenv("BP_VENDOR_SIM_ASYNC");
    unsetenv("BP_VENDOR_SIM_KERNEL_US");
  }
  bp_stream_handle_t* Create() {
    bp_stream_handle_t* s = nullptr;
    EXPECT_EQ(bp_stream_create(ctx_, dev_, &s), BP_STATUS_OK) << LastError();
    return s;
  }
  bp_stream_handle_t* Default() {
    bp_stream_handle_t* s = nullptr;
    EXPECT_EQ(bp_stream_get_default(ctx_, dev_, &s), BP_STATUS_OK) << LastError();
    return s;
  }
  bp_event_handle_t* Event() {
    bp_event_handle_t* e = nullptr;
    EXPECT_EQ(bp_event_create(ctx_, dev_, &e), BP_STATUS_OK) << LastError();
    return e;
  }
  int32_t Query(bp_event_handle_t* e) {
    int32_t done = -1;
    EXPECT_EQ(bp_event_query(e, &done), BP_STATUS_OK) << LastError();
    return done;
  }
};

// relu on stream A (late), then add on stream B of relu's output, ordered by
// an event: B's result is computed from A's, although A's kernel had not run
// when B's add was enqueued. (With BP_VENDOR_SIM_BROKEN set this test fails,
// as it should.)
TEST_F(VendorSimStreamsApiTest, AnEventOrdersAKernelOnBAfterOneOnA) {
  if (IsSkipped() || HasFatalFailure()) return;
  bp_stream_handle_t* a = Create();
  bp_stream_handle_t* b = Create();
  bp_event_handle_t* e = Event();
  bp_tensor_t* x = F32(dev_, {4}, {-1, 2, -3, 4});
  const Clock::time_point t0 = Clock::now();
  ASSERT_EQ(bp_set_current_stream(a), BP_STATUS_OK) << LastError();
  // A kernel writes at its start, then stays busy: a first kernel makes the
  // second one's write itself a whole duration late.
  ASSERT_NE(Call("relu", {T(x)}), nullptr);
  bp_tensor_t* r = Call("relu", {T(x)});
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(bp_event_record(e, a), BP_STATUS_OK) << LastError();
  EXPECT_EQ(Query(e), 0) << "complete before the kernel's modelled duration";
  ASSERT_EQ(bp_set_current_stream(b), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_stream_wait_event(b, e), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_tensor_record_stream(r, b), BP_STATUS_OK) << LastError();
  bp_tensor_t* s = Call("add.Tensor", {T(r), T(r), I(1)});
  ASSERT_NE(s, nullptr);
  EXPECT_LT(MsSince(t0), kKernelMs / 2.0) << "enqueueing on two streams blocked the host";
  EXPECT_EQ(Read(s), (std::vector<float>{0, 4, 0, 8}));  // reads on B, which waited for A
  EXPECT_EQ(Query(e), 1);
  ASSERT_EQ(bp_set_current_stream(Default()), BP_STATUS_OK) << LastError();
  EXPECT_EQ(bp_event_destroy(e), BP_STATUS_OK);
  EXPECT_EQ(bp_stream_destroy(a), BP_STATUS_OK) << LastError();
  EXPECT_EQ(bp_stream_destroy(b), BP_STATUS_OK) << LastError();
}

// Two slow kernels on two streams overlap; event times cover a kernel.
TEST_F(VendorSimStreamsApiTest, TwoStreamsOverlapAndEventTimesCoverAKernel) {
  if (IsSkipped() || HasFatalFailure()) return;
  bp_stream_handle_t* a = Create();
  bp_stream_handle_t* b = Create();
  bp_event_handle_t *a0 = Event(), *a1 = Event(), *b1 = Event();
  bp_tensor_t* x = F32(dev_, {4}, {1, 2, 3, 4});
  const Clock::time_point t0 = Clock::now();
  ASSERT_EQ(bp_set_current_stream(a), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_event_record(a0, a), BP_STATUS_OK) << LastError();
  ASSERT_NE(Call("relu", {T(x)}), nullptr);
  ASSERT_EQ(bp_event_record(a1, a), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_set_current_stream(b), BP_STATUS_OK) << LastError();
  ASSERT_NE(Call("relu", {T(x)}), nullptr);
  ASSERT_EQ(bp_event_record(b1, b), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_event_synchronize(a1), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_event_synchronize(b1), BP_STATUS_OK) << LastError();
  const double both_ms = MsSince(t0);
  EXPECT_LT(both_ms, 1.8 * kKernelMs) << "the two streams' kernels did not overlap";
  float ms = -1;
  ASSERT_EQ(bp_event_elapsed_time(a0, a1, &ms), BP_STATUS_OK) << LastError();
  EXPECT_GE(ms, kKernelMs);
  ASSERT_EQ(bp_set_current_stream(Default()), BP_STATUS_OK) << LastError();
  for (bp_event_handle_t* e : {a0, a1, b1}) EXPECT_EQ(bp_event_destroy(e), BP_STATUS_OK);
  EXPECT_EQ(bp_stream_destroy(a), BP_STATUS_OK) << LastError();
  EXPECT_EQ(bp_stream_destroy(b), BP_STATUS_OK) << LastError();
}

}  // namespace
