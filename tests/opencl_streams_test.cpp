// The OpenCL plugin's ABI 1.4 stream and event slots on a real device (PoCL
// in CI): streams made by stream_create run kernels and copies in order and
// apart from the default queue, event_wait orders two streams on the device
// without blocking the host, event_query and event_elapsed_time read the
// recorded markers, stream_destroy drains its queue, and misuse is an error
// with a message.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "opencl_test_util.h"

namespace bpcl_test {
namespace {

class OpenclStreams : public OpenclTest {
 protected:
  bp_backend_t& b() { return host_.backend(); }
  void* data() { return host_.backend().backend_data; }

  bp_stream_t NewStream() {
    bp_stream_t s = nullptr;
    EXPECT_EQ(b().stream_create(data(), 0, &s), BP_STATUS_OK) << FakeHost::last_error();
    EXPECT_NE(s, nullptr);
    return s;
  }
  bp_event_t NewEvent() {
    bp_event_t e = nullptr;
    EXPECT_EQ(b().event_create(data(), 0, &e), BP_STATUS_OK) << FakeHost::last_error();
    events_.push_back(e);
    return e;
  }
  int32_t Query(bp_event_t e) {
    int32_t complete = -1;
    EXPECT_EQ(b().event_query(data(), e, &complete), BP_STATUS_OK) << FakeHost::last_error();
    return complete;
  }
  float Elapsed(bp_event_t start, bp_event_t end) {
    float ms = -1.0f;
    EXPECT_EQ(b().event_elapsed_time(data(), start, end, &ms), BP_STATUS_OK) << FakeHost::last_error();
    return ms;
  }
  // o = o + x, `times` times, on `stream`: device work long enough to still
  // be running when the host looks (4M floats x 40 passes is ~100 ms on PoCL).
  void Accumulate(bp_stream_t stream, DevTensor& o, DevTensor& x, int times) {
    for (int i = 0; i < times; ++i) {
      ASSERT_EQ(host_.CallOn(stream, "add.Tensor", {TensorArg(o), TensorArg(x), IntArg(1)}, {&o}), BP_STATUS_OK)
          << FakeHost::last_error();
    }
  }
  void TearDown() override {
    for (bp_event_t e : events_) b().event_destroy(data(), e);
    OpenclTest::TearDown();
  }

  std::vector<bp_event_t> events_;
};

TEST_F(OpenclStreams, SlotsAreFilled) {
  EXPECT_NE(b().stream_create, nullptr);
  EXPECT_NE(b().stream_destroy, nullptr);
  EXPECT_NE(b().event_query, nullptr);
  EXPECT_NE(b().event_elapsed_time, nullptr);
}

TEST_F(OpenclStreams, CreatedStreamsAreDistinctQueues) {
  bp_stream_t def = nullptr;
  ASSERT_EQ(b().stream_get_default(data(), 0, &def), BP_STATUS_OK);
  bp_stream_t s1 = NewStream();
  bp_stream_t s2 = NewStream();
  EXPECT_NE(s1, s2);
  EXPECT_NE(s1, def);
  EXPECT_NE(s2, def);
  EXPECT_EQ(b().stream_synchronize(data(), 0, s1), BP_STATUS_OK);
  EXPECT_EQ(b().stream_destroy(data(), 0, s1), BP_STATUS_OK) << FakeHost::last_error();
  EXPECT_EQ(b().stream_destroy(data(), 0, s2), BP_STATUS_OK) << FakeHost::last_error();
}

TEST_F(OpenclStreams, KernelAndCopyOnACreatedStreamLandThere) {
  const int n = 1000;
  std::vector<float> av(n), bv(n);
  for (int i = 0; i < n; ++i) {
    av[i] = static_cast<float>(i);
    bv[i] = static_cast<float>(2 * i);
  }
  DevTensor& a = Make<float>({n}, F32(), av);
  DevTensor& x = Make<float>({n}, F32(), bv);
  DevTensor& o = Empty({n}, F32());
  DevTensor& o2 = Empty({n}, F32());
  bp_stream_t s = NewStream();
  ASSERT_EQ(host_.CallOn(s, "add.Tensor", {TensorArg(a), TensorArg(x), IntArg(1)}, {&o}), BP_STATUS_OK)
      << FakeHost::last_error();
  ASSERT_EQ(b().copy_device_to_device(data(), 0, o.mem, 0, o2.mem, 0, n * sizeof(float), s), BP_STATUS_OK);
  // Only s is synchronized; the default queue never saw this work.
  ASSERT_EQ(b().stream_synchronize(data(), 0, s), BP_STATUS_OK);
  const std::vector<float> got = host_.ToHost<float>(o2);
  for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], 3.0f * i) << i;
  EXPECT_EQ(b().stream_destroy(data(), 0, s), BP_STATUS_OK);
}

