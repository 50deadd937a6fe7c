// bp-test: public-api
// bp-conformance's runner against the real library and CPU plugin: a correct
// kernel makes a native cell, a wrong kernel registered over it makes the
// cell fail, and removing it restores the cell. Proves the suite can fail.
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "backplane/backplane.h"
#include "runner.h"

namespace bpc {
namespace {

// Writes zeros to a float32 output of any strides: a wrong add.
bp_status_t zero_kernel(const bp_kernel_call_t* call) {
  const DLTensor* out = call->outputs[0];
  if (out->dtype.code != kDLFloat || out->dtype.bits != 32) return BP_STATUS_UNIMPLEMENTED;
  int64_t n = 1;
  for (int i = 0; i < out->ndim; ++i) n *= out->shape[i];
  char* base = static_cast<char*>(out->data) + out->byte_offset;
  for (int64_t k = 0; k < n; ++k) {
    int64_t rem = k, off = 0;
    for (int i = out->ndim - 1; i >= 0; --i) {
      off += (rem % out->shape[i]) * out->strides[i];
      rem /= out->shape[i];
    }
    const float z = 0.0f;
    std::memcpy(base + off * 4, &z, 4);
  }
  return BP_STATUS_OK;
}

class RunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bp_context_options_t o{};
    o.struct_size = sizeof o;
    o.min_log_level = BP_LOG_ERROR;
    ASSERT_EQ(bp_context_create(&o, &ctx_), BP_STATUS_OK);
    const std::string path = std::string(BP_BUILD_PLUGIN_DIR) + "/libbackplane_cpu.so";
    ASSERT_EQ(bp_plugin_load(ctx_, path.c_str(), nullptr), BP_STATUS_OK) << bp_last_error_message();
    ASSERT_EQ(bp_backend_find(ctx_, "cpu", &cpu_), BP_STATUS_OK);
  }
  void TearDown() override { bp_context_destroy(ctx_); }

  CellResult run(Runner& runner, const std::string& op, DType d, DeviceReport* report) {
    uint64_t caps = 0;
    *report = runner.empty_report(cpu_, 0, &caps);
    for (const OpEntry& e : runner.ops()) {
      if (e.name == op) runner.run_cell(e, d, cpu_, bp_device_t{cpu_, 0}, caps, RunOptions(), report);
    }
    return report->cells[op][static_cast<size_t>(d)];
  }

  bp_context_t* ctx_ = nullptr;
  int32_t cpu_ = -1;
};

TEST_F(RunnerTest, CorrectKernelIsNativeWrongKernelFails) {
  Runner runner(ctx_);
  DeviceReport report;
  CellResult good = run(runner, "add.Tensor", DType::kFloat32, &report);
  EXPECT_EQ(good.outcome, Outcome::kNativePass) << good.reason;
  EXPECT_GT(good.cases, 10);

  bp_op_t* add = nullptr;
  ASSERT_EQ(bp_op_find(ctx_, "add.Tensor", &add), BP_STATUS_OK);
  bp_registration_t* reg = nullptr;
  ASSERT_EQ(bp_op_register_kernel(ctx_, add, cpu_, zero_kernel, nullptr, BP_REGISTER_OVERRIDE, &reg), BP_STATUS_OK)
      << bp_last_error_message();
  CellResult bad = run(runner, "add.Tensor", DType::kFloat32, &report);
  EXPECT_EQ(bad.outcome, Outcome::kFail);
  EXPECT_GT(bad.failed, 5);
  bool numbers = false;
  for (const CaseResult& c : report.cases) {
    if (c.outcome == Outcome::kFail && c.has_numbers) {
      numbers = true;
      EXPECT_NE(c.message.find("outside tolerance"), std::string::npos) << c.message;
      EXPECT_NE(c.repro.find("--op add.Tensor --dtype float32 --sample"), std::string::npos);
    }
  }
  EXPECT_TRUE(numbers);

  ASSERT_EQ(bp_registration_remove(ctx_, reg), BP_STATUS_OK);
  EXPECT_EQ(run(runner, "add.Tensor", DType::kFloat32, &report).outcome, Outcome::kNativePass);
}

// A view is served by the core without any kernel: 'V', not native (issue 23
// item 18); a composite whose operators all ran natively is native.
TEST_F(RunnerTest, ViewsAreCoreOnlyCompositesCountAsNative) {
  Runner runner(ctx_);
  DeviceReport report;
  EXPECT_EQ(run(runner, "transpose.int", DType::kInt8, &report).outcome, Outcome::kCorePass);
  EXPECT_EQ(run(runner, "clone", DType::kBFloat16, &report).outcome, Outcome::kNativePass);
}

}  // namespace
}  // namespace bpc
