// Loads each GPU plugin this build produced (BP_GPU_PLUGINS) through the
// shared fake host (tests/fake_host.h): entry symbol, version negotiation,
// init with a bp_host_api_t whose register_kernel records the kernels. Without a device (our CI) it
// proves the plugin loads, reports zero devices with the runtime's reason,
// registers its kernels, refuses device calls cleanly, and unloads; the
// cases that need a device are skipped with the reason.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "fake_host.h"

namespace {

using bp_test::DArg;
using bp_test::FakeHost;
using bp_test::TArg;

std::vector<std::string> PluginNames() {
  std::vector<std::string> names;
  std::stringstream ss(BP_GPU_PLUGINS);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) names.push_back(item);
  }
  return names;
}

class GpuPluginTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    path_ = std::string(BP_GPU_PLUGIN_DIR) + "/libbackplane_" + GetParam() + ".so";
    handle_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << "dlopen(" << path_ << "): " << dlerror();
    auto entry_fn = reinterpret_cast<bp_plugin_entry_fn>(dlsym(handle_, BP_PLUGIN_ENTRY_SYMBOL));
    ASSERT_NE(entry_fn, nullptr) << "no " << BP_PLUGIN_ENTRY_SYMBOL << " in " << path_;
    entry_ = entry_fn();
    ASSERT_NE(entry_, nullptr);
  }
  // host_ shuts the plugin down. Vendor runtimes register atexit handlers;
  // the library stays mapped so they run at process exit, not after dlclose.

  bp_status_t Init(size_t backend_struct_size = sizeof(bp_backend_t)) {
    return host_.Init(entry_, backend_struct_size);
  }

  int32_t DeviceCount() {
    int32_t n = -1;
    EXPECT_EQ(backend_.device_count(backend_.backend_data, &n), BP_STATUS_OK);
    return n;
  }

  std::string SkipReason() {
    return "no " + GetParam() +
           " device on this machine: " + (backend_.no_device_reason ? backend_.no_device_reason : "(no reason given)");
  }

  FakeHost host_;
  bp_backend_t& backend_ = host_.backend();
  std::string path_;
  void* handle_ = nullptr;
  const bp_plugin_entry_t* entry_ = nullptr;
};

TEST_P(GpuPluginTest, NegotiatesTheAbiVersion) {
  EXPECT_EQ(BP_ABI_VERSION_GET_MAJOR(entry_->abi_version), BP_ABI_VERSION_MAJOR);
  uint32_t newer = BP_MAKE_ABI_VERSION(BP_ABI_VERSION_MAJOR, BP_ABI_VERSION_MINOR + 5);
  EXPECT_EQ(entry_->negotiate(&newer), BP_STATUS_OK);
  EXPECT_EQ(newer, BP_ABI_VERSION);
  uint32_t other_major = BP_MAKE_ABI_VERSION(BP_ABI_VERSION_MAJOR + 1, 0);
  EXPECT_EQ(entry_->negotiate(&other_major), BP_STATUS_INCOMPATIBLE_VERSION);
}

TEST_P(GpuPluginTest, InitFillsTheBackendAndRegistersKernels) {
  ASSERT_EQ(Init(), BP_STATUS_OK) << host_.last_error();
  EXPECT_STREQ(backend_.name, GetParam().c_str());
  EXPECT_EQ(backend_.device_type, GetParam() == "cuda" ? kDLCUDA : kDLROCM);
  EXPECT_NE(backend_.version, nullptr);
  EXPECT_NE(backend_.allocate, nullptr);
  EXPECT_NE(backend_.stream_get_default, nullptr);
  EXPECT_NE(backend_.event_create, nullptr);
  EXPECT_NE(backend_.stream_create, nullptr);  // ABI 1.4
  EXPECT_NE(backend_.stream_destroy, nullptr);
  EXPECT_NE(backend_.event_query, nullptr);
  EXPECT_NE(backend_.event_elapsed_time, nullptr);
  for (const char* op : {"add.Tensor",
                         "mul.Tensor",
                         "where.self",
                         "exp",
                         "gelu",
                         "sum.dim_IntList",
                         "argmax",
                         "matmul",
                         "addmm",
                         "linear",
                         "softmax.int",
                         "log_softmax.int",
                         "layer_norm",
                         "batch_norm",
                         "copy_",
                         "fill_.Scalar",
                         "cat",
                         "eq.Tensor",
                         "conv2d",
                         "conv2d_fused",
                         "max_pool2d",
                         "avg_pool2d",
                         "upsample_nearest2d",
                         "upsample_bilinear2d"}) {
    EXPECT_EQ(host_.kernels().count(op), 1u) << op;
  }
  EXPECT_EQ(host_.kernels().count("index_select"), 0u) << "index_select is left to the CPU fallback";
}

