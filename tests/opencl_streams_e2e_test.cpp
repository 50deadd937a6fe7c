// OpenCL streams and events through libbackplane's public API (streams.h):
// operators run on the calling thread's current stream, a second stream waits
// for the first through an event on the device, and the host reads correct
// results; events report completion and time; a destroyed stream's work is
// not lost. (streams.h comes with backplane.h.)
#include <string>
#include <vector>

#include "opencl_context_test.h"

namespace bptest {
namespace {

class OpenclStreamsE2E : public OpenclContextTest {
 protected:
  void SetUp() override {
    OpenclContextTest::SetUp();
    LoadOpencl();
  }
  bp_stream_handle_t* NewStream() {
    bp_stream_handle_t* s = nullptr;
    EXPECT_EQ(bp_stream_create(ctx_, dev_, &s), BP_STATUS_OK) << LastError();
    return s;
  }
  bp_event_handle_t* NewEvent() {
    bp_event_handle_t* e = nullptr;
    EXPECT_EQ(bp_event_create(ctx_, dev_, &e), BP_STATUS_OK) << LastError();
    return e;
  }
  bp_stream_handle_t* Default() {
    bp_stream_handle_t* s = nullptr;
    EXPECT_EQ(bp_stream_get_default(ctx_, dev_, &s), BP_STATUS_OK) << LastError();
    return s;
  }
};

TEST_F(OpenclStreamsE2E, TwoStreamsOrderedByAnEvent) {
  const int64_t n = 1 << 20;
  bp_tensor_t* one = F32(dev_, {n}, std::vector<float>(n, 1.0f));
  bp_stream_handle_t* s1 = NewStream();
  bp_stream_handle_t* s2 = NewStream();
  bp_event_handle_t *start = NewEvent(), *done = NewEvent(), *end = NewEvent();
  ASSERT_EQ(bp_set_current_stream(s1), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_event_record(start, s1), BP_STATUS_OK) << LastError();
  bp_tensor_t* acc = Call("add.Tensor", {T(one), T(one), I(1)});
  for (int i = 0; i < 10; ++i) acc = Call("add.Tensor", {T(acc), T(one), I(1)});
  ASSERT_EQ(bp_event_record(done, s1), BP_STATUS_OK) << LastError();
  // s2 waits on the device; the host goes on to enqueue the multiply.
  ASSERT_EQ(bp_set_current_stream(s2), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_stream_wait_event(s2, done), BP_STATUS_OK) << LastError();
  bp_tensor_t* twice = Call("mul.Tensor", {T(acc), T(acc)});
  // acc is used on s2: its block waits for s2 when freed (also at context
  // destroy, which must wait on the plugin's events before unloading it).
  ASSERT_EQ(bp_tensor_record_stream(acc, s2), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_event_record(end, s2), BP_STATUS_OK) << LastError();
  const std::vector<float> got = Read(twice);  // synchronizes s2, the current stream
  for (int64_t i = 0; i < n; i += 4097) ASSERT_EQ(got[i], 144.0f) << i;
  int32_t complete = -1;
  ASSERT_EQ(bp_event_query(end, &complete), BP_STATUS_OK) << LastError();
  EXPECT_EQ(complete, 1);
  float t_done = -1, t_end = -1;
  ASSERT_EQ(bp_event_elapsed_time(start, done, &t_done), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_event_elapsed_time(start, end, &t_end), BP_STATUS_OK) << LastError();
  EXPECT_GT(t_done, 0.0f);
  EXPECT_GE(t_end, t_done) << "s2's work ended after what it waited for";
  ASSERT_EQ(bp_set_current_stream(Default()), BP_STATUS_OK);
  EXPECT_EQ(bp_stream_destroy(s1), BP_STATUS_OK) << LastError();
  EXPECT_EQ(bp_stream_destroy(s2), BP_STATUS_OK) << LastError();
  for (bp_event_handle_t* e : {start, done, end}) EXPECT_EQ(bp_event_destroy(e), BP_STATUS_OK);
}

TEST_F(OpenclStreamsE2E, DestroyKeepsTheStreamsWork) {
  const int64_t n = 1 << 20;
  bp_tensor_t* one = F32(dev_, {n}, std::vector<float>(n, 1.0f));
  bp_stream_handle_t* s = NewStream();
  bp_event_handle_t* done = NewEvent();
  ASSERT_EQ(bp_set_current_stream(s), BP_STATUS_OK);
  bp_tensor_t* acc = Call("add.Tensor", {T(one), T(one), I(1)});
  for (int i = 0; i < 10; ++i) acc = Call("add.Tensor", {T(acc), T(one), I(1)});
  ASSERT_EQ(bp_event_record(done, s), BP_STATUS_OK);
  ASSERT_EQ(bp_set_current_stream(Default()), BP_STATUS_OK);
  ASSERT_EQ(bp_stream_destroy(s), BP_STATUS_OK) << LastError();
  int32_t complete = -1;
  ASSERT_EQ(bp_event_query(done, &complete), BP_STATUS_OK) << LastError();
  EXPECT_EQ(complete, 1) << "destroy waited for the stream";
  EXPECT_EQ(Read(acc)[n - 1], 12.0f);
  EXPECT_EQ(bp_event_destroy(done), BP_STATUS_OK);
}

}  // namespace
}  // namespace bptest
