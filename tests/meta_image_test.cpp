// Meta functions, part 3: operators grown for real networks (upsampling,
// transposed convolution, index_select, topk): output sizes, the arguments handed to kernels, and the
// messages bad input gets.
#include <gtest/gtest.h>

#include "meta_test_util.h"

namespace bp::core {
namespace {

using namespace metatest;  // NOLINT: test helpers

const std::vector<const char*> kNearestNames = {"self", "output_size", "scales_h", "scales_w"};
const std::vector<const char*> kBilinearNames = {"self", "output_size", "align_corners", "scales_h", "scales_w"};

TEST(UpsampleTest, OutputSizesAndRewrittenSize) {
  std::vector<int64_t> size = {7, 9}, one = {5};
  Result r = Infer("upsample2d", "upsample_nearest2d", kNearestNames, {A(T({2, 3, 4, 5})), L(size), None(), None()});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{2, 3, 7, 9}));
  // One int is used for both dims and reaches the kernel as two.
  r = Infer("upsample2d", "upsample_bilinear2d", kBilinearNames,
            {A(T({0, 3, 4, 5}, D::kFloat64)), L(one), B(true), F(1.5), None()});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{0, 3, 5, 5}));
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kFloat64);
  EXPECT_EQ(std::vector<int64_t>(r.plan.rewritten[1].ints, r.plan.rewritten[1].ints + 2), (std::vector<int64_t>{5, 5}));
}

TEST(UpsampleTest, Errors) {
  std::vector<int64_t> size = {7, 9}, zero = {0, 3}, three = {1, 2, 3};
  ExpectError(Infer("upsample2d", "upsample_nearest2d", kNearestNames, {A(T({3, 4, 5})), L(size)}).status,
              BP_STATUS_INVALID_ARGUMENT, {"upsample_nearest2d: argument 'self'", "[N, C, H, W]", "[3, 4, 5]"});
  ExpectError(Infer("upsample2d", "upsample_nearest2d", kNearestNames, {A(T({1, 2, 0, 5})), L(size)}).status,
              BP_STATUS_INVALID_ARGUMENT, {"argument 'self'", "non-zero"});
  ExpectError(Infer("upsample2d", "upsample_nearest2d", kNearestNames, {A(T({1, 2, 3, 5})), L(zero)}).status,
              BP_STATUS_INVALID_ARGUMENT, {"argument 'output_size'", "positive", "[0, 3]"});
  ExpectError(
      Infer("upsample2d", "upsample_bilinear2d", kBilinearNames, {A(T({1, 2, 3, 5})), L(three), B(false)}).status,
      BP_STATUS_INVALID_ARGUMENT, {"argument 'output_size'", "two ints", "[1, 2, 3]"});
}

const std::vector<const char*> kConvFusedNames = {"input",  "weight",   "bias",       "stride", "padding", "dilation",
                                                  "groups", "residual", "activation", "alpha",  "beta"};
const std::vector<const char*> kConv2dNames = {"input",   "weight",   "bias",  "stride",
                                               "padding", "dilation", "groups"};

TEST(Conv2dFusedTest, SameOutputAsConv2dAndItsOwnErrors) {
  std::vector<int64_t> s2 = {2}, p1 = {1}, d1 = {1};
  const Geometry x = T({2, 4, 9, 8}), w = T({6, 2, 3, 3}), res = T({2, 6, 5, 4}), bad = T({2, 6, 5, 5});
  Result c = Infer("conv2d", "conv2d", kConv2dNames, {A(x), A(w), None(), L(s2), L(p1), L(d1), I(2)});
  Result f = Infer("conv2d_fused", "conv2d_fused", kConvFusedNames,
                   {A(x), A(w), None(), L(s2), L(p1), L(d1), I(2), A(res), S("relu"), F(0), F(0)});
  ASSERT_TRUE(c.status.ok()) << c.status.message();
  ASSERT_TRUE(f.status.ok()) << f.status.message();
  EXPECT_EQ(Sizes(f.plan.outputs[0]), Sizes(c.plan.outputs[0]));
  EXPECT_EQ(Sizes(f.plan.outputs[0]), (std::vector<int64_t>{2, 6, 5, 4}));
  // conv2d's own checks run, named after conv2d_fused.
  ExpectError(Infer("conv2d_fused", "conv2d_fused", kConvFusedNames,
                    {A(T({1, 3, 9, 8})), A(w), None(), L(s2), L(p1), L(d1), I(2), None(), S("none"), F(0), F(0)})
                  .status,
              BP_STATUS_INVALID_ARGUMENT, {"conv2d_fused: argument 'input'", "channels"});
  ExpectError(Infer("conv2d_fused", "conv2d_fused", kConvFusedNames,
                    {A(x), A(w), None(), L(s2), L(p1), L(d1), I(2), A(bad), S("relu"), F(0), F(0)})
                  .status,
              BP_STATUS_INVALID_ARGUMENT, {"conv2d_fused: argument 'residual'", "[2, 6, 5, 4]", "[2, 6, 5, 5]"});
  ExpectError(Infer("conv2d_fused", "conv2d_fused", kConvFusedNames,
                    {A(x), A(w), None(), L(s2), L(p1), L(d1), I(2), None(), S("tanh"), F(0), F(0)})
                  .status,
              BP_STATUS_INVALID_ARGUMENT,
              {"conv2d_fused: argument 'activation'", "expected one of 'none', 'relu'", "'leaky_relu'", "got 'tanh'"});
}

