// The route is decided before anything is cast or copied: an operator that
// falls back from a device whose memory the host cannot touch (vendor_sim)
// moves each input to the host once and each output back once, with the
// casts done on the host. Counted by bp_transfer_stats. Skipped (with the
// reason) when the plugins were not built.
// bp-test: public-api
#include <cstddef>
#include <string>
#include <vector>

#include "bp_test_util.h"

using namespace bptest;
using ::testing::HasSubstr;

namespace {

class FallbackTransferTest : public VendorSimTest {
 protected:
  void SetUp() override {
    VendorSimTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    Mask("add.Tensor", 1);
  }
  bp_tensor_t* I32(bp_device_t dev, const std::vector<int64_t>& sizes, const std::vector<int32_t>& data) {
    bp_tensor_t* t = nullptr;
    EXPECT_EQ(bp_tensor_from_host(ctx_, dev, static_cast<int32_t>(sizes.size()), sizes.data(), kI32, data.data(),
                                  data.size() * sizeof(int32_t), &t),
              BP_STATUS_OK)
        << LastError();
    return Own(t);
  }
  bp_transfer_stats_t Stats() {
    bp_transfer_stats_t s{};
    s.struct_size = sizeof(s);
    EXPECT_EQ(bp_transfer_stats(ctx_, dev_.backend, &s), BP_STATUS_OK) << LastError();
    return s;
  }
  void Reset() { ASSERT_EQ(bp_transfer_stats_reset(ctx_, dev_.backend), BP_STATUS_OK) << LastError(); }
};

TEST_F(FallbackTransferTest, MixedDtypeAddMovesEachInputOnceAndTheOutputOnce) {
  const int64_t n = 1000;
  std::vector<float> af(n);
  std::vector<int32_t> bi(n);
  for (int64_t i = 0; i < n; ++i) {
    af[i] = 0.5f * static_cast<float>(i);
    bi[i] = static_cast<int32_t>(3 - i);
  }
  bp_tensor_t* a = F32(dev_, {n}, af);
  bp_tensor_t* b = I32(dev_, {n}, bi);
  Reset();
  bp_tensor_t* c = Call("add.Tensor", {T(a), T(b)});  // float32 + int32 -> float32
  ASSERT_NE(c, nullptr);
  const bp_transfer_stats_t s = Stats();
  EXPECT_EQ(s.device_to_host_count, 2u) << "one device-to-host copy per input";
  EXPECT_EQ(s.device_to_host_bytes, static_cast<uint64_t>(n * 4 + n * 4));
  EXPECT_EQ(s.host_to_device_count, 1u) << "one host-to-device copy for the output";
  EXPECT_EQ(s.host_to_device_bytes, static_cast<uint64_t>(n * 4));
  EXPECT_EQ(s.device_to_device_count, 0u);
  EXPECT_EQ(bp_tensor_device(c).backend, dev_.backend);
  EXPECT_EQ(bp_tensor_dtype(c).code, kDLFloat);
  EXPECT_EQ(Fallbacks("add.Tensor"), 1u);
  std::vector<float> got = Read(c);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], af[i] + static_cast<float>(bi[i])) << "index " << i;
}

TEST_F(FallbackTransferTest, InplaceAndOutVariantsWriteBackOnceAndNeverReadOut) {
  bp_tensor_t* x = F32(dev_, {4}, {1, 2, 3, 4});
  bp_tensor_t* k = I32(dev_, {4}, {10, 20, 30, 40});
  bp_tensor_t* out = F32(dev_, {4}, {-1, -1, -1, -1});
  Reset();
  EXPECT_EQ(Call("add.out", {T(x), T(k), D(1.0), T(out)}), out);
  bp_transfer_stats_t s = Stats();
  EXPECT_EQ(s.device_to_host_count, 2u) << "out= is written, never read";
  EXPECT_EQ(s.host_to_device_count, 1u);
  EXPECT_EQ(Read(out), (std::vector<float>{11, 22, 33, 44}));

  Reset();
  EXPECT_EQ(Call("add_.Tensor", {T(x), T(k)}), x);
  s = Stats();
  EXPECT_EQ(s.device_to_host_count, 2u) << "self and other, once each";
  EXPECT_EQ(s.host_to_device_count, 1u) << "self, once";
  EXPECT_EQ(Read(x), (std::vector<float>{11, 22, 33, 44}));
}

TEST_F(FallbackTransferTest, AHostScalarJoinsWithoutATransfer) {
  bp_tensor_t* x = F32(dev_, {3}, {1, 2, 3});
  bp_device_t cpu{};
  ASSERT_EQ(bp_device_parse(ctx_, "cpu", &cpu), BP_STATUS_OK) << LastError();
  bp_tensor_t* s0 = nullptr;
  const int32_t two = 2;
  ASSERT_EQ(bp_tensor_from_host(ctx_, cpu, 0, nullptr, kI32, &two, sizeof two, &s0), BP_STATUS_OK) << LastError();
  Own(s0);
  Reset();
  bp_tensor_t* r = Call("add.Tensor", {T(x), T(s0)});
  ASSERT_NE(r, nullptr);
  const bp_transfer_stats_t s = Stats();
  EXPECT_EQ(s.device_to_host_count, 1u) << "only the device tensor comes to the host";
  EXPECT_EQ(s.host_to_device_count, 1u);
  EXPECT_EQ(Read(r), (std::vector<float>{3, 4, 5}));
}

TEST_F(FallbackTransferTest, StrictModeRefusesBeforeAnyTransfer) {
  bp_tensor_t* a = F32(dev_, {3}, {1, 2, 3});
  bp_tensor_t* b = I32(dev_, {3}, {1, 1, 1});
  ASSERT_EQ(bp_context_set_strict_fallback(ctx_, 1), BP_STATUS_OK);
  Reset();
  Call("add.Tensor", {T(a), T(b)}, BP_STATUS_FAILED_PRECONDITION);
  EXPECT_THAT(LastError(), HasSubstr("add.Tensor"));
  EXPECT_THAT(LastError(), HasSubstr("'vendor_sim'"));
  const bp_transfer_stats_t s = Stats();
  EXPECT_EQ(s.device_to_host_count + s.host_to_device_count, 0u) << "the route was refused before any copy";
}

TEST_F(FallbackTransferTest, TransferStatsRejectsBadArguments) {
  bp_transfer_stats_t s{};
  s.struct_size = offsetof(bp_transfer_stats_t, cast_count) - 8;  // smaller than the oldest (1.2) layout
  EXPECT_EQ(bp_transfer_stats(ctx_, dev_.backend, &s), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("struct_size"));
  s.struct_size = sizeof(s);
  EXPECT_EQ(bp_transfer_stats(ctx_, 99, &s), BP_STATUS_OUT_OF_RANGE);
  EXPECT_THAT(LastError(), HasSubstr("99"));
  EXPECT_EQ(bp_transfer_stats(nullptr, 0, &s), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(bp_transfer_stats(ctx_, 0, nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(bp_transfer_stats_reset(ctx_, -1), BP_STATUS_OUT_OF_RANGE);
  // The host's memory is host memory: nothing is ever counted there.
  ASSERT_EQ(bp_transfer_stats(ctx_, 0, &s), BP_STATUS_OK);
  EXPECT_EQ(s.device_to_host_count + s.host_to_device_count, 0u);
}

}  // namespace
