// The OpenCL plugin through its C ABI: loading, enumeration, memory and
// copies with offsets, streams and events, the program cache (memory and
// disk), build-failure messages, and loading with no OpenCL platform.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <string>

#include "kernels/kernel_sources.h"
#include "kernels/launch.h"
#include "kernels/program_cache.h"
#include "opencl_test_util.h"
#include "plugin.h"

namespace bpcl_test {
namespace {

TEST(OpenclPlugin, LoadsThroughDlopenAndExportsOneSymbol) {
  void* lib = dlopen(BPCL_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto fn = reinterpret_cast<bp_plugin_entry_fn>(dlsym(lib, BP_PLUGIN_ENTRY_SYMBOL));
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(dlsym(lib, "_ZN4bpcl11PluginEntryEv"), nullptr) << "internal symbols must stay hidden";
  const bp_plugin_entry_t* entry = fn();
  ASSERT_NE(entry, nullptr);
  uint32_t v = BP_MAKE_ABI_VERSION(2, 0);
  EXPECT_EQ(entry->negotiate(&v), BP_STATUS_INCOMPATIBLE_VERSION);
  v = BP_MAKE_ABI_VERSION(1, 7);
  EXPECT_EQ(entry->negotiate(&v), BP_STATUS_OK);
  EXPECT_EQ(v, BP_ABI_VERSION);
  {
    FakeHost host;
    ASSERT_EQ(host.Init(entry), BP_STATUS_OK) << FakeHost::last_error();
    EXPECT_STREQ(host.backend().name, "opencl");
    EXPECT_EQ(host.backend().device_type, kDLOpenCL);
    EXPECT_TRUE(host.has_kernel("add.Tensor"));
    EXPECT_TRUE(host.has_kernel("copy_"));
    if (host.device_count() == 0) {
      EXPECT_NE(host.backend().no_device_reason, nullptr);
    }
  }
  dlclose(lib);
}

TEST(OpenclNoPlatform, ZeroDevicesWithReason) {
  // Run by ctest with OCL_ICD_VENDORS pointing at an empty directory.
  if (std::getenv("BPCL_TEST_EXPECT_NO_PLATFORM") == nullptr)
    GTEST_SKIP() << "only meaningful with no ICD visible (ctest test opencl_plugin_test_no_platform)";
  FakeHost host;
  ASSERT_EQ(host.Init(bpcl::PluginEntry()), BP_STATUS_OK) << FakeHost::last_error();
  EXPECT_EQ(host.device_count(), 0);
  ASSERT_NE(host.backend().no_device_reason, nullptr);
  EXPECT_STREQ(host.backend().no_device_reason,
               "no OpenCL platform found (clGetPlatformIDs: CL_PLATFORM_NOT_FOUND_KHR)");
  void* p = nullptr;
  EXPECT_EQ(host.backend().allocate(host.backend().backend_data, 0, 16, &p), BP_STATUS_OUT_OF_RANGE);
  bp_device_properties_t props{};
  props.struct_size = sizeof props;
  EXPECT_EQ(host.backend().device_properties(host.backend().backend_data, 0, &props), BP_STATUS_OUT_OF_RANGE);
}

using OpenclDevice = OpenclTest;

TEST_F(OpenclDevice, Properties) {
  for (int32_t i = 0; i < host_.device_count(); ++i) {
    bp_device_properties_t p{};
    p.struct_size = sizeof p;
    ASSERT_EQ(host_.backend().device_properties(host_.backend().backend_data, i, &p), BP_STATUS_OK);
    EXPECT_GT(std::strlen(p.name), 0u);
    EXPECT_GT(std::strlen(p.vendor), 0u);
    EXPECT_GT(std::strlen(p.driver_version), 0u);
    EXPECT_GT(p.total_memory_bytes, 0u);
    EXPECT_GT(p.compute_units, 0);
    EXPECT_GE(p.alignment_bytes, 1u);
    const std::string ext = p.extensions;
    EXPECT_EQ((p.capabilities & BP_DEVICE_CAP_FP64) != 0, ext.find("cl_khr_fp64") != std::string::npos) << ext;
    EXPECT_EQ((p.capabilities & BP_DEVICE_CAP_FP16) != 0, ext.find("cl_khr_fp16") != std::string::npos) << ext;
  }
  bp_device_properties_t p{};
  p.struct_size = sizeof p;
  EXPECT_EQ(host_.backend().device_properties(host_.backend().backend_data, host_.device_count(), &p),
            BP_STATUS_OUT_OF_RANGE);
}

TEST_F(OpenclDevice, AllocateZeroAndHuge) {
  auto& b = host_.backend();
  void* p = reinterpret_cast<void*>(1);
  EXPECT_EQ(b.allocate(b.backend_data, 0, 0, &p), BP_STATUS_OK);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(b.allocate(b.backend_data, 0, size_t{1} << 60, &p), BP_STATUS_OUT_OF_MEMORY);
  EXPECT_NE(FakeHost::last_error().find("allocate"), std::string::npos) << FakeHost::last_error();
  EXPECT_EQ(b.deallocate(b.backend_data, 0, nullptr), BP_STATUS_OK);
}

TEST_F(OpenclDevice, CopiesWithOffsetsRoundTrip) {
  auto& b = host_.backend();
  void* buf = nullptr;
  void* buf2 = nullptr;
  ASSERT_EQ(b.allocate(b.backend_data, 0, 256, &buf), BP_STATUS_OK);
  ASSERT_EQ(b.allocate(b.backend_data, 0, 256, &buf2), BP_STATUS_OK);
  std::vector<uint8_t> src(256);
  std::iota(src.begin(), src.end(), 0);
  bp_stream_t s = nullptr;
  ASSERT_EQ(b.stream_get_default(b.backend_data, 0, &s), BP_STATUS_OK);
  EXPECT_NE(s, nullptr);
  // host -> device at offset 10, device -> device 10 -> 100, device -> host from 100.
  ASSERT_EQ(b.copy_host_to_device(b.backend_data, 0, src.data() + 3, buf, 10, 50, s), BP_STATUS_OK);
  ASSERT_EQ(b.copy_device_to_device(b.backend_data, 0, buf, 10, buf2, 100, 50, s), BP_STATUS_OK);
  std::vector<uint8_t> back(50, 0);
  ASSERT_EQ(b.copy_device_to_host(b.backend_data, 0, buf2, 100, back.data(), 50, s), BP_STATUS_OK);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(back[i], i + 3);
  // Overlapping device-to-device copy inside one buffer.
  ASSERT_EQ(b.copy_device_to_device(b.backend_data, 0, buf, 10, buf, 20, 50, s), BP_STATUS_OK);
  ASSERT_EQ(b.copy_device_to_host(b.backend_data, 0, buf, 20, back.data(), 50, s), BP_STATUS_OK);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(back[i], i + 3);
  EXPECT_EQ(b.stream_synchronize(b.backend_data, 0, s), BP_STATUS_OK);
  // Out of range copy: an error naming the call, not a crash.
  EXPECT_NE(b.copy_device_to_host(b.backend_data, 0, buf, 250, back.data(), 50, s), BP_STATUS_OK);
  EXPECT_NE(FakeHost::last_error().find("clEnqueueReadBuffer"), std::string::npos) << FakeHost::last_error();
  EXPECT_EQ(b.deallocate(b.backend_data, 0, buf), BP_STATUS_OK);
  EXPECT_EQ(b.deallocate(b.backend_data, 0, buf2), BP_STATUS_OK);
}

TEST_F(OpenclDevice, Events) {
  auto& b = host_.backend();
  bp_stream_t s = nullptr;
  ASSERT_EQ(b.stream_get_default(b.backend_data, 0, &s), BP_STATUS_OK);
  bp_event_t e = nullptr;
  ASSERT_EQ(b.event_create(b.backend_data, 0, &e), BP_STATUS_OK);
  EXPECT_EQ(b.event_synchronize(b.backend_data, e), BP_STATUS_OK);  // never recorded
  DevTensor& x = Make<float>({4}, F32(), {1, 2, 3, 4});
  ASSERT_EQ(host_.Call("neg", {TensorArg(x)}, {&x}), BP_STATUS_OK) << FakeHost::last_error();
  ASSERT_EQ(b.event_record(b.backend_data, e, s), BP_STATUS_OK);
  ASSERT_EQ(b.event_record(b.backend_data, e, nullptr), BP_STATUS_OK);  // NULL: the default stream
  ASSERT_EQ(b.event_wait(b.backend_data, e, s), BP_STATUS_OK);
  ASSERT_EQ(b.event_synchronize(b.backend_data, e), BP_STATUS_OK);
  EXPECT_EQ(b.event_destroy(b.backend_data, e), BP_STATUS_OK);
  EXPECT_EQ(b.event_destroy(b.backend_data, nullptr), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<float>(x), (std::vector<float>{-1, -2, -3, -4}));
}

TEST_F(OpenclDevice, BuildFailureCarriesTheLog) {
  auto* backend = static_cast<bpcl::Backend*>(host_.backend().backend_data);
  bpcl::Status st = bpcl::BuildProgramUncached(backend, backend->devices[0].get(), "broken",
                                               "__kernel void k(__global float* x) { x[0] = undefined_thing; }", "");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), BP_STATUS_INTERNAL);
  EXPECT_NE(st.message().find("CL_BUILD_PROGRAM_FAILURE"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("undefined_thing"), std::string::npos) << "the build log is missing: " << st.message();
}

TEST_F(OpenclDevice, ProgramCacheInMemoryAndOnDisk) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("bpcl_cache_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  auto run_once = [&](uint64_t* builds, uint64_t* loads) {
    FakeHost h;
    ASSERT_EQ(h.Init(bpcl::PluginEntry()), BP_STATUS_OK);
    auto* backend = static_cast<bpcl::Backend*>(h.backend().backend_data);
    backend->cache_dir = dir.string();
    DevTensor a = h.FromHost<float>({3}, F32(), {1, 2, 3});
    DevTensor o = h.Empty({3}, F32());
    ASSERT_EQ(h.Call("add.Tensor", {TensorArg(a), TensorArg(a), IntArg(1)}, {&o}), BP_STATUS_OK)
        << FakeHost::last_error();
    ASSERT_EQ(h.Call("mul.Tensor", {TensorArg(a), TensorArg(a)}, {&o}), BP_STATUS_OK);  // same program
    EXPECT_EQ(h.ToHost<float>(o), (std::vector<float>{1, 4, 9}));
    *builds = backend->program_builds;
    *loads = backend->program_cache_loads;
    h.Free(&a);
    h.Free(&o);
  };
  uint64_t builds = 0, loads = 0;
  run_once(&builds, &loads);
  EXPECT_EQ(builds, 1u) << "one program for both float32 ops";
  EXPECT_EQ(loads, 0u);
  EXPECT_FALSE(fs::is_empty(dir));
  run_once(&builds, &loads);
  EXPECT_EQ(builds, 0u) << "a warm disk cache builds nothing";
  EXPECT_EQ(loads, 1u);
  fs::remove_all(dir);
}

TEST_F(OpenclDevice, KernelOnBadDeviceIndexIsAnError) {
  DevTensor& x = Make<float>({2}, F32(), {1, 2});
  EXPECT_EQ(host_.Call("neg", {TensorArg(x)}, {&x}, 0), BP_STATUS_OK);
  EXPECT_EQ(host_.Call("neg", {TensorArg(x)}, {&x}, 99), BP_STATUS_OUT_OF_RANGE);
  EXPECT_NE(FakeHost::last_error().find("opencl: neg: device index 99"), std::string::npos) << FakeHost::last_error();
}

}  // namespace
}  // namespace bpcl_test
