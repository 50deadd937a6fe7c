// The fault suite: one misbehaving plugin (test_plugins/fault_plugin.cpp,
// the fault picked by BP_FAULT) at every step a plugin takes part in. Each
// case asserts the status, the message, and that the host goes on working
// (the context loads and runs the well-behaved plugin afterwards). Faults
// that end or stop the process (init_crash, init_exit, init_hang,
// kernel_crash, kernel_hang) are run in a child: bp-conformance reports them
// (conformance_load_isolation_test.cpp) and the death tests below.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "bp_test_util.h"

using namespace bptest;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

// Where the fault strikes.
enum class Step { kLoad, kEmpty, kFromHost, kToHost, kProperties, kKernel };

struct FaultCase {
  const char* fault;
  Step step;
  bp_status_t code;
  const char* message;  // a substring the error message must contain
};

void PrintTo(const FaultCase& c, std::ostream* os) { *os << c.fault; }

const char kStale[] = "an earlier, unrelated error";

class FaultPluginTest : public ContextTest, public ::testing::WithParamInterface<FaultCase> {
 protected:
  void TearDown() override {
    unsetenv("BP_FAULT");
    ContextTest::TearDown();
  }
  // Loads the plugin with no fault and returns its device 0.
  bp_device_t LoadClean(bp_plugin_t** out) {
    unsetenv("BP_FAULT");
    EXPECT_EQ(bp_plugin_load(ctx_, PluginPath("bp_fault").c_str(), out), BP_STATUS_OK) << LastError();
    bp_device_t d{};
    EXPECT_EQ(bp_device_parse(ctx_, "fault:0", &d), BP_STATUS_OK) << LastError();
    return d;
  }
};

TEST_P(FaultPluginTest, StatusAndMessageAndTheHostSurvives) {
  const FaultCase& c = GetParam();
  bp_plugin_t* p = nullptr;
  bp_device_t dev{};
  bp_tensor_t* a = nullptr;
  bp_tensor_t* b = nullptr;
  if (c.step != Step::kLoad) {
    dev = LoadClean(&p);
    if (c.step == Step::kToHost || c.step == Step::kKernel) {
      a = F32(dev, {3}, {1, 2, 3});
      b = F32(dev, {3}, {10, 20, 30});
    }
  }
  // An unrelated error first: a plugin that fails with no message must not inherit it.
  int32_t unused = -1;
  ASSERT_EQ(bp_backend_find(ctx_, kStale, &unused), BP_STATUS_NOT_FOUND);
  ASSERT_THAT(LastError(), HasSubstr(kStale));
  ASSERT_EQ(setenv("BP_FAULT", c.fault, 1), 0);
  bp_status_t rc = BP_STATUS_OK;
  bp_tensor_t* r = nullptr;
  switch (c.step) {
    case Step::kLoad:
      rc = bp_plugin_load(ctx_, PluginPath("bp_fault").c_str(), &p);
      break;
    case Step::kEmpty: {
      int64_t n = 3;
      rc = bp_tensor_empty(ctx_, dev, 1, &n, kF32, &r);
      break;
    }
    case Step::kFromHost: {
      const float v[2] = {1, 2};
      int64_t n = 2;
      rc = bp_tensor_from_host(ctx_, dev, 1, &n, kF32, v, sizeof(v), &r);
      break;
    }
    case Step::kToHost: {
      float v[3];
      rc = bp_tensor_to_host(a, v, sizeof(v));
      break;
    }
    case Step::kProperties: {
      bp_device_properties_t props{};
      props.struct_size = sizeof(props);
      rc = bp_device_properties(ctx_, dev, &props);
      break;
    }
    case Step::kKernel: {
      bp_value_t args[] = {T(a), T(b), I(1)};
      rc = bp_op_call(ctx_, Op("add.Tensor"), args, 3, &r, 1);
      break;
    }
  }
  const std::string msg = LastError();
  EXPECT_EQ(rc, c.code) << bp_status_name(rc) << ": " << msg.substr(0, 300);
  EXPECT_THAT(msg, HasSubstr(c.message));
  EXPECT_THAT(msg, Not(HasSubstr(kStale)));
  EXPECT_LE(msg.size(), size_t(BP_KERNEL_ERROR_MAX_MESSAGE) + 512) << "messages from plugins are capped";
  EXPECT_EQ(r, nullptr) << "a failed call returns no tensor";
  if (r != nullptr) bp_tensor_release(r);

  // The host survives: with the fault gone, the plugin computes correctly.
  unsetenv("BP_FAULT");
  if (c.step == Step::kLoad) {
    int32_t id = -1;
    EXPECT_EQ(bp_backend_find(ctx_, "fault", &id), BP_STATUS_NOT_FOUND) << "a failed load left a backend";
    dev = LoadClean(&p);
  }
  bp_tensor_t* x = F32(dev, {2}, {1, 2});
  bp_tensor_t* y = F32(dev, {2}, {3, 4});
  EXPECT_EQ(Read(Call("add.Tensor", {T(x), T(y), I(2)})), (std::vector<float>{7, 10}));
  ASSERT_EQ(bp_plugin_unload(ctx_, p), BP_STATUS_OK) << LastError();
}