TEST_F(OpenclStreams, RecordWaitQueryAndElapsedAcrossTwoStreams) {
  const int n = 1 << 22;
  DevTensor& o = Make<float>({n}, F32(), std::vector<float>(n, 0.0f));
  DevTensor& x = Make<float>({n}, F32(), std::vector<float>(n, 1.0f));
  DevTensor& copy = Empty({n}, F32());
  bp_stream_t s1 = NewStream();
  bp_stream_t s2 = NewStream();
  bp_event_t e0 = NewEvent(), e1 = NewEvent(), e2 = NewEvent();
  EXPECT_EQ(Query(e0), 1) << "a never-recorded event counts as complete";

  ASSERT_EQ(b().event_record(data(), e0, s1), BP_STATUS_OK) << FakeHost::last_error();
  Accumulate(s1, o, x, 40);
  ASSERT_EQ(b().event_record(data(), e1, s1), BP_STATUS_OK) << FakeHost::last_error();
  // s2 waits for s1's additions on the device; the host goes on.
  ASSERT_EQ(b().event_wait(data(), e1, s2), BP_STATUS_OK) << FakeHost::last_error();
  const int32_t while_running = Query(e1);
  ASSERT_EQ(b().copy_device_to_device(data(), 0, o.mem, 0, copy.mem, 0, n * sizeof(float), s2), BP_STATUS_OK);
  ASSERT_EQ(b().event_record(data(), e2, s2), BP_STATUS_OK) << FakeHost::last_error();
  if (while_running == 1) {
    std::printf("note: 40 additions of 4M floats finished before event_query; not-ready path unobserved\n");
  } else {
    EXPECT_EQ(while_running, 0);
    float ms = 0;
    // Not complete yet (unless the device just finished): FAILED_PRECONDITION.
    const bp_status_t rc = b().event_elapsed_time(data(), e0, e2, &ms);
    if (rc != BP_STATUS_OK) {
      EXPECT_EQ(rc, BP_STATUS_FAILED_PRECONDITION);
      EXPECT_NE(FakeHost::last_error().find("has not completed"), std::string::npos) << FakeHost::last_error();
    }
  }

  ASSERT_EQ(b().event_synchronize(data(), e2), BP_STATUS_OK) << FakeHost::last_error();
  EXPECT_EQ(Query(e0), 1);
  EXPECT_EQ(Query(e1), 1);
  EXPECT_EQ(Query(e2), 1);
  const float t01 = Elapsed(e0, e1), t12 = Elapsed(e1, e2), t02 = Elapsed(e0, e2);
  EXPECT_GE(t01, 0.0f);
  EXPECT_GE(t12, 0.0f);
  EXPECT_GE(t02, t01);
  EXPECT_GE(t02, t12);
  EXPECT_NEAR(t02, t01 + t12, 1e-3 * (1.0 + t02));
  EXPECT_GT(t01, 0.0f) << "40 kernels take measurable time";
  // s2's copy ran after every addition on s1.
  const std::vector<float> got = host_.ToHost<float>(copy);
  for (int i = 0; i < n; i += 4099) ASSERT_EQ(got[i], 40.0f) << i;
  EXPECT_EQ(got[n - 1], 40.0f);

  EXPECT_EQ(b().stream_destroy(data(), 0, s1), BP_STATUS_OK);
  EXPECT_EQ(b().stream_destroy(data(), 0, s2), BP_STATUS_OK);
}

