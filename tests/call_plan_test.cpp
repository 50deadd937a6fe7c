// Call plans (bp_op_prepare / bp_plan_call, ABI 1.3): prepare, call,
// release; arguments that do not fit the signature; staleness per context
// (a plugin load in one context leaves another's plans alone); a destroyed
// context; results identical to bp_op_call for each kind of operator.
#include <backplane/backplane.hpp>
#include <string>
#include <vector>

#include "bp_test_util.h"
#include "context.h"  // plan_builds: how many plans the context prepared

using namespace bptest;
using ::testing::HasSubstr;

namespace {

bp_arg_signature_t TensorSig(DLDataType dtype, bp_device_t device, int32_t ndim) {
  bp_arg_signature_t s{};
  s.kind = BP_VALUE_TENSOR;
  s.ndim = ndim;
  s.dtype = dtype;
  s.device = device;
  return s;
}

bp_call_signature_t Signature(const bp_arg_signature_t* args, int32_t num_args) {
  bp_call_signature_t s{};
  s.struct_size = sizeof(s);
  s.num_args = num_args;
  s.args = args;
  return s;
}

class CallPlanTest : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    ASSERT_EQ(bp_op_register_kernel(ctx_, Op("add.Tensor"), 0, HostAddF32, nullptr, 0, nullptr), BP_STATUS_OK);
  }
  void TearDown() override {
    for (bp_call_plan_t* p : plans_) bp_plan_release(p);
    ContextTest::TearDown();
  }
  bp_call_plan_t* Prepare(const char* op, const std::vector<bp_arg_signature_t>& sig) {
    const bp_call_signature_t s = Signature(sig.data(), static_cast<int32_t>(sig.size()));
    bp_call_plan_t* plan = nullptr;
    EXPECT_EQ(bp_op_prepare(ctx_, Op(op), &s, &plan), BP_STATUS_OK) << LastError();
    if (plan != nullptr) plans_.push_back(plan);
    return plan;
  }
  bp_plan_info_t Info(const bp_call_plan_t* plan) {
    bp_plan_info_t info{};
    info.struct_size = sizeof(info);
    EXPECT_EQ(bp_plan_info(plan, &info), BP_STATUS_OK) << LastError();
    return info;
  }
  uint64_t Builds(bp_context_t* ctx) { return ctx->plan_builds.load(); }
  std::vector<bp_call_plan_t*> plans_;
};

TEST_F(CallPlanTest, PrepareCallReleaseRunsTheNativeKernel) {
  bp_call_plan_t* plan = Prepare("add.Tensor", {TensorSig(kF32, kCpu, 1), TensorSig(kF32, kCpu, 1)});
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(Info(plan).route, BP_PLAN_ROUTE_NATIVE);
  EXPECT_STREQ(Info(plan).message, "");
  // Sizes are free: the same plan serves [2] and [3] (and broadcasting [1]).
  bp_tensor_t* a = F32(kCpu, {2}, {1, 2});
  bp_tensor_t* b = F32(kCpu, {2}, {10, 20});
  bp_value_t args[2] = {T(a), T(b)};
  bp_tensor_t* r = nullptr;
  ASSERT_EQ(bp_plan_call(plan, args, 2, &r, 1), BP_STATUS_OK) << LastError();
  EXPECT_EQ(Read(Own(r)), (std::vector<float>{11, 22}));
  bp_tensor_t* c = F32(kCpu, {3}, {1, 2, 3});
  bp_tensor_t* d = F32(kCpu, {1}, {5});
  bp_value_t args2[2] = {T(c), T(d)};
  ASSERT_EQ(bp_plan_call(plan, args2, 2, &r, 1), BP_STATUS_OK) << LastError();
  EXPECT_EQ(Read(Own(r)), (std::vector<float>{6, 7, 8}));
  bp_plan_release(nullptr);  // accepted
}

