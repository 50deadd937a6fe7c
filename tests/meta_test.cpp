// Meta functions: broadcasting, type promotion (PyTorch's result_type),
// validation messages, reduction dims, matmul, conv/pool sizes, views.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "meta/meta.h"
#include "op_table.h"

namespace bp::core {
namespace {

using D = DtypeId;

Geometry T(std::vector<int64_t> sizes, D dtype = D::kFloat32) {
  Geometry g;
  g.dtype = DtypeToDL(dtype);
  g.ndim = static_cast<int32_t>(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) g.sizes[i] = sizes[i];
  g.set_contiguous_strides();
  return g;
}

MetaArg A(const Geometry& g) {
  MetaArg a;
  a.kind = BP_VALUE_TENSOR;
  a.tensor = &g;
  return a;
}
MetaArg I(int64_t v) {
  MetaArg a;
  a.kind = BP_VALUE_INT;
  a.i = v;
  return a;
}
MetaArg F(double v) {
  MetaArg a;
  a.kind = BP_VALUE_DOUBLE;
  a.d = v;
  return a;
}
MetaArg B(bool v) {
  MetaArg a;
  a.kind = BP_VALUE_BOOL;
  a.b = v;
  return a;
}
MetaArg L(const std::vector<int64_t>& v) {
  MetaArg a;
  a.kind = BP_VALUE_INT_LIST;
  a.ints = v.data();
  a.num_ints = static_cast<int64_t>(v.size());
  return a;
}
MetaArg S(const char* s) {
  MetaArg a;
  a.kind = BP_VALUE_STRING;
  a.str = s;
  return a;
}
MetaArg Dt(D d) {
  MetaArg a;
  a.kind = BP_VALUE_DTYPE;
  a.dtype = DtypeToDL(d);
  return a;
}
MetaArg None() { return MetaArg(); }

std::vector<int64_t> Sizes(const Geometry& g) { return std::vector<int64_t>(g.sizes, g.sizes + g.ndim); }
std::vector<int64_t> Strides(const Geometry& g) { return std::vector<int64_t>(g.strides, g.strides + g.ndim); }
D Dtype(const Geometry& g) { return DtypeFromDL(g.dtype); }

struct Result {
  MetaPlan plan;
  Status status;
};

Result Infer(const char* meta, const char* op, std::vector<const char*> names, std::vector<MetaArg> args) {
  const MetaFunctions* m = FindMetaFunctions(meta);
  Result r;
  EXPECT_NE(m, nullptr) << meta;
  if (m == nullptr) return r;
  MetaCallInfo info{op, names.data(), static_cast<int32_t>(names.size())};
  r.status = m->infer(info, args.data(), &r.plan);
  return r;
}

void ExpectError(const Status& st, bp_status_t code, std::vector<std::string> parts) {
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), code) << st.message();
  for (const std::string& p : parts) EXPECT_NE(st.message().find(p), std::string::npos) << st.message() << " | want: " << p;
}

const std::vector<const char*> kBinaryNames = {"self", "other", "alpha"};

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

// ---------------------------------------------------------------- matmul

Result Matmul(const Geometry& a, const Geometry& b, KernelViews* views = nullptr) {
  static const std::vector<const char*> names = {"self", "other"};
  Result r = Infer("matmul", "matmul", names, {A(a), A(b)});
  if (r.status.ok() && views) {
    std::vector<MetaArg> args = {A(a), A(b)};
    MetaCallInfo info{"matmul", names.data(), 2};
    r.status = FindMetaFunctions("matmul")->prepare(info, args.data(), r.plan, r.plan.outputs, views);
  }
  return r;
}