TEST_F(OpenclStreams, ElapsedTimeIsMonotonicOverThreeEventsOnOneStream) {
  const int n = 1 << 20;
  DevTensor& o = Make<float>({n}, F32(), std::vector<float>(n, 0.0f));
  DevTensor& x = Make<float>({n}, F32(), std::vector<float>(n, 1.0f));
  bp_stream_t s = NewStream();
  bp_event_t e[3] = {NewEvent(), NewEvent(), NewEvent()};
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(b().event_record(data(), e[i], s), BP_STATUS_OK);
    if (i < 2) Accumulate(s, o, x, 5);
  }
  ASSERT_EQ(b().stream_synchronize(data(), 0, s), BP_STATUS_OK);
  const float t01 = Elapsed(e[0], e[1]), t12 = Elapsed(e[1], e[2]), t02 = Elapsed(e[0], e[2]);
  EXPECT_GE(t01, 0.0f);
  EXPECT_GE(t12, 0.0f);
  EXPECT_GE(t02, t01);
  EXPECT_GE(t02, t12);
  // Reversed: negative, as CUDA's cudaEventElapsedTime.
  EXPECT_LE(Elapsed(e[2], e[0]), 0.0f);
  EXPECT_EQ(b().stream_destroy(data(), 0, s), BP_STATUS_OK);
}

TEST_F(OpenclStreams, DefaultStreamEventsAreTimedToo) {
  bp_event_t e0 = NewEvent(), e1 = NewEvent();
  ASSERT_EQ(b().event_record(data(), e0, nullptr), BP_STATUS_OK);
  ASSERT_EQ(b().event_record(data(), e1, nullptr), BP_STATUS_OK);
  ASSERT_EQ(b().event_synchronize(data(), e1), BP_STATUS_OK);
  EXPECT_GE(Elapsed(e0, e1), 0.0f);
}

TEST_F(OpenclStreams, DestroyDrainsPendingWork) {
  const int n = 1 << 22;
  DevTensor& o = Make<float>({n}, F32(), std::vector<float>(n, 0.0f));
  DevTensor& x = Make<float>({n}, F32(), std::vector<float>(n, 1.0f));
  bp_stream_t s = NewStream();
  bp_event_t done = NewEvent();
  Accumulate(s, o, x, 20);
  ASSERT_EQ(b().event_record(data(), done, s), BP_STATUS_OK);
  ASSERT_EQ(b().stream_destroy(data(), 0, s), BP_STATUS_OK) << FakeHost::last_error();
  // No synchronize: destroy waited for the queue.
  EXPECT_EQ(Query(done), 1);
  const std::vector<float> got = host_.ToHost<float>(o);
  EXPECT_EQ(got[0], 20.0f);
  EXPECT_EQ(got[n - 1], 20.0f);
}

