// Meta functions, part 1: registry, broadcasting, type promotion (PyTorch's
// result_type), the pointwise families' validation, reductions, rank limits.
#include <gtest/gtest.h>

#include "meta_test_util.h"
#include "op_table.h"

namespace bp::core {
namespace {

using namespace metatest;  // NOLINT: test helpers

// ---------------------------------------------------------------- registry

TEST(MetaRegistryTest, EveryMetaInTheTableExists) {
  for (size_t i = 0; i < kOpTableSize; ++i) {
    const OpTableEntry& e = kOpTable[i];
    bool is_view = std::string(e.kind) == "view";
    if (is_view) {
      EXPECT_NE(FindViewFunctions(e.meta), nullptr) << e.meta;
    } else {
      EXPECT_NE(FindMetaFunctions(e.meta), nullptr) << e.meta;
    }
  }
  EXPECT_EQ(FindMetaFunctions("nope"), nullptr);
  EXPECT_EQ(FindViewFunctions(nullptr), nullptr);
}

// ---------------------------------------------------------------- broadcasting

TEST(BroadcastTest, Shapes) {
  struct Case {
    std::vector<int64_t> a, b, out;
  } cases[] = {
      {{2, 3}, {3}, {2, 3}},       {{4, 1}, {1, 5}, {4, 5}}, {{}, {2}, {2}},       {{0, 3}, {1, 3}, {0, 3}},
      {{2, 1, 4}, {3, 1}, {2, 3, 4}}, {{}, {}, {}},          {{1}, {0}, {0}},
  };
  for (const Case& c : cases) {
    Geometry a = T(c.a), b = T(c.b);
    Result r = Infer("binary", "add.Tensor", kBinaryNames, {A(a), A(b), I(1)});
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_EQ(Sizes(r.plan.outputs[0]), c.out);
    EXPECT_EQ(Strides(r.plan.outputs[0]), Strides(T(c.out)));
  }
}

TEST(BroadcastTest, MismatchNamesBothArguments) {
  Geometry a = T({4, 3}), b = T({2, 3});
  Result r = Infer("binary", "add.Tensor", kBinaryNames, {A(a), A(b), I(1)});
  ExpectError(r.status, BP_STATUS_INVALID_ARGUMENT,
              {"add.Tensor", "'other' of sizes [2, 3]", "'self' of sizes [4, 3]", "at dim 0", "(2 vs 4)"});
}

TEST(BroadcastTest, PrepareGivesZeroStrides) {
  Geometry a = T({2, 3}), b = T({3});
  std::vector<MetaArg> args = {A(a), A(b), I(1)};
  MetaCallInfo info{"add.Tensor", kBinaryNames.data(), 3};
  const MetaFunctions* m = FindMetaFunctions("binary");
  MetaPlan plan;
  ASSERT_TRUE(m->infer(info, args.data(), &plan).ok());
  KernelViews views;
  ASSERT_TRUE(m->prepare(info, args.data(), plan, plan.outputs, &views).ok());
  EXPECT_EQ(Sizes(views.args[1]), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Strides(views.args[1]), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(Strides(views.args[0]), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(Sizes(views.outputs[0]), (std::vector<int64_t>{2, 3}));
}

TEST(BroadcastTest, SizeOverflowIsOutOfRange) {
  Geometry a = T({int64_t{1} << 32, 1}, D::kInt64), b = T({int64_t{1} << 32}, D::kInt64);
  Result r = Infer("binary", "add.Tensor", kBinaryNames, {A(a), A(b), I(1)});
  ExpectError(r.status, BP_STATUS_OUT_OF_RANGE, {"add.Tensor", "int64"});
  // Element count fits but bytes do not.
  Geometry c = T({int64_t{1} << 61}, D::kFloat64);
  r = Infer("binary", "mul.Tensor", kBinaryNames, {A(c), A(c)});
  ExpectError(r.status, BP_STATUS_OUT_OF_RANGE, {"mul.Tensor"});
}

// ---------------------------------------------------------------- promotion

struct PromoCase {
  std::vector<int64_t> sa;
  D a;
  std::vector<int64_t> sb;
  D b;
  D want;
};

TEST(PromotionTest, ResultTypeTable) {
  const PromoCase cases[] = {
      {{2}, D::kBool, {2}, D::kInt32, D::kInt32},
      {{2}, D::kBool, {2}, D::kUInt8, D::kUInt8},
      {{2}, D::kUInt8, {2}, D::kInt32, D::kInt32},
      {{2}, D::kInt8, {2}, D::kInt64, D::kInt64},
      {{2}, D::kInt64, {2}, D::kFloat16, D::kFloat16},
      {{2}, D::kFloat16, {2}, D::kBFloat16, D::kFloat32},
      {{2}, D::kFloat32, {2}, D::kFloat64, D::kFloat64},
      {{2}, D::kBFloat16, {2}, D::kFloat32, D::kFloat32},
      // 0-dim tensors count only when their category is higher.
      {{2}, D::kInt32, {}, D::kInt64, D::kInt32},
      {{2}, D::kInt32, {}, D::kFloat64, D::kFloat64},  // as torch: the 0-dim float's own dtype
      {{2}, D::kFloat16, {}, D::kFloat64, D::kFloat16},
      {{2}, D::kBool, {}, D::kInt64, D::kInt64},
      {{2}, D::kUInt8, {}, D::kInt8, D::kUInt8},
      {{}, D::kInt32, {}, D::kFloat16, D::kFloat16},
      {{}, D::kInt8, {}, D::kInt64, D::kInt64},
      {{2}, D::kBool, {}, D::kBool, D::kBool},
  };
  for (const PromoCase& c : cases) {
    Geometry a = T(c.sa, c.a), b = T(c.sb, c.b);
    Result r = Infer("binary", "mul.Tensor", kBinaryNames, {A(a), A(b)});
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_EQ(Dtype(r.plan.outputs[0]), c.want) << DtypeName(c.a) << " " << c.sa.size() << "-dim with "
                                                << DtypeName(c.b) << " " << c.sb.size() << "-dim";
    // Commutative.
    r = Infer("binary", "mul.Tensor", kBinaryNames, {A(b), A(a)});
    ASSERT_TRUE(r.status.ok());
    EXPECT_EQ(Dtype(r.plan.outputs[0]), c.want);
  }
}

TEST(PromotionTest, ScalarsAreWrappedNumbers) {
  Geometry i32 = T({2}, D::kInt32), f16 = T({2}, D::kFloat16), b = T({2}, D::kBool);
  std::vector<MetaArg> args = {A(i32), F(2.5)};
  const int idx[2] = {0, 1};
  EXPECT_EQ(DtypeFromDL(ResultType(args.data(), idx, 2)), D::kFloat32);  // default dtype
  args = {A(i32), I(7)};
  EXPECT_EQ(DtypeFromDL(ResultType(args.data(), idx, 2)), D::kInt32);
  args = {A(f16), F(2.5)};
  EXPECT_EQ(DtypeFromDL(ResultType(args.data(), idx, 2)), D::kFloat16);
  args = {A(b), I(7)};
  EXPECT_EQ(DtypeFromDL(ResultType(args.data(), idx, 2)), D::kInt64);
  args = {A(b), B(true)};
  EXPECT_EQ(DtypeFromDL(ResultType(args.data(), idx, 2)), D::kBool);
}

TEST(PromotionTest, Uint8WithInt8HasNoCommonDtype) {
  Geometry a = T({2}, D::kUInt8), b = T({2}, D::kInt8);
  Result r = Infer("binary", "add.Tensor", kBinaryNames, {A(a), A(b), I(1)});
  ExpectError(r.status, BP_STATUS_INVALID_ARGUMENT,
              {"add.Tensor", "'self', 'other'", "uint8, int8", "no common dtype in Backplane's set"});
  std::vector<MetaArg> args = {A(a), A(b)};
  const int idx[2] = {0, 1};
  EXPECT_EQ(ResultType(args.data(), idx, 2).bits, 0);
}

TEST(PromotionTest, CastsRecordedPerArgument) {
  Geometry a = T({2}, D::kInt32), b = T({2}, D::kFloat32);
  Result r = Infer("binary", "add.Tensor", kBinaryNames, {A(a), A(b), I(1)});
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(DtypeFromDL(r.plan.cast_to[0]), D::kFloat32);
  EXPECT_EQ(r.plan.cast_to[1].bits, 0);  // keep
}

// ---------------------------------------------------------------- binary family

TEST(BinaryTest, AlphaValidation) {
  Geometry i = T({2}, D::kInt64), f = T({2}, D::kFloat32), b = T({2}, D::kBool);
  ExpectError(Infer("binary", "add.Tensor", kBinaryNames, {A(i), A(i), F(0.5)}).status, BP_STATUS_INVALID_ARGUMENT,
              {"add.Tensor: argument 'alpha'", "floating point", "int64"});
  ExpectError(Infer("binary", "add.Tensor", kBinaryNames, {A(i), A(i), B(true)}).status, BP_STATUS_INVALID_ARGUMENT,
              {"argument 'alpha'", "bool"});
  EXPECT_TRUE(Infer("binary", "add.Tensor", kBinaryNames, {A(b), A(b), B(true)}).status.ok());
  EXPECT_TRUE(Infer("binary", "add.Tensor", kBinaryNames, {A(f), A(f), F(0.5)}).status.ok());
  EXPECT_TRUE(Infer("binary", "add.Tensor", kBinaryNames, {A(f), A(i), I(2)}).status.ok());
}

TEST(BinaryTest, SubRejectsBool) {
  Geometry b = T({2}, D::kBool), f = T({2});
  ExpectError(Infer("binary", "sub.Tensor", kBinaryNames, {A(b), A(b), I(1)}).status, BP_STATUS_INVALID_ARGUMENT,
              {"sub.Tensor", "two bool tensors", "logical_xor"});
  ExpectError(Infer("binary", "sub_.Tensor", kBinaryNames, {A(f), A(b), I(1)}).status, BP_STATUS_INVALID_ARGUMENT,
              {"sub_.Tensor: argument 'other'", "logical_not"});
  EXPECT_TRUE(Infer("binary", "add.Tensor", kBinaryNames, {A(b), A(b), I(1)}).status.ok());
}

TEST(BinaryTest, TrueDivideAndRoundingMode) {
  Geometry i = T({2}, D::kInt32), h = T({2}, D::kFloat16);
  Result r = Infer("binary_true_divide", "div.Tensor", kBinaryNames, {A(i), A(i)});
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kFloat32);
  EXPECT_EQ(DtypeFromDL(r.plan.cast_to[0]), D::kFloat32);
  r = Infer("binary_true_divide", "div.Tensor", kBinaryNames, {A(h), A(i)});
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kFloat16);
  const std::vector<const char*> names = {"self", "other", "rounding_mode"};
  r = Infer("binary_div_mode", "div.Tensor_mode", names, {A(i), A(i), S("floor")});
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kInt32);
  r = Infer("binary_div_mode", "div.Tensor_mode", names, {A(i), A(i), None()});
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kFloat32);
  ExpectError(Infer("binary_div_mode", "div.Tensor_mode", names, {A(i), A(i), S("round")}).status,
              BP_STATUS_INVALID_ARGUMENT, {"div.Tensor_mode: argument 'rounding_mode'", "'trunc'", "'round'"});
}

