// Meta functions of quantize_linear, dequantize_linear, matmul_integer
// (linalg.cpp) and conv_integer (conv_integer.cpp): output dtype and sizes, the axis handed to the kernel (-1
// per tensor, else normalized), and the messages bad input gets (operator,
// argument, expected, got).
#include <gtest/gtest.h>

#include "meta_test_util.h"

namespace bp::core {
namespace {

using namespace metatest;  // NOLINT: test helpers

const std::vector<const char*> kQNames = {"x", "scale", "zero_point", "axis", "dtype"};
const std::vector<const char*> kDqNames = {"x", "scale", "zero_point", "axis"};

Result Q(const Geometry& x, const Geometry& scale, MetaArg zp, int64_t axis, MetaArg dtype = None()) {
  return Infer("quantize_linear", "quantize_linear", kQNames, {A(x), A(scale), zp, I(axis), dtype});
}
Result Dq(const Geometry& x, const Geometry& scale, MetaArg zp, int64_t axis) {
  return Infer("dequantize_linear", "dequantize_linear", kDqNames, {A(x), A(scale), zp, I(axis)});
}

TEST(QuantizeLinearTest, OutputDtypeFollowsZeroPointThenDtype) {
  Result r = Q(T({2, 3}), T({}), None(), 1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kUInt8);  // ONNX's default
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.plan.rewritten[3].i, -1);  // per tensor
  r = Q(T({2, 3}), T({1}), A(T({1}, D::kInt8)), 1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kInt8);
  r = Q(T({2, 3}), T({1}), None(), 1, Dt(D::kInt8));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kInt8);
}

TEST(QuantizeLinearTest, PerAxisNormalizesAxis) {
  Result r = Q(T({2, 3, 4}), T({4}), A(T({4}, D::kUInt8)), -1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.plan.rewritten[3].i, 2);
  r = Q(T({0, 3}), T({3}), None(), 1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{0, 3}));
  // Per tensor ignores axis, as ONNX does.
  r = Q(T({2, 3}), T({1}), None(), 7);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
}

TEST(QuantizeLinearTest, Errors) {
  ExpectError(Q(T({2, 3, 4}), T({4}), None(), 1).status, BP_STATUS_INVALID_ARGUMENT,
              {"quantize_linear: argument 'scale'", "expected 3 elements", "[4]"});
  ExpectError(Q(T({2, 3, 4}), T({2}), None(), 3).status, BP_STATUS_INVALID_ARGUMENT,
              {"quantize_linear: argument 'axis'", "[-3, 3)", "got 3"});
  ExpectError(Q(T({2, 3}), T({1}), A(T({1}, D::kUInt8)), 1, Dt(D::kInt8)).status, BP_STATUS_INVALID_ARGUMENT,
              {"quantize_linear: argument 'zero_point'", "expected dtype int8", "got uint8"});
  ExpectError(Q(T({2, 3}), T({3}), A(T({2}, D::kUInt8)), 1).status, BP_STATUS_INVALID_ARGUMENT,
              {"quantize_linear: argument 'zero_point'", "sizes of scale [3]", "got [2]"});
  ExpectError(Q(T({2, 3}), T({1}), None(), 1, Dt(D::kInt32)).status, BP_STATUS_INVALID_ARGUMENT,
              {"quantize_linear: argument 'dtype'", "int8 or uint8", "int32"});
  ExpectError(Q(T({2, 3}, D::kFloat64), T({1}), None(), 1).status, BP_STATUS_INVALID_ARGUMENT,
              {"quantize_linear: argument 'x'", "float32", "float64"});
  ExpectError(Q(T({2, 3}), T({1}, D::kFloat64), None(), 1).status, BP_STATUS_INVALID_ARGUMENT,
              {"quantize_linear: argument 'scale'", "float32", "float64"});
  ExpectError(Q(T({2, 3}), T({2, 3}), None(), 1).status, BP_STATUS_INVALID_ARGUMENT,
              {"quantize_linear: argument 'scale'", "1-D", "[2, 3]"});
}

TEST(DequantizeLinearTest, Float32OutputPerTensorAndPerAxis) {
  for (D d : {D::kInt8, D::kUInt8, D::kInt32}) {
    Result r = Dq(T({4, 5}, d), T({5}), A(T({5}, d)), 1);
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kFloat32);
    EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{4, 5}));
    EXPECT_EQ(r.plan.rewritten[3].i, 1);
  }
  Result r = Dq(T({}, D::kInt8), T({}), None(), 1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.plan.rewritten[3].i, -1);
}

TEST(DequantizeLinearTest, Errors) {
  ExpectError(Dq(T({3, 4}, D::kFloat32), T({1}), None(), 1).status, BP_STATUS_INVALID_ARGUMENT,
              {"dequantize_linear: argument 'x'", "int8, uint8 or int32", "float32"});
  ExpectError(Dq(T({3, 4}, D::kInt8), T({2}), None(), 0).status, BP_STATUS_INVALID_ARGUMENT,
              {"dequantize_linear: argument 'scale'", "expected 3 elements", "[2]"});
  ExpectError(Dq(T({3, 4}, D::kInt8), T({2}), None(), -3).status, BP_STATUS_INVALID_ARGUMENT,
              {"dequantize_linear: argument 'axis'", "got -3"});
  ExpectError(Dq(T({3, 4}, D::kInt8), T({1}), A(T({1}, D::kUInt8)), 1).status, BP_STATUS_INVALID_ARGUMENT,
              {"dequantize_linear: argument 'zero_point'", "expected dtype int8", "got uint8"});
}

