// Meta functions, part 3: the image operators grown for real networks
// (upsampling): output sizes, the arguments handed to kernels, and the
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
  EXPECT_EQ(std::vector<int64_t>(r.plan.rewritten[1].ints, r.plan.rewritten[1].ints + 2),
            (std::vector<int64_t>{5, 5}));
}

TEST(UpsampleTest, Errors) {
  std::vector<int64_t> size = {7, 9}, zero = {0, 3}, three = {1, 2, 3};
  ExpectError(Infer("upsample2d", "upsample_nearest2d", kNearestNames, {A(T({3, 4, 5})), L(size)}).status,
              BP_STATUS_INVALID_ARGUMENT, {"upsample_nearest2d: argument 'self'", "[N, C, H, W]", "[3, 4, 5]"});
  ExpectError(Infer("upsample2d", "upsample_nearest2d", kNearestNames, {A(T({1, 2, 0, 5})), L(size)}).status,
              BP_STATUS_INVALID_ARGUMENT, {"argument 'self'", "non-zero"});
  ExpectError(Infer("upsample2d", "upsample_nearest2d", kNearestNames, {A(T({1, 2, 3, 5})), L(zero)}).status,
              BP_STATUS_INVALID_ARGUMENT, {"argument 'output_size'", "positive", "[0, 3]"});
  ExpectError(Infer("upsample2d", "upsample_bilinear2d", kBilinearNames, {A(T({1, 2, 3, 5})), L(three), B(false)}).status,
              BP_STATUS_INVALID_ARGUMENT, {"argument 'output_size'", "two ints", "[1, 2, 3]"});
}

}  // namespace
}  // namespace bp::core
