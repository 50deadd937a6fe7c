// Host streams and events (backplane/streams.h) through the public API on
// the CPU plugin's device: the current stream per thread, destroy rules,
// events and their timing, the caching allocator's per-stream pools and
// record_stream. Ordering on a truly asynchronous device is the streams
// group's of bp-conformance (vendor_sim's async mode).
#include <thread>

#include "bp_test_util.h"

using namespace bptest;

namespace {

class StreamsTest : public VendorSimTest {
 protected:
  bp_stream_handle_t* Create(bp_device_t d) {
    bp_stream_handle_t* s = nullptr;
    EXPECT_EQ(bp_stream_create(ctx_, d, &s), BP_STATUS_OK) << LastError();
    return s;
  }
  bp_stream_handle_t* Default(bp_device_t d) {
    bp_stream_handle_t* s = nullptr;
    EXPECT_EQ(bp_stream_get_default(ctx_, d, &s), BP_STATUS_OK) << LastError();
    return s;
  }
  bp_stream_handle_t* Current(bp_device_t d) {
    bp_stream_handle_t* s = nullptr;
    EXPECT_EQ(bp_get_current_stream(ctx_, d, &s), BP_STATUS_OK) << LastError();
    return s;
  }
  bp_allocator_stats_t StreamStats(bp_stream_handle_t* s) {
    bp_allocator_stats_t st{};
    st.struct_size = sizeof(st);
    EXPECT_EQ(bp_stream_allocator_stats(s, &st), BP_STATUS_OK) << LastError();
    return st;
  }
  bp_allocator_stats_t DeviceStats(bp_device_t d) {
    bp_allocator_stats_t st{};
    st.struct_size = sizeof(st);
    EXPECT_EQ(bp_allocator_stats(ctx_, d, &st), BP_STATUS_OK) << LastError();
    return st;
  }
  bp_tensor_t* Bytes(bp_device_t d, int64_t n) {
    bp_tensor_t* t = nullptr;
    EXPECT_EQ(bp_tensor_empty(ctx_, d, 1, &n, DLDataType{kDLUInt, 8, 1}, &t), BP_STATUS_OK) << LastError();
    return t;
  }
  static void* DataOf(bp_tensor_t* t) {
    DLManagedTensor* m = nullptr;
    EXPECT_EQ(bp_tensor_to_dlpack(t, &m), BP_STATUS_OK) << LastError();
    void* p = m->dl_tensor.data;
    m->deleter(m);
    return p;
  }
};

TEST_F(StreamsTest, CurrentStreamIsPerThreadAndOperatorsRunOnIt) {
  bp_stream_handle_t* s = Create(kCpu);
  ASSERT_NE(s, nullptr);
  bp_device_t on{};
  ASSERT_EQ(bp_stream_device(s, &on), BP_STATUS_OK);
  EXPECT_EQ(on.backend, kCpu.backend);
  EXPECT_EQ(Current(kCpu), Default(kCpu));
  ASSERT_EQ(bp_set_current_stream(s), BP_STATUS_OK) << LastError();
  EXPECT_EQ(Current(kCpu), s);
  bp_stream_handle_t* seen_elsewhere = nullptr;
  std::thread([&] { bp_get_current_stream(ctx_, kCpu, &seen_elsewhere); }).join();
  EXPECT_EQ(seen_elsewhere, Default(kCpu)) << "another thread's current stream changed";
  bp_tensor_t* a = F32(kCpu, {4}, {1, 2, 3, 4});
  bp_tensor_t* r = Call("add.Tensor", {T(a), T(a), I(1)});
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(Read(r), (std::vector<float>{2, 4, 6, 8}));
  ASSERT_EQ(bp_stream_synchronize(s), BP_STATUS_OK);
  ASSERT_EQ(bp_set_current_stream(Default(kCpu)), BP_STATUS_OK);
  EXPECT_EQ(Current(kCpu), Default(kCpu));
  EXPECT_EQ(bp_stream_destroy(s), BP_STATUS_OK) << LastError();
}

TEST_F(StreamsTest, DestroyRefusesTheDefaultAndACurrentStream) {
  EXPECT_EQ(bp_stream_destroy(nullptr), BP_STATUS_OK);
  EXPECT_EQ(bp_stream_destroy(Default(kCpu)), BP_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(LastError().find("default stream"), std::string::npos) << LastError();
  bp_stream_handle_t* s = Create(kCpu);
  ASSERT_EQ(bp_set_current_stream(s), BP_STATUS_OK);
  EXPECT_EQ(bp_stream_destroy(s), BP_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(LastError().find("current stream of 1 thread"), std::string::npos) << LastError();
  ASSERT_EQ(bp_set_current_stream(Default(kCpu)), BP_STATUS_OK);
  EXPECT_EQ(bp_stream_destroy(s), BP_STATUS_OK) << LastError();
  // A thread that exits with a current stream set gives it up.
  bp_stream_handle_t* t = Create(kCpu);
  std::thread([&] { EXPECT_EQ(bp_set_current_stream(t), BP_STATUS_OK); }).join();
  EXPECT_EQ(bp_stream_destroy(t), BP_STATUS_OK) << LastError();
}

TEST_F(StreamsTest, EventsQueryAndTimeOnTheHost) {
  bp_event_handle_t *e1 = nullptr, *e2 = nullptr, *e3 = nullptr;
  ASSERT_EQ(bp_event_create(ctx_, kCpu, &e1), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_event_create(ctx_, kCpu, &e2), BP_STATUS_OK);
  ASSERT_EQ(bp_event_create(ctx_, kCpu, &e3), BP_STATUS_OK);
  int32_t complete = -1;
  ASSERT_EQ(bp_event_query(e1, &complete), BP_STATUS_OK);
  EXPECT_EQ(complete, 1) << "a never-recorded event is complete";
  float ms = -1;
  EXPECT_EQ(bp_event_elapsed_time(e1, e2, &ms), BP_STATUS_FAILED_PRECONDITION);
  EXPECT_EQ(ms, -1) << "an error writes no output";
  bp_stream_handle_t* s = Create(kCpu);
  ASSERT_EQ(bp_event_record(e1, s), BP_STATUS_OK) << LastError();
  bp_tensor_t* a = F32(kCpu, {1 << 16}, std::vector<float>(1 << 16, 1.0f));
  Call("mul.Tensor", {T(a), T(a)});
  ASSERT_EQ(bp_event_record(e2, s), BP_STATUS_OK);
  Call("mul.Tensor", {T(a), T(a)});
  ASSERT_EQ(bp_event_record(e3, s), BP_STATUS_OK);
  ASSERT_EQ(bp_stream_wait_event(Default(kCpu), e3), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_event_synchronize(e3), BP_STATUS_OK);
  float t12 = -1, t13 = -1;
  ASSERT_EQ(bp_event_elapsed_time(e1, e2, &t12), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_event_elapsed_time(e1, e3, &t13), BP_STATUS_OK);
  EXPECT_GE(t12, 0.0f);
  EXPECT_GE(t13, t12) << "event times must not run backwards";
  EXPECT_EQ(bp_stream_destroy(s), BP_STATUS_OK);
  for (bp_event_handle_t* e : {e1, e2, e3}) EXPECT_EQ(bp_event_destroy(e), BP_STATUS_OK);
}

TEST_F(StreamsTest, EventsOrderOneDeviceOnly) {
  bp_event_handle_t* e = nullptr;
  ASSERT_EQ(bp_event_create(ctx_, kCpu, &e), BP_STATUS_OK);
  EXPECT_EQ(bp_stream_wait_event(Default(dev_), e), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("bp_stream_wait_event: the event is of device cpu:0, the stream of device vendor_sim:0"),
            std::string::npos)
      << LastError();
  EXPECT_EQ(bp_event_record(e, Default(dev_)), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(bp_event_query(nullptr, nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(bp_set_current_stream(nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(bp_event_destroy(e), BP_STATUS_OK);
}

TEST_F(StreamsTest, EachStreamReusesItsOwnBlocks) {
  bp_stream_handle_t* s = Create(kCpu);
  ASSERT_EQ(bp_set_current_stream(s), BP_STATUS_OK);
  bp_tensor_t* a = Bytes(kCpu, 1000);
  void* block = DataOf(a);
  bp_tensor_release(a);
  bp_allocator_stats_t on_s = StreamStats(s);
  EXPECT_EQ(on_s.allocated_bytes, 0u);
  EXPECT_EQ(on_s.reserved_bytes, 1024u);
  EXPECT_EQ(on_s.device_allocations, 1u);
  // The default stream does not take the block cached for s...
  ASSERT_EQ(bp_set_current_stream(Default(kCpu)), BP_STATUS_OK);
  const uint64_t before = DeviceStats(kCpu).device_allocations;
  bp_tensor_t* b = Bytes(kCpu, 1000);
  EXPECT_NE(DataOf(b), block);
  EXPECT_EQ(DeviceStats(kCpu).device_allocations, before + 1);
  // ...s does.
  ASSERT_EQ(bp_set_current_stream(s), BP_STATUS_OK);
  bp_tensor_t* c = Bytes(kCpu, 1000);
  EXPECT_EQ(DataOf(c), block);
  EXPECT_EQ(StreamStats(s).cache_hits, 1u);
  bp_tensor_release(c);
  ASSERT_EQ(bp_set_current_stream(Default(kCpu)), BP_STATUS_OK);
  // A destroyed stream's cached blocks go to the default stream's pool.
  ASSERT_EQ(bp_stream_destroy(s), BP_STATUS_OK);
  bp_tensor_t* d = Bytes(kCpu, 1000);
  EXPECT_EQ(DataOf(d), block);
  bp_tensor_release(b);
  bp_tensor_release(d);
}

TEST_F(StreamsTest, RecordStreamDefersReuseUntilTheStreamsWorkIsDone) {
  bp_stream_handle_t* s = Create(kCpu);
  bp_tensor_t* a = Bytes(kCpu, 1000);  // on the default stream
  void* block = DataOf(a);
  ASSERT_EQ(bp_tensor_record_stream(a, s), BP_STATUS_OK) << LastError();
  EXPECT_EQ(bp_tensor_record_stream(a, Default(dev_)), BP_STATUS_INVALID_ARGUMENT);
  bp_tensor_release(a);
  // The host's events complete at once: the block is back for the default stream.
  bp_tensor_t* b = Bytes(kCpu, 1000);
  EXPECT_EQ(DataOf(b), block);
  bp_tensor_release(b);
  EXPECT_EQ(bp_stream_destroy(s), BP_STATUS_OK);
}

TEST_F(StreamsTest, DeviceWithoutStreamCreateSaysSo) {
  bp_device_t testdev = LoadTestdev();
  bp_stream_handle_t* s = nullptr;
  EXPECT_EQ(bp_stream_create(ctx_, testdev, &s), BP_STATUS_UNIMPLEMENTED);
  EXPECT_NE(LastError().find("has only its default stream"), std::string::npos) << LastError();
  EXPECT_EQ(s, nullptr);
  EXPECT_EQ(bp_stream_synchronize(Default(testdev)), BP_STATUS_OK);
}

}  // namespace

namespace {

class GraphTest : public StreamsTest {};

TEST_F(GraphTest, ReplayEqualsEagerAndFollowsTheInputs) {
  bp_stream_handle_t* s = Create(kCpu);
  ASSERT_EQ(bp_set_current_stream(s), BP_STATUS_OK);
  bp_tensor_t* a = F32(kCpu, {4}, {1, 2, 3, 4});
  bp_tensor_t* b = F32(kCpu, {4}, {10, 20, 30, 40});
  ASSERT_EQ(bp_graph_begin_capture(s), BP_STATUS_OK) << LastError();
  EXPECT_EQ(bp_graph_begin_capture(s), BP_STATUS_FAILED_PRECONDITION);
  bp_tensor_t* c = Call("mul.Tensor", {T(a), T(b)});
  bp_tensor_t* d = Call("add.Tensor", {T(c), T(a), I(1)});
  bp_graph_t* g = nullptr;
  ASSERT_EQ(bp_graph_end_capture(s, &g), BP_STATUS_OK) << LastError();
  bp_graph_info_t info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(bp_graph_info(g, &info), BP_STATUS_OK) << LastError();
  EXPECT_EQ(info.num_nodes, 2);
  EXPECT_EQ(info.num_host_nodes, 0);
  EXPECT_EQ(Read(d), (std::vector<float>{11, 42, 93, 164})) << "captured work also runs once";
  // New input values (outside the graph), then three replays: each equals eager.
  bp_tensor_t* a2 = F32(kCpu, {4}, {2, 2, 2, 2});
  ASSERT_NE(Call("copy_", {T(a), T(a2), B(false)}), nullptr);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(bp_graph_launch(g, s), BP_STATUS_OK) << LastError();
    ASSERT_EQ(bp_stream_synchronize(s), BP_STATUS_OK);
    EXPECT_EQ(Read(d), (std::vector<float>{22, 42, 62, 82})) << "replay " << i;
  }
  // On another stream of the device too; not on another device's.
  ASSERT_EQ(bp_graph_launch(g, Default(kCpu)), BP_STATUS_OK) << LastError();
  EXPECT_EQ(bp_graph_launch(g, Default(dev_)), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("captured on device cpu:0"), std::string::npos) << LastError();
  ASSERT_EQ(bp_set_current_stream(Default(kCpu)), BP_STATUS_OK);
  EXPECT_EQ(bp_graph_destroy(g), BP_STATUS_OK);
  EXPECT_EQ(bp_stream_destroy(s), BP_STATUS_OK);
}

TEST_F(GraphTest, MemoryFreedDuringCaptureStaysWithTheGraph) {
  bp_stream_handle_t* s = Create(kCpu);
  ASSERT_EQ(bp_set_current_stream(s), BP_STATUS_OK);
  bp_tensor_t* a = F32(kCpu, {256}, std::vector<float>(256, 1.0f));
  ASSERT_EQ(bp_graph_begin_capture(s), BP_STATUS_OK);
  bp_tensor_t* tmp = nullptr;
  bp_value_t args[3] = {T(a), T(a), I(1)};
  ASSERT_EQ(bp_op_call(ctx_, Op("add.Tensor"), args, 3, &tmp, 1), BP_STATUS_OK) << LastError();
  void* graph_block = DataOf(tmp);
  bp_tensor_release(tmp);  // an intermediate: its block stays the graph's
  bp_graph_t* g = nullptr;
  ASSERT_EQ(bp_graph_end_capture(s, &g), BP_STATUS_OK) << LastError();
  bp_tensor_t* outside = Bytes(kCpu, 1024);
  EXPECT_NE(DataOf(outside), graph_block) << "a tensor outside the graph got memory a replay writes";
  bp_tensor_release(outside);
  ASSERT_EQ(bp_graph_destroy(g), BP_STATUS_OK);
  bp_tensor_t* after = Bytes(kCpu, 1024);
  EXPECT_EQ(DataOf(after), graph_block) << "a destroyed graph's memory returns to the stream";
  bp_tensor_release(after);
  ASSERT_EQ(bp_set_current_stream(Default(kCpu)), BP_STATUS_OK);
  EXPECT_EQ(bp_stream_destroy(s), BP_STATUS_OK);
}

TEST_F(GraphTest, WhatCannotBeCapturedEndsTheCaptureWithAClearStatus) {
  EXPECT_EQ(bp_graph_begin_capture(Default(kCpu)), BP_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(LastError().find("capture needs a stream from bp_stream_create"), std::string::npos) << LastError();
  bp_stream_handle_t* s = Create(kCpu);
  ASSERT_EQ(bp_set_current_stream(s), BP_STATUS_OK);
  bp_tensor_t* a = F32(kCpu, {4}, {1, 2, 3, 4});
  ASSERT_EQ(bp_graph_begin_capture(s), BP_STATUS_OK);
  EXPECT_EQ(bp_stream_destroy(s), BP_STATUS_FAILED_PRECONDITION);
  Call("mul.Tensor", {T(a), T(a)});
  // Another thread enqueueing on the captured stream.
  std::thread([&] {
    ASSERT_EQ(bp_set_current_stream(s), BP_STATUS_OK);
    bp_tensor_t* r = nullptr;
    bp_value_t args[2] = {T(a), T(a)};
    EXPECT_EQ(bp_op_call(ctx_, Op("mul.Tensor"), args, 2, &r, 1), BP_STATUS_FAILED_PRECONDITION);
    EXPECT_NE(LastError().find("by a thread other than the one capturing it"), std::string::npos) << LastError();
  }).join();
  bp_graph_t* g = nullptr;
  EXPECT_EQ(bp_graph_end_capture(s, &g), BP_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(LastError().find("the capture was invalidated: mul.Tensor was enqueued"), std::string::npos)
      << LastError();
  EXPECT_EQ(g, nullptr);
  // Synchronizing the captured stream.
  ASSERT_EQ(bp_graph_begin_capture(s), BP_STATUS_OK);
  EXPECT_EQ(bp_stream_synchronize(s), BP_STATUS_FAILED_PRECONDITION);
  EXPECT_EQ(bp_device_synchronize(ctx_, kCpu), BP_STATUS_FAILED_PRECONDITION);
  EXPECT_EQ(bp_graph_end_capture(s, &g), BP_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(LastError().find("bp_stream_synchronize on a stream being captured"), std::string::npos) << LastError();
  EXPECT_EQ(bp_graph_end_capture(s, &g), BP_STATUS_INVALID_ARGUMENT) << "the stream left capture mode";
  ASSERT_EQ(bp_set_current_stream(Default(kCpu)), BP_STATUS_OK);
  EXPECT_EQ(bp_stream_destroy(s), BP_STATUS_OK);
}

}  // namespace

namespace {

// On vendor_sim (synchronous here): an operator the CPU fallback serves
// during the capture becomes a host node, replayed with the captured tensors.
TEST_F(GraphTest, CpuFallbacksBecomeHostNodes) {
  bp_stream_handle_t* s = Create(dev_);
  ASSERT_EQ(bp_set_current_stream(s), BP_STATUS_OK);
  bp_tensor_t* a = F32(dev_, {4}, {1, 2, 3, 4});
  Mask("add.Tensor", 1);  // served by the CPU fallback; relu is native
  ASSERT_EQ(bp_graph_begin_capture(s), BP_STATUS_OK);
  bp_tensor_t* b = Call("relu", {T(a)});
  bp_tensor_t* c = Call("add.Tensor", {T(b), T(a), I(1)});
  bp_graph_t* g = nullptr;
  ASSERT_EQ(bp_graph_end_capture(s, &g), BP_STATUS_OK) << LastError();
  Mask("add.Tensor", 0);
  bp_graph_info_t info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(bp_graph_info(g, &info), BP_STATUS_OK);
  EXPECT_EQ(info.num_nodes, 2);
  EXPECT_EQ(info.num_host_nodes, 1);
  EXPECT_EQ(Read(c), (std::vector<float>{2, 4, 6, 8}));
  bp_tensor_t* a2 = F32(dev_, {4}, {3, -3, 3, -3});
  ASSERT_NE(Call("copy_", {T(a), T(a2), B(false)}), nullptr);
  ASSERT_EQ(bp_graph_launch(g, s), BP_STATUS_OK) << LastError();
  EXPECT_EQ(Read(c), (std::vector<float>{6, -3, 6, -3})) << "the host node replayed on the new input";
  ASSERT_EQ(bp_set_current_stream(Default(dev_)), BP_STATUS_OK);
  EXPECT_EQ(bp_graph_destroy(g), BP_STATUS_OK);
  EXPECT_EQ(bp_stream_destroy(s), BP_STATUS_OK);
}

TEST_F(GraphTest, ReadingDeviceMemoryEndsTheCapture) {
  bp_stream_handle_t* s = Create(dev_);
  ASSERT_EQ(bp_set_current_stream(s), BP_STATUS_OK);
  bp_tensor_t* a = F32(dev_, {4}, {1, 2, 3, 4});
  ASSERT_EQ(bp_graph_begin_capture(s), BP_STATUS_OK);
  std::vector<float> host(4);
  EXPECT_EQ(bp_tensor_to_host(a, host.data(), 16), BP_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(LastError().find("a copy from device to host during the graph capture"), std::string::npos)
      << LastError();
  bp_graph_t* g = nullptr;
  EXPECT_EQ(bp_graph_end_capture(s, &g), BP_STATUS_FAILED_PRECONDITION);
  EXPECT_EQ(g, nullptr);
  ASSERT_EQ(bp_set_current_stream(Default(dev_)), BP_STATUS_OK);
  EXPECT_EQ(bp_stream_destroy(s), BP_STATUS_OK);
}

}  // namespace

namespace {

TEST_F(StreamsTest, PinnedHostMemoryAndAsyncCopies) {
  for (bp_device_t d : {kCpu, dev_}) {
    void* p = nullptr;
    ASSERT_EQ(bp_host_alloc(ctx_, d, 16, &p), BP_STATUS_OK) << LastError();
    ASSERT_NE(p, nullptr);
    bp_tensor_t* a = F32(d, {4}, {1, 2, 3, 4});
    ASSERT_EQ(bp_tensor_to_host_async(a, p, 16), BP_STATUS_OK) << LastError();
    bp_stream_handle_t* cur = Current(d);
    ASSERT_EQ(bp_stream_synchronize(cur), BP_STATUS_OK);
    const float* f = static_cast<const float*>(p);
    EXPECT_EQ(std::vector<float>(f, f + 4), (std::vector<float>{1, 2, 3, 4}));
    float* w = static_cast<float*>(p);
    for (int i = 0; i < 4; ++i) w[i] = 10.0f * static_cast<float>(i);
    ASSERT_EQ(bp_tensor_from_host_async(a, p, 16), BP_STATUS_OK) << LastError();
    EXPECT_EQ(Read(a), (std::vector<float>{0, 10, 20, 30}));
    // Bad input: the size, memory not from bp_host_alloc, the other device's block.
    EXPECT_EQ(bp_tensor_to_host_async(a, p, 12), BP_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(LastError().find("nbytes is 12; the tensor holds 16 bytes"), std::string::npos) << LastError();
    float plain[4] = {-1, -1, -1, -1};
    EXPECT_EQ(bp_tensor_to_host_async(a, plain, 16), BP_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(plain[0], -1) << "nothing is written on error";
    EXPECT_EQ(bp_host_free(ctx_, p), BP_STATUS_OK);
    EXPECT_EQ(bp_host_free(ctx_, p), BP_STATUS_INVALID_ARGUMENT) << "freed twice";
  }
  void* on_cpu = nullptr;
  ASSERT_EQ(bp_host_alloc(ctx_, kCpu, 16, &on_cpu), BP_STATUS_OK);
  bp_tensor_t* b = F32(dev_, {4}, {1, 2, 3, 4});
  EXPECT_EQ(bp_tensor_to_host_async(b, on_cpu, 16), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("is host memory of device cpu:0; the tensor is on device vendor_sim:0"),
            std::string::npos)
      << LastError();
  EXPECT_EQ(bp_host_free(ctx_, on_cpu), BP_STATUS_OK);
  EXPECT_EQ(bp_host_free(ctx_, nullptr), BP_STATUS_OK);
}

}  // namespace
