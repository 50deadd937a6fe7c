// The vendor_sim sample plugin through a fake host: its device memory is a
// private arena reachable only by handles and copies, and its native
// kernels (add.Tensor, relu, exp) compute on arena memory, at once or, in the
// asynchronous mode, on the device thread.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "fake_host.h"

using namespace bp_test;

namespace {

class VendorSim : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { plugin_ = new LoadedPlugin(BP_VENDOR_SIM_PLUGIN_PATH); }
  static void TearDownTestSuite() {
    delete plugin_;
    plugin_ = nullptr;
  }
  static const bp_backend_t& B() { return plugin_->backend; }
  static void* BD() { return plugin_->backend.backend_data; }
  static void* Alloc(size_t n) {
    void* h = nullptr;
    EXPECT_EQ(B().allocate(BD(), 0, n, &h), BP_STATUS_OK) << LastError();
    return h;
  }
  static void Upload(void* h, const std::vector<float>& v) {
    ASSERT_EQ(B().copy_host_to_device(BD(), 0, v.data(), h, 0, v.size() * sizeof(float), nullptr), BP_STATUS_OK);
    // v must outlive the copy (backend.h): on the asynchronous device it has
    // not run yet.
    ASSERT_EQ(B().stream_synchronize(BD(), 0, nullptr), BP_STATUS_OK);
  }
  static std::vector<float> Download(void* h, size_t n) {
    std::vector<float> v(n);
    EXPECT_EQ(B().copy_device_to_host(BD(), 0, h, 0, v.data(), n * sizeof(float), nullptr), BP_STATUS_OK);
    return v;
  }
  // A DLTensor view over device handle `h` (HostTensor only keeps the sizes).
  static void OnDevice(HostTensor& t, void* h) {
    t.dl.data = h;
    t.dl.device = DLDevice{kDLExtDev, 0};
  }
  static LoadedPlugin* plugin_;
};
LoadedPlugin* VendorSim::plugin_ = nullptr;

TEST_F(VendorSim, LoadsAsAnExtDevWithItsOwnMemory) {
  ASSERT_NE(plugin_->handle, nullptr) << dlerror();
  ASSERT_EQ(plugin_->init_status, BP_STATUS_OK) << LastError();
  EXPECT_STREQ(B().name, "vendor_sim");
  EXPECT_EQ(B().device_type, kDLExtDev);
  int32_t n = 0;
  ASSERT_EQ(B().device_count(BD(), &n), BP_STATUS_OK);
  EXPECT_EQ(n, 1);
  bp_device_properties_t p{};
  p.struct_size = sizeof p;
  ASSERT_EQ(B().device_properties(BD(), 0, &p), BP_STATUS_OK);
  EXPECT_FALSE(p.capabilities & BP_DEVICE_CAP_UNIFIED);
  EXPECT_GT(p.total_memory_bytes, 0u);
  EXPECT_NE(B().allocate, nullptr);
  // Exactly the three native kernels (through register_kernel: this fake
  // host has no register_kernel_dtypes, as a 1.2 host); everything else is
  // the CPU fallback's.
  EXPECT_EQ(plugin_->kernels().size(), 3u);
  EXPECT_EQ(plugin_->kernels().count("add.Tensor"), 1u);
  EXPECT_EQ(plugin_->kernels().count("relu"), 1u);
  EXPECT_EQ(plugin_->kernels().count("exp"), 1u);
}