TEST_P(GpuPluginTest, ReportsZeroDevicesWithTheRuntimeReason) {
  ASSERT_EQ(Init(), BP_STATUS_OK) << host_.last_error();
  const int32_t n = DeviceCount();
  if (n > 0) GTEST_SKIP() << "this machine has " << n << " " << GetParam() << " device(s)";
  EXPECT_EQ(n, 0);
  ASSERT_NE(backend_.no_device_reason, nullptr);
  const std::string reason = backend_.no_device_reason;
  EXPECT_FALSE(reason.empty());
  EXPECT_NE(reason.find("GetDeviceCount"), std::string::npos) << reason;
  std::printf("[ reason   ] %s: %s\n", GetParam().c_str(), reason.c_str());
}

TEST_P(GpuPluginTest, DeviceCallsWithoutADeviceFailCleanly) {
  ASSERT_EQ(Init(), BP_STATUS_OK) << host_.last_error();
  if (DeviceCount() > 0) GTEST_SKIP() << "checks the zero-device path; this machine has devices";
  void* p = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(backend_.allocate(backend_.backend_data, 0, 64, &p), BP_STATUS_OUT_OF_RANGE);
  EXPECT_NE(host_.last_error().find("no devices"), std::string::npos) << host_.last_error();
  bp_stream_t stream = nullptr;
  EXPECT_EQ(backend_.stream_get_default(backend_.backend_data, 0, &stream), BP_STATUS_OUT_OF_RANGE);
  EXPECT_EQ(backend_.stream_create(backend_.backend_data, 0, &stream), BP_STATUS_OUT_OF_RANGE);
  EXPECT_NE(host_.last_error().find("stream_create"), std::string::npos) << host_.last_error();
  bp_device_properties_t props;
  props.struct_size = sizeof props;
  EXPECT_EQ(backend_.device_properties(backend_.backend_data, 0, &props), BP_STATUS_OUT_OF_RANGE);
  EXPECT_EQ(backend_.deallocate(backend_.backend_data, 0, nullptr), BP_STATUS_OK);
}

TEST_P(GpuPluginTest, ShorterBackendStructIsFilledOnlyAsFarAsItReaches) {
  // A host whose bp_backend_t ends before the event slots: the plugin must
  // not write past struct_size (fields are only appended, ABI rule 3).
  const size_t short_size = offsetof(bp_backend_t, event_create);
  ASSERT_EQ(Init(short_size), BP_STATUS_OK) << host_.last_error();
  EXPECT_EQ(backend_.struct_size, short_size);
  EXPECT_NE(backend_.stream_synchronize, nullptr);
  EXPECT_EQ(backend_.event_create, nullptr);
  EXPECT_EQ(backend_.shutdown, nullptr);
  // Such a host has no shutdown slot to call, so this test's plugin state stays.
}