const std::vector<const char*> kConvTNames = {"input",   "weight",         "bias",   "stride",
                                              "padding", "output_padding", "groups", "dilation"};

TEST(ConvTranspose2dTest, OutputSizesAndErrors) {
  std::vector<int64_t> s2 = {2}, p1 = {1}, op1 = {1}, d1 = {1}, op2 = {2};
  // (5 - 1) * 2 - 2 + 1 * (3 - 1) + 1 + 1 = 10; C_out = 3 * groups 2.
  Result r = Infer("conv_transpose2d", "conv_transpose2d.input", kConvTNames,
                   {A(T({2, 4, 5, 6})), A(T({4, 3, 3, 3})), None(), L(s2), L(p1), L(op1), I(2), L(d1)});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{2, 6, 10, 12}));
  r = Infer("conv_transpose2d", "conv_transpose2d.input", kConvTNames,
            {A(T({4, 5, 6})), A(T({4, 3, 3, 3})), None(), L(s2), L(p1), L(op1), I(1), L(d1)});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{3, 10, 12}));  // unbatched stays unbatched
  ExpectError(Infer("conv_transpose2d", "conv_transpose2d.input", kConvTNames,
                    {A(T({1, 4, 5, 6})), A(T({4, 3, 3, 3})), None(), L(s2), L(p1), L(op2), I(1), L(d1)})
                  .status,
              BP_STATUS_INVALID_ARGUMENT, {"argument 'output_padding'", "smaller than stride"});
  ExpectError(Infer("conv_transpose2d", "conv_transpose2d.input", kConvTNames,
                    {A(T({1, 2, 5, 6})), A(T({4, 3, 3, 3})), None(), L(s2), L(p1), L(op1), I(1), L(d1)})
                  .status,
              BP_STATUS_INVALID_ARGUMENT, {"argument 'weight'", "expected 2 input channels"});
}

TEST(IndexSelectTest, SizesAndErrors) {
  const std::vector<const char*> names = {"self", "dim", "index"};
  Result r = Infer("index_select", "index_select", names, {A(T({4, 5, 6})), I(-2), A(T({7}, D::kInt64))});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{4, 7, 6}));
  EXPECT_EQ(r.plan.rewritten[1].i, 1);  // the kernel gets the normalized dim
  ExpectError(Infer("index_select", "index_select", names, {A(T({4, 5})), I(0), A(T({2}, D::kFloat32))}).status,
              BP_STATUS_INVALID_ARGUMENT, {"argument 'index'", "int64 or int32", "float32"});
  ExpectError(Infer("index_select", "index_select", names, {A(T({4, 5})), I(0), A(T({2, 2}, D::kInt64))}).status,
              BP_STATUS_INVALID_ARGUMENT, {"argument 'index'", "0-D or 1-D"});
  ExpectError(Infer("index_select", "index_select", names, {A(T({4, 5})), I(2), A(T({2}, D::kInt64))}).status,
              BP_STATUS_OUT_OF_RANGE, {"argument 'dim'"});
}

TEST(TopkTest, TwoOutputsAndErrors) {
  const std::vector<const char*> names = {"self", "k", "dim", "largest", "sorted"};
  Result r = Infer("topk", "topk", names, {A(T({4, 9, 2}, D::kInt32)), I(3), I(-2), B(true), B(true)});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.plan.num_outputs, 2);
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{4, 3, 2}));
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kInt32);
  EXPECT_EQ(Sizes(r.plan.outputs[1]), (std::vector<int64_t>{4, 3, 2}));
  EXPECT_EQ(Dtype(r.plan.outputs[1]), D::kInt64);
  EXPECT_EQ(r.plan.rewritten[2].i, 1);
  ExpectError(Infer("topk", "topk", names, {A(T({4, 9})), I(10), I(1)}).status, BP_STATUS_INVALID_ARGUMENT,
              {"topk: argument 'k'", "[0, 9]", "got 10"});
  ExpectError(Infer("topk", "topk", names, {A(T({4, 9})), I(-1), I(1)}).status, BP_STATUS_INVALID_ARGUMENT,
              {"argument 'k'"});
}

}  // namespace
}  // namespace bp::core
