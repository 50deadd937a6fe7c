// The OpenCL backend declares its kernels' compute dtypes at registration
// (issue 18 item 3): a call in a dtype a kernel does not declare is routed
// around it (here to the CPU fallback) from the mask, before the kernel is
// offered the call, and gives the CPU's result; a declared dtype runs
// natively. float64 is the dtype a device can lack: BACKPLANE_OPENCL_NO_FP64
// makes the device run as one without cl_khr_fp64, so the masks leave it out.
// Skipped (with the reason) when there is no OpenCL device.
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "opencl_context_test.h"

namespace bptest {
namespace {

using ::testing::HasSubstr;

class OpenclDtypeMask : public OpenclContextTest {
 protected:
  // `no_fp64`: the device runs as one without cl_khr_fp64.
  void Load(bool no_fp64) { LoadOpencl(no_fp64 ? "BACKPLANE_OPENCL_NO_FP64" : nullptr); }
  bp_tensor_t* F64(bp_device_t dev, const std::vector<double>& data) {
    const int64_t sizes[1] = {static_cast<int64_t>(data.size())};
    bp_tensor_t* t = nullptr;
    EXPECT_EQ(bp_tensor_from_host(ctx_, dev, 1, sizes, kF64, data.data(), data.size() * sizeof(double), &t),
              BP_STATUS_OK)
        << LastError();
    return Own(t);
  }
  std::vector<double> ReadF64(const bp_tensor_t* t) {
    std::vector<double> out(static_cast<size_t>(bp_tensor_numel(t)));
    EXPECT_EQ(bp_tensor_to_host(t, out.data(), out.size() * sizeof(double)), BP_STATUS_OK) << LastError();
    return out;
  }
  // A plan for `op` on `args`, released at the end of the test.
  bp_call_plan_t* Prepare(const char* op, std::vector<bp_value_t>& args) {
    bp_call_plan_t* plan = nullptr;
    EXPECT_EQ(bp_op_prepare_for_args(ctx_, Op(op), args.data(), static_cast<int32_t>(args.size()), &plan), BP_STATUS_OK)
        << LastError();
    plans_.emplace_back(plan, &bp_plan_release);
    return plan;
  }
  int32_t RouteOf(const bp_call_plan_t* plan) {
    bp_plan_info_t info{};
    info.struct_size = sizeof info;
    EXPECT_EQ(bp_plan_info(plan, &info), BP_STATUS_OK) << LastError();
    return info.route;
  }
  bp_tensor_t* Run(bp_call_plan_t* plan, std::vector<bp_value_t>& args, bp_status_t expect = BP_STATUS_OK) {
    bp_tensor_t* r = nullptr;
    const bp_status_t rc = bp_plan_call(plan, args.data(), static_cast<int32_t>(args.size()), &r, 1);
    EXPECT_EQ(rc, expect) << LastError();
    return rc == BP_STATUS_OK ? Own(r) : nullptr;
  }
  std::vector<std::unique_ptr<bp_call_plan_t, decltype(&bp_plan_release)>> plans_;
};

const std::vector<double> kX = {-1.5, -0.25, 0.0, 0.5, 2.0, 3.25};

TEST_F(OpenclDtypeMask, UndeclaredDtypeIsRoutedFromTheMaskAndMatchesTheCpu) {
  Load(/*no_fp64=*/true);
  if (IsSkipped() || HasFatalFailure()) return;
  bp_device_properties_t props{};
  props.struct_size = sizeof props;
  ASSERT_EQ(bp_device_properties(ctx_, dev_, &props), BP_STATUS_OK) << LastError();
  EXPECT_EQ(props.capabilities & BP_DEVICE_CAP_FP64, 0u) << "BACKPLANE_OPENCL_NO_FP64 left the fp64 capability";

  for (const char* op : {"exp", "add.Tensor"}) {
    SCOPED_TRACE(op);
    const bool binary = std::string(op) == "add.Tensor";
    bp_tensor_t* x = F64(dev_, kX);
    std::vector<bp_value_t> args = {T(x)};
    if (binary) args.push_back(T(x));
    // Strict mode words why the backend's kernel is not used: its mask (a
    // kernel that declined at run time would have been offered the call,
    // after the core allocated its output). Changing strict mode makes a
    // plan stale, so each mode gets its own plan.
    ASSERT_EQ(bp_context_set_strict_fallback(ctx_, 1), BP_STATUS_OK);
    bp_call_plan_t* strict_plan = Prepare(op, args);
    ASSERT_NE(strict_plan, nullptr);
    Run(strict_plan, args, BP_STATUS_FAILED_PRECONDITION);
    EXPECT_THAT(LastError(), HasSubstr("for compute dtype float64 (its kernel takes "));
    ASSERT_EQ(bp_context_set_strict_fallback(ctx_, 0), BP_STATUS_OK);

    // The plan's route is decided from the mask at prepare time
    // (bp_plan_info shows it), and the call takes it (counts below).
    bp_call_plan_t* plan = Prepare(op, args);
    ASSERT_NE(plan, nullptr);
    EXPECT_EQ(RouteOf(plan), BP_PLAN_ROUTE_HOST_FALLBACK);
    bp_tensor_t* got = Run(plan, args);
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(bp_tensor_device(got).backend, backend_) << "the fallback's result lives on the call's device";
    EXPECT_EQ(Native(op), 0u);
    EXPECT_EQ(Fallback(op), 1u);

    bp_tensor_t* cx = F64(kCpu, kX);
    bp_tensor_t* want = Call(op, binary ? std::vector<bp_value_t>{T(cx), T(cx)} : std::vector<bp_value_t>{T(cx)});
    ASSERT_NE(want, nullptr);
    EXPECT_EQ(ReadF64(got), ReadF64(want));
  }
}

TEST_F(OpenclDtypeMask, DeclaredDtypeIsNative) {
  Load(/*no_fp64=*/false);
  if (IsSkipped() || HasFatalFailure()) return;
  bp_tensor_t* x = F32(dev_, {6}, {-1.5f, -0.25f, 0.f, 0.5f, 2.f, 3.25f});
  std::vector<bp_value_t> args = {T(x)};
  bp_call_plan_t* plan = Prepare("exp", args);
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(RouteOf(plan), BP_PLAN_ROUTE_NATIVE);
  bp_tensor_t* got = Run(plan, args);
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(Native("exp"), 1u);
  EXPECT_EQ(Fallback("exp"), 0u);
  const std::vector<float> r = Read(got);
  for (size_t i = 0; i < kX.size(); ++i) EXPECT_NEAR(r[i], std::exp(kX[i]), 1e-5 * std::exp(kX[i])) << i;
}

}  // namespace
}  // namespace bptest
