// Meta function of scaled_dot_product_attention: output sizes with batch
// broadcasting, the full-rank views the kernel gets, and the messages bad
// input gets (each naming the operator and the argument).
#include <gtest/gtest.h>

#include "meta_test_util.h"

namespace bp::core {
namespace {

using namespace metatest;  // NOLINT: test helpers

const std::vector<const char*> kNames = {"query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale"};
constexpr const char* kOp = "scaled_dot_product_attention";

Result Sdpa(const Geometry& q, const Geometry& k, const Geometry& v, MetaArg mask = None(), double dropout = 0.0,
            bool causal = false, MetaArg scale = None()) {
  return Infer("attention", kOp, kNames, {A(q), A(k), A(v), mask, F(dropout), B(causal), scale});
}

TEST(AttentionMetaTest, OutputSizesAndBroadcastViews) {
  const Geometry q = T({2, 3, 4, 8}), k = T({3, 6, 8}), v = T({1, 3, 6, 5}), m = T({4, 6}, D::kBool);
  Result r = Sdpa(q, k, v, A(m), 0.0, false, F(0.5));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{2, 3, 4, 5}));
  EXPECT_TRUE(r.plan.no_output_alias);
  // The bool mask is no compute dtype: the operator's dtype claims skip it.
  EXPECT_EQ(r.plan.own_dtype_args, 1u << 3);
  // The kernel sees every tensor with the output's batch dims, broadcast ones with stride 0.
  const MetaFunctions* meta = FindMetaFunctions("attention");
  ASSERT_NE(meta, nullptr);
  std::vector<MetaArg> args = {A(q), A(k), A(v), A(m), F(0.0), B(false), F(0.5)};
  MetaCallInfo info{kOp, kNames.data(), static_cast<int32_t>(kNames.size())};
  KernelViews views;
  ASSERT_TRUE(meta->prepare(info, args.data(), r.plan, r.plan.outputs, &views).ok());
  EXPECT_EQ(Sizes(views.args[1]), (std::vector<int64_t>{2, 3, 6, 8}));
  EXPECT_EQ(Strides(views.args[1])[0], 0);
  EXPECT_EQ(Sizes(views.args[2]), (std::vector<int64_t>{2, 3, 6, 5}));
  EXPECT_EQ(Strides(views.args[2])[0], 0);
  EXPECT_EQ(Sizes(views.args[3]), (std::vector<int64_t>{2, 3, 4, 6}));
  EXPECT_EQ(Strides(views.args[3]), (std::vector<int64_t>{0, 0, 6, 1}));
  // 2-D inputs and a float mask of query's dtype.
  r = Sdpa(T({5, 4}, D::kFloat64), T({7, 4}, D::kFloat64), T({7, 3}, D::kFloat64), A(T({5, 7}, D::kFloat64)));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{5, 3}));
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kFloat64);
}

TEST(AttentionMetaTest, Errors) {
  const Geometry q = T({2, 3, 4}), k = T({2, 5, 4}), v = T({2, 5, 6});
  ExpectError(Sdpa(q, k, v, None(), 0.1).status, BP_STATUS_INVALID_ARGUMENT,
              {"scaled_dot_product_attention: argument 'dropout_p'", "expected 0.0", "0.1"});
  ExpectError(Sdpa(q, k, v, A(T({3, 5}, D::kBool)), 0.0, true).status, BP_STATUS_INVALID_ARGUMENT,
              {"argument 'is_causal'", "expected False when 'attn_mask' is given"});
  ExpectError(Sdpa(q, T({2, 5, 3}), v).status, BP_STATUS_INVALID_ARGUMENT,
              {"scaled_dot_product_attention: argument 'key'", "expected size 4", "got 3"});
  ExpectError(Sdpa(q, k, T({2, 6, 6})).status, BP_STATUS_INVALID_ARGUMENT,
              {"argument 'value'", "expected size 5", "got 6"});
  ExpectError(Sdpa(T({4}), k, v).status, BP_STATUS_INVALID_ARGUMENT, {"argument 'query'", "rank >= 2", "[4]"});
  ExpectError(Sdpa(q, T({3, 5, 4}), v).status, BP_STATUS_INVALID_ARGUMENT, {"cannot broadcast"});
  ExpectError(Sdpa(q, k, v, A(T({3, 4}, D::kBool))).status, BP_STATUS_INVALID_ARGUMENT,
              {"argument 'attn_mask'", "[3, 4]", "[2, 3, 5]"});
  // A mask that would grow the scores' batch.
  ExpectError(Sdpa(q, k, v, A(T({4, 2, 3, 5}, D::kBool))).status, BP_STATUS_INVALID_ARGUMENT,
              {"argument 'attn_mask'", "cannot broadcast to the scores' sizes"});
  ExpectError(Sdpa(q, k, v, A(T({3, 5}, D::kInt32))).status, BP_STATUS_INVALID_ARGUMENT,
              {"argument 'attn_mask'", "expected dtype bool or float32", "got int32"});
  ExpectError(Sdpa(q, T({2, 5, 4}, D::kFloat64), v).status, BP_STATUS_INVALID_ARGUMENT,
              {"argument 'key'", "expected dtype float32", "got float64"});
  ExpectError(Sdpa(T({2, 3, 4}, D::kInt64), T({2, 5, 4}, D::kInt64), T({2, 5, 6}, D::kInt64)).status,
              BP_STATUS_INVALID_ARGUMENT, {"argument 'query'", "floating dtype", "int64"});
}

}  // namespace
}  // namespace bp::core
