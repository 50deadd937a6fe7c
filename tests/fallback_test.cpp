// The CPU fallback: device tensors are copied to the CPU, the CPU kernel runs,
// results (and mutated arguments) are written back; counters, one warning per
// (backend, op), strict mode. testdev's memory is private (opaque handles), so
// any direct host access would crash.
#include "bp_test_util.h"

using namespace bptest;
using ::testing::HasSubstr;

namespace {

class FallbackTest : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    ASSERT_EQ(bp_op_register_kernel(ctx_, Op("mul.Tensor"), 0, HostMulF32, nullptr, 0, nullptr), BP_STATUS_OK);
    dev_ = LoadTestdev();
  }
  uint64_t FallbackCount(const char* op) {
    uint64_t n = 0;
    EXPECT_EQ(bp_fallback_count(ctx_, Op(op), dev_.backend, &n), BP_STATUS_OK);
    return n;
  }
  bp_device_t dev_{};
};

TEST_F(FallbackTest, FunctionalResultLandsOnTheDevice) {
  int32_t kind = -1;
  ASSERT_EQ(bp_op_dispatch_kind(ctx_, Op("mul.Tensor"), dev_.backend, &kind), BP_STATUS_OK);
  EXPECT_EQ(kind, BP_DISPATCH_CPU_FALLBACK);
  bp_tensor_t* a = F32(dev_, {2, 2}, {1, 2, 3, 4});
  bp_tensor_t* b = F32(dev_, {2}, {10, 100});
  bp_tensor_t* r = Call("mul.Tensor", {T(a), T(b)});
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(bp_tensor_device(r).backend, dev_.backend);
  EXPECT_EQ(Read(r), (std::vector<float>{10, 200, 30, 400}));
  EXPECT_EQ(FallbackCount("mul.Tensor"), 1u);
  uint64_t native = 0;
  ASSERT_EQ(bp_native_count(ctx_, Op("mul.Tensor"), dev_.backend, &native), BP_STATUS_OK);
  EXPECT_EQ(native, 0u);
}

TEST_F(FallbackTest, WarnsOncePerBackendAndOp) {
  bp_tensor_t* a = F32(dev_, {2}, {1, 2});
  for (int i = 0; i < 3; ++i) Call("mul.Tensor", {T(a), T(a)});
  EXPECT_EQ(FallbackCount("mul.Tensor"), 3u);
  EXPECT_EQ(CountLogs("CPU fallback: mul.Tensor has no kernel on backend 'testdev'"), 1);
}

TEST_F(FallbackTest, InplaceWritesBackTheMutatedArgument) {
  bp_tensor_t* a = F32(dev_, {3}, {1, 2, 3});
  bp_tensor_t* b = F32(dev_, {3}, {2, 2, 2});
  bp_tensor_t* r = Call("mul_.Tensor", {T(a), T(b)});
  EXPECT_EQ(r, a);
  EXPECT_EQ(Read(a), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(Read(b), (std::vector<float>{2, 2, 2}));
  EXPECT_EQ(FallbackCount("mul_.Tensor"), 1u);
}

TEST_F(FallbackTest, OutVariantWritesIntoOut) {
  bp_tensor_t* a = F32(dev_, {2}, {3, 4});
  bp_tensor_t* out = F32(dev_, {2}, {0, 0});
  bp_tensor_t* r = Call("mul.out", {T(a), T(a), T(out)});
  EXPECT_EQ(r, out);
  EXPECT_EQ(Read(out), (std::vector<float>{9, 16}));
}

TEST_F(FallbackTest, StrictModeRefuses) {
  ASSERT_EQ(bp_context_set_strict_fallback(ctx_, 1), BP_STATUS_OK);
  bp_tensor_t* a = F32(dev_, {2}, {1, 2});
  Call("mul.Tensor", {T(a), T(a)}, BP_STATUS_FAILED_PRECONDITION);
  EXPECT_THAT(LastError(), HasSubstr("strict mode: mul.Tensor has no kernel on backend 'testdev'"));
  EXPECT_EQ(FallbackCount("mul.Tensor"), 0u);
  int32_t kind = -1;
  ASSERT_EQ(bp_op_dispatch_kind(ctx_, Op("mul.Tensor"), dev_.backend, &kind), BP_STATUS_OK);
  EXPECT_EQ(kind, BP_DISPATCH_NONE);
  // Native kernels still run.
  EXPECT_NE(Call("add.Tensor", {T(a), T(a)}), nullptr);
  ASSERT_EQ(bp_context_set_strict_fallback(ctx_, 0), BP_STATUS_OK);
  EXPECT_NE(Call("mul.Tensor", {T(a), T(a)}), nullptr);
}

TEST(FallbackEnvTest, BackplaneStrictEnvironmentVariable) {
  ASSERT_EQ(setenv("BACKPLANE_STRICT", "1", 1), 0);
  bp_context_t* ctx = nullptr;
  ASSERT_EQ(bp_context_create(nullptr, &ctx), BP_STATUS_OK);
  unsetenv("BACKPLANE_STRICT");
  bp_op_t* mul = nullptr;
  ASSERT_EQ(bp_op_find(ctx, "mul.Tensor", &mul), BP_STATUS_OK);
  ASSERT_EQ(bp_op_register_kernel(ctx, mul, 0, HostMulF32, nullptr, 0, nullptr), BP_STATUS_OK);
  ASSERT_EQ(bp_plugin_load(ctx, PluginPath("bp_testdev").c_str(), nullptr), BP_STATUS_OK);
  bp_device_t dev{};
  ASSERT_EQ(bp_device_parse(ctx, "testdev", &dev), BP_STATUS_OK);
  int32_t kind = -1;
  ASSERT_EQ(bp_op_dispatch_kind(ctx, mul, dev.backend, &kind), BP_STATUS_OK);
  EXPECT_EQ(kind, BP_DISPATCH_NONE);
  bp_context_destroy(ctx);
}

}  // namespace