TEST_F(CallPlanTest, PrepareForArgsMatchesTheArguments) {
  bp_tensor_t* a = F32(kCpu, {2}, {1, 2});
  bp_value_t args[2] = {T(a), T(a)};
  bp_call_plan_t* plan = nullptr;
  ASSERT_EQ(bp_op_prepare_for_args(ctx_, Op("add.Tensor"), args, 2, &plan), BP_STATUS_OK) << LastError();
  plans_.push_back(plan);
  bp_tensor_t* r = nullptr;
  ASSERT_EQ(bp_plan_call(plan, args, 2, &r, 1), BP_STATUS_OK) << LastError();
  EXPECT_EQ(Read(Own(r)), (std::vector<float>{2, 4}));
  bp_value_t null_tensor[2] = {T(nullptr), T(a)};
  bp_call_plan_t* none = nullptr;
  EXPECT_EQ(bp_op_prepare_for_args(ctx_, Op("add.Tensor"), null_tensor, 2, &none), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(none, nullptr);
}

TEST_F(CallPlanTest, ArgumentsThatDoNotFitAreRefusedNamingTheArgument) {
  bp_call_plan_t* plan = Prepare("add.Tensor", {TensorSig(kF32, kCpu, 1), TensorSig(kF32, kCpu, 1)});
  ASSERT_NE(plan, nullptr);
  bp_tensor_t* a = F32(kCpu, {2}, {1, 2});
  bp_tensor_t* m = F32(kCpu, {1, 2}, {1, 2});
  bp_tensor_t* f64 = nullptr;
  const int64_t two = 2;
  const double data[2] = {1, 2};
  ASSERT_EQ(bp_tensor_from_host(ctx_, kCpu, 1, &two, kF64, data, sizeof(data), &f64), BP_STATUS_OK);
  Own(f64);
  bp_tensor_t* r = nullptr;
  {  // dtype
    bp_value_t args[2] = {T(a), T(f64)};
    EXPECT_EQ(bp_plan_call(plan, args, 2, &r, 1), BP_STATUS_INVALID_ARGUMENT);
    EXPECT_THAT(LastError(), HasSubstr("add.Tensor: argument 'other' does not fit the plan"));
    EXPECT_THAT(LastError(), HasSubstr("expected Tensor float32 of rank 1 on cpu:0, got Tensor float64"));
  }
  {  // rank
    bp_value_t args[2] = {T(m), T(a)};
    EXPECT_EQ(bp_plan_call(plan, args, 2, &r, 1), BP_STATUS_INVALID_ARGUMENT);
    EXPECT_THAT(LastError(), HasSubstr("argument 'self' does not fit the plan"));
    EXPECT_THAT(LastError(), HasSubstr("got Tensor float32 of rank 2"));
  }
  {  // kind
    bp_value_t args[2] = {T(a), I(3)};
    EXPECT_EQ(bp_plan_call(plan, args, 2, &r, 1), BP_STATUS_INVALID_ARGUMENT);
    EXPECT_THAT(LastError(), HasSubstr("argument 'other' does not fit the plan: expected Tensor float32"));
    EXPECT_THAT(LastError(), HasSubstr("got int"));
  }
  {  // count
    bp_value_t args[3] = {T(a), T(a), I(1)};
    EXPECT_EQ(bp_plan_call(plan, args, 3, &r, 1), BP_STATUS_INVALID_ARGUMENT);
    EXPECT_THAT(LastError(), HasSubstr("prepared for 2 arguments, got 3"));
  }
  EXPECT_EQ(r, nullptr);
  EXPECT_EQ(bp_plan_call(nullptr, nullptr, 0, nullptr, 0), BP_STATUS_INVALID_ARGUMENT);
}

TEST_F(CallPlanTest, BadSignaturesAreRefusedAtPrepare) {
  bp_arg_signature_t sig[2] = {TensorSig(kF32, kCpu, 1), TensorSig(kF32, kCpu, 1)};
  bp_call_signature_t s = Signature(sig, 9);
  bp_call_plan_t* plan = nullptr;
  EXPECT_EQ(bp_op_prepare(ctx_, Op("add.Tensor"), &s, &plan), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("takes at most 3"));
  s.num_args = 2;
  sig[1].ndim = 99;
  EXPECT_EQ(bp_op_prepare(ctx_, Op("add.Tensor"), &s, &plan), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("argument 'other' is not a valid Tensor"));
  s.struct_size = 8;
  EXPECT_EQ(bp_op_prepare(ctx_, Op("add.Tensor"), &s, &plan), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("struct_size"));
  EXPECT_EQ(plan, nullptr);
}

TEST_F(CallPlanTest, ARouteThatCannotRunIsReportedAndItsErrorReturned) {
  // mul.Tensor has no kernel in this context (no CPU plugin loaded).
  bp_call_plan_t* plan = Prepare("mul.Tensor", {TensorSig(kF32, kCpu, 1), TensorSig(kF32, kCpu, 1)});
  ASSERT_NE(plan, nullptr);
  bp_plan_info_t info = Info(plan);
  EXPECT_EQ(info.route, BP_PLAN_ROUTE_ERROR);
  EXPECT_EQ(info.status, BP_STATUS_UNIMPLEMENTED);
  EXPECT_THAT(info.message, HasSubstr("mul.Tensor: not implemented for backend 'cpu'"));
  bp_tensor_t* a = F32(kCpu, {2}, {1, 2});
  bp_value_t args[2] = {T(a), T(a)};
  bp_tensor_t* r = nullptr;
  EXPECT_EQ(bp_plan_call(plan, args, 2, &r, 1), BP_STATUS_UNIMPLEMENTED);
  EXPECT_THAT(LastError(), HasSubstr("not implemented for backend 'cpu'"));
}

TEST_F(CallPlanTest, APluginLoadMakesOnlyThatContextsPlansStale) {
  bp_tensor_t* a = F32(kCpu, {2}, {1, 2});
  Call("add.Tensor", {T(a), T(a)});
  const uint64_t before = Builds(ctx_);
  Call("add.Tensor", {T(a), T(a)});
  EXPECT_EQ(Builds(ctx_), before) << "a repeated signature reuses the cached plan";
  bp_call_plan_t* plan = Prepare("add.Tensor", {TensorSig(kF32, kCpu, 1), TensorSig(kF32, kCpu, 1)});
  const uint64_t prepared = Builds(ctx_);

  // Another context loads a plugin: this context's plans stay.
  bp_context_t* other = nullptr;
  ASSERT_EQ(bp_context_create(nullptr, &other), BP_STATUS_OK) << LastError();
  bp_plugin_t* p = nullptr;
  ASSERT_EQ(bp_plugin_load(other, PluginPath("bp_testdev").c_str(), &p), BP_STATUS_OK) << LastError();
  Call("add.Tensor", {T(a), T(a)});
  EXPECT_EQ(Builds(ctx_), prepared);
  EXPECT_EQ(Info(plan).route, BP_PLAN_ROUTE_NATIVE);
  bp_value_t args[2] = {T(a), T(a)};
  bp_tensor_t* r = nullptr;
  ASSERT_EQ(bp_plan_call(plan, args, 2, &r, 1), BP_STATUS_OK) << LastError();
  Own(r);
  ASSERT_EQ(bp_plugin_unload(other, p), BP_STATUS_OK) << LastError();
  bp_context_destroy(other);

  // This context loads and unloads one: the explicit plan is stale (it
  // never runs a stale kernel), bp_op_call prepares a new one.
  bp_plugin_t* mine = nullptr;
  LoadTestdev(&mine);
  ASSERT_EQ(bp_plugin_unload(ctx_, mine), BP_STATUS_OK) << LastError();
  EXPECT_EQ(Info(plan).route, BP_PLAN_ROUTE_STALE);
  r = nullptr;
  EXPECT_EQ(bp_plan_call(plan, args, 2, &r, 1), BP_STATUS_FAILED_PRECONDITION);
  EXPECT_THAT(LastError(), HasSubstr("add.Tensor: the call plan is stale"));
  EXPECT_EQ(r, nullptr);
  EXPECT_EQ(Read(Call("add.Tensor", {T(a), T(a)})), (std::vector<float>{2, 4}));
  EXPECT_EQ(Builds(ctx_), prepared + 1);
}

TEST_F(CallPlanTest, ARegistrationMakesThePlanStale) {
  bp_call_plan_t* plan = Prepare("add.Tensor", {TensorSig(kF32, kCpu, 1), TensorSig(kF32, kCpu, 1)});
  bp_registration_t* reg = nullptr;
  ASSERT_EQ(bp_op_register_kernel(ctx_, Op("add.Tensor"), 0, HostMulF32, nullptr, BP_REGISTER_OVERRIDE, &reg),
            BP_STATUS_OK);
  EXPECT_EQ(Info(plan).route, BP_PLAN_ROUTE_STALE);
  bp_tensor_t* a = F32(kCpu, {2}, {3, 4});
  // bp_op_call follows the new kernel at once.
  EXPECT_EQ(Read(Call("add.Tensor", {T(a), T(a)})), (std::vector<float>{9, 16}));
  ASSERT_EQ(bp_registration_remove(ctx_, reg), BP_STATUS_OK);
  EXPECT_EQ(Read(Call("add.Tensor", {T(a), T(a)})), (std::vector<float>{6, 8}));
}

TEST_F(CallPlanTest, RoutesChangedInALoopKeepTheCacheBounded) {
  bp_tensor_t* a = F32(kCpu, {2}, {3, 4});
  for (int i = 0; i < 4200; ++i) {
    // Each strict-mode change makes the cached plans stale; the next call prepares one.
    ASSERT_EQ(bp_context_set_strict_fallback(ctx_, i % 2), BP_STATUS_OK);
    bp_value_t args[2] = {T(a), T(a)};
    ASSERT_EQ(bp_op_call(ctx_, Op("add.Tensor"), args, 2, nullptr, 0), BP_STATUS_OK) << LastError();
  }
  std::lock_guard<std::mutex> lock(ctx_->plans_mu);
  EXPECT_LE(ctx_->cached_plans.size(), 4096u);
  EXPECT_GE(Builds(ctx_), 4200u);
}

TEST_F(CallPlanTest, APlanOfADestroyedContextRefusesToRun) {
  bp_context_t* other = nullptr;
  ASSERT_EQ(bp_context_create(nullptr, &other), BP_STATUS_OK) << LastError();
  bp_op_t* add = nullptr;
  ASSERT_EQ(bp_op_find(other, "add.Tensor", &add), BP_STATUS_OK);
  bp_arg_signature_t sig[2] = {TensorSig(kF32, kCpu, 1), TensorSig(kF32, kCpu, 1)};
  const bp_call_signature_t s = Signature(sig, 2);
  bp_call_plan_t* plan = nullptr;
  ASSERT_EQ(bp_op_prepare(other, add, &s, &plan), BP_STATUS_OK) << LastError();
  bp_context_destroy(other);
  bp_tensor_t* a = F32(kCpu, {2}, {1, 2});
  bp_value_t args[2] = {T(a), T(a)};
  EXPECT_EQ(bp_plan_call(plan, args, 2, nullptr, 0), BP_STATUS_FAILED_PRECONDITION);
  EXPECT_THAT(LastError(), HasSubstr("context was destroyed"));
  EXPECT_EQ(Info(plan).route, BP_PLAN_ROUTE_STALE);
  bp_plan_release(plan);
}

TEST(CallPlanCppTest, PlanRunsAndRefreshesAfterAPluginLoad) {
  bp::Context cxx;
  const bp_op_t* add = cxx.op("add.Tensor");
  ASSERT_EQ(bp_op_register_kernel(cxx.get(), add, 0, HostAddF32, nullptr, 0, nullptr), BP_STATUS_OK);
  bp::Tensor a = bp::Tensor::from_vector(cxx, std::vector<float>{1, 2});
  const std::vector<bp_value_t> args = {T(a.get()), T(a.get())};
  bp::Plan plan(cxx, add, args);
  EXPECT_EQ(plan.info().route, BP_PLAN_ROUTE_NATIVE);
  EXPECT_EQ(plan.call(args)[0].to_host<float>(), (std::vector<float>{2, 4}));
  EXPECT_FALSE(plan.refresh());
  bp_plugin_t* p = cxx.load_plugin(PluginPath("bp_testdev"));
  try {
    plan.call(args);
    ADD_FAILURE() << "a stale plan ran";
  } catch (const bp::Error& e) {
    EXPECT_EQ(e.status(), BP_STATUS_FAILED_PRECONDITION);
  }
  EXPECT_TRUE(plan.refresh());
  EXPECT_EQ(plan.call(args)[0].to_host<float>(), (std::vector<float>{2, 4}));
  bp::Plan moved = std::move(plan);
  EXPECT_EQ(plan.get(), nullptr);
  EXPECT_EQ(moved.call(args)[0].to_host<float>(), (std::vector<float>{2, 4}));
  cxx.unload_plugin(p);
}

#ifdef BP_BUILD_PLUGIN_DIR
// The CPU plugin: a plan's results equal bp_op_call's for a pointwise op, a
// reduction, a view, an out= and an in-place variant.
class CallPlanCpuTest : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    const std::string cpu = std::string(BP_BUILD_PLUGIN_DIR) + "/libbackplane_cpu.so";
    struct stat sb;
    if (stat(cpu.c_str(), &sb) != 0) GTEST_SKIP() << "the CPU plugin is not built (" << cpu << ")";
    ASSERT_EQ(bp_plugin_load(ctx_, cpu.c_str(), nullptr), BP_STATUS_OK) << LastError();
  }
  // Runs `op` through a plan prepared for `args` and through bp_op_call, and
  // returns both first results' data.
  std::pair<std::vector<float>, std::vector<float>> Both(const char* op, std::vector<bp_value_t> args,
                                                         int32_t num_results = 1) {
    const int32_t n = static_cast<int32_t>(args.size());
    bp_call_plan_t* plan = nullptr;
    EXPECT_EQ(bp_op_prepare_for_args(ctx_, Op(op), args.data(), n, &plan), BP_STATUS_OK) << LastError();
    bp_tensor_t* r1 = nullptr;
    EXPECT_EQ(bp_plan_call(plan, args.data(), n, &r1, num_results), BP_STATUS_OK) << op << ": " << LastError();
    std::vector<float> first = Read(Own(r1));
    bp_plan_release(plan);
    bp_tensor_t* r2 = nullptr;
    EXPECT_EQ(bp_op_call(ctx_, Op(op), args.data(), n, &r2, num_results), BP_STATUS_OK) << op << ": " << LastError();
    return {first, Read(Own(r2))};
  }
};