const FaultCase kCases[] = {
    {"entry_null", Step::kLoad, BP_STATUS_INVALID_ARGUMENT, "returned an incomplete entry table"},
    {"negotiate_fail", Step::kLoad, BP_STATUS_INCOMPATIBLE_VERSION, "with status UNAVAILABLE"},
    {"negotiate_newer", Step::kLoad, BP_STATUS_INCOMPATIBLE_VERSION, "ABI negotiation failed"},
    {"init_fail", Step::kLoad, BP_STATUS_UNAVAILABLE, "plugin init failed with UNAVAILABLE: fault: no driver"},
    {"init_fail_silent", Step::kLoad, BP_STATUS_UNAVAILABLE, "(the plugin gave no message)"},
    {"init_fail_unknown", Step::kLoad, BP_STATUS_INTERNAL, "status 1234 (not a bp_status_t; reported as INTERNAL)"},
    {"init_huge_message", Step::kLoad, BP_STATUS_UNAVAILABLE, "fault: xxxx"},
    {"bad_name", Step::kLoad, BP_STATUS_INVALID_ARGUMENT, "backend name must match [a-z0-9_]+, got 'Fault!'"},
    {"devices_huge", Step::kLoad, BP_STATUS_INVALID_ARGUMENT, "reports 5000000 devices"},
    {"devices_negative", Step::kLoad, BP_STATUS_INVALID_ARGUMENT, "reports -1 devices"},
    {"properties_fail", Step::kProperties, BP_STATUS_INTERNAL, "device_properties failed with INTERNAL (the plugin gave no message)"},
    {"alloc_fail", Step::kEmpty, BP_STATUS_OUT_OF_MEMORY, "fault: device memory exhausted"},
    {"alloc_fail_silent", Step::kEmpty, BP_STATUS_INTERNAL, "allocating 512 bytes failed with INTERNAL (the plugin gave no message)"},
    {"h2d_fail", Step::kFromHost, BP_STATUS_DATA_LOSS, "fault: DMA engine error"},
    {"d2h_fail_silent", Step::kToHost, BP_STATUS_DATA_LOSS, "to host failed with DATA_LOSS (the plugin gave no message)"},
    {"kernel_fail", Step::kKernel, BP_STATUS_INVALID_ARGUMENT, "fault: add.Tensor: argument 'other': rejected"},
    {"kernel_fail_silent", Step::kKernel, BP_STATUS_ABORTED, "kernel on backend 'fault' failed with ABORTED"},
    {"kernel_fail_unknown", Step::kKernel, BP_STATUS_INTERNAL, "status -7 (not a bp_status_t; reported as INTERNAL)"},
    {"kernel_huge_message", Step::kKernel, BP_STATUS_INTERNAL, "fault: xxxx"},
    {"kernel_write_then_fail", Step::kKernel, BP_STATUS_DATA_LOSS, "wrote the output, then failed"},
};

INSTANTIATE_TEST_SUITE_P(Faults, FaultPluginTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<FaultCase>& i) { return std::string(i.param.fault); });

// A failing device_count loads the backend with no device, and says why.
TEST_F(ContextTest, FaultDeviceCountFailureLoadsWithNoDevice) {
  ASSERT_EQ(setenv("BP_FAULT", "device_count_fail", 1), 0);
  bp_plugin_t* p = nullptr;
  const bp_status_t rc = bp_plugin_load(ctx_, PluginPath("bp_fault").c_str(), &p);
  unsetenv("BP_FAULT");
  ASSERT_EQ(rc, BP_STATUS_OK) << LastError();
  EXPECT_EQ(CountLogs("device_count failed with UNAVAILABLE: fault: driver went away; loaded with no device"), 1);
  bp_device_t d{};
  EXPECT_EQ(bp_device_parse(ctx_, "fault:0", &d), BP_STATUS_NOT_FOUND);
  EXPECT_EQ(bp_plugin_unload(ctx_, p), BP_STATUS_OK);
}

// Faults that take the process down: in a child, so the test sees how.
TEST(FaultPluginDeathTest, InitCrashAndExitEndOnlyTheProcessThatLoads) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto load = [](const char* fault) {
    setenv("BP_FAULT", fault, 1);
    bp_context_t* ctx = nullptr;
    bp_context_create(nullptr, &ctx);
    bp_plugin_load(ctx, PluginPath("bp_fault").c_str(), nullptr);
    _exit(0);
  };
  // A signal, or (under AddressSanitizer, which catches the SIGSEGV) a failing exit.
  auto crashed = [](int status) { return WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0); };
  EXPECT_EXIT(load("init_crash"), crashed, "");
  EXPECT_EXIT(load("init_exit"), ::testing::ExitedWithCode(3), "");
}

}  // namespace
