// The CUDA/HIP plugin's stream and event slots (backends/gpu_common/
// stream.cpp and device.cpp, compiled as they are) over the emulated runtime
// (gpu_emulator_streams.h): ABI 1.4's stream_create / stream_destroy,
// event_query and event_elapsed_time per backend.h's contract, and the older
// event slots they build on. The emulator runs work synchronously; a test
// pauses it to see work that has not finished. What only a real device shows
// is covered by gpu_plugin_test on a machine with one.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "device.h"
#include "memory.h"
#include "platform.h"
#include "plugin.h"
#include "stream.h"

namespace bp_gpu {
namespace platform {
const char* const kBackendName = "emu";
const int32_t kDLDeviceType = kDLCUDA;
const char* const kVendor = "emulator";
}  // namespace platform
}  // namespace bp_gpu

namespace {

std::string g_error;
bp_status_t SetError(bp_status_t code, const char* msg) {
  g_error = msg ? msg : "";
  return code;
}

class GpuStreamsEmulated : public ::testing::Test {
 protected:
  void SetUp() override { Load(1); }
  void Load(int devices) {
    bp_gpu_emu::SetDeviceCount(devices);
    std::memset(&host_, 0, sizeof host_);
    host_.struct_size = sizeof host_;
    host_.set_error = SetError;
    st_.reset(new bp_gpu::PluginState());
    st_->host = &host_;
    bp_gpu::EnumerateDevices(st_.get());
    ASSERT_EQ(st_->device_count, devices);
    live_before_ = bp_gpu_emu::LiveStreams();
    // The slots as plugin.cpp fills them.
    std::memset(&b_, 0, sizeof b_);
    b_.backend_data = st_.get();
    b_.stream_get_default = bp_gpu::StreamGetDefault;
    b_.stream_synchronize = bp_gpu::StreamSynchronize;
    b_.event_create = bp_gpu::EventCreate;
    b_.event_record = bp_gpu::EventRecord;
    b_.event_wait = bp_gpu::EventWait;
    b_.event_synchronize = bp_gpu::EventSynchronize;
    b_.event_destroy = bp_gpu::EventDestroy;
    b_.stream_create = bp_gpu::StreamCreate;
    b_.stream_destroy = bp_gpu::StreamDestroy;
    b_.event_query = bp_gpu::EventQuery;
    b_.event_elapsed_time = bp_gpu::EventElapsedTime;
    b_.allocate = bp_gpu::Allocate;
    b_.deallocate = bp_gpu::Deallocate;
    b_.copy_host_to_device = bp_gpu::CopyHostToDevice;
    b_.copy_device_to_host = bp_gpu::CopyDeviceToHost;
    b_.host_allocate = bp_gpu::HostAllocate;
    b_.host_deallocate = bp_gpu::HostDeallocate;
    b_.copy_device_to_host_async = bp_gpu::CopyDeviceToHostAsync;
  }
  void TearDown() override {
    bp_gpu_emu::Resume();
    for (bp_event_t e : events_) EXPECT_EQ(b_.event_destroy(data(), e), BP_STATUS_OK);
    events_.clear();
    bp_gpu::DestroyLeakedStreams(st_.get());
    bp_gpu::FreeLeakedHostBlocks(st_.get());
    for (int32_t d = 0; d < st_->device_count; ++d) {
      if (st_->devices[d].stream) (void)gpuStreamDestroy(st_->devices[d].stream);
    }
    bp_gpu_emu::SetDeviceCount(1);
  }
  void* data() { return st_.get(); }
  bp_stream_t NewStream(int32_t device = 0) {
    bp_stream_t s = nullptr;
    EXPECT_EQ(b_.stream_create(data(), device, &s), BP_STATUS_OK) << g_error;
    EXPECT_NE(s, nullptr);
    return s;
  }
  bp_event_t NewEvent(int32_t device = 0) {
    bp_event_t e = nullptr;
    EXPECT_EQ(b_.event_create(data(), device, &e), BP_STATUS_OK) << g_error;
    events_.push_back(e);
    return e;
  }
  int32_t Query(bp_event_t e) {
    int32_t complete = -1;
    EXPECT_EQ(b_.event_query(data(), e, &complete), BP_STATUS_OK) << g_error;
    return complete;
  }
  float Elapsed(bp_event_t start, bp_event_t end) {
    float ms = -1.0f;
    EXPECT_EQ(b_.event_elapsed_time(data(), start, end, &ms), BP_STATUS_OK) << g_error;
    return ms;
  }