TEST(MatmulTest, OneDimAndBatchCases) {
  KernelViews v;
  Result r = Matmul(T({3}), T({3}), &v);
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(r.plan.outputs[0].ndim, 0);  // dot
  EXPECT_EQ(Sizes(v.args[0]), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(Sizes(v.args[1]), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(Sizes(v.outputs[0]), (std::vector<int64_t>{1, 1}));
  r = Matmul(T({2, 3}), T({3}), &v);
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{2}));
  EXPECT_EQ(Sizes(v.outputs[0]), (std::vector<int64_t>{2, 1}));
  r = Matmul(T({3}), T({3, 5}), &v);
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{5}));
  EXPECT_EQ(Sizes(v.outputs[0]), (std::vector<int64_t>{1, 5}));
  r = Matmul(T({2, 1, 3, 4}), T({5, 4, 6}), &v);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{2, 5, 3, 6}));
  EXPECT_EQ(Sizes(v.args[0]), (std::vector<int64_t>{2, 5, 3, 4}));
  EXPECT_EQ(Strides(v.args[0])[1], 0);  // broadcast batch dim
  EXPECT_EQ(Sizes(v.args[1]), (std::vector<int64_t>{2, 5, 4, 6}));
  EXPECT_EQ(Strides(v.args[1])[0], 0);
  r = Matmul(T({4}), T({2, 4, 6}), &v);
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(Sizes(v.outputs[0]), (std::vector<int64_t>{2, 1, 6}));
  EXPECT_TRUE(r.plan.no_output_alias);
}

TEST(MatmulTest, Errors) {
  ExpectError(Matmul(T({2, 3}), T({4, 5})).status, BP_STATUS_INVALID_ARGUMENT,
              {"matmul: argument 'other' of sizes [4, 5]", "'self' of sizes [2, 3]", "expected its contraction size 3, got 4"});
  ExpectError(Matmul(T({}), T({2})).status, BP_STATUS_INVALID_ARGUMENT, {"matmul", "at least 1 dim", "rank 0"});
  ExpectError(Matmul(T({2, 2}), T({2, 2}, D::kFloat64)).status, BP_STATUS_INVALID_ARGUMENT,
              {"argument 'other'", "expected dtype float32", "float64"});
}

TEST(MatmulTest, AddmmAndLinear) {
  const std::vector<const char*> an = {"self", "mat1", "mat2", "beta", "alpha"};
  Geometry bias = T({4}), m1 = T({2, 3}), m2 = T({3, 4}), bad = T({3, 3});
  Result r = Infer("addmm", "addmm", an, {A(bias), A(m1), A(m2), I(1), I(1)});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{2, 4}));
  ExpectError(Infer("addmm", "addmm", an, {A(bad), A(m1), A(m2), I(1), I(1)}).status, BP_STATUS_INVALID_ARGUMENT,
              {"addmm", "'self'"});
  const std::vector<const char*> ln = {"input", "weight", "bias"};
  Geometry in = T({5, 2, 3}), w = T({4, 3}), b = T({4}), bb = T({3});
  r = Infer("linear", "linear", ln, {A(in), A(w), A(b)});
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{5, 2, 4}));
  ExpectError(Infer("linear", "linear", ln, {A(in), A(w), A(bb)}).status, BP_STATUS_INVALID_ARGUMENT,
              {"linear: argument 'bias'", "[4]", "[3]"});
  Geometry w42 = T({4, 2});
  ExpectError(Infer("linear", "linear", ln, {A(in), A(w42), None()}).status, BP_STATUS_INVALID_ARGUMENT,
              {"linear: argument 'weight' of sizes [4, 2]", "contraction size 3, got 2"});
}

// ---------------------------------------------------------------- conv / pool

const std::vector<const char*> kConvNames = {"input", "weight", "bias", "stride", "padding", "dilation", "groups"};

Result Conv(const Geometry& in, const Geometry& w, std::vector<int64_t> s, std::vector<int64_t> p,
         std::vector<int64_t> d, int64_t groups) {
  static std::vector<int64_t> keep[3];
  keep[0] = s, keep[1] = p, keep[2] = d;
  return Infer("conv2d", "conv2d", kConvNames, {A(in), A(w), None(), L(keep[0]), L(keep[1]), L(keep[2]), I(groups)});
}

TEST(ConvTest, OutputSizes) {
  Result r = Conv(T({1, 3, 7, 7}), T({8, 3, 3, 3}), {2, 2}, {1, 1}, {1, 1}, 1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{1, 8, 4, 4}));
  r = Conv(T({2, 4, 10, 9}), T({6, 2, 3, 2}), {1}, {0}, {2}, 2);  // single values repeat
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{2, 6, 6, 7}));
  EXPECT_EQ(r.plan.rewritten[5].num_ints, 2);
  r = Conv(T({3, 5, 5}), T({1, 3, 5, 5}), {1, 1}, {0, 0}, {1, 1}, 1);  // unbatched
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{1, 1, 1}));
}

