// Meta functions of gather, scatter.src and scatter_reduce.two: output sizes
// and dtype, the cast of src, and the messages bad input gets.
#include <gtest/gtest.h>

#include "meta_test_util.h"

namespace bp::core {
namespace {

using namespace metatest;  // NOLINT: test helpers

const std::vector<const char*> kGatherNames = {"self", "dim", "index"};
const std::vector<const char*> kScatterNames = {"self", "dim", "index", "src"};
const std::vector<const char*> kReduceNames = {"self", "dim", "index", "src", "reduce", "include_self"};

TEST(GatherTest, OutputHasIndexSizes) {
  Result r = Infer("gather", "gather", kGatherNames, {A(T({4, 5, 6})), I(-2), A(T({4, 9, 2}, D::kInt32))});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{4, 9, 2}));
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kFloat32);
  EXPECT_EQ(r.plan.rewritten[1].i, 1);  // dim normalized
}

TEST(GatherTest, Errors) {
  ExpectError(Infer("gather", "gather", kGatherNames, {A(T({4, 5})), I(0), A(T({2}, D::kInt64))}).status,
              BP_STATUS_INVALID_ARGUMENT, {"gather: argument 'index'", "expected 2 dims", "[2]"});
  ExpectError(Infer("gather", "gather", kGatherNames, {A(T({4, 5})), I(0), A(T({2, 6}, D::kInt64))}).status,
              BP_STATUS_INVALID_ARGUMENT, {"argument 'index'", "size(1) <= 5", "[4, 5]"});
  ExpectError(Infer("gather", "gather", kGatherNames, {A(T({4, 5})), I(0), A(T({2, 2}, D::kFloat32))}).status,
              BP_STATUS_INVALID_ARGUMENT, {"argument 'index'", "int64 or int32", "float32"});
  ExpectError(Infer("gather", "gather", kGatherNames, {A(T({4, 5})), I(2), A(T({2, 2}, D::kInt64))}).status,
              BP_STATUS_OUT_OF_RANGE, {"argument 'dim'", "[-2, 1]", "got 2"});
}

TEST(ScatterTest, OutputHasSelfSizesAndSrcIsCast) {
  Result r = Infer("scatter", "scatter.src", kScatterNames,
                   {A(T({4, 5}, D::kFloat64)), I(0), A(T({2, 3}, D::kInt64)), A(T({3, 3}, D::kFloat32))});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kFloat64);
  EXPECT_EQ(DtypeFromDL(r.plan.cast_to[3]), D::kFloat64);
  r = Infer("scatter", "scatter_reduce.two", kReduceNames,
            {A(T({4, 5})), I(1), A(T({4, 7}, D::kInt64)), A(T({4, 7})), S("amax"), B(false)});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
}

TEST(ScatterTest, Errors) {
  ExpectError(
      Infer("scatter", "scatter.src", kScatterNames, {A(T({4, 5})), I(0), A(T({2, 3}, D::kInt64)), A(T({1, 3}))})
          .status,
      BP_STATUS_INVALID_ARGUMENT, {"scatter.src: argument 'index'", "size(0) <= 1", "'src' [1, 3]"});
  ExpectError(
      Infer("scatter", "scatter.src", kScatterNames, {A(T({4, 5})), I(0), A(T({2, 3}, D::kInt64)), A(T({3}))}).status,
      BP_STATUS_INVALID_ARGUMENT, {"argument 'src'", "expected 2 dims"});
  ExpectError(Infer("scatter", "scatter.src", kScatterNames,
                    {A(T({4, 5}, D::kInt32)), I(0), A(T({2, 3}, D::kInt64)), A(T({2, 3}))})
                  .status,
              BP_STATUS_INVALID_ARGUMENT, {"argument 'src'", "float32", "cannot be cast", "int32"});
  ExpectError(Infer("scatter", "scatter_reduce.two", kReduceNames,
                    {A(T({4, 5})), I(0), A(T({2, 3}, D::kInt64)), A(T({2, 3})), S("mean"), B(true)})
                  .status,
              BP_STATUS_INVALID_ARGUMENT, {"argument 'reduce'", "'sum', 'prod', 'amax' or 'amin'", "'mean'"});
}

}  // namespace
}  // namespace bp::core
