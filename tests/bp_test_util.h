// Helpers shared by the core's tests (public C API only).
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include <backplane/backplane.h>

#include "boxed_values.h"

namespace bptest {

constexpr DLDataType kF32{kDLFloat, 32, 1};
constexpr DLDataType kF64{kDLFloat, 64, 1};
constexpr DLDataType kF16{kDLFloat, 16, 1};
constexpr DLDataType kBF16{kDLBfloat, 16, 1};
constexpr DLDataType kI64{kDLInt, 64, 1};
constexpr DLDataType kI32{kDLInt, 32, 1};
constexpr DLDataType kBool{BP_DTYPE_CODE_BOOL, 8, 1};
constexpr bp_device_t kCpu{0, 0};

inline std::string PluginPath(const char* name) { return std::string(BP_TEST_PLUGIN_DIR) + "/lib" + name + ".so"; }

// Boxed operator arguments (bp_value_t); lists must outlive the call.
inline bp_value_t T(bp_tensor_t* t) { return bp_box::Tensor<bp_value_t>(t); }
inline bp_value_t I(int64_t i) { return bp_box::Int<bp_value_t>(i); }
inline bp_value_t D(double d) { return bp_box::Double<bp_value_t>(d); }
inline bp_value_t B(bool b) { return bp_box::Bool<bp_value_t>(b); }
inline bp_value_t S(const char* s) { return bp_box::String<bp_value_t>(s); }
inline bp_value_t L(const std::vector<int64_t>& ints) { return bp_box::IntList<bp_value_t>(ints); }
inline bp_value_t Dt(DLDataType d) { return bp_box::Dtype<bp_value_t>(d); }

inline std::string LastError() { return bp_last_error_message(); }

// Element `index` (row-major over shape) of a host DLTensor, as a pointer.
template <typename E>
E* HostElem(const DLTensor* t, int64_t index) {
  int64_t off = 0;
  for (int32_t d = t->ndim - 1; d >= 0; --d) {
    int64_t i = index % t->shape[d];
    index /= t->shape[d];
    off += i * t->strides[d];
  }
  return reinterpret_cast<E*>(static_cast<char*>(t->data) + t->byte_offset) + off;
}

inline int64_t Numel(const DLTensor* t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; ++d) n *= t->shape[d];
  return n;
}

// A host (CPU) kernel for mul.Tensor on float32, as a CPU plugin would have:
// any strides, views already broadcast by the core.
inline bp_status_t HostMulF32(const bp_kernel_call_t* call) {
  const DLTensor* x = call->args[0].u.tensor;
  const DLTensor* y = call->args[1].u.tensor;
  const DLTensor* o = call->outputs[0];
  for (int64_t i = 0, n = Numel(o); i < n; ++i) *HostElem<float>(o, i) = *HostElem<float>(x, i) * *HostElem<float>(y, i);
  return BP_STATUS_OK;
}

// A host kernel for add.Tensor on float32 (self + alpha * other).
inline bp_status_t HostAddF32(const bp_kernel_call_t* call) {
  const DLTensor* x = call->args[0].u.tensor;
  const DLTensor* y = call->args[1].u.tensor;
  const DLTensor* o = call->outputs[0];
  double alpha = call->args[2].kind == BP_VALUE_DOUBLE ? call->args[2].u.d : static_cast<double>(call->args[2].u.i);
  for (int64_t i = 0, n = Numel(o); i < n; ++i)
    *HostElem<float>(o, i) = static_cast<float>(*HostElem<float>(x, i) + alpha * *HostElem<float>(y, i));
  return BP_STATUS_OK;
}