TEST(ConvTest, Validation) {
  ExpectError(Conv(T({1, 4, 5, 5}), T({8, 3, 3, 3}), {1}, {0}, {1}, 1).status, BP_STATUS_INVALID_ARGUMENT,
              {"conv2d: argument 'input'", "expected 3 channels", "got 4"});
  ExpectError(Conv(T({1, 4, 5, 5}), T({3, 2, 3, 3}), {1}, {0}, {1}, 2).status, BP_STATUS_INVALID_ARGUMENT,
              {"argument 'weight'", "divisible by groups=2"});
  ExpectError(Conv(T({1, 4, 5, 5}), T({4, 4, 3, 3}), {1}, {0}, {1}, 0).status, BP_STATUS_INVALID_ARGUMENT,
              {"argument 'groups'", "positive"});
  ExpectError(Conv(T({1, 3, 2, 2}), T({8, 3, 3, 3}), {1}, {0}, {1}, 1).status, BP_STATUS_INVALID_ARGUMENT,
              {"argument 'weight'", "(3 x 3)", "(2 x 2)"});
  ExpectError(Conv(T({1, 3, 5, 5}), T({8, 3, 3}), {1}, {0}, {1}, 1).status, BP_STATUS_INVALID_ARGUMENT,
              {"argument 'weight'", "[8, 3, 3]"});
  ExpectError(Conv(T({1, 3, 5, 5}), T({8, 3, 3, 3}), {0}, {0}, {1}, 1).status, BP_STATUS_INVALID_ARGUMENT,
              {"argument 'stride'", "positive"});
  ExpectError(Conv(T({1, 3, 5, 5}), T({8, 3, 3, 3}), {1, 1, 1}, {0}, {1}, 1).status, BP_STATUS_INVALID_ARGUMENT,
              {"argument 'stride'", "two ints"});
  ExpectError(Conv(T({5, 5}), T({8, 3, 3, 3}), {1}, {0}, {1}, 1).status, BP_STATUS_INVALID_ARGUMENT,
              {"argument 'input'", "[N, C, H, W]"});
}

Result Pool(const char* meta, const Geometry& in, std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> p,
         bool ceil) {
  static std::vector<int64_t> keep[4];
  keep[0] = k, keep[1] = s, keep[2] = p, keep[3] = {1, 1};
  if (std::string(meta) == "max_pool2d") {
    static const std::vector<const char*> names = {"self", "kernel_size", "stride", "padding", "dilation", "ceil_mode"};
    return Infer(meta, meta, names, {A(in), L(keep[0]), L(keep[1]), L(keep[2]), L(keep[3]), B(ceil)});
  }
  static const std::vector<const char*> names = {"self", "kernel_size", "stride", "padding", "ceil_mode",
                                                 "count_include_pad", "divisor_override"};
  return Infer(meta, meta, names, {A(in), L(keep[0]), L(keep[1]), L(keep[2]), B(ceil), B(true), None()});
}

TEST(PoolTest, OutputSizes) {
  Result r = Pool("max_pool2d", T({1, 1, 5, 5}), {2}, {}, {0}, false);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{1, 1, 2, 2}));  // stride = kernel_size
  EXPECT_EQ(std::vector<int64_t>(r.plan.rewritten[2].ints, r.plan.rewritten[2].ints + 2), (std::vector<int64_t>{2, 2}));
  r = Pool("max_pool2d", T({1, 1, 5, 5}), {2}, {}, {0}, true);
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{1, 1, 3, 3}));
  // ceil_mode's last window would start in the right padding: dropped.
  r = Pool("avg_pool2d", T({2, 4, 4}), {2}, {3}, {1}, true);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{2, 2, 2}));
  r = Pool("avg_pool2d", T({1, 1, 7, 6}), {3, 2}, {2, 1}, {1, 0}, false);
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{1, 1, 4, 5}));
}

