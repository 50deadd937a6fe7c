// Device faults on demand (samples/vendor_plugin/faults.h) and how the core
// survives each, as a real chip would need it to: out of memory (the caching
// allocator empties its cache and retries once; a request that still does
// not fit fails with a message naming the device and the call), failing
// copies (a clear error, nothing lost, the next copy works), an alignment
// stricter than the host's, and late completion on the stream.
// bp-test: public-api
#include <cstdlib>
#include <string>
#include <vector>

#include "bp_test_util.h"

using namespace bptest;
using ::testing::HasSubstr;

namespace {

// VendorSimTest with one fault variable set while the plugin loads (the
// plugin reads them at init).
class VendorSimFaultTest : public VendorSimTest {
 protected:
  void Load(const char* name, const char* value) {
    setenv(name, value, 1);
    var_ = name;
    VendorSimTest::SetUp();
  }
  void SetUp() override {}  // each test calls Load
  void TearDown() override {
    if (!var_.empty()) unsetenv(var_.c_str());
    VendorSimTest::TearDown();
  }
  bp_tensor_t* Empty(int64_t n) {
    bp_tensor_t* t = nullptr;
    bp_status_t rc = bp_tensor_empty(ctx_, dev_, 1, &n, kF32, &t);
    return rc == BP_STATUS_OK ? Own(t) : nullptr;
  }
  std::string var_;
};

TEST_F(VendorSimFaultTest, OutOfMemoryEmptiesTheCacheAndRetriesOnce) {
  Load("BP_VENDOR_SIM_OOM_AFTER_BYTES", "1048576");  // a 1 MiB device
  if (IsSkipped() || HasFatalFailure()) return;
  bp_tensor_t* a = nullptr;
  int64_t n = 150000;  // 600 KB
  ASSERT_EQ(bp_tensor_empty(ctx_, dev_, 1, &n, kF32, &a), BP_STATUS_OK) << LastError();
  bp_tensor_release(a);  // its block stays in the caching allocator
  // 700 KB more does not fit beside the cached 600 KB: the device says out of
  // memory, the core empties its cache and the retry succeeds.
  ASSERT_NE(Empty(175000), nullptr) << LastError();
  // 2 MB never fits: the error names the device and the call.
  EXPECT_EQ(Empty(500000), nullptr);
  EXPECT_THAT(LastError(), HasSubstr("vendor_sim"));
  EXPECT_THAT(LastError(), HasSubstr("allocat"));
  EXPECT_THAT(LastError(), HasSubstr("out of device memory"));
  // The device still works.
  bp_tensor_t* b = F32(dev_, {3}, {1, 2, 3});
  EXPECT_EQ(Read(b), (std::vector<float>{1, 2, 3}));
}

TEST_F(VendorSimFaultTest, AFailingCopyIsAnErrorAndTheNextCopyWorks) {
  Load("BP_VENDOR_SIM_FAIL_COPIES", "3");  // every third copy fails
  if (IsSkipped() || HasFatalFailure()) return;
  int failures = 0, successes = 0;
  for (int i = 0; i < 4; ++i) {
    const std::vector<float> values = {1.5f * i, -2, 3};
    bp_tensor_t* t = nullptr;
    const int64_t n = 3;
    const bp_status_t rc = bp_tensor_from_host(ctx_, dev_, 1, &n, kF32, values.data(), sizeof(float) * 3, &t);
    if (rc != BP_STATUS_OK) {
      ++failures;
      EXPECT_EQ(t, nullptr) << "no tensor on a failed copy";
      EXPECT_THAT(LastError(), HasSubstr("injected copy failure"));
      EXPECT_THAT(LastError(), HasSubstr("vendor_sim"));
      continue;
    }
    Own(t);
    std::vector<float> back(3, 0.0f);
    if (bp_tensor_to_host(t, back.data(), sizeof(float) * 3) == BP_STATUS_OK) {
      ++successes;
      EXPECT_EQ(back, values);
    } else {
      ++failures;
      EXPECT_THAT(LastError(), HasSubstr("injected copy failure"));
    }
  }
  EXPECT_GT(failures, 0);
  EXPECT_GT(successes, 0);
}

TEST_F(VendorSimFaultTest, AStricterAlignmentIsReportedAndHonoured) {
  Load("BP_VENDOR_SIM_ALIGNMENT", "65536");
  if (IsSkipped() || HasFatalFailure()) return;
  bp_device_properties_t p{};
  p.struct_size = sizeof(p);
  ASSERT_EQ(bp_device_properties(ctx_, dev_, &p), BP_STATUS_OK) << LastError();
  EXPECT_EQ(p.alignment_bytes, 65536u);
  bp_tensor_t* a = F32(dev_, {5}, {1, 2, 3, 4, 5});
  bp_tensor_t* b = F32(dev_, {5}, {10, 20, 30, 40, 50});
  EXPECT_EQ(Read(Call("add.Tensor", {T(a), T(b)})), (std::vector<float>{11, 22, 33, 44, 55}));
  EXPECT_EQ(Read(Call("mul.Tensor", {T(a), T(b)})), (std::vector<float>{10, 40, 90, 160, 250}));  // fallback
}

TEST_F(VendorSimFaultTest, LateCompletionStillGivesTheRightValues) {
  Load("BP_VENDOR_SIM_LATENCY_US", "2000");
  if (IsSkipped() || HasFatalFailure()) return;
  bp_tensor_t* a = F32(dev_, {4}, {-1, 2, -3, 4});
  EXPECT_EQ(Read(Call("relu", {T(a)})), (std::vector<float>{0, 2, 0, 4}));
  EXPECT_EQ(Read(Call("exp", {T(Call("relu", {T(a)}))}))[0], 1.0f);  // exp through the fallback
  EXPECT_EQ(bp_device_synchronize(ctx_, dev_), BP_STATUS_OK) << LastError();
}

}  // namespace