// A context with a log callback that records messages.
class ContextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bp_context_options_t o{};
    o.struct_size = sizeof(o);
    o.log_callback = &ContextTest::Log;
    o.log_user_data = this;
    o.min_log_level = BP_LOG_DEBUG;
    ASSERT_EQ(bp_context_create(&o, &ctx_), BP_STATUS_OK) << LastError();
  }
  void TearDown() override {
    for (bp_tensor_t* t : owned_) bp_tensor_release(t);
    owned_.clear();
    bp_context_destroy(ctx_);
  }
  static void Log(void* user, int32_t level, const char* message) {
    auto* self = static_cast<ContextTest*>(user);
    std::lock_guard<std::mutex> lock(self->log_mu_);
    self->logs_.push_back({level, message});
  }
  std::vector<std::pair<int32_t, std::string>> Logs() {
    std::lock_guard<std::mutex> lock(log_mu_);
    return logs_;
  }
  int CountLogs(const std::string& needle) {
    int n = 0;
    for (auto& [level, msg] : Logs()) n += msg.find(needle) != std::string::npos;
    return n;
  }

  // Loads the testdev plugin and returns its device 0.
  bp_device_t LoadTestdev(bp_plugin_t** out_plugin = nullptr) {
    bp_plugin_t* p = nullptr;
    EXPECT_EQ(bp_plugin_load(ctx_, PluginPath("bp_testdev").c_str(), &p), BP_STATUS_OK) << LastError();
    if (out_plugin != nullptr) *out_plugin = p;
    bp_device_t d{};
    EXPECT_EQ(bp_device_parse(ctx_, "testdev:0", &d), BP_STATUS_OK) << LastError();
    return d;
  }

  bp_op_t* Op(const char* name) {
    bp_op_t* op = nullptr;
    EXPECT_EQ(bp_op_find(ctx_, name, &op), BP_STATUS_OK) << LastError();
    return op;
  }

  // A tensor the fixture releases at TearDown.
  bp_tensor_t* Own(bp_tensor_t* t) {
    owned_.push_back(t);
    return t;
  }
  bp_tensor_t* F32(bp_device_t dev, const std::vector<int64_t>& sizes, const std::vector<float>& data) {
    bp_tensor_t* t = nullptr;
    EXPECT_EQ(bp_tensor_from_host(ctx_, dev, static_cast<int32_t>(sizes.size()), sizes.data(), kF32, data.data(),
                                  data.size() * sizeof(float), &t),
              BP_STATUS_OK)
        << LastError();
    return Own(t);
  }
  std::vector<float> Read(const bp_tensor_t* t) {
    std::vector<float> out(static_cast<size_t>(bp_tensor_numel(t)));
    EXPECT_EQ(bp_tensor_to_host(t, out.data(), out.size() * sizeof(float)), BP_STATUS_OK) << LastError();
    return out;
  }
  // Calls `op` and returns its single result (owned by the fixture) or NULL.
  bp_tensor_t* Call(const char* op, std::vector<bp_value_t> args, bp_status_t expect = BP_STATUS_OK) {
    bp_tensor_t* r = nullptr;
    bp_status_t rc = bp_op_call(ctx_, Op(op), args.data(), static_cast<int32_t>(args.size()), &r, 1);
    EXPECT_EQ(rc, expect) << op << ": " << LastError();
    if (rc != BP_STATUS_OK) return nullptr;
    return Own(r);
  }

  bp_context_t* ctx_ = nullptr;
  std::vector<bp_tensor_t*> owned_;
  std::mutex log_mu_;
  std::vector<std::pair<int32_t, std::string>> logs_;
};

#ifdef BP_BUILD_PLUGIN_DIR
// The built CPU plugin and the vendor_sim sample loaded into one context, with
// vendor_sim:0 as dev_. Skips (with the reason) when either was not built.
class VendorSimTest : public ContextTest {
 protected:
  static std::string BuiltPlugin(const char* name) {
    return std::string(BP_BUILD_PLUGIN_DIR) + "/lib" + name + ".so";
  }
  static bool Exists(const std::string& path) {
    struct stat sb;
    return stat(path.c_str(), &sb) == 0;
  }
  void SetUp() override {
    ContextTest::SetUp();
    const std::string cpu = BuiltPlugin("backplane_cpu");
    const std::string vendor = BuiltPlugin("backplane_vendor_sim");
    if (!Exists(cpu)) GTEST_SKIP() << "the CPU plugin is not built (" << cpu << ")";
    if (!Exists(vendor)) GTEST_SKIP() << "the vendor_sim plugin is not built (" << vendor << ")";
    ASSERT_EQ(bp_plugin_load(ctx_, cpu.c_str(), nullptr), BP_STATUS_OK) << LastError();
    ASSERT_EQ(bp_plugin_load(ctx_, vendor.c_str(), nullptr), BP_STATUS_OK) << LastError();
    ASSERT_EQ(bp_device_parse(ctx_, "vendor_sim:0", &dev_), BP_STATUS_OK) << LastError();
  }
  uint64_t Fallbacks(const char* op) {
    uint64_t n = 0;
    EXPECT_EQ(bp_fallback_count(ctx_, Op(op), dev_.backend, &n), BP_STATUS_OK) << LastError();
    return n;
  }
  void Mask(const char* op, int32_t masked) {
    ASSERT_EQ(bp_op_set_kernel_masked(ctx_, Op(op), dev_.backend, masked), BP_STATUS_OK) << LastError();
  }
  bp_device_t dev_{};
};
#endif  // BP_BUILD_PLUGIN_DIR

}  // namespace bptest
