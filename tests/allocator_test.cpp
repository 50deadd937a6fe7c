// The caching allocator: size classes, reuse, statistics, empty_cache and the
// out-of-memory retry after releasing the cache.
#include <cstdlib>

#include "bp_test_util.h"

using namespace bptest;

namespace {

class AllocatorTest : public ContextTest {
 protected:
  bp_allocator_stats_t Stats(bp_device_t d) {
    bp_allocator_stats_t s{};
    s.struct_size = sizeof(s);
    EXPECT_EQ(bp_allocator_stats(ctx_, d, &s), BP_STATUS_OK);
    return s;
  }
  bp_tensor_t* Empty(bp_device_t d, int64_t bytes, bp_status_t expect = BP_STATUS_OK) {
    int64_t n = bytes;
    bp_tensor_t* t = nullptr;
    DLDataType u8{kDLUInt, 8, 1};
    EXPECT_EQ(bp_tensor_empty(ctx_, d, 1, &n, u8, &t), expect) << LastError();
    return t;
  }
};

TEST_F(AllocatorTest, FreedBlocksAreReused) {
  bp_allocator_stats_t s0 = Stats(kCpu);
  bp_tensor_t* a = Empty(kCpu, 1000);
  bp_allocator_stats_t s1 = Stats(kCpu);
  EXPECT_EQ(s1.allocated_bytes - s0.allocated_bytes, 1024u);  // 512-byte size classes
  EXPECT_EQ(s1.device_allocations - s0.device_allocations, 1u);
  bp_tensor_release(a);
  bp_allocator_stats_t s2 = Stats(kCpu);
  EXPECT_EQ(s2.allocated_bytes, s0.allocated_bytes);
  EXPECT_EQ(s2.reserved_bytes, s1.reserved_bytes);  // cached, not returned
  bp_tensor_t* b = Empty(kCpu, 900);
  bp_allocator_stats_t s3 = Stats(kCpu);
  EXPECT_EQ(s3.device_allocations, s1.device_allocations);
  EXPECT_EQ(s3.cache_hits - s2.cache_hits, 1u);
  EXPECT_GE(s3.peak_allocated_bytes, s1.allocated_bytes);
  bp_tensor_release(b);
  ASSERT_EQ(bp_allocator_empty_cache(ctx_, kCpu), BP_STATUS_OK);
  EXPECT_EQ(Stats(kCpu).reserved_bytes, 0u);
}

TEST_F(AllocatorTest, LargeRequestsRoundTo2MiB) {
  bp_allocator_stats_t s0 = Stats(kCpu);
  bp_tensor_t* a = Empty(kCpu, (1 << 20) + 1);
  EXPECT_EQ(Stats(kCpu).allocated_bytes - s0.allocated_bytes, 2u << 20);
  bp_tensor_release(a);
}

TEST_F(AllocatorTest, OutOfMemoryRetriesAfterEmptyingTheCache) {
  ASSERT_EQ(setenv("TESTDEV_CAPACITY", std::to_string(7 << 20).c_str(), 1), 0);
  bp_device_t dev = LoadTestdev();
  unsetenv("TESTDEV_CAPACITY");
  bp_tensor_t* big = Empty(dev, 6 << 20);
  ASSERT_NE(big, nullptr);
  bp_tensor_release(big);  // 6 MiB stay cached on the device
  EXPECT_EQ(Stats(dev).reserved_bytes, 6u << 20);
  // 2 MiB does not fit next to the cached 6 MiB (7 MiB arena), and the cached
  // block is too large to reuse: the allocator frees the cache and retries.
  bp_tensor_t* small = Empty(dev, 2 << 20);
  ASSERT_NE(small, nullptr);
  bp_allocator_stats_t s = Stats(dev);
  EXPECT_EQ(s.reserved_bytes, 2u << 20);
  EXPECT_EQ(s.allocated_bytes, 2u << 20);
  bp_tensor_release(small);
  // A request larger than the device is OUT_OF_MEMORY, not a crash.
  Empty(dev, 64 << 20, BP_STATUS_OUT_OF_MEMORY);
  EXPECT_THAT(LastError(), ::testing::HasSubstr("testdev"));
}

TEST_F(AllocatorTest, ZeroBytesAndBadDevices) {
  bp_tensor_t* z = Empty(kCpu, 0);
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(bp_tensor_numel(z), 0);
  bp_tensor_release(z);
  bp_allocator_stats_t s{};
  s.struct_size = sizeof(s);
  EXPECT_EQ(bp_allocator_stats(ctx_, bp_device_t{9, 0}, &s), BP_STATUS_NOT_FOUND);
  EXPECT_EQ(bp_allocator_empty_cache(ctx_, bp_device_t{0, 3}), BP_STATUS_NOT_FOUND);
}

}  // namespace