TEST(PoolTest, Validation) {
  ExpectError(Pool("max_pool2d", T({1, 1, 5, 5}), {3}, {1}, {2}, false).status, BP_STATUS_INVALID_ARGUMENT,
              {"max_pool2d: argument 'padding'", "at most half"});
  ExpectError(Pool("max_pool2d", T({1, 1, 1, 1}), {2}, {}, {0}, false).status, BP_STATUS_INVALID_ARGUMENT,
              {"argument 'self'", "output size (0 x 0)"});
  ExpectError(Pool("max_pool2d", T({1, 1, 5, 5}), {0}, {}, {0}, false).status, BP_STATUS_INVALID_ARGUMENT,
              {"argument 'kernel_size'", "positive"});
  ExpectError(Pool("max_pool2d", T({1, 0, 5, 5}), {2}, {}, {0}, false).status, BP_STATUS_INVALID_ARGUMENT,
              {"argument 'self'", "non-zero"});
  static const std::vector<const char*> names = {"self", "kernel_size", "stride", "padding", "ceil_mode",
                                                 "count_include_pad", "divisor_override"};
  Geometry in = T({1, 1, 4, 4});
  std::vector<int64_t> k = {2}, s = {}, p = {0};
  ExpectError(Infer("avg_pool2d", "avg_pool2d", names, {A(in), L(k), L(s), L(p), B(false), B(true), I(0)}).status,
              BP_STATUS_INVALID_ARGUMENT, {"argument 'divisor_override'", "non-zero"});
}

// ---------------------------------------------------------------- norms, softmax

TEST(NormTest, LayerNormBatchNormSoftmax) {
  const std::vector<const char*> ln = {"input", "normalized_shape", "weight", "bias", "eps", "cudnn_enable"};
  Geometry x = T({2, 3, 4}), w = T({3, 4}), wbad = T({4});
  std::vector<int64_t> ns = {3, 4}, nsbad = {4, 3};
  Result r = Infer("layer_norm", "layer_norm", ln, {A(x), L(ns), A(w), None(), F(1e-5), B(true)});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{2, 3, 4}));
  ExpectError(Infer("layer_norm", "layer_norm", ln, {A(x), L(nsbad), None(), None(), F(1e-5), B(true)}).status,
              BP_STATUS_INVALID_ARGUMENT, {"layer_norm: argument 'normalized_shape'", "[*, 4, 3]", "[2, 3, 4]"});
  ExpectError(Infer("layer_norm", "layer_norm", ln, {A(x), L(ns), A(wbad), None(), F(1e-5), B(true)}).status,
              BP_STATUS_INVALID_ARGUMENT, {"argument 'weight'", "[3, 4]", "[4]"});

  const std::vector<const char*> bn = {"input", "weight", "bias", "running_mean", "running_var",
                                       "training", "momentum", "eps", "cudnn_enabled"};
  Geometry c = T({3}), in = T({2, 3, 5});
  r = Infer("batch_norm", "batch_norm", bn, {A(in), None(), None(), A(c), A(c), B(false), F(0.1), F(1e-5), B(true)});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ExpectError(Infer("batch_norm", "batch_norm", bn,
                    {A(in), None(), None(), A(c), A(c), B(true), F(0.1), F(1e-5), B(true)}).status,
              BP_STATUS_UNIMPLEMENTED, {"batch_norm: argument 'training'", "inference only"});

  const std::vector<const char*> sm = {"self", "dim", "dtype"};
  Geometry h = T({2, 3}, D::kFloat16), i = T({2, 3}, D::kInt64);
  r = Infer("softmax", "softmax.int", sm, {A(h), I(-1), Dt(D::kFloat32)});
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kFloat32);
  EXPECT_EQ(r.plan.rewritten[1].i, 1);
  EXPECT_EQ(DtypeFromDL(r.plan.cast_to[0]), D::kFloat32);
  ExpectError(Infer("softmax", "softmax.int", sm, {A(i), I(0), None()}).status, BP_STATUS_INVALID_ARGUMENT,
              {"softmax.int: argument 'self'", "floating", "int64"});
  ExpectError(Infer("softmax", "softmax.int", sm, {A(h), I(2), None()}).status, BP_STATUS_OUT_OF_RANGE,
              {"argument 'dim'"});
}

// ---------------------------------------------------------------- copy, fill, cat