TEST_P(GpuPluginTest, AbiOneThreeHostGetsNoStreamCreate) {
  // A 1.3 host's bp_backend_t ends after shutdown: the 1.4 slots stay unwritten.
  const size_t size_1_3 = offsetof(bp_backend_t, stream_create);
  ASSERT_EQ(Init(size_1_3), BP_STATUS_OK) << host_.last_error();
  EXPECT_NE(backend_.shutdown, nullptr);
  EXPECT_EQ(backend_.stream_create, nullptr);
  EXPECT_EQ(backend_.event_elapsed_time, nullptr);
}

// ---- device-needing cases ----------------------------------------------------

DLTensor Tensor1D(void* data, int64_t* shape, int64_t* strides, DLDataType dtype, int device_type) {
  DLTensor t;
  std::memset(&t, 0, sizeof t);
  t.data = data;
  t.device = DLDevice{static_cast<DLDeviceType>(device_type), 0};
  t.ndim = 1;
  t.dtype = dtype;
  t.shape = shape;
  t.strides = strides;
  return t;
}

TEST_P(GpuPluginTest, AddKernelRunsOnDevice) {
  ASSERT_EQ(Init(), BP_STATUS_OK) << host_.last_error();
  if (DeviceCount() == 0) GTEST_SKIP() << SkipReason();
  const int64_t n = 1000;
  std::vector<float> a(n), b(n), out(n, -1.0f);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = static_cast<float>(2 * i + 1);
  }
  void* data = backend_.backend_data;
  bp_stream_t stream = nullptr;
  ASSERT_EQ(backend_.stream_get_default(data, 0, &stream), BP_STATUS_OK) << host_.last_error();
  void *da = nullptr, *db = nullptr, *dc = nullptr;
  ASSERT_EQ(backend_.allocate(data, 0, n * 4, &da), BP_STATUS_OK) << host_.last_error();
  ASSERT_EQ(backend_.allocate(data, 0, n * 4, &db), BP_STATUS_OK) << host_.last_error();
  ASSERT_EQ(backend_.allocate(data, 0, n * 4, &dc), BP_STATUS_OK) << host_.last_error();
  ASSERT_EQ(backend_.copy_host_to_device(data, 0, a.data(), da, 0, n * 4, stream), BP_STATUS_OK);
  ASSERT_EQ(backend_.copy_host_to_device(data, 0, b.data(), db, 0, n * 4, stream), BP_STATUS_OK);
  int64_t shape[1] = {n}, strides[1] = {1}, bstrides[1] = {1};
  const DLDataType f32{kDLFloat, 32, 1};
  DLTensor ta = Tensor1D(da, shape, strides, f32, backend_.device_type);
  DLTensor tb = Tensor1D(db, shape, bstrides, f32, backend_.device_type);
  DLTensor tc = Tensor1D(dc, shape, strides, f32, backend_.device_type);
  const std::vector<bp_kernel_arg_t> args = {TArg(&ta), TArg(&tb), DArg(0.5)};
  ASSERT_EQ(host_.Call("add.Tensor", args, {&tc}, stream), BP_STATUS_OK) << host_.last_error();
  ASSERT_EQ(backend_.copy_device_to_host(data, 0, dc, 0, out.data(), n * 4, stream), BP_STATUS_OK);
  for (int64_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(out[i], a[i] + 0.5f * b[i]) << i;
  // Broadcast: b as a stride-0 scalar.
  bstrides[0] = 0;
  ASSERT_EQ(host_.Call("add.Tensor", args, {&tc}, stream), BP_STATUS_OK) << host_.last_error();
  ASSERT_EQ(backend_.copy_device_to_host(data, 0, dc, 0, out.data(), n * 4, stream), BP_STATUS_OK);
  for (int64_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(out[i], a[i] + 0.5f * b[0]) << i;
  EXPECT_EQ(backend_.deallocate(data, 0, da), BP_STATUS_OK);
  EXPECT_EQ(backend_.deallocate(data, 0, db), BP_STATUS_OK);
  EXPECT_EQ(backend_.deallocate(data, 0, dc), BP_STATUS_OK);
}

TEST_P(GpuPluginTest, MatmulKernelRunsOnDevice) {
  ASSERT_EQ(Init(), BP_STATUS_OK) << host_.last_error();
  if (DeviceCount() == 0) GTEST_SKIP() << SkipReason();
  const int64_t m = 37, k = 19, n = 23;
  std::vector<float> a(m * k), b(k * n), c(m * n, 0.0f);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 7) % 11) - 5.0f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 5) % 13) - 6.0f;
  void* data = backend_.backend_data;
  bp_stream_t stream = nullptr;
  ASSERT_EQ(backend_.stream_get_default(data, 0, &stream), BP_STATUS_OK);
  void *da = nullptr, *db = nullptr, *dc = nullptr;
  ASSERT_EQ(backend_.allocate(data, 0, a.size() * 4, &da), BP_STATUS_OK);
  ASSERT_EQ(backend_.allocate(data, 0, b.size() * 4, &db), BP_STATUS_OK);
  ASSERT_EQ(backend_.allocate(data, 0, c.size() * 4, &dc), BP_STATUS_OK);
  ASSERT_EQ(backend_.copy_host_to_device(data, 0, a.data(), da, 0, a.size() * 4, stream), BP_STATUS_OK);
  ASSERT_EQ(backend_.copy_host_to_device(data, 0, b.data(), db, 0, b.size() * 4, stream), BP_STATUS_OK);
  const DLDataType f32{kDLFloat, 32, 1};
  int64_t sa[2] = {m, k}, ta_[2] = {k, 1}, sb[2] = {k, n}, tb_[2] = {n, 1}, sc[2] = {m, n}, tc_[2] = {n, 1};
  DLTensor ta = Tensor1D(da, sa, ta_, f32, backend_.device_type);
  DLTensor tb = Tensor1D(db, sb, tb_, f32, backend_.device_type);
  DLTensor tc = Tensor1D(dc, sc, tc_, f32, backend_.device_type);
  ta.ndim = tb.ndim = tc.ndim = 2;
  ASSERT_EQ(host_.Call("matmul", {TArg(&ta), TArg(&tb)}, {&tc}, stream), BP_STATUS_OK) << host_.last_error();
  ASSERT_EQ(backend_.copy_device_to_host(data, 0, dc, 0, c.data(), c.size() * 4, stream), BP_STATUS_OK);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double ref = 0;
      for (int64_t p = 0; p < k; ++p) ref += double(a[i * k + p]) * double(b[p * n + j]);
      ASSERT_NEAR(c[i * n + j], ref, 1e-3) << i << "," << j;
    }
  }
  backend_.deallocate(data, 0, da);
  backend_.deallocate(data, 0, db);
  backend_.deallocate(data, 0, dc);
}