  bp_host_api_t host_{};
  std::unique_ptr<bp_gpu::PluginState> st_;
  bp_backend_t b_{};
  std::vector<bp_event_t> events_;
  size_t live_before_ = 0;
};

TEST_F(GpuStreamsEmulated, CreateGivesNewStreamsAndDestroyReleasesThem) {
  bp_stream_t def = nullptr;
  ASSERT_EQ(b_.stream_get_default(data(), 0, &def), BP_STATUS_OK) << g_error;
  const size_t live = bp_gpu_emu::LiveStreams();
  bp_stream_t s1 = NewStream(), s2 = NewStream();
  EXPECT_NE(s1, s2);
  EXPECT_NE(s1, def);
  EXPECT_EQ(bp_gpu_emu::LiveStreams(), live + 2);
  EXPECT_EQ(b_.stream_destroy(data(), 0, s1), BP_STATUS_OK) << g_error;
  EXPECT_EQ(b_.stream_destroy(data(), 0, s2), BP_STATUS_OK) << g_error;
  EXPECT_EQ(bp_gpu_emu::LiveStreams(), live);
}

TEST_F(GpuStreamsEmulated, DestroyRefusesWhatCreateDidNotMake) {
  bp_stream_t def = nullptr;
  ASSERT_EQ(b_.stream_get_default(data(), 0, &def), BP_STATUS_OK);
  EXPECT_EQ(b_.stream_destroy(data(), 0, def), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(g_error.find("not made by stream_create on device 0"), std::string::npos) << g_error;
  EXPECT_EQ(b_.stream_destroy(data(), 0, nullptr), BP_STATUS_INVALID_ARGUMENT);
  bp_stream_t s = NewStream();
  EXPECT_EQ(b_.stream_destroy(data(), 1, s), BP_STATUS_OUT_OF_RANGE) << "one device";
  EXPECT_EQ(b_.stream_destroy(data(), 0, s), BP_STATUS_OK);
  EXPECT_EQ(b_.stream_destroy(data(), 0, s), BP_STATUS_INVALID_ARGUMENT) << "destroyed twice";
}

TEST_F(GpuStreamsEmulated, CreateFailuresMapToTheAbiCodes) {
  bp_stream_t s = nullptr;
  EXPECT_EQ(b_.stream_create(data(), 0, nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(b_.stream_create(data(), 3, &s), BP_STATUS_OUT_OF_RANGE);
  EXPECT_NE(g_error.find("stream_create"), std::string::npos) << g_error;
  bp_gpu_emu::FailNextStreamCreate(gpuErrorMemoryAllocation);
  EXPECT_EQ(b_.stream_create(data(), 0, &s), BP_STATUS_OUT_OF_MEMORY);
  EXPECT_NE(g_error.find("emuStreamCreateWithFlags"), std::string::npos) << g_error;
  EXPECT_NE(g_error.find("emuErrorMemoryAllocation"), std::string::npos) << g_error;
  bp_gpu_emu::FailNextStreamCreate(gpuErrorInvalidResourceHandle);
  EXPECT_EQ(b_.stream_create(data(), 0, &s), BP_STATUS_UNAVAILABLE);
}

TEST_F(GpuStreamsEmulated, DestroyDrainsPendingWork) {
  bp_stream_t s = NewStream();
  bp_event_t e = NewEvent();
  bp_gpu_emu::Pause();
  ASSERT_EQ(b_.event_record(data(), e, s), BP_STATUS_OK);
  EXPECT_EQ(Query(e), 0);
  ASSERT_EQ(b_.stream_destroy(data(), 0, s), BP_STATUS_OK);
  // Still paused: only stream_destroy's synchronize can have finished it.
  EXPECT_EQ(Query(e), 1);
}

TEST_F(GpuStreamsEmulated, QueryAnswersWithoutBlocking) {
  bp_stream_t s = NewStream();
  bp_event_t e = NewEvent();
  EXPECT_EQ(Query(e), 1) << "never recorded counts as complete";
  ASSERT_EQ(b_.event_record(data(), e, s), BP_STATUS_OK);
  EXPECT_EQ(Query(e), 1);
  bp_gpu_emu::Pause();
  ASSERT_EQ(b_.event_record(data(), e, s), BP_STATUS_OK);
  EXPECT_EQ(Query(e), 0) << "not ready is an answer, not an error";
  EXPECT_EQ(gpuGetLastError(), gpuSuccess) << "and leaves no runtime error behind";
  bp_gpu_emu::Resume();
  EXPECT_EQ(Query(e), 1);
  int32_t complete = 0;
  EXPECT_EQ(b_.event_query(data(), nullptr, &complete), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(b_.event_query(data(), e, nullptr), BP_STATUS_INVALID_ARGUMENT);
}

TEST_F(GpuStreamsEmulated, WaitOrdersTwoStreamsWithoutBlockingTheHost) {
  bp_stream_t s1 = NewStream(), s2 = NewStream();
  bp_event_t e1 = NewEvent(), e2 = NewEvent();
  bp_gpu_emu::Pause();
  ASSERT_EQ(b_.event_record(data(), e1, s1), BP_STATUS_OK);
  ASSERT_EQ(b_.event_wait(data(), e1, s2), BP_STATUS_OK);  // returns with e1 pending
  EXPECT_EQ(Query(e1), 0);
  ASSERT_EQ(b_.event_record(data(), e2, s2), BP_STATUS_OK);
  EXPECT_EQ(Query(e2), 0);
  // Synchronizing s2 alone finishes s1's work first: s2 waited for it.
  ASSERT_EQ(b_.stream_synchronize(data(), 0, s2), BP_STATUS_OK);
  EXPECT_EQ(Query(e1), 1);
  EXPECT_EQ(Query(e2), 1);
  EXPECT_GE(Elapsed(e1, e2), 0.0f);
}

TEST_F(GpuStreamsEmulated, ElapsedTimeIsMonotonicOverThreeEvents) {
  bp_stream_t s = NewStream();
  bp_event_t e[3] = {NewEvent(), NewEvent(), NewEvent()};
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(b_.event_record(data(), e[i], s), BP_STATUS_OK);
    if (i < 2) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_EQ(b_.stream_synchronize(data(), 0, s), BP_STATUS_OK);
  const float t01 = Elapsed(e[0], e[1]), t12 = Elapsed(e[1], e[2]), t02 = Elapsed(e[0], e[2]);
  EXPECT_GE(t01, 1.5f);
  EXPECT_GE(t12, 1.5f);
  EXPECT_NEAR(t02, t01 + t12, 1e-3);
  EXPECT_LT(Elapsed(e[2], e[0]), 0.0f) << "reversed";
}

TEST_F(GpuStreamsEmulated, ElapsedTimeNeedsBothRecordedAndComplete) {
  bp_stream_t s = NewStream();
  bp_event_t never = NewEvent(), done = NewEvent(), pending = NewEvent();
  ASSERT_EQ(b_.event_record(data(), done, s), BP_STATUS_OK);
  float ms = 0;
  EXPECT_EQ(b_.event_elapsed_time(data(), never, done, &ms), BP_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(g_error.find("the start event was never recorded"), std::string::npos) << g_error;
  EXPECT_EQ(b_.event_elapsed_time(data(), done, never, &ms), BP_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(g_error.find("the end event was never recorded"), std::string::npos) << g_error;
  bp_gpu_emu::Pause();
  ASSERT_EQ(b_.event_record(data(), pending, s), BP_STATUS_OK);
  EXPECT_EQ(b_.event_elapsed_time(data(), done, pending, &ms), BP_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(g_error.find("the end event has not completed"), std::string::npos) << g_error;
  EXPECT_EQ(gpuGetLastError(), gpuSuccess);
  ASSERT_EQ(b_.event_synchronize(data(), pending), BP_STATUS_OK);
  EXPECT_GE(Elapsed(done, pending), 0.0f);
  EXPECT_EQ(b_.event_elapsed_time(data(), nullptr, done, &ms), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(b_.event_elapsed_time(data(), done, done, nullptr), BP_STATUS_INVALID_ARGUMENT);
}

TEST_F(GpuStreamsEmulated, ElapsedTimeRefusesEventsOfTwoDevices) {
  TearDown();
  Load(2);
  bp_event_t a = NewEvent(0), b = NewEvent(1);
  ASSERT_EQ(b_.event_record(data(), a, nullptr), BP_STATUS_OK);
  ASSERT_EQ(b_.event_record(data(), b, nullptr), BP_STATUS_OK);
  float ms = 0;
  EXPECT_EQ(b_.event_elapsed_time(data(), a, b, &ms), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(g_error.find("device 0, end on device 1"), std::string::npos) << g_error;
}

TEST_F(GpuStreamsEmulated, ShutdownDestroysStreamsTheHostLeaked) {
  NewStream();
  NewStream();
  EXPECT_EQ(bp_gpu_emu::LiveStreams(), live_before_ + 2);
  bp_gpu::DestroyLeakedStreams(st_.get());
  EXPECT_EQ(bp_gpu_emu::LiveStreams(), live_before_);
}

// ---- Pinned host memory and copy_device_to_host_async (ABI 1.4) ----------

TEST_F(GpuStreamsEmulated, HostAllocateIsPinnedAndTracked) {
  void* p = nullptr;
  ASSERT_EQ(b_.host_allocate(data(), 0, 1000, &p), BP_STATUS_OK) << g_error;
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u);
  std::memset(p, 0x5a, 1000);
  void* zero = reinterpret_cast<void*>(1);
  EXPECT_EQ(b_.host_allocate(data(), 0, 0, &zero), BP_STATUS_OK);
  EXPECT_EQ(zero, nullptr);
  EXPECT_EQ(b_.host_allocate(data(), 3, 16, &zero), BP_STATUS_OUT_OF_RANGE);
  EXPECT_EQ(b_.host_allocate(data(), 0, 16, nullptr), BP_STATUS_INVALID_ARGUMENT);
  bp_gpu_emu::FailNextAlloc(gpuErrorMemoryAllocation);
  EXPECT_EQ(b_.host_allocate(data(), 0, 16, &zero), BP_STATUS_OUT_OF_MEMORY);
  EXPECT_NE(g_error.find("host_allocate: emuHostAlloc(16 bytes)"), std::string::npos) << g_error;
  int not_ours = 0;
  EXPECT_EQ(b_.host_deallocate(data(), 0, &not_ours), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(g_error.find("host_deallocate: not a live block"), std::string::npos) << g_error;
  EXPECT_EQ(b_.host_deallocate(data(), 0, nullptr), BP_STATUS_OK);
  EXPECT_EQ(b_.host_deallocate(data(), 0, p), BP_STATUS_OK) << g_error;
  EXPECT_EQ(b_.host_deallocate(data(), 0, p), BP_STATUS_INVALID_ARGUMENT) << "freed twice";
  // Left live: TearDown's FreeLeakedHostBlocks (shutdown's) frees it (LSan checks).
  ASSERT_EQ(b_.host_allocate(data(), 0, 64, &p), BP_STATUS_OK) << g_error;
}

TEST_F(GpuStreamsEmulated, AsyncCopyReadsOnItsStream) {
  const std::vector<float> v = {1, 2, 3, 4};
  void* x = nullptr;
  ASSERT_EQ(b_.allocate(data(), 0, sizeof(float) * 4, &x), BP_STATUS_OK) << g_error;
  bp_stream_t s = NewStream();
  ASSERT_EQ(b_.copy_host_to_device(data(), 0, v.data(), x, 0, sizeof(float) * 4, s), BP_STATUS_OK) << g_error;
  void* p = nullptr;
  ASSERT_EQ(b_.host_allocate(data(), 0, sizeof(float) * 4, &p), BP_STATUS_OK) << g_error;
  float* dst = static_cast<float*>(p);
  std::fill(dst, dst + 4, -1.0f);
  ASSERT_EQ(b_.copy_device_to_host_async(data(), 0, x, sizeof(float), dst, sizeof(float) * 3, s), BP_STATUS_OK)
      << g_error;
  ASSERT_EQ(b_.stream_synchronize(data(), 0, s), BP_STATUS_OK) << g_error;
  EXPECT_EQ(std::vector<float>(dst, dst + 4), (std::vector<float>{2, 3, 4, -1}));
  // The default stream and the NULL stream are streams too.
  bp_stream_t def = nullptr;
  ASSERT_EQ(b_.stream_get_default(data(), 0, &def), BP_STATUS_OK) << g_error;
  EXPECT_EQ(b_.copy_device_to_host_async(data(), 0, x, 0, dst, sizeof(float), def), BP_STATUS_OK) << g_error;
  EXPECT_EQ(b_.copy_device_to_host_async(data(), 0, x, 0, dst, sizeof(float), nullptr), BP_STATUS_OK) << g_error;
  ASSERT_EQ(b_.stream_synchronize(data(), 0, def), BP_STATUS_OK) << g_error;
  EXPECT_EQ(dst[0], 1.0f);
  EXPECT_EQ(b_.host_deallocate(data(), 0, p), BP_STATUS_OK) << g_error;
  EXPECT_EQ(b_.deallocate(data(), 0, x), BP_STATUS_OK) << g_error;
  EXPECT_EQ(b_.stream_destroy(data(), 0, s), BP_STATUS_OK) << g_error;
}

// Bad arguments fail the call and copy nothing.
TEST_F(GpuStreamsEmulated, AsyncCopyBadArgumentsFailAndCopyNothing) {
  const std::vector<float> v = {1, 2, 3, 4};
  void* x = nullptr;
  ASSERT_EQ(b_.allocate(data(), 0, sizeof(float) * 4, &x), BP_STATUS_OK) << g_error;
  ASSERT_EQ(b_.copy_host_to_device(data(), 0, v.data(), x, 0, sizeof(float) * 4, nullptr), BP_STATUS_OK);
  std::vector<float> dst(4, -1.0f);
  const size_t n = sizeof(float) * 4;
  const bp_stream_t unknown = reinterpret_cast<bp_stream_t>(static_cast<uintptr_t>(0xdead0));
  EXPECT_EQ(b_.copy_device_to_host_async(data(), 0, x, 0, dst.data(), n, unknown), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(g_error.find("copy_device_to_host_async: the stream is not a stream of device 0"), std::string::npos)
      << g_error;
  bp_stream_t s = NewStream();
  ASSERT_EQ(b_.stream_destroy(data(), 0, s), BP_STATUS_OK);
  EXPECT_EQ(b_.copy_device_to_host_async(data(), 0, x, 0, dst.data(), n, s), BP_STATUS_INVALID_ARGUMENT)
      << "a destroyed stream";
  EXPECT_EQ(b_.copy_device_to_host_async(data(), 0, x, 0, nullptr, n, nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(g_error.find("NULL src or dst"), std::string::npos) << g_error;
  EXPECT_EQ(b_.copy_device_to_host_async(data(), 0, nullptr, 0, dst.data(), n, nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(b_.copy_device_to_host_async(data(), 5, x, 0, dst.data(), n, nullptr), BP_STATUS_OUT_OF_RANGE);
  EXPECT_EQ(b_.copy_device_to_host_async(data(), 0, x, 0, nullptr, 0, nullptr), BP_STATUS_OK) << "nothing to copy";
  ASSERT_EQ(b_.stream_synchronize(data(), 0, nullptr), BP_STATUS_OK);
  EXPECT_EQ(dst, std::vector<float>(4, -1.0f));
  EXPECT_EQ(b_.deallocate(data(), 0, x), BP_STATUS_OK) << g_error;
}

}  // namespace