TEST(CopyTest, CopyFillCat) {
  const std::vector<const char*> cn = {"self", "src", "non_blocking"};
  Geometry self = T({2, 3}, D::kInt32), src = T({3}, D::kFloat64), bad = T({2});
  Result r = Infer("copy", "copy_", cn, {A(self), A(src), B(false)});
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{2, 3}));
  ExpectError(Infer("copy", "copy_", cn, {A(self), A(bad), B(false)}).status, BP_STATUS_INVALID_ARGUMENT,
              {"copy_: argument 'src' of sizes [2]", "[2, 3]"});
  Geometry big = T({4, 2, 3});
  ExpectError(Infer("copy", "copy_", cn, {A(self), A(big), B(false)}).status, BP_STATUS_INVALID_ARGUMENT,
              {"cannot broadcast to 'self'"});

  const std::vector<const char*> catn = {"tensors", "dim"};
  Geometry a = T({2, 3}, D::kInt32), b = T({2, 5}, D::kFloat32), e = T({0}, D::kInt64), z = T({});
  Geometry c = T({3, 3});
  auto list = [](std::vector<const Geometry*>& v) {
    MetaArg m;
    m.kind = BP_VALUE_TENSOR_LIST;
    m.tensors = v.data();
    m.num_tensors = static_cast<int64_t>(v.size());
    return m;
  };
  std::vector<const Geometry*> ab = {&a, &e, &b};
  r = Infer("cat", "cat", catn, {list(ab), I(-1)});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Sizes(r.plan.outputs[0]), (std::vector<int64_t>{2, 8}));
  EXPECT_EQ(Dtype(r.plan.outputs[0]), D::kFloat32);
  EXPECT_EQ(DtypeFromDL(r.plan.cast_to[0]), D::kFloat32);
  EXPECT_EQ(r.plan.rewritten[1].i, 1);
  EXPECT_TRUE(CatSkipsInput(e));
  std::vector<const Geometry*> ac = {&a, &c};
  ExpectError(Infer("cat", "cat", catn, {list(ac), I(1)}).status, BP_STATUS_INVALID_ARGUMENT,
              {"cat: argument 'tensors'", "element 1 has sizes [3, 3]", "except in dim 1"});
  std::vector<const Geometry*> az = {&a, &z};
  ExpectError(Infer("cat", "cat", catn, {list(az), I(0)}).status, BP_STATUS_INVALID_ARGUMENT,
              {"element 1 is 0-dim"});
  std::vector<const Geometry*> none;
  ExpectError(Infer("cat", "cat", catn, {list(none), I(0)}).status, BP_STATUS_INVALID_ARGUMENT, {"non-empty"});

  const std::vector<const char*> fn = {"self", "value"};
  EXPECT_TRUE(Infer("fill", "fill_.Scalar", fn, {A(self), F(1.5)}).status.ok());
  ExpectError(Infer("fill", "fill_.Scalar", fn, {A(self), S("x")}).status, BP_STATUS_INVALID_ARGUMENT,
              {"fill_.Scalar: argument 'value'"});
}

TEST(CopyTest, CheckOutput) {
  const std::vector<const char*> names = {"self", "other", "alpha"};
  Geometry i = T({2}, D::kInt32), f = T({2}), one = T({1});
  Result r = Infer("binary", "add_.Tensor", names, {A(i), A(f), I(1)});
  ASSERT_TRUE(r.status.ok());
  MetaCallInfo info{"add_.Tensor", names.data(), 3};
  ExpectError(CheckOutput(info, r.plan, 0, i, true), BP_STATUS_INVALID_ARGUMENT,
              {"add_.Tensor: argument 'self'", "float32 cannot be cast", "int32"});
  r = Infer("binary", "add_.Tensor", names, {A(one), A(f), I(1)});
  ExpectError(CheckOutput(info, r.plan, 0, one, true), BP_STATUS_INVALID_ARGUMENT, {"sizes [1]", "[2]"});
  EXPECT_TRUE(CheckOutput(info, r.plan, 0, f, true).ok());
  EXPECT_TRUE(CanCastDtype(DtypeToDL(D::kInt32), DtypeToDL(D::kFloat16)));
  EXPECT_FALSE(CanCastDtype(DtypeToDL(D::kInt32), DtypeToDL(D::kBool)));
}

// ---------------------------------------------------------------- views

Status View(const char* name, std::vector<const char*> names, std::vector<MetaArg> args, Geometry* out) {
  const ViewFunctions* v = FindViewFunctions(name);
  EXPECT_NE(v, nullptr) << name;
  MetaCallInfo info{name, names.data(), static_cast<int32_t>(names.size())};
  return v->view(info, args.data(), out);
}

