// Dtype masks at registration (ABI 1.3) and the cast route (issue 18 items 3
// and 4): a kernel declared for some compute dtypes is picked only for those,
// before anything is allocated or cast; a call the core casts for a native
// kernel is counted as the cast route with the host<->device bytes of its
// casts; a mask with unknown bits refuses the plugin; a 1.2 plugin, which
// registers without masks, is offered every dtype as before. vendor_sim
// declares exp for float32 only. Skipped (with the reason) when the plugins
// were not built.
// bp-test: public-api
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bp_test_util.h"

using namespace bptest;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

// Sets an environment variable for one scope (the testdev plugin reads its
// knobs at negotiation and init).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

class CastRouteTest : public VendorSimTest {
 protected:
  bp_tensor_t* I32(const std::vector<int64_t>& sizes, const std::vector<int32_t>& data) {
    bp_tensor_t* t = nullptr;
    EXPECT_EQ(bp_tensor_from_host(ctx_, dev_, static_cast<int32_t>(sizes.size()), sizes.data(), kI32, data.data(),
                                  data.size() * sizeof(int32_t), &t),
              BP_STATUS_OK)
        << LastError();
    return Own(t);
  }
  struct Counts {
    uint64_t native = 0, fallback = 0, cast = 0, cast_bytes = 0;
  };
  Counts CountsOf(const char* op) {
    Counts c;
    EXPECT_EQ(bp_native_count(ctx_, Op(op), dev_.backend, &c.native), BP_STATUS_OK) << LastError();
    EXPECT_EQ(bp_fallback_count(ctx_, Op(op), dev_.backend, &c.fallback), BP_STATUS_OK) << LastError();
    EXPECT_EQ(bp_cast_count(ctx_, Op(op), dev_.backend, &c.cast, &c.cast_bytes), BP_STATUS_OK) << LastError();
    return c;
  }
  bp_transfer_stats_t Stats() {
    bp_transfer_stats_t s{};
    s.struct_size = sizeof(s);
    EXPECT_EQ(bp_transfer_stats(ctx_, dev_.backend, &s), BP_STATUS_OK) << LastError();
    return s;
  }
};