// ABI 1.4 on a real device: a kernel on one created stream, a copy on another
// ordered after it by an event, queries and timing, then destroy.
TEST_P(GpuPluginTest, CreatedStreamsOrderedByEvents) {
  ASSERT_EQ(Init(), BP_STATUS_OK) << host_.last_error();
  if (DeviceCount() == 0) GTEST_SKIP() << SkipReason();
  void* data = backend_.backend_data;
  const int64_t n = 1 << 20;
  std::vector<float> a(n, 1.5f), b(n, 2.0f), out(n, 0.0f);
  void *da = nullptr, *db = nullptr, *dc = nullptr, *dcopy = nullptr;
  for (void** p : {&da, &db, &dc, &dcopy}) ASSERT_EQ(backend_.allocate(data, 0, n * 4, p), BP_STATUS_OK);
  bp_stream_t s1 = nullptr, s2 = nullptr;
  ASSERT_EQ(backend_.stream_create(data, 0, &s1), BP_STATUS_OK) << host_.last_error();
  ASSERT_EQ(backend_.stream_create(data, 0, &s2), BP_STATUS_OK) << host_.last_error();
  EXPECT_NE(s1, s2);
  bp_event_t e0 = nullptr, e1 = nullptr, e2 = nullptr;
  for (bp_event_t* e : {&e0, &e1, &e2}) ASSERT_EQ(backend_.event_create(data, 0, e), BP_STATUS_OK);
  int32_t complete = -1;
  EXPECT_EQ(backend_.event_query(data, e0, &complete), BP_STATUS_OK);
  EXPECT_EQ(complete, 1) << "never recorded";
  float ms = 0;
  EXPECT_EQ(backend_.event_elapsed_time(data, e0, e1, &ms), BP_STATUS_FAILED_PRECONDITION);

  ASSERT_EQ(backend_.copy_host_to_device(data, 0, a.data(), da, 0, n * 4, s1), BP_STATUS_OK);
  ASSERT_EQ(backend_.copy_host_to_device(data, 0, b.data(), db, 0, n * 4, s1), BP_STATUS_OK);
  ASSERT_EQ(backend_.event_record(data, e0, s1), BP_STATUS_OK);
  int64_t shape[1] = {n}, strides[1] = {1};
  const int dt = GetParam() == "cuda" ? kDLCUDA : kDLROCM;
  DLTensor ta = Tensor1D(da, shape, strides, DLDataType{kDLFloat, 32, 1}, dt);
  DLTensor tb = Tensor1D(db, shape, strides, DLDataType{kDLFloat, 32, 1}, dt);
  DLTensor tc = Tensor1D(dc, shape, strides, DLDataType{kDLFloat, 32, 1}, dt);
  ASSERT_EQ(host_.Call("add.Tensor", {TArg(&ta), TArg(&tb), DArg(1.0)}, {&tc}, s1), BP_STATUS_OK) << host_.last_error();
  ASSERT_EQ(backend_.event_record(data, e1, s1), BP_STATUS_OK);
  ASSERT_EQ(backend_.event_wait(data, e1, s2), BP_STATUS_OK);
  ASSERT_EQ(backend_.copy_device_to_device(data, 0, dc, 0, dcopy, 0, n * 4, s2), BP_STATUS_OK);
  ASSERT_EQ(backend_.event_record(data, e2, s2), BP_STATUS_OK);
  ASSERT_EQ(backend_.event_synchronize(data, e2), BP_STATUS_OK) << host_.last_error();
  for (bp_event_t e : {e0, e1, e2}) {
    EXPECT_EQ(backend_.event_query(data, e, &complete), BP_STATUS_OK);
    EXPECT_EQ(complete, 1);
  }
  float t01 = -1, t12 = -1, t02 = -1;
  EXPECT_EQ(backend_.event_elapsed_time(data, e0, e1, &t01), BP_STATUS_OK) << host_.last_error();
  EXPECT_EQ(backend_.event_elapsed_time(data, e1, e2, &t12), BP_STATUS_OK) << host_.last_error();
  EXPECT_EQ(backend_.event_elapsed_time(data, e0, e2, &t02), BP_STATUS_OK) << host_.last_error();
  EXPECT_GE(t01, 0.0f);
  EXPECT_GE(t12, 0.0f);
  EXPECT_GE(t02, t01);
  ASSERT_EQ(backend_.stream_destroy(data, 0, s1), BP_STATUS_OK) << host_.last_error();
  ASSERT_EQ(backend_.stream_destroy(data, 0, s2), BP_STATUS_OK) << host_.last_error();
  ASSERT_EQ(backend_.copy_device_to_host(data, 0, dcopy, 0, out.data(), n * 4, nullptr), BP_STATUS_OK);
  for (int64_t i = 0; i < n; i += 997) ASSERT_EQ(out[i], 3.5f) << i;
  for (bp_event_t e : {e0, e1, e2}) EXPECT_EQ(backend_.event_destroy(data, e), BP_STATUS_OK);
  for (void* p : {da, db, dc, dcopy}) backend_.deallocate(data, 0, p);
}

INSTANTIATE_TEST_SUITE_P(Plugins, GpuPluginTest, ::testing::ValuesIn(PluginNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