Geometry Transposed(std::vector<int64_t> sizes) {  // a [b, a] tensor seen as [a, b]
  Geometry g = T({sizes[1], sizes[0]});
  std::swap(g.sizes[0], g.sizes[1]);
  std::swap(g.strides[0], g.strides[1]);
  return g;
}

TEST(ViewTest, ViewAndReshape) {
  const std::vector<const char*> names = {"self", "size"};
  Geometry x = T({2, 3, 4}), out;
  std::vector<int64_t> s = {6, -1};
  ASSERT_TRUE(View("view", names, {A(x), L(s)}, &out).ok());
  EXPECT_EQ(Sizes(out), (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(Strides(out), (std::vector<int64_t>{4, 1}));
  std::vector<int64_t> two = {-1, -1}, bad = {5, 5}, neg = {-2, 12};
  ExpectError(View("view", names, {A(x), L(two)}, &out), BP_STATUS_INVALID_ARGUMENT, {"only one dim can be -1"});
  ExpectError(View("view", names, {A(x), L(bad)}, &out), BP_STATUS_INVALID_ARGUMENT,
              {"view: argument 'size' is [5, 5]", "24 elements"});
  ExpectError(View("view", names, {A(x), L(neg)}, &out), BP_STATUS_INVALID_ARGUMENT, {"invalid size -2"});

  Geometry t = Transposed({2, 3});  // sizes [2, 3], strides [1, 2]
  std::vector<int64_t> flat = {6};
  ExpectError(View("view", names, {A(t), L(flat)}, &out), BP_STATUS_INVALID_ARGUMENT, {"use reshape"});
  Status st = View("reshape", {"self", "shape"}, {A(t), L(flat)}, &out);
  EXPECT_EQ(st.code(), kViewNeedsCopy) << st.message();
  EXPECT_NE(st.message().find("needs a copy"), std::string::npos);
  EXPECT_EQ(Sizes(out), (std::vector<int64_t>{6}));
  EXPECT_EQ(Strides(out), (std::vector<int64_t>{1}));
  // Splitting a dim of a transposed tensor stays a view.
  std::vector<int64_t> split = {2, 3, 1};
  ASSERT_TRUE(View("reshape", {"self", "shape"}, {A(t), L(split)}, &out).ok());
  EXPECT_EQ(Strides(out)[0], 1);
  EXPECT_EQ(Strides(out)[1], 2);
  // Broadcast (stride 0) tensors view when the merged dims agree.
  Geometry z = T({4, 3});
  z.strides[0] = 0;
  std::vector<int64_t> m = {2, 2, 3};
  ASSERT_TRUE(View("view", names, {A(z), L(m)}, &out).ok());
  EXPECT_EQ(Strides(out), (std::vector<int64_t>{0, 0, 1}));
  // Empty tensors and 0-dim.
  Geometry e = T({0, 4}), s0 = T({});
  std::vector<int64_t> e2 = {2, 0, -1}, one = {1, 1};
  ExpectError(View("view", names, {A(e), L(e2)}, &out), BP_STATUS_INVALID_ARGUMENT, {"ambiguous"});
  ASSERT_TRUE(View("view", names, {A(s0), L(one)}, &out).ok());
  EXPECT_EQ(Sizes(out), (std::vector<int64_t>{1, 1}));
}

TEST(ViewTest, PermuteTransposeNarrowSliceSelect) {
  Geometry x = T({2, 3, 4}), out;
  x.offset = 5;
  std::vector<int64_t> perm = {2, 0, -2}, rep = {0, 0, 1}, shortp = {0, 1};
  ASSERT_TRUE(View("permute", {"self", "dims"}, {A(x), L(perm)}, &out).ok());
  EXPECT_EQ(Sizes(out), (std::vector<int64_t>{4, 2, 3}));
  EXPECT_EQ(Strides(out), (std::vector<int64_t>{1, 12, 4}));
  ExpectError(View("permute", {"self", "dims"}, {A(x), L(rep)}, &out), BP_STATUS_INVALID_ARGUMENT, {"repeats dim 0"});
  ExpectError(View("permute", {"self", "dims"}, {A(x), L(shortp)}, &out), BP_STATUS_INVALID_ARGUMENT, {"expected 3 dims"});

  ASSERT_TRUE(View("transpose", {"self", "dim0", "dim1"}, {A(x), I(0), I(-1)}, &out).ok());
  EXPECT_EQ(Sizes(out), (std::vector<int64_t>{4, 3, 2}));
  EXPECT_EQ(Strides(out), (std::vector<int64_t>{1, 4, 12}));

  const std::vector<const char*> nn = {"self", "dim", "start", "length"};
  ASSERT_TRUE(View("narrow", nn, {A(x), I(2), I(-3), I(2)}, &out).ok());
  EXPECT_EQ(Sizes(out), (std::vector<int64_t>{2, 3, 2}));
  EXPECT_EQ(out.offset, 6);
  ExpectError(View("narrow", nn, {A(x), I(1), I(2), I(2)}, &out), BP_STATUS_OUT_OF_RANGE,
              {"narrow: argument 'length'", "[0, 1]"});

  const std::vector<const char*> sn = {"self", "dim", "start", "end", "step"};
  ASSERT_TRUE(View("slice", sn, {A(x), I(2), I(1), None(), I(2)}, &out).ok());
  EXPECT_EQ(Sizes(out), (std::vector<int64_t>{2, 3, 2}));
  EXPECT_EQ(Strides(out), (std::vector<int64_t>{12, 4, 2}));
  EXPECT_EQ(out.offset, 6);
  ASSERT_TRUE(View("slice", sn, {A(x), I(1), I(-100), I(-1), I(1)}, &out).ok());
  EXPECT_EQ(Sizes(out), (std::vector<int64_t>{2, 2, 4}));
  ASSERT_TRUE(View("slice", sn, {A(x), I(1), I(2), I(1), I(1)}, &out).ok());
  EXPECT_EQ(out.sizes[1], 0);
  ExpectError(View("slice", sn, {A(x), I(0), None(), None(), I(0)}, &out), BP_STATUS_INVALID_ARGUMENT,
              {"argument 'step'", "positive"});

  ASSERT_TRUE(View("select", {"self", "dim", "index"}, {A(x), I(1), I(-1)}, &out).ok());
  EXPECT_EQ(Sizes(out), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(out.offset, 5 + 8);
  ExpectError(View("select", {"self", "dim", "index"}, {A(x), I(1), I(3)}, &out), BP_STATUS_OUT_OF_RANGE,
              {"select: argument 'index'", "[-3, 2]", "got 3"});
  Geometry s0 = T({});
  ExpectError(View("select", {"self", "dim", "index"}, {A(s0), I(0), I(0)}, &out), BP_STATUS_INVALID_ARGUMENT,
              {"0-dim"});
}

TEST(ViewTest, ExpandSqueezeUnsqueeze) {
  Geometry x = T({3, 1}), out;
  std::vector<int64_t> e = {2, -1, 4}, bad = {2, 1}, lead = {-1, 3, 1}, few = {1};
  ASSERT_TRUE(View("expand", {"self", "size"}, {A(x), L(e)}, &out).ok());
  EXPECT_EQ(Sizes(out), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(Strides(out), (std::vector<int64_t>{0, 1, 0}));
  ExpectError(View("expand", {"self", "size"}, {A(x), L(bad)}, &out), BP_STATUS_INVALID_ARGUMENT,
              {"expand: argument 'size' is [2, 1]", "expected size 3", "got 2"});
  ExpectError(View("expand", {"self", "size"}, {A(x), L(lead)}, &out), BP_STATUS_INVALID_ARGUMENT,
              {"new leading dim 0"});
  ExpectError(View("expand", {"self", "size"}, {A(x), L(few)}, &out), BP_STATUS_INVALID_ARGUMENT,
              {"between 2 and"});

  ASSERT_TRUE(View("squeeze", {"self", "dim"}, {A(x), I(-1)}, &out).ok());
  EXPECT_EQ(Sizes(out), (std::vector<int64_t>{3}));
  ASSERT_TRUE(View("squeeze", {"self", "dim"}, {A(x), I(0)}, &out).ok());
  EXPECT_EQ(Sizes(out), (std::vector<int64_t>{3, 1}));

  Geometry y = T({2, 3});
  ASSERT_TRUE(View("unsqueeze", {"self", "dim"}, {A(y), I(1)}, &out).ok());
  EXPECT_EQ(Sizes(out), (std::vector<int64_t>{2, 1, 3}));
  EXPECT_EQ(Strides(out), (std::vector<int64_t>{3, 3, 1}));
  ASSERT_TRUE(View("unsqueeze", {"self", "dim"}, {A(y), I(-1)}, &out).ok());
  EXPECT_EQ(Sizes(out), (std::vector<int64_t>{2, 3, 1}));
  ExpectError(View("unsqueeze", {"self", "dim"}, {A(y), I(4)}, &out), BP_STATUS_OUT_OF_RANGE, {"[-3, 2]"});
  Geometry big = T(std::vector<int64_t>(BP_MAX_NDIM, 1));
  ExpectError(View("unsqueeze", {"self", "dim"}, {A(big), I(0)}, &out), BP_STATUS_INVALID_ARGUMENT, {"BP_MAX_NDIM"});
}

// prepare() of the families whose kernel views differ from the arguments.
KernelViews Prepare(const char* meta, const char* op, const std::vector<const char*>& names,
                    std::vector<MetaArg> args, MetaPlan* plan) {
  MetaCallInfo info{op, names.data(), static_cast<int32_t>(names.size())};
  const MetaFunctions* m = FindMetaFunctions(meta);
  KernelViews views;
  Status st = m->infer(info, args.data(), plan);
  EXPECT_TRUE(st.ok()) << st.message();
  if (!st.ok()) return views;
  for (int i = 0; i < info.num_args; ++i) {
    if (plan->rewritten[i].kind != BP_VALUE_NONE) args[i] = plan->rewritten[i];
  }
  st = m->prepare(info, args.data(), *plan, plan->outputs, &views);
  EXPECT_TRUE(st.ok()) << st.message();
  return views;
}

TEST(PrepareTest, AddmmBroadcastsSelfAndConvBatchesUnbatched) {
  const std::vector<const char*> an = {"self", "mat1", "mat2", "beta", "alpha"};
  Geometry bias = T({4}), m1 = T({2, 3}), m2 = T({3, 4});
  MetaPlan plan;
  KernelViews v = Prepare("addmm", "addmm", an, {A(bias), A(m1), A(m2), I(1), F(0.5)}, &plan);
  EXPECT_EQ(Sizes(v.args[0]), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(Strides(v.args[0]), (std::vector<int64_t>{0, 1}));

  std::vector<int64_t> one = {1}, zero = {0};
  Geometry in = T({3, 5, 5}), w = T({2, 3, 3, 3});
  MetaPlan cp;
  v = Prepare("conv2d", "conv2d", kConvNames, {A(in), A(w), None(), L(one), L(zero), L(one), I(1)}, &cp);
  EXPECT_EQ(Sizes(cp.outputs[0]), (std::vector<int64_t>{2, 3, 3}));
  EXPECT_EQ(Sizes(v.args[0]), (std::vector<int64_t>{1, 3, 5, 5}));
  EXPECT_EQ(Sizes(v.outputs[0]), (std::vector<int64_t>{1, 2, 3, 3}));
  EXPECT_EQ(Strides(v.args[0]), (std::vector<int64_t>{75, 25, 5, 1}));
  // int lists reach the kernel with length 2.
  ASSERT_EQ(cp.rewritten[3].kind, BP_VALUE_INT_LIST);
  EXPECT_EQ(std::vector<int64_t>(cp.rewritten[4].ints, cp.rewritten[4].ints + 2), (std::vector<int64_t>{0, 0}));
}

TEST(PrepareTest, MatmulOneDimWithBatch) {
  const std::vector<const char*> names = {"self", "other"};
  Geometry a = T({2, 3, 4}), b = T({4});
  MetaPlan plan;
  KernelViews v = Prepare("matmul", "matmul", names, {A(a), A(b)}, &plan);
  EXPECT_EQ(Sizes(plan.outputs[0]), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Sizes(v.args[1]), (std::vector<int64_t>{2, 4, 1}));
  EXPECT_EQ(Strides(v.args[1])[0], 0);
  EXPECT_EQ(Sizes(v.outputs[0]), (std::vector<int64_t>{2, 3, 1}));
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
