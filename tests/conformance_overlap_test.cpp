// bp-conformance's overlap and promotion samples (issue 23): every in-place
// and out= variant of a pointwise operator gets an exact-alias case that must
// pass and partial / internal overlap cases that must be refused; pow and
// mean get the promotion cases torch accepts.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "opdb.h"

namespace bpc {
namespace {

std::vector<Case> CasesOf(const std::string& op, DType d) {
  const OpClaim* claim = find_claim(op);
  EXPECT_NE(claim, nullptr) << op;
  if (claim == nullptr) return {};
  std::string why;
  return make_cases(*claim, d, 1, false, &why);
}

const Case* Find(const std::vector<Case>& cases, const std::string& desc_part) {
  for (const Case& c : cases) {
    if (c.sample.desc.find(desc_part) != std::string::npos) return &c;
  }
  return nullptr;
}

TEST(ConformanceOverlap, InPlaceBinaryHasAliasAndOverlapCases) {
  const std::vector<Case> cases = CasesOf("add_.Tensor", DType::kFloat32);
  const Case* same = Find(cases, "second input is self (exact alias)");
  ASSERT_NE(same, nullptr);
  EXPECT_FALSE(same->sample.expect_error);
  EXPECT_EQ(same->sample.written_arg, 0);
  EXPECT_EQ(same->sample.args[1].tensor.alias_of, 0);
  ASSERT_EQ(same->expected.outputs.size(), 1u);
  // self + alpha * self, computed by the reference from the aliased values.
  const double alpha = same->sample.args[2].kind == Arg::kDouble ? same->sample.args[2].d : 1.0;
  const std::vector<double>& x = same->sample.args[0].tensor.t.values;
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(same->expected.outputs[0].values[i], x[i] + alpha * x[i]);

  const Case* partial = Find(cases, "self transposed (partial overlap)");
  ASSERT_NE(partial, nullptr);
  EXPECT_TRUE(partial->sample.expect_error);
  EXPECT_EQ(partial->sample.args[1].tensor.alias_of, 0);
  EXPECT_EQ(partial->sample.args[1].tensor.layout, Layout::kTransposed);

  const Case* internal = Find(cases, "self is a broadcast view");
  ASSERT_NE(internal, nullptr);
  EXPECT_TRUE(internal->sample.expect_error);
  EXPECT_EQ(internal->sample.args[0].tensor.layout, Layout::kExpanded);
}

TEST(ConformanceOverlap, OutVariantsHaveAliasAndOverlapCases) {
  for (const char* op : {"exp.out", "add.out", "eq.out"}) {
    SCOPED_TRACE(op);
    const DType d = std::string(op) == "eq.out" ? DType::kBool : DType::kFloat32;
    const std::vector<Case> cases = CasesOf(op, d);
    const Case* same = Find(cases, "out is self (exact alias)");
    ASSERT_NE(same, nullptr);
    EXPECT_FALSE(same->sample.expect_error);
    EXPECT_EQ(same->sample.written_arg, static_cast<int>(same->sample.args.size()) - 1);
    EXPECT_EQ(same->sample.args.back().kind, Arg::kOut);
    EXPECT_EQ(same->sample.args.back().tensor.alias_of, 0);
    const Case* partial = Find(cases, "out is self transposed (partial overlap)");
    ASSERT_NE(partial, nullptr);
    EXPECT_TRUE(partial->sample.expect_error);
    const Case* internal = Find(cases, "out is a broadcast view");
    ASSERT_NE(internal, nullptr);
    EXPECT_TRUE(internal->sample.expect_error);
  }
}

// A result that cannot be written back (exp of int32 is float32) gets no alias case.
TEST(ConformanceOverlap, NoAliasCaseWhereTheResultHasAnotherDtype) {
  const std::vector<Case> exp_int = CasesOf("exp.out", DType::kInt32);
  EXPECT_EQ(Find(exp_int, "exact alias"), nullptr);
  const std::vector<Case> functional = CasesOf("add.Tensor", DType::kFloat32);
  EXPECT_EQ(Find(functional, "overlap"), nullptr);  // nothing written
}

TEST(ConformancePromotion, PowOfBoolBaseAndInt64Exponent) {
  const std::vector<Case> cases = CasesOf("pow.Tensor_Tensor", DType::kInt64);
  const Case* c = Find(cases, "promotion: bool base");
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->expected.outputs.size(), 1u);
  EXPECT_EQ(c->expected.outputs[0].dtype, DType::kInt64);
  EXPECT_EQ(c->expected.outputs[0].values, (std::vector<double>{1, 0, 1, 1}));
}

TEST(ConformancePromotion, MeanOfInt32WithFloat32Dtype) {
  const std::vector<Case> cases = CasesOf("mean.dim", DType::kFloat32);
  const Case* c = Find(cases, "promotion: int32 input, dtype=float32");
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->sample.expect_error);
  ASSERT_EQ(c->expected.outputs.size(), 1u);
  EXPECT_EQ(c->expected.outputs[0].dtype, DType::kFloat32);
  const HostTensor& in = c->sample.args[0].tensor.t;
  ASSERT_EQ(in.sizes, (std::vector<int64_t>{3, 5}));
  double row0 = 0;
  for (int j = 0; j < 5; ++j) row0 += in.values[static_cast<size_t>(j)];
  EXPECT_DOUBLE_EQ(c->expected.outputs[0].values[0], row0 / 5);
}

}  // namespace
}  // namespace bpc