TEST_F(OpenclStreams, MisuseIsAnErrorWithAMessage) {
  bp_stream_t s = nullptr;
  EXPECT_EQ(b().stream_create(data(), 7, &s), BP_STATUS_OUT_OF_RANGE);
  EXPECT_EQ(b().stream_create(data(), 0, nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(FakeHost::last_error().find("stream_create"), std::string::npos) << FakeHost::last_error();

  bp_stream_t def = nullptr;
  ASSERT_EQ(b().stream_get_default(data(), 0, &def), BP_STATUS_OK);
  EXPECT_EQ(b().stream_destroy(data(), 0, def), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(FakeHost::last_error().find("not made by stream_create"), std::string::npos) << FakeHost::last_error();
  EXPECT_EQ(b().stream_destroy(data(), 0, nullptr), BP_STATUS_INVALID_ARGUMENT);
  s = NewStream();
  EXPECT_EQ(b().stream_destroy(data(), 0, s), BP_STATUS_OK);
  EXPECT_EQ(b().stream_destroy(data(), 0, s), BP_STATUS_INVALID_ARGUMENT) << "destroyed twice";

  bp_event_t never = NewEvent(), once = NewEvent();
  ASSERT_EQ(b().event_record(data(), once, nullptr), BP_STATUS_OK);
  ASSERT_EQ(b().event_synchronize(data(), once), BP_STATUS_OK);
  float ms = 0;
  EXPECT_EQ(b().event_elapsed_time(data(), never, once, &ms), BP_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(FakeHost::last_error().find("start event was never recorded"), std::string::npos) << FakeHost::last_error();
  EXPECT_EQ(b().event_elapsed_time(data(), once, never, &ms), BP_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(FakeHost::last_error().find("end event was never recorded"), std::string::npos) << FakeHost::last_error();
  EXPECT_EQ(b().event_elapsed_time(data(), once, once, nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(b().event_elapsed_time(data(), nullptr, once, &ms), BP_STATUS_INVALID_ARGUMENT);
  int32_t complete = 0;
  EXPECT_EQ(b().event_query(data(), nullptr, &complete), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(b().event_query(data(), once, nullptr), BP_STATUS_INVALID_ARGUMENT);
}

TEST_F(OpenclStreams, ShutdownReleasesStreamsTheHostLeaked) {
  bp_stream_t s = NewStream();
  DevTensor& o = Make<float>({16}, F32(), std::vector<float>(16, 1.0f));
  ASSERT_EQ(host_.CallOn(s, "add.Tensor", {TensorArg(o), TensorArg(o), IntArg(1)}, {&o}), BP_STATUS_OK);
  // TearDown frees the tensors and shuts down with s still alive (ASan/LSan
  // would flag a leaked queue; PoCL would hang on a live one).
}


// ---- Pinned host memory and copy_device_to_host_async (ABI 1.4) ----------

TEST_F(OpenclStreams, HostAllocateIsAlignedAndTracked) {
  ASSERT_NE(b().host_allocate, nullptr);
  ASSERT_NE(b().host_deallocate, nullptr);
  ASSERT_NE(b().copy_device_to_host_async, nullptr);
  void* p = nullptr;
  ASSERT_EQ(b().host_allocate(data(), 0, 1000, &p), BP_STATUS_OK) << FakeHost::last_error();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u);
  std::memset(p, 0x5a, 1000);
  void* zero = reinterpret_cast<void*>(1);
  EXPECT_EQ(b().host_allocate(data(), 0, 0, &zero), BP_STATUS_OK);
  EXPECT_EQ(zero, nullptr);
  EXPECT_EQ(b().host_allocate(data(), 7, 16, &zero), BP_STATUS_OUT_OF_RANGE);
  int not_ours = 0;
  EXPECT_EQ(b().host_deallocate(data(), 0, &not_ours), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(FakeHost::last_error().find("opencl host_deallocate"), std::string::npos) << FakeHost::last_error();
  EXPECT_EQ(b().host_deallocate(data(), 0, nullptr), BP_STATUS_OK);
  EXPECT_EQ(b().host_deallocate(data(), 0, p), BP_STATUS_OK) << FakeHost::last_error();
  EXPECT_EQ(b().host_deallocate(data(), 0, p), BP_STATUS_INVALID_ARGUMENT) << "freed twice";
  // Left live: shutdown frees it (LSan checks).
  ASSERT_EQ(b().host_allocate(data(), 0, 64, &p), BP_STATUS_OK) << FakeHost::last_error();
}

// The read is queued behind the stream's kernels and returns at once; the
// bytes are in the pinned block after stream_synchronize.
TEST_F(OpenclStreams, AsyncReadLandsAfterSynchronize) {
  const int n = 1 << 22;
  DevTensor& o = Make<float>({n}, F32(), std::vector<float>(n, 0.0f));
  DevTensor& x = Make<float>({n}, F32(), std::vector<float>(n, 1.0f));
  bp_stream_t s = NewStream();
  void* p = nullptr;
  ASSERT_EQ(b().host_allocate(data(), 0, n * sizeof(float), &p), BP_STATUS_OK) << FakeHost::last_error();
  float* dst = static_cast<float*>(p);
  std::fill(dst, dst + n, -1.0f);
  Accumulate(s, o, x, 20);
  ASSERT_EQ(b().copy_device_to_host_async(data(), 0, o.mem, 0, dst, n * sizeof(float), s), BP_STATUS_OK)
      << FakeHost::last_error();
  // Not asserted: whether the read already ran (PoCL may be quick).
  ASSERT_EQ(b().stream_synchronize(data(), 0, s), BP_STATUS_OK) << FakeHost::last_error();
  EXPECT_EQ(dst[0], 20.0f);
  EXPECT_EQ(dst[n - 1], 20.0f);
  // With a byte offset, on the default stream.
  std::fill(dst, dst + 4, -1.0f);
  ASSERT_EQ(b().copy_device_to_host_async(data(), 0, o.mem, (n - 2) * sizeof(float), dst, 2 * sizeof(float), nullptr),
            BP_STATUS_OK)
      << FakeHost::last_error();
  ASSERT_EQ(b().stream_synchronize(data(), 0, nullptr), BP_STATUS_OK) << FakeHost::last_error();
  EXPECT_EQ(std::vector<float>(dst, dst + 4), (std::vector<float>{20.0f, 20.0f, -1.0f, -1.0f}));
  EXPECT_EQ(b().host_deallocate(data(), 0, p), BP_STATUS_OK) << FakeHost::last_error();
  EXPECT_EQ(b().stream_destroy(data(), 0, s), BP_STATUS_OK) << FakeHost::last_error();
}

// Bad arguments fail the call, with a message, and queue nothing.
TEST_F(OpenclStreams, AsyncReadBadArgumentsFailAndQueueNothing) {
  DevTensor& o = Make<float>({4}, F32(), std::vector<float>{1, 2, 3, 4});
  std::vector<float> dst(8, -1.0f);
  const size_t n = 4 * sizeof(float);
  const bp_stream_t unknown = reinterpret_cast<bp_stream_t>(static_cast<uintptr_t>(0xdead0));
  EXPECT_EQ(b().copy_device_to_host_async(data(), 0, o.mem, 0, dst.data(), n, unknown), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(FakeHost::last_error().find("copy_device_to_host_async: stream"), std::string::npos)
      << FakeHost::last_error();
  EXPECT_EQ(b().copy_device_to_host_async(data(), 0, o.mem, 4, dst.data(), n, nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(FakeHost::last_error().find("outside the 16-byte buffer"), std::string::npos) << FakeHost::last_error();
  EXPECT_EQ(b().copy_device_to_host_async(data(), 0, o.mem, 0, dst.data(), 2 * n, nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(b().copy_device_to_host_async(data(), 0, o.mem, 0, nullptr, n, nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(FakeHost::last_error().find("NULL src or dst"), std::string::npos) << FakeHost::last_error();
  EXPECT_EQ(b().copy_device_to_host_async(data(), 0, nullptr, 0, dst.data(), n, nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(b().copy_device_to_host_async(data(), 7, o.mem, 0, dst.data(), n, nullptr), BP_STATUS_OUT_OF_RANGE);
  ASSERT_EQ(b().stream_synchronize(data(), 0, nullptr), BP_STATUS_OK);
  EXPECT_EQ(dst, std::vector<float>(8, -1.0f));
}

}  // namespace
}  // namespace bpcl_test