TEST(BinaryTest, ComparisonOutputsBool) {
  Geometry i = T({2, 1}, D::kInt32), f = T({3}, D::kFloat64);
  Result r = Infer("comparison", "lt.Tensor", kBinaryNames, {A(i), A(f)});
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kBool);
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(DtypeFromDL(r.plan.cast_to[0]), D::kFloat64);  // compared in the common dtype
}

TEST(BinaryTest, WhereNeedsBoolCondition) {
  const std::vector<const char*> names = {"condition", "self", "other"};
  Geometry c = T({2, 1}, D::kBool), x = T({3}, D::kInt64), y = T({}, D::kFloat32), cf = T({2});
  Result r = Infer("ternary_where", "where.self", names, {A(c), A(x), A(y)});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kFloat32);
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.plan.cast_to[0].bits, 0);
  ExpectError(Infer("ternary_where", "where.self", names, {A(cf), A(x), A(y)}).status, BP_STATUS_INVALID_ARGUMENT,
              {"where.self: argument 'condition'", "bool", "float32"});
}

// ---------------------------------------------------------------- unary families

TEST(UnaryTest, Families) {
  const std::vector<const char*> names = {"self"};
  Geometry b = T({2}, D::kBool), i = T({2}, D::kInt64), h = T({2}, D::kBFloat16);
  ExpectError(Infer("unary_no_bool", "neg", names, {A(b)}).status, BP_STATUS_INVALID_ARGUMENT,
              {"neg: argument 'self'", "bool", "logical_not"});
  ExpectError(Infer("unary_no_bool", "abs_", names, {A(b)}).status, BP_STATUS_INVALID_ARGUMENT,
              {"abs_: argument 'self'", "numeric dtype, got bool"});
  Result r = Infer("unary_no_bool", "neg", names, {A(i)});
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kInt64);
  r = Infer("unary_float", "exp", names, {A(i)});
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kFloat32);
  EXPECT_EQ(DtypeFromDL(r.plan.cast_to[0]), D::kFloat32);
  r = Infer("unary_float", "exp", names, {A(h)});
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kBFloat16);
  ExpectError(Infer("unary_float_only", "silu", names, {A(i)}).status, BP_STATUS_INVALID_ARGUMENT,
              {"silu: argument 'self'", "floating dtype", "int64"});
  const std::vector<const char*> gelu = {"self", "approximate"};
  EXPECT_TRUE(Infer("unary_float_only", "gelu", gelu, {A(h), S("tanh")}).status.ok());
  ExpectError(Infer("unary_float_only", "gelu", gelu, {A(h), S("fast")}).status, BP_STATUS_INVALID_ARGUMENT,
              {"gelu: argument 'approximate'", "'fast'"});
}