TEST_F(CastRouteTest, Int32ExpOnFloat32OnlyKernelIsCountedAsCastRouteWithItsBytes) {
  const int64_t n = 1000;
  std::vector<int32_t> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<int32_t>(i % 7) - 3;
  bp_tensor_t* a = I32({n}, x);
  ASSERT_EQ(bp_transfer_stats_reset(ctx_, dev_.backend), BP_STATUS_OK) << LastError();
  bp_tensor_t* r = Call("exp", {T(a)});
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(bp_tensor_dtype(r).bits, 32);
  EXPECT_EQ(bp_tensor_device(r).backend, dev_.backend);
  const std::vector<float> got = Read(r);
  for (int64_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(got[i], std::exp(static_cast<float>(x[i]))) << i;

  const Counts c = CountsOf("exp");
  EXPECT_EQ(c.cast, 1u) << "the float32 kernel ran after the core cast int32 -> float32";
  EXPECT_EQ(c.native, 0u) << "a call the core cast for is not native";
  EXPECT_EQ(c.fallback, 0u);
  // vendor_sim has no copy_ kernel: the cast goes through the host, the int32
  // input down (4 bytes each) and the float32 copy up (4 bytes each).
  EXPECT_EQ(c.cast_bytes, static_cast<uint64_t>(n * 4 + n * 4));
  const bp_transfer_stats_t s = Stats();
  EXPECT_EQ(s.cast_count, 1u);
  EXPECT_EQ(s.cast_bytes, c.cast_bytes);
  EXPECT_GE(s.host_to_device_bytes + s.device_to_host_bytes, s.cast_bytes) << "cast bytes are part of the transfers";
}

TEST_F(CastRouteTest, Float32ExpIsNativeWithoutCastBytes) {
  bp_tensor_t* a = F32(dev_, {4}, {0.f, 1.f, -1.f, 2.f});
  ASSERT_NE(Call("exp", {T(a)}), nullptr);
  const Counts c = CountsOf("exp");
  EXPECT_EQ(c.native, 1u);
  EXPECT_EQ(c.cast, 0u);
  EXPECT_EQ(c.cast_bytes, 0u);
}

TEST_F(CastRouteTest, DtypeOutsideTheMaskIsRoutedBeforeTheKernelIsOffered) {
  // Strict mode words the refusal: the kernel's mask, not a decline by the
  // kernel (which would mean the core ran meta and allocated for it first).
  ASSERT_EQ(bp_context_set_strict_fallback(ctx_, 1), BP_STATUS_OK);
  bp_tensor_t* a = nullptr;
  const int64_t sizes[1] = {3};
  const double data[3] = {0.0, 1.0, 2.0};
  ASSERT_EQ(bp_tensor_from_host(ctx_, dev_, 1, sizes, kF64, data, sizeof data, &a), BP_STATUS_OK) << LastError();
  Own(a);
  bp_tensor_t* r = nullptr;
  bp_value_t args[1] = {T(a)};
  EXPECT_EQ(bp_op_call(ctx_, Op("exp"), args, 1, &r, 1), BP_STATUS_FAILED_PRECONDITION);
  EXPECT_THAT(LastError(), HasSubstr("for compute dtype float64 (its kernel takes float32)"));
  EXPECT_THAT(LastError(), Not(HasSubstr("only float32 is native")));
  ASSERT_EQ(bp_context_set_strict_fallback(ctx_, 0), BP_STATUS_OK);
  ASSERT_EQ(bp_op_call(ctx_, Op("exp"), args, 1, &r, 1), BP_STATUS_OK) << LastError();
  Own(r);
  const Counts c = CountsOf("exp");
  EXPECT_EQ(c.fallback, 1u);
  EXPECT_EQ(c.native + c.cast, 0u);
}

TEST_F(CastRouteTest, HostBackendCastsStayNative) {
  // The CPU backend's casts are its own arithmetic (no bus): native.
  bp_tensor_t* a = nullptr;
  const int64_t sizes[1] = {2};
  const int32_t data[2] = {1, 2};
  ASSERT_EQ(bp_tensor_from_host(ctx_, kCpu, 1, sizes, kI32, data, sizeof data, &a), BP_STATUS_OK) << LastError();
  Own(a);
  ASSERT_NE(Call("exp", {T(a)}), nullptr);
  uint64_t cast = 0, native = 0;
  ASSERT_EQ(bp_cast_count(ctx_, Op("exp"), kCpu.backend, &cast, nullptr), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_native_count(ctx_, Op("exp"), kCpu.backend, &native), BP_STATUS_OK) << LastError();
  EXPECT_EQ(cast, 0u);
  EXPECT_EQ(native, 1u);
}

TEST_F(CastRouteTest, TransferStatsAcceptTheOlderLayout) {
  // An ABI 1.2 caller's struct ends before cast_count: filled, tail untouched.
  struct Padded {
    bp_transfer_stats_t s;
  } p;
  std::memset(&p, 0xab, sizeof p);
  p.s.struct_size = offsetof(bp_transfer_stats_t, cast_count);
  ASSERT_EQ(bp_transfer_stats(ctx_, dev_.backend, &p.s), BP_STATUS_OK) << LastError();
  EXPECT_EQ(p.s.struct_size, offsetof(bp_transfer_stats_t, cast_count));
  EXPECT_EQ(p.s.cast_count, 0xababababababababull) << "a field past the caller's struct_size was written";
  p.s.struct_size = offsetof(bp_transfer_stats_t, cast_count) - 1;
  EXPECT_EQ(bp_transfer_stats(ctx_, dev_.backend, &p.s), BP_STATUS_INVALID_ARGUMENT);
}

TEST_F(CastRouteTest, CastCountChecksItsArguments) {
  uint64_t n = 0;
  EXPECT_EQ(bp_cast_count(ctx_, Op("exp"), dev_.backend, nullptr, nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("bp_cast_count"));
  EXPECT_EQ(bp_cast_count(ctx_, Op("exp"), 99, &n, nullptr), BP_STATUS_OUT_OF_RANGE);
}

// The testdev plugin (add.Tensor, float32 only) with its dtype knobs.
class DtypeMaskLoadTest : public ContextTest {
 protected:
  // add(float64) on testdev with no CPU plugin loaded (nothing else can run
  // it): the error says whether the kernel was offered the call (its decline
  // message) or routed around.
  std::string AddF64Error(bp_device_t dev) {
    const int64_t sizes[1] = {2};
    const double data[2] = {1.0, 2.0};
    bp_tensor_t* a = nullptr;
    EXPECT_EQ(bp_tensor_from_host(ctx_, dev, 1, sizes, kF64, data, sizeof data, &a), BP_STATUS_OK) << LastError();
    Own(a);
    bp_value_t args[2] = {T(a), T(a)};
    bp_tensor_t* r = nullptr;
    EXPECT_EQ(bp_op_call(ctx_, Op("add.Tensor"), args, 2, &r, 1), BP_STATUS_UNIMPLEMENTED);
    return LastError();
  }
};

TEST_F(DtypeMaskLoadTest, MaskWithUnknownBitsRefusesTheLoad) {
  ScopedEnv mask("TESTDEV_ADD_MASK", "0x10000000080");  // float32 plus bit 40
  bp_plugin_t* p = nullptr;
  const std::string path = PluginPath("bp_testdev");
  EXPECT_EQ(bp_plugin_load(ctx_, path.c_str(), &p), BP_STATUS_INVALID_ARGUMENT);
  const std::string msg = LastError();
  EXPECT_THAT(msg, HasSubstr("libbp_testdev.so"));
  EXPECT_THAT(msg, HasSubstr("'add.Tensor'"));
  EXPECT_THAT(msg, HasSubstr("bits 0x10000000000"));
  bp_device_t d{};
  EXPECT_NE(bp_device_parse(ctx_, "testdev:0", &d), BP_STATUS_OK) << "a refused plugin left its backend behind";
}

TEST_F(DtypeMaskLoadTest, EmptyMaskRefusesTheLoad) {
  ScopedEnv mask("TESTDEV_ADD_MASK", "0");
  EXPECT_EQ(bp_plugin_load(ctx_, PluginPath("bp_testdev").c_str(), nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("names no dtype"));
}

TEST_F(DtypeMaskLoadTest, DeclaredMaskRoutesOtherDtypesAroundTheKernel) {
  ScopedEnv mask("TESTDEV_ADD_MASK", "0x80");  // BP_DTYPE_MASK_FLOAT32
  const std::string msg = AddF64Error(LoadTestdev());
  EXPECT_THAT(msg, HasSubstr("for compute dtype float64 (its kernel takes float32)"));
  EXPECT_THAT(msg, Not(HasSubstr("supports float32 only")));
}

TEST_F(DtypeMaskLoadTest, Abi12PluginWithoutMasksIsOfferedEveryDtype) {
  ScopedEnv abi("TESTDEV_ABI", "1.2");
  ScopedEnv mask("TESTDEV_ADD_MASK", "0x80");  // ignored: a 1.2 plugin registers without masks
  const bp_device_t dev = LoadTestdev();
  bp_backend_info_t info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(bp_backend_info(ctx_, dev.backend, &info), BP_STATUS_OK) << LastError();
  EXPECT_EQ(info.abi_version, BP_MAKE_ABI_VERSION(1, 2));
  const std::string msg = AddF64Error(dev);
  EXPECT_THAT(msg, HasSubstr("testdev: add.Tensor supports float32 only")) << "the kernel declined at run time";
}

}  // namespace