TEST_F(CallPlanCpuTest, ResultsEqualBpOpCall) {
  bp_tensor_t* a = F32(kCpu, {2, 3}, {1, 2, 3, 4, 5, 6});
  bp_tensor_t* b = F32(kCpu, {3}, {10, 20, 30});
  auto add = Both("add.Tensor", {T(a), T(b)});
  EXPECT_EQ(add.first, (std::vector<float>{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ(add.first, add.second);
  auto sum = Both("sum.dim_IntList", {T(a), L({1})});
  EXPECT_EQ(sum.first, (std::vector<float>{6, 15}));
  EXPECT_EQ(sum.first, sum.second);
  auto view = Both("view", {T(a), L({3, 2})});
  EXPECT_EQ(view.first, (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(view.first, view.second);
  bp_tensor_t* out = F32(kCpu, {2, 3}, {0, 0, 0, 0, 0, 0});
  auto add_out = Both("add.out", {T(a), T(b), I(2), T(out)});
  EXPECT_EQ(add_out.first, (std::vector<float>{21, 42, 63, 24, 45, 66}));
  EXPECT_EQ(add_out.first, add_out.second);
  bp_tensor_t* self = F32(kCpu, {3}, {1, 2, 3});
  auto mul_ = Both("mul_.Tensor", {T(self), T(b)});
  // Two in-place calls in a row: the second multiplies the first's result.
  EXPECT_EQ(mul_.first, (std::vector<float>{10, 40, 90}));
  EXPECT_EQ(mul_.second, (std::vector<float>{100, 800, 2700}));
}
#endif  // BP_BUILD_PLUGIN_DIR

}  // namespace