// ---------------------------------------------------------------- reductions

const std::vector<const char*> kSumNames = {"self", "dim", "keepdim", "dtype"};

std::vector<int64_t> Dims(const MetaPlan& plan, int arg) {
  const MetaArg& d = plan.rewritten[arg];
  EXPECT_EQ(d.kind, BP_VALUE_INT_LIST);
  return std::vector<int64_t>(d.ints, d.ints + d.num_ints);
}

TEST(ReductionTest, DimsNormalized) {
  Geometry x = T({2, 3, 4});
  std::vector<int64_t> dims = {-1, 0};
  Result r = Infer("reduction_sum", "sum.dim_IntList", kSumNames, {A(x), L(dims), B(false), None()});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Dims(r.plan, 1), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{3}));
  r = Infer("reduction_sum", "sum.dim_IntList", kSumNames, {A(x), L(dims), B(true), None()});
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{1, 3, 1}));
  r = Infer("reduction_sum", "sum.dim_IntList", kSumNames, {A(x), None(), B(false), None()});
  EXPECT_EQ(Dims(r.plan, 1), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(r.plan.outputs[0].ndim, 0);
  std::vector<int64_t> empty;
  r = Infer("reduction_sum", "sum.dim_IntList", kSumNames, {A(x), L(empty), B(false), None()});
  EXPECT_EQ(Dims(r.plan, 1), (std::vector<int64_t>{0, 1, 2}));
  std::vector<int64_t> dup = {1, -2};
  ExpectError(Infer("reduction_sum", "sum.dim_IntList", kSumNames, {A(x), L(dup), B(false), None()}).status,
              BP_STATUS_INVALID_ARGUMENT, {"sum.dim_IntList: argument 'dim'", "dim 1 appears more than once"});
  std::vector<int64_t> bad = {3};
  ExpectError(Infer("reduction_sum", "sum.dim_IntList", kSumNames, {A(x), L(bad), B(false), None()}).status,
              BP_STATUS_OUT_OF_RANGE, {"argument 'dim'", "[-3, 2]", "got 3"});
}