const std::vector<const char*> kMmNames = {"a", "b", "a_zero_point", "b_zero_point"};

Result Mm(const Geometry& a, const Geometry& b, MetaArg za = None(), MetaArg zb = None()) {
  return Infer("matmul_integer", "matmul_integer", kMmNames, {A(a), A(b), za, zb});
}

TEST(MatmulIntegerTest, Int32OutputWithMatmulShapes) {
  Result r = Mm(T({2, 1, 3, 4}, D::kUInt8), T({5, 4, 6}, D::kInt8), A(T({3}, D::kUInt8)), A(T({}, D::kInt8)));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kInt32);
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{2, 5, 3, 6}));
  r = Mm(T({4}, D::kInt8), T({4, 6}, D::kInt8), None(), A(T({6}, D::kInt8)));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{6}));
}

TEST(MatmulIntegerTest, Errors) {
  ExpectError(Mm(T({3, 4}), T({4, 2}, D::kInt8)).status, BP_STATUS_INVALID_ARGUMENT,
              {"matmul_integer: argument 'a'", "int8 or uint8", "float32"});
  ExpectError(Mm(T({3, 4}, D::kInt8), T({5, 2}, D::kInt8)).status, BP_STATUS_INVALID_ARGUMENT,
              {"matmul_integer: argument 'b'", "contraction size 4, got 5"});
  ExpectError(Mm(T({3, 4}, D::kInt8), T({4, 2}, D::kUInt8), A(T({1}, D::kUInt8))).status, BP_STATUS_INVALID_ARGUMENT,
              {"matmul_integer: argument 'a_zero_point'", "expected dtype int8", "got uint8"});
  ExpectError(Mm(T({3, 4}, D::kInt8), T({4, 2}, D::kInt8), None(), A(T({3}, D::kInt8))).status,
              BP_STATUS_INVALID_ARGUMENT, {"matmul_integer: argument 'b_zero_point'", "[2]", "got sizes [3]"});
}

const std::vector<const char*> kCiNames = {"input",  "weight",   "input_zero_point", "weight_zero_point",
                                           "stride", "padding", "dilation",         "groups"};

Result Ci(const Geometry& x, const Geometry& w, MetaArg zx, MetaArg zw, int64_t groups = 1) {
  static const std::vector<int64_t> s2 = {2}, p1 = {1, 0}, d1 = {1};
  return Infer("conv_integer", "conv_integer", kCiNames, {A(x), A(w), zx, zw, L(s2), L(p1), L(d1), I(groups)});
}

TEST(ConvIntegerTest, Int32OutputWithConv2dSizes) {
  // H: (7 + 2 - 3) / 2 + 1 = 4; W: (5 - 3) / 2 + 1 = 2, as conv2d's.
  Result r = Ci(T({2, 4, 7, 5}, D::kUInt8), T({6, 2, 3, 3}, D::kInt8), A(T({}, D::kUInt8)), A(T({6}, D::kInt8)), 2);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kInt32);
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{2, 6, 4, 2}));
  EXPECT_EQ(r.plan.rewritten[4].num_ints, 2);  // stride handed on as two ints
  r = Ci(T({4, 7, 5}, D::kInt8), T({6, 4, 3, 3}, D::kInt8), None(), A(T({1}, D::kInt8)));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{6, 4, 2}));  // unbatched stays unbatched
}

TEST(ConvIntegerTest, Errors) {
  const Geometry x = T({1, 4, 7, 5}, D::kInt8), w = T({6, 4, 3, 3}, D::kInt8);
  ExpectError(Ci(T({1, 4, 7, 5}), w, None(), None()).status, BP_STATUS_INVALID_ARGUMENT,
              {"conv_integer: argument 'input'", "int8 or uint8", "float32"});
  ExpectError(Ci(x, T({6, 4, 3, 3}, D::kInt32), None(), None()).status, BP_STATUS_INVALID_ARGUMENT,
              {"conv_integer: argument 'weight'", "int8 or uint8", "int32"});
  ExpectError(Ci(x, T({6, 3, 3, 3}, D::kInt8), None(), None()).status, BP_STATUS_INVALID_ARGUMENT,
              {"conv_integer: argument 'input'", "expected 3 channels", "got 4"});
  ExpectError(Ci(x, T({6, 1, 3, 3}, D::kInt8), None(), None(), 4).status, BP_STATUS_INVALID_ARGUMENT,
              {"conv_integer: argument 'weight'", "C_out divisible by groups=4"});
  ExpectError(Ci(x, w, A(T({1}, D::kUInt8)), None()).status, BP_STATUS_INVALID_ARGUMENT,
              {"conv_integer: argument 'input_zero_point'", "expected dtype int8", "got uint8"});
  ExpectError(Ci(x, w, A(T({4}, D::kInt8)), None()).status, BP_STATUS_INVALID_ARGUMENT,
              {"conv_integer: argument 'input_zero_point'", "one element (per tensor)", "got sizes [4]"});
  ExpectError(Ci(x, w, None(), A(T({4}, D::kInt8))).status, BP_STATUS_INVALID_ARGUMENT,
              {"conv_integer: argument 'weight_zero_point'", "[6] (one per output channel)", "got sizes [4]"});
  ExpectError(Ci(x, T({6, 4, 10, 3}, D::kInt8), None(), None()).status, BP_STATUS_INVALID_ARGUMENT,
              {"conv_integer: argument 'weight'", "larger than the padded input"});
}

}  // namespace
}  // namespace bp::core
