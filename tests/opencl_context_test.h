// The fixture of the end-to-end OpenCL tests (opencl_e2e_test.cpp,
// opencl_dtype_mask_test.cpp): a context with the CPU and OpenCL plugins
// loaded, the OpenCL backend's id and device 0. Skips, with the reason the
// plugin gives, when there is no OpenCL device and none was expected
// (expected_backends.h).
#pragma once

#include <cstdlib>
#include <string>

#include "bp_test_util.h"
#include "expected_backends.h"

namespace bptest {

class OpenclContextTest : public ContextTest {
 protected:
  // Loads both plugins; `env`, when set, is set to "1" while the OpenCL
  // plugin initializes (it reads its switches then). Callers of a test body
  // return when IsSkipped() || HasFatalFailure() afterwards.
  void LoadOpencl(const char* env = nullptr) {
    ASSERT_EQ(bp_plugin_load(ctx_, BPCL_CPU_PLUGIN_PATH, nullptr), BP_STATUS_OK) << LastError();
    if (env != nullptr) setenv(env, "1", 1);
    const bp_status_t rc = bp_plugin_load(ctx_, BPCL_PLUGIN_PATH, nullptr);
    if (env != nullptr) unsetenv(env);
    ASSERT_EQ(rc, BP_STATUS_OK) << LastError();
    ASSERT_EQ(bp_backend_find(ctx_, "opencl", &backend_), BP_STATUS_OK);
    bp_backend_info_t info{};
    info.struct_size = sizeof info;
    ASSERT_EQ(bp_backend_info(ctx_, backend_, &info), BP_STATUS_OK);
    if (info.device_count == 0) {
      BP_SKIP_UNLESS_EXPECTED("opencl",
                              std::string("no OpenCL device: ") + (info.no_device_reason ? info.no_device_reason : ""));
    }
    dev_ = bp_device_t{backend_, 0};
  }
  // Calls of `op` the OpenCL kernel served, and calls a fallback served.
  uint64_t Native(const char* op) {
    uint64_t n = 0;
    EXPECT_EQ(bp_native_count(ctx_, Op(op), backend_, &n), BP_STATUS_OK) << LastError();
    return n;
  }
  uint64_t Fallback(const char* op) {
    uint64_t n = 0;
    EXPECT_EQ(bp_fallback_count(ctx_, Op(op), backend_, &n), BP_STATUS_OK) << LastError();
    return n;
  }

  int32_t backend_ = -1;
  bp_device_t dev_{};
};

}  // namespace bptest
