// Meta functions, part 2: matmul/addmm/linear, conv and pooling sizes,
// norms and softmax, copy/fill/cat, view functions, kernel views (prepare).
#include <gtest/gtest.h>

#include "meta_test_util.h"

namespace bp::core {
namespace {

using namespace metatest;  // NOLINT: test helpers

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
  ExpectError(Conv(T({1, 3, 5, 5}), T({8, 3, 3, 3}), {1}, {INT64_MAX}, {1}, 1).status, BP_STATUS_OUT_OF_RANGE,
              {"argument 'padding'", "2^30"});
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
  ASSERT_TRUE(View("slice", sn, {A(x), I(2), I(1), None(), I(INT64_MAX)}, &out).ok());
  EXPECT_EQ(Sizes(out), (std::vector<int64_t>{2, 3, 1}));
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

}  // namespace
}  // namespace bp::core