TEST(ReductionTest, SumDtypes) {
  Geometry i = T({4}, D::kInt32), b = T({4}, D::kBool), h = T({4}, D::kFloat16);
  Result r = Infer("reduction_sum", "sum.dim_IntList", kSumNames, {A(i), None(), B(false), None()});
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kInt64);
  EXPECT_EQ(DtypeFromDL(r.plan.cast_to[0]), D::kInt64);  // the kernel sees the output dtype
  r = Infer("reduction_sum", "sum.dim_IntList", kSumNames, {A(b), None(), B(false), None()});
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kInt64);
  r = Infer("reduction_sum", "sum.dim_IntList", kSumNames, {A(h), None(), B(false), None()});
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kFloat16);
  r = Infer("reduction_sum", "sum.dim_IntList", kSumNames, {A(i), None(), B(false), Dt(D::kFloat64)});
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kFloat64);
}

TEST(ReductionTest, MeanNeedsFloating) {
  Geometry i = T({4}, D::kInt32);
  ExpectError(Infer("reduction_mean", "mean.dim", kSumNames, {A(i), None(), B(false), None()}).status,
              BP_STATUS_INVALID_ARGUMENT, {"mean.dim: argument 'self'", "floating", "int32"});
  ExpectError(Infer("reduction_mean", "mean.dim", kSumNames, {A(i), None(), B(false), Dt(D::kInt64)}).status,
              BP_STATUS_INVALID_ARGUMENT, {"mean.dim: argument 'dtype'", "int64"});
  Result r = Infer("reduction_mean", "mean.dim", kSumNames, {A(i), None(), B(false), Dt(D::kFloat32)});
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kFloat32);
}

