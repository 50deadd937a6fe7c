// def / impl / fallback: duplicate registrations, override, removal restoring
// the previous kernel, backend fallbacks.
#include "bp_test_util.h"

using namespace bptest;
using ::testing::HasSubstr;

namespace {

// Kernels that write a constant, so the test sees which one ran.
template <int kValue>
bp_status_t Fill(const bp_kernel_call_t* call) {
  const DLTensor* o = call->outputs[0];
  for (int64_t i = 0, n = Numel(o); i < n; ++i) *HostElem<float>(o, i) = static_cast<float>(kValue);
  return BP_STATUS_OK;
}

class RegistrationTest : public ContextTest {
 protected:
  float RunMul() {
    bp_tensor_t* a = F32(kCpu, {1}, {3});
    bp_tensor_t* r = Call("mul.Tensor", {T(a), T(a)});
    return r == nullptr ? -1.0f : Read(r)[0];
  }
};

TEST_F(RegistrationTest, DuplicateOverrideAndRemoval) {
  bp_op_t* mul = Op("mul.Tensor");
  bp_registration_t* first = nullptr;
  bp_registration_t* second = nullptr;
  ASSERT_EQ(bp_op_register_kernel(ctx_, mul, 0, Fill<1>, nullptr, 0, &first), BP_STATUS_OK);
  EXPECT_EQ(RunMul(), 1.0f);
  EXPECT_EQ(bp_op_register_kernel(ctx_, mul, 0, Fill<2>, nullptr, 0, &second), BP_STATUS_ALREADY_EXISTS);
  EXPECT_THAT(LastError(), HasSubstr("mul.Tensor"));
  EXPECT_THAT(LastError(), HasSubstr("BP_REGISTER_OVERRIDE"));
  ASSERT_EQ(bp_op_register_kernel(ctx_, mul, 0, Fill<2>, nullptr, BP_REGISTER_OVERRIDE, &second), BP_STATUS_OK);
  EXPECT_EQ(RunMul(), 2.0f);
  // Removing the override restores the first kernel.
  ASSERT_EQ(bp_registration_remove(ctx_, second), BP_STATUS_OK);
  EXPECT_EQ(RunMul(), 1.0f);
  EXPECT_EQ(bp_registration_remove(ctx_, second), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("already removed"));
  ASSERT_EQ(bp_registration_remove(ctx_, first), BP_STATUS_OK);
  int32_t kind = -1;
  ASSERT_EQ(bp_op_dispatch_kind(ctx_, mul, 0, &kind), BP_STATUS_OK);
  EXPECT_EQ(kind, BP_DISPATCH_NONE);
}

TEST_F(RegistrationTest, RemovingTheLowerRegistrationKeepsTheTopOne) {
  bp_op_t* mul = Op("mul.Tensor");
  bp_registration_t* first = nullptr;
  bp_registration_t* second = nullptr;
  ASSERT_EQ(bp_op_register_kernel(ctx_, mul, 0, Fill<1>, nullptr, 0, &first), BP_STATUS_OK);
  ASSERT_EQ(bp_op_register_kernel(ctx_, mul, 0, Fill<2>, nullptr, BP_REGISTER_OVERRIDE, &second), BP_STATUS_OK);
  ASSERT_EQ(bp_registration_remove(ctx_, first), BP_STATUS_OK);
  EXPECT_EQ(RunMul(), 2.0f);
}

TEST_F(RegistrationTest, VariantsUseTheFunctionalKernel) {
  ASSERT_EQ(bp_op_register_kernel(ctx_, Op("mul.Tensor"), 0, HostMulF32, nullptr, 0, nullptr), BP_STATUS_OK);
  bp_tensor_t* a = F32(kCpu, {2}, {2, 3});
  Call("mul_.Tensor", {T(a), T(a)});
  EXPECT_EQ(Read(a), (std::vector<float>{4, 9}));
  // Registering on a variant registers on the functional entry.
  EXPECT_EQ(bp_op_register_kernel(ctx_, Op("mul_.Tensor"), 0, HostMulF32, nullptr, 0, nullptr),
            BP_STATUS_ALREADY_EXISTS);
}

TEST_F(RegistrationTest, BadBackendAndNulls) {
  EXPECT_EQ(bp_op_register_kernel(ctx_, Op("mul.Tensor"), 5, Fill<1>, nullptr, 0, nullptr), BP_STATUS_OUT_OF_RANGE);
  EXPECT_EQ(bp_op_register_kernel(ctx_, Op("mul.Tensor"), 0, nullptr, nullptr, 0, nullptr),
            BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(bp_registration_remove(ctx_, nullptr), BP_STATUS_INVALID_ARGUMENT);
}

TEST_F(RegistrationTest, BackendFallbackServesOpsWithoutKernels) {
  bp_device_t dev = LoadTestdev();
  bp_registration_t* fb = nullptr;
  ASSERT_EQ(bp_register_fallback(ctx_, dev.backend, Fill<7>, nullptr, 0, &fb), BP_STATUS_OK);
  EXPECT_EQ(bp_register_fallback(ctx_, dev.backend, Fill<8>, nullptr, 0, nullptr), BP_STATUS_ALREADY_EXISTS);
  int32_t kind = -1;
  ASSERT_EQ(bp_op_dispatch_kind(ctx_, Op("mul.Tensor"), dev.backend, &kind), BP_STATUS_OK);
  EXPECT_EQ(kind, BP_DISPATCH_BACKEND_FALLBACK);
  ASSERT_EQ(bp_op_dispatch_kind(ctx_, Op("add.Tensor"), dev.backend, &kind), BP_STATUS_OK);
  EXPECT_EQ(kind, BP_DISPATCH_NATIVE);
  ASSERT_EQ(bp_op_dispatch_kind(ctx_, Op("view"), dev.backend, &kind), BP_STATUS_OK);
  EXPECT_EQ(kind, BP_DISPATCH_CORE);
  // The fallback receives the call (it writes a constant; the device memory is private).
  bp_tensor_t* a = F32(dev, {2}, {1, 2});
  ASSERT_EQ(bp_registration_remove(ctx_, fb), BP_STATUS_OK);
  ASSERT_EQ(bp_op_dispatch_kind(ctx_, Op("mul.Tensor"), dev.backend, &kind), BP_STATUS_OK);
  EXPECT_EQ(kind, BP_DISPATCH_NONE);
  (void)a;
}

TEST_F(RegistrationTest, PluginFallbackErrorIsReported) {
  ASSERT_EQ(setenv("TESTDEV_FALLBACK", "1", 1), 0);
  bp_device_t dev = LoadTestdev();
  unsetenv("TESTDEV_FALLBACK");
  bp_tensor_t* a = F32(dev, {2}, {1, 2});
  Call("mul.Tensor", {T(a), T(a)}, BP_STATUS_UNIMPLEMENTED);
  EXPECT_THAT(LastError(), HasSubstr("testdev fallback: mul.Tensor is not supported"));
}

TEST_F(RegistrationTest, UnloadRestoresHostRegistrations) {
  // A plugin's kernel for its own backend disappears with it; host kernels stay.
  ASSERT_EQ(bp_op_register_kernel(ctx_, Op("add.Tensor"), 0, HostAddF32, nullptr, 0, nullptr), BP_STATUS_OK);
  bp_plugin_t* p = nullptr;
  bp_device_t dev = LoadTestdev(&p);
  ASSERT_EQ(bp_plugin_unload(ctx_, p), BP_STATUS_OK);
  int32_t kind = -1;
  ASSERT_EQ(bp_op_dispatch_kind(ctx_, Op("add.Tensor"), 0, &kind), BP_STATUS_OK);
  EXPECT_EQ(kind, BP_DISPATCH_NATIVE);
  ASSERT_EQ(bp_op_dispatch_kind(ctx_, Op("add.Tensor"), dev.backend, &kind), BP_STATUS_OK);
  EXPECT_EQ(kind, BP_DISPATCH_NONE);
}

}  // namespace
