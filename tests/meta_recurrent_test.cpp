// Meta functions of lstm_layer and gru_layer: output sizes for every
// direction, and the messages bad input gets (operator, argument, expected, got).
#include <gtest/gtest.h>

#include "meta_test_util.h"

namespace bp::core {
namespace {

using namespace metatest;  // NOLINT: test helpers

const std::vector<const char*> kLstmNames = {"input", "h0", "c0", "w_ih", "w_hh", "bias", "direction"};
const std::vector<const char*> kGruNames = {"input",    "h0", "w_ih", "w_hh", "bias", "direction",
                                            "linear_before_reset"};

Result Lstm(const Geometry& x, const Geometry& h0, const Geometry& c0, const Geometry& wih, const Geometry& whh,
            MetaArg bias, int64_t direction) {
  return Infer("lstm_layer", "lstm_layer", kLstmNames, {A(x), A(h0), A(c0), A(wih), A(whh), bias, I(direction)});
}

TEST(LstmLayerTest, OutputSizesForEachDirection) {
  // T 5, B 3, I 4, H 6.
  Result r = Lstm(T({5, 3, 4}), T({1, 3, 6}), T({1, 3, 6}), T({1, 24, 4}), T({1, 24, 6}), A(T({1, 48})), 0);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.plan.num_outputs, 3);
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{5, 3, 6}));
  EXPECT_EQ(Sizes(r.plan.outputs[1]), (std::vector<int64_t>{1, 3, 6}));
  EXPECT_EQ(Sizes(r.plan.outputs[2]), (std::vector<int64_t>{1, 3, 6}));
  EXPECT_TRUE(r.plan.no_output_alias);
  r = Lstm(T({5, 3, 4}), T({2, 3, 6}), T({2, 3, 6}), T({2, 24, 4}), T({2, 24, 6}), None(), 2);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{5, 3, 12}));
  EXPECT_EQ(Sizes(r.plan.outputs[2]), (std::vector<int64_t>{2, 3, 6}));
  r = Lstm(T({0, 3, 4}), T({1, 3, 6}), T({1, 3, 6}), T({1, 24, 4}), T({1, 24, 6}), None(), 1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{0, 3, 6}));
}

TEST(LstmLayerTest, Errors) {
  const Geometry x = T({5, 3, 4}), s1 = T({1, 3, 6}), wih = T({1, 24, 4}), whh = T({1, 24, 6});
  ExpectError(Lstm(x, s1, s1, wih, whh, None(), 3).status, BP_STATUS_INVALID_ARGUMENT,
              {"lstm_layer: argument 'direction'", "0 (forward), 1 (reverse) or 2 (bidirectional)", "got 3"});
  ExpectError(Lstm(T({5, 4}), s1, s1, wih, whh, None(), 0).status, BP_STATUS_INVALID_ARGUMENT,
              {"lstm_layer: argument 'input'", "3-D", "[5, 4]"});
  // Bidirectional needs D = 2 in every state and weight.
  ExpectError(Lstm(x, s1, s1, wih, whh, None(), 2).status, BP_STATUS_INVALID_ARGUMENT,
              {"lstm_layer: argument 'w_hh'", "expected sizes [2, 24, 6]", "got [1, 24, 6]"});
  ExpectError(Lstm(x, s1, s1, T({1, 24, 5}), whh, None(), 0).status, BP_STATUS_INVALID_ARGUMENT,
              {"lstm_layer: argument 'w_ih'", "[1, 24, 4]", "got [1, 24, 5]"});
  ExpectError(Lstm(x, T({1, 2, 6}), s1, wih, whh, None(), 0).status, BP_STATUS_INVALID_ARGUMENT,
              {"lstm_layer: argument 'h0'", "[1, 3, 6]", "got [1, 2, 6]"});
  ExpectError(Lstm(x, s1, T({1, 3, 5}), wih, whh, None(), 0).status, BP_STATUS_INVALID_ARGUMENT,
              {"lstm_layer: argument 'c0'", "[1, 3, 6]", "got [1, 3, 5]"});
  ExpectError(Lstm(x, s1, s1, wih, whh, A(T({1, 24})), 0).status, BP_STATUS_INVALID_ARGUMENT,
              {"lstm_layer: argument 'bias'", "[1, 48]", "got [1, 24]"});
  ExpectError(Lstm(x, s1, s1, wih, whh, A(T({1, 48}, D::kFloat64)), 0).status, BP_STATUS_INVALID_ARGUMENT,
              {"lstm_layer: argument 'bias'", "dtype float32", "got float64"});
  ExpectError(Lstm(x, s1, s1, wih, T({1, 24, 6, 1}), None(), 0).status, BP_STATUS_INVALID_ARGUMENT,
              {"lstm_layer: argument 'w_hh'", "3-D", "[1, 24, 6, 1]"});
}

TEST(GruLayerTest, OutputSizesAndErrors) {
  const Geometry x = T({4, 2, 3}), s2 = T({2, 2, 5}), wih = T({2, 15, 3}), whh = T({2, 15, 5});
  Result r = Infer("gru_layer", "gru_layer", kGruNames, {A(x), A(s2), A(wih), A(whh), A(T({2, 30})), I(2), B(true)});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.plan.num_outputs, 2);
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{4, 2, 10}));
  EXPECT_EQ(Sizes(r.plan.outputs[1]), (std::vector<int64_t>{2, 2, 5}));
  ExpectError(
      Infer("gru_layer", "gru_layer", kGruNames, {A(x), A(s2), A(wih), A(whh), A(T({2, 15})), I(2), B(false)}).status,
      BP_STATUS_INVALID_ARGUMENT, {"gru_layer: argument 'bias'", "[2, 30]", "got [2, 15]"});
  ExpectError(Infer("gru_layer", "gru_layer", kGruNames, {A(x), A(s2), A(wih), A(whh), None(), I(-1), B(false)}).status,
              BP_STATUS_INVALID_ARGUMENT, {"gru_layer: argument 'direction'", "got -1"});
  ExpectError(Infer("gru_layer", "gru_layer", kGruNames,
                    {A(x), A(s2), A(T({2, 15, 3}, D::kFloat64)), A(whh), None(), I(2), B(false)})
                  .status,
              BP_STATUS_INVALID_ARGUMENT, {"gru_layer: argument 'w_ih'", "dtype float32", "got float64"});
  ExpectError(
      Infer("gru_layer", "gru_layer", kGruNames, {A(x), A(s2), A(wih), A(whh), None(), I(2), S("yes")}).status,
      BP_STATUS_INVALID_ARGUMENT, {"gru_layer: argument 'linear_before_reset'", "expected a bool"});
}

}  // namespace
}  // namespace bp::core
