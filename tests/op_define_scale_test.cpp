// Defining many custom operators (issue 23 item 11): each definition costs
// amortized O(1), so 50,000 of them take about a second, where the scan of
// every operator per definition made it minutes. No time is asserted; a
// quadratic regression shows as this test running into ctest's timeout.
#include <string>

#include "bp_test_util.h"

using namespace bptest;

namespace {

bp_status_t SameShapeMeta(const bp_meta_call_t* call) {
  const DLTensor* x = call->args[0].u.tensor;
  call->out_specs[0].dtype = x->dtype;
  call->out_specs[0].ndim = x->ndim;
  for (int32_t i = 0; i < x->ndim; ++i) call->out_specs[0].sizes[i] = x->shape[i];
  return BP_STATUS_OK;
}

bp_status_t CopyCpu(const bp_kernel_call_t* call) {
  const DLTensor* x = call->args[0].u.tensor;
  const DLTensor* o = call->outputs[0];
  for (int64_t i = 0, n = Numel(o); i < n; ++i) *HostElem<float>(o, i) = *HostElem<float>(x, i);
  return BP_STATUS_OK;
}

TEST(OpDefineScaleTest, FiftyThousandDefinitionsAllListedFindableAndCallable) {
  bp_context_t* ctx = nullptr;
  ASSERT_EQ(bp_context_create(nullptr, &ctx), BP_STATUS_OK);
  int32_t core = 0;
  ASSERT_EQ(bp_op_count(ctx, &core), BP_STATUS_OK);
  constexpr int kOps = 50000;
  for (int i = 0; i < kOps; ++i) {
    const std::string schema = "scale::op" + std::to_string(i) + "(Tensor self) -> Tensor";
    ASSERT_EQ(bp_op_define(ctx, schema.c_str(), CopyCpu, nullptr, SameShapeMeta, nullptr, nullptr), BP_STATUS_OK)
        << schema << ": " << LastError();
  }
  int32_t n = 0;
  ASSERT_EQ(bp_op_count(ctx, &n), BP_STATUS_OK);
  EXPECT_EQ(n, core + kOps);
  bp_op_t* last = nullptr;
  ASSERT_EQ(bp_op_find(ctx, ("scale::op" + std::to_string(kOps - 1)).c_str(), &last), BP_STATUS_OK) << LastError();
  // A redefinition is still refused.
  EXPECT_EQ(bp_op_define(ctx, "scale::op7(Tensor self) -> Tensor", CopyCpu, nullptr, SameShapeMeta, nullptr, nullptr),
            BP_STATUS_ALREADY_EXISTS);
  // The last one runs.
  const float data[2] = {3, 4};
  const int64_t size = 2;
  bp_tensor_t* x = nullptr;
  ASSERT_EQ(bp_tensor_from_host(ctx, kCpu, 1, &size, kF32, data, sizeof(data), &x), BP_STATUS_OK);
  bp_value_t args[] = {T(x)};
  bp_tensor_t* y = nullptr;
  ASSERT_EQ(bp_op_call(ctx, last, args, 1, &y, 1), BP_STATUS_OK) << LastError();
  float out[2] = {};
  ASSERT_EQ(bp_tensor_to_host(y, out, sizeof(out)), BP_STATUS_OK);
  EXPECT_EQ(out[1], 4.0f);
  bp_tensor_release(x);
  bp_tensor_release(y);
  bp_context_destroy(ctx);
}

}  // namespace