TEST_F(VendorSim, ArenaHandlesAreOpaqueAndBoundsChecked) {
  void* a = Alloc(100);
  void* b = Alloc(100);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(a, b);
  // Handles carry the tag that makes them non-canonical addresses.
  EXPECT_GE(reinterpret_cast<uintptr_t>(a), uintptr_t{0x7e57000000000000ull});
  // Round trip with offsets, and a device-to-device copy.
  const std::vector<float> v = {1, 2, 3, 4};
  ASSERT_EQ(B().copy_host_to_device(BD(), 0, v.data(), a, 8, sizeof v[0] * 4, nullptr), BP_STATUS_OK);
  ASSERT_EQ(B().copy_device_to_device(BD(), 0, a, 8, b, 0, sizeof v[0] * 4, nullptr), BP_STATUS_OK);
  std::vector<float> back(4);
  ASSERT_EQ(B().copy_device_to_host(BD(), 0, b, 0, back.data(), sizeof v[0] * 4, nullptr), BP_STATUS_OK);
  EXPECT_EQ(back, v);
  // A copy past the end of its allocation (256-byte block) is refused.
  std::vector<char> big(512);
  EXPECT_EQ(B().copy_host_to_device(BD(), 0, big.data(), a, 0, big.size(), nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("vendor_sim"), std::string::npos);
  // A host pointer is not a handle.
  EXPECT_EQ(B().copy_device_to_host(BD(), 0, big.data(), 0, back.data(), 4, nullptr), BP_STATUS_INVALID_ARGUMENT);
  // Zero bytes: NULL with OK. Too much: OUT_OF_MEMORY, not a crash.
  void* z = reinterpret_cast<void*>(1);
  EXPECT_EQ(B().allocate(BD(), 0, 0, &z), BP_STATUS_OK);
  EXPECT_EQ(z, nullptr);
  void* huge = nullptr;
  EXPECT_EQ(B().allocate(BD(), 0, size_t{1} << 40, &huge), BP_STATUS_OUT_OF_MEMORY);
  // Free, double free, reuse.
  EXPECT_EQ(B().deallocate(BD(), 0, a), BP_STATUS_OK);
  EXPECT_EQ(B().deallocate(BD(), 0, a), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(B().copy_device_to_host(BD(), 0, a, 0, back.data(), 4, nullptr), BP_STATUS_INVALID_ARGUMENT);
  void* c = Alloc(100);
  EXPECT_EQ(c, a);  // first fit reuses the freed block
  EXPECT_EQ(B().deallocate(BD(), 0, b), BP_STATUS_OK);
  EXPECT_EQ(B().deallocate(BD(), 0, c), BP_STATUS_OK);
  EXPECT_EQ(B().deallocate(BD(), 0, nullptr), BP_STATUS_OK);
}

TEST_F(VendorSim, AddBroadcastAndReluOnDeviceMemory) {
  void* ha = Alloc(6 * sizeof(float));
  void* hb = Alloc(3 * sizeof(float));
  void* ho = Alloc(6 * sizeof(float));
  Upload(ha, {1, -2, 3, -4, 5, -6});
  Upload(hb, {10, 20, 30});
  HostTensor a(F32(), {2, 3}), b(F32(), {3}), out(F32(), {2, 3});
  OnDevice(a, ha);
  OnDevice(b, hb);
  OnDevice(out, ho);
  b.SetView({2, 3}, {0, 1});  // broadcast row
  ASSERT_EQ(CallKernel(*plugin_, "add.Tensor", {TArg(a), TArg(b), DArg(0.5)}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(Download(ho, 6), (std::vector<float>{6, 8, 18, 1, 15, 9}));
  ASSERT_EQ(CallKernel(*plugin_, "relu", {TArg(a)}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(Download(ho, 6), (std::vector<float>{1, 0, 3, 0, 5, 0}));
  // float16 add is left to the CPU fallback: UNIMPLEMENTED, nothing written.
  HostTensor d(F16(), {3}), dout(F16(), {3});
  OnDevice(d, ha);
  OnDevice(dout, ho);
  EXPECT_EQ(CallKernel(*plugin_, "add.Tensor", {TArg(d), TArg(d), IArg(1)}, {&dout}), BP_STATUS_UNIMPLEMENTED);
  EXPECT_EQ(Download(ho, 6), (std::vector<float>{1, 0, 3, 0, 5, 0}));
  // float16 relu is native (a sign-bit test): -2 -> 0, 2 -> 2, NaN stays.
  HostTensor h(F16(), {3}), hout(F16(), {3});
  const std::vector<uint16_t> hv = {0xc000, 0x4000, 0xfe00};
  ASSERT_EQ(B().copy_host_to_device(BD(), 0, hv.data(), ha, 0, 6, nullptr), BP_STATUS_OK);
  OnDevice(h, ha);
  OnDevice(hout, hb);
  ASSERT_EQ(CallKernel(*plugin_, "relu", {TArg(h)}, {&hout}), BP_STATUS_OK) << LastError();
  std::vector<uint16_t> hr(3);
  ASSERT_EQ(B().copy_device_to_host(BD(), 0, hb, 0, hr.data(), 6, nullptr), BP_STATUS_OK);
  EXPECT_EQ(hr, (std::vector<uint16_t>{0, 0x4000, 0xfe00}));
  // int64 add wraps, as torch.
  HostTensor i(I64(), {1}), io(I64(), {1});
  const std::vector<int64_t> iv = {INT64_MAX};
  ASSERT_EQ(B().copy_host_to_device(BD(), 0, iv.data(), ha, 0, 8, nullptr), BP_STATUS_OK);
  OnDevice(i, ha);
  OnDevice(io, ho);
  ASSERT_EQ(CallKernel(*plugin_, "add.Tensor", {TArg(i), TArg(i), IArg(1)}, {&io}), BP_STATUS_OK) << LastError();
  int64_t r = 0;
  ASSERT_EQ(B().copy_device_to_host(BD(), 0, ho, 0, &r, 8, nullptr), BP_STATUS_OK);
  EXPECT_EQ(r, -2);
  for (void* h : {ha, hb, ho}) EXPECT_EQ(B().deallocate(BD(), 0, h), BP_STATUS_OK);
}

// BP_VENDOR_SIM_ASYNC=1 (queue.h): kernels and copies run on the device
// thread, later and in order. With unified memory the host can look at the
// output before synchronizing: a launch latency far longer than the host's
// next few instructions (0.3 s) shows the kernel has not run yet;
// stream_synchronize then shows its result, and copy_device_to_host waits by
// itself, behind the work queued before it.
TEST(VendorSimAsync, TheDeviceRunsBehindTheHostInOrder) {
  setenv("BP_VENDOR_SIM_ASYNC", "1", 1);
  setenv("BP_VENDOR_SIM_UNIFIED", "1", 1);
  setenv("BP_VENDOR_SIM_LAUNCH_US", "300000", 1);
  LoadedPlugin plugin(BP_VENDOR_SIM_PLUGIN_PATH);
  unsetenv("BP_VENDOR_SIM_ASYNC");
  unsetenv("BP_VENDOR_SIM_UNIFIED");
  unsetenv("BP_VENDOR_SIM_LAUNCH_US");
  ASSERT_EQ(plugin.init_status, BP_STATUS_OK) << LastError();
  const bp_backend_t& b = plugin.backend;
  void* bd = b.backend_data;
  void* ha = nullptr;
  void* ho = nullptr;
  ASSERT_EQ(b.allocate(bd, 0, 3 * sizeof(float), &ha), BP_STATUS_OK) << LastError();
  ASSERT_EQ(b.allocate(bd, 0, 3 * sizeof(float), &ho), BP_STATUS_OK) << LastError();
  float* a = static_cast<float*>(ha);  // unified: handles are host addresses
  float* o = static_cast<float*>(ho);
  for (int i = 0; i < 3; ++i) a[i] = i == 1 ? -2.0f : static_cast<float>(i + 1);
  for (int i = 0; i < 3; ++i) o[i] = 7.0f;
  HostTensor ta(F32(), {3}), to(F32(), {3});
  ta.dl.data = ha;
  to.dl.data = ho;
  ta.dl.device = to.dl.device = DLDevice{kDLExtDev, 0};
  ASSERT_EQ(CallKernel(plugin, "relu", {TArg(ta)}, {&to}), BP_STATUS_OK) << LastError();
#if !defined(__SANITIZE_THREAD__)
  // A deliberate race (the host reads what the device thread will write), so
  // not under ThreadSanitizer, which rightly reports it.
  EXPECT_EQ(std::vector<float>(o, o + 3), (std::vector<float>{7, 7, 7})) << "the kernel ran before its launch latency";
#endif
  ASSERT_EQ(b.stream_synchronize(bd, 0, nullptr), BP_STATUS_OK);
  EXPECT_EQ(std::vector<float>(o, o + 3), (std::vector<float>{1, 0, 3}));
  // add, then a device-to-device copy of its output, then a read: each in turn.
  ASSERT_EQ(CallKernel(plugin, "add.Tensor", {TArg(ta), TArg(ta), IArg(1)}, {&to}), BP_STATUS_OK) << LastError();
  ASSERT_EQ(b.copy_device_to_device(bd, 0, ho, 0, ha, 0, 3 * sizeof(float), nullptr), BP_STATUS_OK);
  std::vector<float> back(3);
  ASSERT_EQ(b.copy_device_to_host(bd, 0, ha, 0, back.data(), 3 * sizeof(float), nullptr), BP_STATUS_OK);
  EXPECT_EQ(back, (std::vector<float>{2, -4, 6}));
  EXPECT_EQ(b.deallocate(bd, 0, ha), BP_STATUS_OK);
  EXPECT_EQ(b.deallocate(bd, 0, ho), BP_STATUS_OK);
}

}  // namespace