TEST(ReductionTest, MinMaxAndArgmax) {
  const std::vector<const char*> names = {"self", "dim", "keepdim"};
  Geometry x = T({2, 0, 3}), y = T({2, 3}, D::kInt8);
  std::vector<int64_t> d1 = {1};
  ExpectError(Infer("reduction_minmax", "amax", names, {A(x), L(d1), B(false)}).status, BP_STATUS_INVALID_ARGUMENT,
              {"amax: argument 'self'", "size 0 in reduced dim 1"});
  std::vector<int64_t> d2 = {2};
  Result r = Infer("reduction_minmax", "amax", names, {A(x), L(d2), B(false)});
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{2, 0}));
  r = Infer("reduction_argmax", "argmax", names, {A(y), None(), B(false)});
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kInt64);
  EXPECT_EQ(r.plan.outputs[0].ndim, 0);
  EXPECT_EQ(Dims(r.plan, 1), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(r.plan.cast_to[0].bits, 0);  // argmax reads its own dtype
  r = Infer("reduction_argmax", "argmax", names, {A(y), I(-1), B(true)});
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(Dims(r.plan, 1), (std::vector<int64_t>{1}));
  ExpectError(Infer("reduction_argmax", "argmax", names, {A(x), None(), B(false)}).status, BP_STATUS_INVALID_ARGUMENT,
              {"argmax: argument 'self'", "empty"});
}

TEST(ReductionTest, PrepareShowsKeepdimOutput) {
  Geometry x = T({2, 3, 4});
  std::vector<int64_t> dims = {1};
  std::vector<MetaArg> args = {A(x), L(dims), B(false), None()};
  MetaCallInfo info{"sum.dim_IntList", kSumNames.data(), 4};
  const MetaFunctions* m = FindMetaFunctions("reduction_sum");
  MetaPlan plan;
  ASSERT_TRUE(m->infer(info, args.data(), &plan).ok());
  KernelViews views;
  ASSERT_TRUE(m->prepare(info, args.data(), plan, plan.outputs, &views).ok());
  EXPECT_EQ(Sizes(views.outputs[0]), (std::vector<int64_t>{2, 1, 4}));
  EXPECT_EQ(Strides(views.outputs[0]), (std::vector<int64_t>{4, 0, 1}));
  // A 0-dim input is shown as [1] reduced over [0].
  Geometry s = T({});
  args = {A(s), None(), B(false), None()};
  MetaPlan p2;
  ASSERT_TRUE(m->infer(info, args.data(), &p2).ok());
  EXPECT_EQ(Dims(p2, 1), (std::vector<int64_t>{0}));
  KernelViews v2;
  ASSERT_TRUE(m->prepare(info, args.data(), p2, p2.outputs, &v2).ok());
  EXPECT_EQ(Sizes(v2.args[0]), (std::vector<int64_t>{1}));
  EXPECT_EQ(Sizes(v2.outputs[0]), (std::vector<int64_t>{1}));
}

TEST(RankTest, MaxNdimEnforced) {
  Geometry big;
  big.dtype = DtypeToDL(D::kFloat32);
  big.ndim = BP_MAX_NDIM + 1;
  Result r = Infer("unary_float", "exp", {"self"}, {A(big)});
  ExpectError(r.status, BP_STATUS_INVALID_ARGUMENT, {"exp: argument 'self'", "rank <= 16", "got 17"});
  std::vector<int64_t> many(BP_MAX_NDIM + 1, 1);
  Geometry x = T({1}), out;
  ExpectError(View("view", {"self", "size"}, {A(x), L(many)}, &out), BP_STATUS_INVALID_ARGUMENT, {"at most 16 dims"});
  ExpectError(View("expand", {"self", "size"}, {A(x), L(many)}, &out), BP_STATUS_INVALID_ARGUMENT, {"between 1 and 16"});
  // A dtype Backplane does not take.
  Geometry odd = T({2});
  odd.dtype = DLDataType{kDLFloat, 8, 1};
  ExpectError(Infer("unary_float", "exp", {"self"}, {A(odd)}).status, BP_STATUS_INVALID_ARGUMENT,
              {"unsupported dtype"});
}

TEST(WrapDimTest, ZeroDimAcceptsZeroAndMinusOne) {
  const char* names[] = {"self", "dim"};
  MetaCallInfo info{"op", names, 2};
  int32_t d = -7;
  ASSERT_TRUE(WrapDim(info, 1, -1, 0, &d).ok());
  EXPECT_EQ(d, 0);
  ASSERT_TRUE(WrapDim(info, 1, 0, 0, &d).ok());
  ExpectError(WrapDim(info, 1, 1, 0, &d), BP_STATUS_OUT_OF_RANGE, {"op: argument 'dim'", "[-1, 0]"});
  ASSERT_TRUE(WrapDim(info, 1, -3, 3, &d).ok());
  EXPECT_EQ(d, 0);
}

}  // namespace
}  // namespace bp::core
