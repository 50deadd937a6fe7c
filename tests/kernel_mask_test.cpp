// bp_op_set_kernel_masked with real plugins (backends/cpu and the vendor_sim
// sample): a masked kernel is served by the fallbacks on every call path (the
// pointwise fast path, the generic path with broadcasting, in-place and out=
// variants), counted as fallback, refused in strict mode without touching the
// output, and restored by unmasking. Skipped (with the reason) when the
// plugins were not built.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "bp_test_util.h"

using namespace bptest;
using ::testing::HasSubstr;

namespace {

class KernelMaskTest : public VendorSimTest {
 protected:
  uint64_t Natives(const char* op) {
    uint64_t n = 0;
    EXPECT_EQ(bp_native_count(ctx_, Op(op), dev_.backend, &n), BP_STATUS_OK) << LastError();
    return n;
  }
  int32_t Kind(const char* op) {
    int32_t k = -1;
    EXPECT_EQ(bp_op_dispatch_kind(ctx_, Op(op), dev_.backend, &k), BP_STATUS_OK) << LastError();
    return k;
  }
};

TEST_F(KernelMaskTest, MaskedKernelRunsThroughTheCpuFallbackWithTheSameResult) {
  bp_tensor_t* a = F32(dev_, {4}, {1.5f, -2, 3, 1e-3f});
  bp_tensor_t* b = F32(dev_, {4}, {0.25f, 8, -3, 7});
  ASSERT_EQ(Kind("add.Tensor"), BP_DISPATCH_NATIVE);
  bp_tensor_t* native = Call("add.Tensor", {T(a), T(b), D(0.5)});
  ASSERT_NE(native, nullptr);
  EXPECT_EQ(Natives("add.Tensor"), 1u);
  EXPECT_EQ(Fallbacks("add.Tensor"), 0u);

  Mask("add.Tensor", 1);
  EXPECT_EQ(Kind("add.Tensor"), BP_DISPATCH_CPU_FALLBACK);
  EXPECT_EQ(Kind("add_.Tensor"), BP_DISPATCH_CPU_FALLBACK);  // variants share the kernel
  EXPECT_EQ(Kind("relu"), BP_DISPATCH_NATIVE);                 // other operators are untouched
  bp_tensor_t* fallback = Call("add.Tensor", {T(a), T(b), D(0.5)});
  ASSERT_NE(fallback, nullptr);
  EXPECT_EQ(bp_tensor_device(fallback).backend, dev_.backend);
  EXPECT_EQ(Read(fallback), Read(native));
  EXPECT_EQ(Natives("add.Tensor"), 1u);
  EXPECT_EQ(Fallbacks("add.Tensor"), 1u);
  EXPECT_EQ(CountLogs("CPU fallback: add.Tensor"), 1);
  Mask("add.Tensor", 0);
}

TEST_F(KernelMaskTest, InplaceOutAndBroadcastingCallsAreMaskedToo) {
  Mask("add_.Tensor", 1);  // masking a variant masks the shared kernel
  bp_tensor_t* x = F32(dev_, {2, 3}, {1, 2, 3, 4, 5, 6});
  bp_tensor_t* row = F32(dev_, {3}, {10, 20, 30});
  bp_tensor_t* y = F32(dev_, {2, 3}, {1, 1, 1, 1, 1, 1});
  bp_tensor_t* out = F32(dev_, {2, 3}, {0, 0, 0, 0, 0, 0});

  bp_tensor_t* r = Call("add.Tensor", {T(x), T(row)});  // broadcasting: the generic path
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(Read(r), (std::vector<float>{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ(Call("add.out", {T(x), T(y), D(1.0), T(out)}), out);  // out=
  EXPECT_EQ(Read(out), (std::vector<float>{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(Call("add_.Tensor", {T(x), T(y)}), x);  // in-place, the fast path
  EXPECT_EQ(Read(x), (std::vector<float>{2, 3, 4, 5, 6, 7}));

  EXPECT_EQ(Fallbacks("add.Tensor"), 1u);
  EXPECT_EQ(Fallbacks("add.out"), 1u);
  EXPECT_EQ(Fallbacks("add_.Tensor"), 1u);
  EXPECT_EQ(Natives("add.Tensor") + Natives("add.out") + Natives("add_.Tensor"), 0u);
  Mask("add.Tensor", 0);
}

TEST_F(KernelMaskTest, StrictModeRefusesAMaskedKernelAndLeavesTheOutputUntouched) {
  bp_tensor_t* a = F32(dev_, {3}, {1, 2, 3});
  bp_tensor_t* out = F32(dev_, {3}, {-7, -7, -7});
  Mask("add.Tensor", 1);
  ASSERT_EQ(bp_context_set_strict_fallback(ctx_, 1), BP_STATUS_OK);
  EXPECT_EQ(Kind("add.Tensor"), BP_DISPATCH_NONE);

  Call("add.out", {T(a), T(a), D(1.0), T(out)}, BP_STATUS_FAILED_PRECONDITION);
  EXPECT_THAT(LastError(), HasSubstr("add.Tensor"));
  EXPECT_THAT(LastError(), HasSubstr("'vendor_sim'"));
  EXPECT_THAT(LastError(), HasSubstr("masked"));
  EXPECT_EQ(Read(out), (std::vector<float>{-7, -7, -7}));
  Call("add_.Tensor", {T(a), T(a)}, BP_STATUS_FAILED_PRECONDITION);
  EXPECT_EQ(Read(a), (std::vector<float>{1, 2, 3}));
  Call("add.Tensor", {T(a), T(a)}, BP_STATUS_FAILED_PRECONDITION);
  EXPECT_EQ(Fallbacks("add.Tensor") + Fallbacks("add.out") + Fallbacks("add_.Tensor"), 0u);
  EXPECT_EQ(Natives("add.Tensor") + Natives("add.out") + Natives("add_.Tensor"), 0u);

  // Strict mode still runs the kernels that are not masked.
  bp_tensor_t* r = Call("relu", {T(a)});
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(Natives("relu"), 1u);
  ASSERT_EQ(bp_context_set_strict_fallback(ctx_, 0), BP_STATUS_OK);
  Mask("add.Tensor", 0);
}

TEST_F(KernelMaskTest, UnmaskingRestoresTheNativeKernel) {
  bp_tensor_t* a = F32(dev_, {2}, {1, 2});
  Mask("relu", 1);
  Mask("relu", 1);  // twice: still one mask
  Call("relu", {T(a)});
  EXPECT_EQ(Fallbacks("relu"), 1u);
  Mask("relu", 0);
  EXPECT_EQ(Kind("relu"), BP_DISPATCH_NATIVE);
  bp_tensor_t* r = Call("relu", {T(a)});
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(Read(r), (std::vector<float>{1, 2}));
  EXPECT_EQ(Natives("relu"), 1u);
  EXPECT_EQ(Fallbacks("relu"), 1u);
  Mask("relu", 0);  // unmasking an unmasked kernel changes nothing
  EXPECT_EQ(Kind("relu"), BP_DISPATCH_NATIVE);
}

TEST_F(KernelMaskTest, BadArgumentsAreRefusedWithAMessage) {
  bp_op_t* add = Op("add.Tensor");
  EXPECT_EQ(bp_op_set_kernel_masked(nullptr, add, dev_.backend, 1), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(bp_op_set_kernel_masked(ctx_, nullptr, dev_.backend, 1), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("bp_op_set_kernel_masked"));
  EXPECT_EQ(bp_op_set_kernel_masked(ctx_, add, dev_.backend, 2), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("'masked'"));
  EXPECT_EQ(bp_op_set_kernel_masked(ctx_, add, 0, 1), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("CPU fallback"));
  EXPECT_EQ(bp_op_set_kernel_masked(ctx_, add, 31, 1), BP_STATUS_OUT_OF_RANGE);
  EXPECT_EQ(bp_op_set_kernel_masked(ctx_, add, -1, 1), BP_STATUS_OUT_OF_RANGE);
  EXPECT_THAT(LastError(), HasSubstr("backend id -1"));
  EXPECT_EQ(Kind("add.Tensor"), BP_DISPATCH_NATIVE);  // nothing changed
  int32_t cpu_kind = -1;
  ASSERT_EQ(bp_op_dispatch_kind(ctx_, add, 0, &cpu_kind), BP_STATUS_OK);
  EXPECT_EQ(cpu_kind, BP_DISPATCH_NATIVE);
}

// A host-side backend fallback counts the calls it sees and declines them,
// so the CPU fallback runs next.
std::atomic<int> g_backend_fallback_calls{0};
bp_status_t DecliningFallback(const bp_kernel_call_t*) {
  g_backend_fallback_calls.fetch_add(1);
  return BP_STATUS_UNIMPLEMENTED;
}

TEST_F(KernelMaskTest, MaskedKernelGoesToTheBackendFallbackFirst) {
  bp_registration_t* reg = nullptr;
  ASSERT_EQ(bp_register_fallback(ctx_, dev_.backend, DecliningFallback, nullptr, 0, &reg), BP_STATUS_OK)
      << LastError();
  g_backend_fallback_calls = 0;
  bp_tensor_t* a = F32(dev_, {2}, {-1, 4});
  Call("relu", {T(a)});
  EXPECT_EQ(g_backend_fallback_calls.load(), 0);  // the kernel runs; no fallback asked
  Mask("relu", 1);
  EXPECT_EQ(Kind("relu"), BP_DISPATCH_BACKEND_FALLBACK);
  bp_tensor_t* r = Call("relu", {T(a)});
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(Read(r), (std::vector<float>{0, 4}));
  EXPECT_EQ(g_backend_fallback_calls.load(), 1);
  EXPECT_EQ(Fallbacks("relu"), 1u);
  Mask("relu", 0);
  ASSERT_EQ(bp_registration_remove(ctx_, reg), BP_STATUS_OK);
}

// A host kernel that counts its calls and declines them (UNIMPLEMENTED).
bp_status_t HostAddCounting(const bp_kernel_call_t* call) {
  static_cast<std::atomic<int>*>(call->kernel_data)->fetch_add(1);
  return BP_STATUS_UNIMPLEMENTED;  // decline: the generic path goes on to the fallbacks
}

// A host kernel registered over a masked pair is masked too, until unmasked.
TEST_F(KernelMaskTest, KernelRegisteredWhileMaskedStaysMasked) {
  std::atomic<int> calls{0};
  Mask("add.Tensor", 1);
  bp_registration_t* reg = nullptr;
  ASSERT_EQ(bp_op_register_kernel(ctx_, Op("add.Tensor"), dev_.backend, HostAddCounting, &calls,
                                  BP_REGISTER_OVERRIDE, &reg),
            BP_STATUS_OK)
      << LastError();
  EXPECT_EQ(Kind("add.Tensor"), BP_DISPATCH_CPU_FALLBACK);
  bp_tensor_t* a = F32(dev_, {2}, {1, 2});
  Call("add.Tensor", {T(a), T(a)});
  EXPECT_EQ(calls.load(), 0);
  Mask("add.Tensor", 0);
  EXPECT_EQ(Kind("add.Tensor"), BP_DISPATCH_NATIVE);
  Call("add.Tensor", {T(a), T(a)});
  EXPECT_EQ(calls.load(), 1);
  // Removing the host kernel brings back the plugin's, unmasked.
  ASSERT_EQ(bp_registration_remove(ctx_, reg), BP_STATUS_OK);
  const uint64_t before = Natives("add.Tensor");
  Call("add.Tensor", {T(a), T(a)});
  EXPECT_EQ(Natives("add.Tensor"), before + 1);
}

// copy_ is the core's operator: with the backend's copy_ kernel masked the
// core moves the data itself, counted in neither counter. (vendor_sim has no
// copy_ kernel: a host one that counts and declines stands in.)
TEST_F(KernelMaskTest, MaskedCopyKernelLetsTheCoreMoveTheData) {
  std::atomic<int> calls{0};
  bp_registration_t* reg = nullptr;
  ASSERT_EQ(bp_op_register_kernel(ctx_, Op("copy_"), dev_.backend, HostAddCounting, &calls, 0, &reg), BP_STATUS_OK)
      << LastError();
  bp_tensor_t* src = F32(dev_, {4}, {1, 2, 3, 4});
  bp_tensor_t* dst = F32(dev_, {4}, {0, 0, 0, 0});
  const uint64_t native = Natives("copy_"), fallback = Fallbacks("copy_");
  Mask("copy_", 1);
  int32_t kind = -1;
  ASSERT_EQ(bp_op_dispatch_kind(ctx_, Op("copy_"), dev_.backend, &kind), BP_STATUS_OK);
  EXPECT_EQ(kind, BP_DISPATCH_CORE);
  EXPECT_EQ(Call("copy_", {T(dst), T(src)}), dst);
  EXPECT_EQ(Read(dst), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(calls.load(), 0) << "the masked copy_ kernel ran";
  EXPECT_EQ(Natives("copy_"), native);
  EXPECT_EQ(Fallbacks("copy_"), fallback);
  Mask("copy_", 0);
  ASSERT_EQ(bp_op_dispatch_kind(ctx_, Op("copy_"), dev_.backend, &kind), BP_STATUS_OK);
  EXPECT_EQ(kind, BP_DISPATCH_NATIVE);
  EXPECT_EQ(Call("copy_", {T(dst), T(src)}), dst);
  EXPECT_EQ(calls.load(), 1) << "the unmasked copy_ kernel was not asked";
  ASSERT_EQ(bp_registration_remove(ctx_, reg), BP_STATUS_OK);
}

// The mask belongs to the backend id, which a reloaded plugin of the same
// backend gets back: it stays masked until unmasked.
TEST_F(KernelMaskTest, MaskOutlivesAnUnloadAndReloadOfTheBackend) {
  bp_plugin_t* p = nullptr;
  const bp_device_t testdev = LoadTestdev(&p);
  ASSERT_EQ(bp_op_set_kernel_masked(ctx_, Op("add.Tensor"), testdev.backend, 1), BP_STATUS_OK) << LastError();
  int32_t kind = -1;
  ASSERT_EQ(bp_plugin_unload(ctx_, p), BP_STATUS_OK) << LastError();
  const bp_device_t again = LoadTestdev();
  ASSERT_EQ(again.backend, testdev.backend);
  ASSERT_EQ(bp_op_dispatch_kind(ctx_, Op("add.Tensor"), again.backend, &kind), BP_STATUS_OK);
  EXPECT_EQ(kind, BP_DISPATCH_CPU_FALLBACK);
  ASSERT_EQ(bp_op_set_kernel_masked(ctx_, Op("add.Tensor"), again.backend, 0), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_op_dispatch_kind(ctx_, Op("add.Tensor"), again.backend, &kind), BP_STATUS_OK);
  EXPECT_EQ(kind, BP_DISPATCH_NATIVE);
}

// Masking publishes a new kernel table while other threads dispatch: every
// call they make runs either the kernel or the fallback, with the right result.
TEST_F(KernelMaskTest, TogglingWhileOtherThreadsCallIsSafe) {
  bp_tensor_t* a = F32(dev_, {64}, std::vector<float>(64, 1.5f));
  bp_op_t* add = Op("add.Tensor");
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0}, calls{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&]() {
      bp_value_t args[2] = {T(a), T(a)};
      while (!stop.load()) {
        bp_tensor_t* r = nullptr;
        if (bp_op_call(ctx_, add, args, 2, &r, 1) != BP_STATUS_OK) {
          ++bad;
          continue;
        }
        std::vector<float> got(64);
        if (bp_tensor_to_host(r, got.data(), got.size() * sizeof(float)) != BP_STATUS_OK ||
            got != std::vector<float>(64, 3.0f)) {
          ++bad;
        }
        bp_tensor_release(r);
        ++calls;
      }
    });
  }
  for (int i = 0; i < 200; ++i) {
    ASSERT_EQ(bp_op_set_kernel_masked(ctx_, add, dev_.backend, i % 2), BP_STATUS_OK) << LastError();
  }
  while (calls.load() < 50) std::this_thread::yield();
  stop = true;
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(Natives("add.Tensor") + Fallbacks("add.Tensor"), static_cast<uint64_t>(calls.load()));
  Mask("add.Tensor", 0);
}

}  // namespace
