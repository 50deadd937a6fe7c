// vendor_sim's pinned host memory and copy_device_to_host_async (ABI 1.4
// slots) through the fake host: page-aligned tracked blocks, a copy that
// returns before its bytes arrive (the test holds the device), bad arguments
// that queue nothing, and injected copy failures.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "vendor_sim_streams_fixture.h"

namespace {

// ---- Pinned host memory and copy_device_to_host_async (ABI 1.4) ----------

// Pinned host blocks are page-aligned, writable, and only ours are freed.
TEST(VendorSimPinned, HostAllocateIsAlignedAndTracked) {
  Sim sim(Env{});
  ASSERT_EQ(sim.init_status(), BP_STATUS_OK) << LastError();
  ASSERT_NE(sim.b().host_allocate, nullptr);
  ASSERT_NE(sim.b().host_deallocate, nullptr);
  ASSERT_NE(sim.b().copy_device_to_host_async, nullptr);
  void* p = nullptr;
  ASSERT_EQ(sim.b().host_allocate(sim.bd(), 0, 1000, &p), BP_STATUS_OK) << LastError();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u);
  std::memset(p, 0x5a, 1000);
  void* zero = reinterpret_cast<void*>(1);
  EXPECT_EQ(sim.b().host_allocate(sim.bd(), 0, 0, &zero), BP_STATUS_OK) << LastError();
  EXPECT_EQ(zero, nullptr);
  EXPECT_EQ(sim.b().host_allocate(sim.bd(), 1, 16, &zero), BP_STATUS_OUT_OF_RANGE);
  int not_ours = 0;
  EXPECT_EQ(sim.b().host_deallocate(sim.bd(), 0, &not_ours), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("host_deallocate"), std::string::npos) << LastError();
  EXPECT_EQ(sim.b().host_deallocate(sim.bd(), 0, static_cast<char*>(p) + 8), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(sim.b().host_deallocate(sim.bd(), 0, nullptr), BP_STATUS_OK);
  EXPECT_EQ(sim.b().host_deallocate(sim.bd(), 0, p), BP_STATUS_OK) << LastError();
  EXPECT_EQ(sim.b().host_deallocate(sim.bd(), 0, p), BP_STATUS_INVALID_ARGUMENT);  // twice
  // A block left live is freed at shutdown (the sanitizer builds check it).
  ASSERT_EQ(sim.b().host_allocate(sim.bd(), 0, 64, &p), BP_STATUS_OK) << LastError();
}

// On an asynchronous stream the copy is only enqueued: behind a held kernel,
// dst still holds its old bytes when the call returns, and the new ones once
// the stream is synchronized.
TEST(VendorSimPinned, AsyncCopyReturnsBeforeTheBytesArrive) {
  Sim sim(Sim::kHeld);
  ASSERT_EQ(sim.init_status(), BP_STATUS_OK) << LastError();
  bp_stream_t s = sim.NewStream();
  void* x = sim.Alloc(4);
  void* scratch = sim.Alloc(4);
  sim.Upload(x, kNew, s);
  void* p = nullptr;
  ASSERT_EQ(sim.b().host_allocate(sim.bd(), 0, 4 * sizeof(float), &p), BP_STATUS_OK) << LastError();
  float* dst = static_cast<float*>(p);
  std::memcpy(dst, kOld.data(), 4 * sizeof(float));
  ASSERT_TRUE(sim.hold().Hold()) << sim.hold().path();
  ASSERT_EQ(sim.Relu(x, scratch, 4, s), BP_STATUS_OK) << LastError();  // held on s
  // Returns while the kernel before it is held.
  ASSERT_EQ(sim.b().copy_device_to_host_async(sim.bd(), 0, x, 0, dst, 4 * sizeof(float), s), BP_STATUS_OK)
      << LastError();
  bp_event_t after = sim.NewEvent();
  ASSERT_EQ(sim.b().event_record(sim.bd(), after, s), BP_STATUS_OK) << LastError();
  EXPECT_EQ(sim.Query(after), 0);                     // the copy (behind the kernel) has not run
#if !defined(__SANITIZE_THREAD__)                     // reading dst now races with the queued copy, on purpose
  EXPECT_EQ(std::vector<float>(dst, dst + 4), kOld);  // not there yet
#endif
  sim.hold().Release();
  ASSERT_EQ(sim.b().stream_synchronize(sim.bd(), 0, s), BP_STATUS_OK) << LastError();
  EXPECT_EQ(std::vector<float>(dst, dst + 4), kNew);
  // A byte offset reads the tail.
  std::memcpy(dst, kOld.data(), 4 * sizeof(float));
  ASSERT_EQ(sim.b().copy_device_to_host_async(sim.bd(), 0, x, 2 * sizeof(float), dst, 2 * sizeof(float), s),
            BP_STATUS_OK)
      << LastError();
  ASSERT_EQ(sim.b().stream_synchronize(sim.bd(), 0, s), BP_STATUS_OK) << LastError();
  EXPECT_EQ(std::vector<float>(dst, dst + 4), (std::vector<float>{3, 4, 9, 9}));
  EXPECT_EQ(sim.Query(after), 1);
  EXPECT_EQ(sim.b().event_destroy(sim.bd(), after), BP_STATUS_OK);
  EXPECT_EQ(sim.b().host_deallocate(sim.bd(), 0, p), BP_STATUS_OK) << LastError();
  for (void* h : {x, scratch}) EXPECT_EQ(sim.b().deallocate(sim.bd(), 0, h), BP_STATUS_OK);
  EXPECT_EQ(sim.b().stream_destroy(sim.bd(), 0, s), BP_STATUS_OK) << LastError();
}

// Bad arguments are the call's error, reported before anything is queued:
// after synchronizing, dst is untouched.
TEST(VendorSimPinned, AsyncCopyBadArgumentsFailAndQueueNothing) {
  Sim sim(Sim::Async());
  ASSERT_EQ(sim.init_status(), BP_STATUS_OK) << LastError();
  bp_stream_t s = sim.NewStream();
  void* x = sim.Alloc(4);
  sim.Upload(x, kNew, s);
  std::vector<float> dst = kOld;
  const size_t n = 4 * sizeof(float);
  const bp_stream_t unknown = reinterpret_cast<bp_stream_t>(static_cast<uintptr_t>(0xdead0));
  EXPECT_EQ(sim.b().copy_device_to_host_async(sim.bd(), 0, x, 0, dst.data(), n, unknown), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("copy_device_to_host_async"), std::string::npos) << LastError();
  // Past the block (its size rounded up to the arena's 256-byte alignment).
  EXPECT_EQ(sim.b().copy_device_to_host_async(sim.bd(), 0, x, 256, dst.data(), n, s), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("outside its allocation"), std::string::npos) << LastError();
  EXPECT_EQ(sim.b().copy_device_to_host_async(sim.bd(), 0, x, 0, dst.data(), 257, s), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(sim.b().copy_device_to_host_async(sim.bd(), 0, x, 0, nullptr, n, s), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("'dst' is NULL"), std::string::npos) << LastError();
  EXPECT_EQ(sim.b().copy_device_to_host_async(sim.bd(), 0, nullptr, 0, dst.data(), n, s), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(sim.b().copy_device_to_host_async(sim.bd(), 3, x, 0, dst.data(), n, s), BP_STATUS_OUT_OF_RANGE);
  ASSERT_EQ(sim.b().stream_synchronize(sim.bd(), 0, s), BP_STATUS_OK) << LastError();
  EXPECT_EQ(dst, kOld);
  EXPECT_EQ(sim.b().copy_device_to_host_async(sim.bd(), 0, x, 0, nullptr, 0, s), BP_STATUS_OK);  // nothing to copy
  EXPECT_EQ(sim.b().deallocate(sim.bd(), 0, x), BP_STATUS_OK);
  EXPECT_EQ(sim.b().stream_destroy(sim.bd(), 0, s), BP_STATUS_OK) << LastError();
}

// BP_VENDOR_SIM_FAIL_COPIES counts the asynchronous copy like the others,
// and its failure is the call's status, not the device thread's.
TEST(VendorSimPinned, AsyncCopyCountsInjectedCopyFailures) {
  Sim sim(Sim::Async({{"BP_VENDOR_SIM_FAIL_COPIES", "2"}}));
  ASSERT_EQ(sim.init_status(), BP_STATUS_OK) << LastError();
  void* x = sim.Alloc(4);
  sim.Upload(x, kNew, nullptr);  // copy 1: passes
  std::vector<float> dst = kOld;
  EXPECT_EQ(sim.b().copy_device_to_host_async(sim.bd(), 0, x, 0, dst.data(), 4 * sizeof(float), nullptr),
            BP_STATUS_INTERNAL);  // copy 2: injected
  EXPECT_NE(LastError().find("BP_VENDOR_SIM_FAIL_COPIES"), std::string::npos) << LastError();
  ASSERT_EQ(sim.b().stream_synchronize(sim.bd(), 0, nullptr), BP_STATUS_OK) << LastError();
  EXPECT_EQ(dst, kOld);
  EXPECT_EQ(sim.b().copy_device_to_host_async(sim.bd(), 0, x, 0, dst.data(), 4 * sizeof(float), nullptr),
            BP_STATUS_OK)
      << LastError();  // copy 3: passes
  ASSERT_EQ(sim.b().stream_synchronize(sim.bd(), 0, nullptr), BP_STATUS_OK) << LastError();
  EXPECT_EQ(dst, kNew);
  EXPECT_EQ(sim.b().deallocate(sim.bd(), 0, x), BP_STATUS_OK);
}

}  // namespace
