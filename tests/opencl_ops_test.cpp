// Each operator family of the OpenCL backend against simple expected values,
// with strided, broadcast and offset views, through the fake host.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "opencl_test_util.h"

namespace bpcl_test {
namespace {

using OpenclOps = OpenclTest;

TEST_F(OpenclOps, AddWithAlphaFloat32) {
  DevTensor& a = Make<float>({4}, F32(), {1, 2, 3, 4});
  DevTensor& b = Make<float>({4}, F32(), {10, 20, 30, 40});
  DevTensor& o = Empty({4}, F32());
  ASSERT_EQ(host_.Call("add.Tensor", {TensorArg(a), TensorArg(b), DoubleArg(0.5)}, {&o}), BP_STATUS_OK)
      << FakeHost::last_error();
  EXPECT_EQ(host_.ToHost<float>(o), (std::vector<float>{6, 12, 18, 24}));
  ASSERT_EQ(host_.Call("sub.Tensor", {TensorArg(a), TensorArg(b), IntArg(2)}, {&o}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<float>(o), (std::vector<float>{-19, -38, -57, -76}));
}

TEST_F(OpenclOps, BroadcastAndStridedInputs) {
  // a: [2,3] transposed view of a [3,2] buffer; b: row [3] broadcast over dim 0
  // (stride 0); out: a [2,3] view with offset 1 inside a bigger buffer.
  DevTensor& abuf = Make<int32_t>({3, 2}, I32(), {1, 4, 2, 5, 3, 6});
  DevTensor a = FakeHost::View(abuf, {2, 3}, {1, 2}, 0);  // [[1,2,3],[4,5,6]]
  DevTensor& bbuf = Make<int32_t>({3}, I32(), {100, 200, 300});
  DevTensor b = FakeHost::View(bbuf, {2, 3}, {0, 1}, 0);
  DevTensor& obuf = Make<int32_t>({8}, I32(), {-1, -1, -1, -1, -1, -1, -1, -1});
  DevTensor o = FakeHost::View(obuf, {2, 3}, {3, 1}, 1);
  ASSERT_EQ(host_.Call("add.Tensor", {TensorArg(a), TensorArg(b), IntArg(1)}, {&o}), BP_STATUS_OK)
      << FakeHost::last_error();
  EXPECT_EQ(host_.ToHost<int32_t>(obuf), (std::vector<int32_t>{-1, 101, 202, 303, 104, 205, 306, -1}));
  // A strided output (every other element) from a 3-d broadcast.
  DevTensor& o2buf = Make<int32_t>({12}, I32(), std::vector<int32_t>(12, 0));
  DevTensor o2 = FakeHost::View(o2buf, {2, 3}, {6, 2}, 0);
  ASSERT_EQ(host_.Call("mul.Tensor", {TensorArg(a), TensorArg(b)}, {&o2}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<int32_t>(o2buf),
            (std::vector<int32_t>{100, 0, 400, 0, 900, 0, 400, 0, 1000, 0, 1800, 0}));
}

TEST_F(OpenclOps, IntegerDtypes) {
  DevTensor& a = Make<int8_t>({3}, I8(), {100, -128, 7});
  DevTensor& b = Make<int8_t>({3}, I8(), {100, -1, -2});
  DevTensor& o = Empty({3}, I8());
  ASSERT_EQ(host_.Call("add.Tensor", {TensorArg(a), TensorArg(b), IntArg(1)}, {&o}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<int8_t>(o), (std::vector<int8_t>{-56, 127, 5}));  // wraps like PyTorch
  ASSERT_EQ(host_.Call("div.Tensor_mode", {TensorArg(a), TensorArg(b), StrArg("floor")}, {&o}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<int8_t>(o), (std::vector<int8_t>{1, -128, -4}));
  ASSERT_EQ(host_.Call("div.Tensor_mode", {TensorArg(a), TensorArg(b), StrArg("trunc")}, {&o}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<int8_t>(o), (std::vector<int8_t>{1, -128, -3}));

  DevTensor& x = Make<int64_t>({4}, I64(), {-7, 7, INT64_MIN, 3});
  DevTensor& y = Make<int64_t>({4}, I64(), {2, -2, -1, 0});
  DevTensor& z = Empty({4}, I64());
  EXPECT_EQ(host_.Call("div.Tensor_mode", {TensorArg(x), TensorArg(y), StrArg("floor")}, {&z}),
            BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(FakeHost::last_error().find("ZeroDivisionError"), std::string::npos) << FakeHost::last_error();
  DevTensor y3 = FakeHost::View(y, {3}, {1}, 0);
  DevTensor x3 = FakeHost::View(x, {3}, {1}, 0);
  DevTensor z3 = FakeHost::View(z, {3}, {1}, 0);
  ASSERT_EQ(host_.Call("div.Tensor_mode", {TensorArg(x3), TensorArg(y3), StrArg("floor")}, {&z3}), BP_STATUS_OK)
      << FakeHost::last_error();
  EXPECT_EQ(host_.ToHost<int64_t>(z3), (std::vector<int64_t>{-4, -4, INT64_MIN}));

  DevTensor& u = Make<uint8_t>({3}, U8(), {200, 3, 0});
  DevTensor& v = Make<uint8_t>({3}, U8(), {100, 5, 1});
  DevTensor& w = Empty({3}, U8());
  ASSERT_EQ(host_.Call("add.Tensor", {TensorArg(u), TensorArg(v), IntArg(1)}, {&w}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<uint8_t>(w), (std::vector<uint8_t>{44, 8, 1}));
  ASSERT_EQ(host_.Call("neg", {TensorArg(u)}, {&w}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<uint8_t>(w), (std::vector<uint8_t>{56, 253, 0}));
  ASSERT_EQ(host_.Call("pow.Tensor_Tensor", {TensorArg(v), TensorArg(u)}, {&w}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<uint8_t>(w), (std::vector<uint8_t>{0, 125, 1}));  // 100^200 mod 256 = 0
  DevTensor& e = Make<int32_t>({2}, I32(), {2, -1});
  DevTensor& bse = Make<int32_t>({2}, I32(), {3, 3});
  DevTensor& pe = Empty({2}, I32());
  EXPECT_EQ(host_.Call("pow.Tensor_Tensor", {TensorArg(bse), TensorArg(e)}, {&pe}), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(FakeHost::last_error().find("negative"), std::string::npos) << FakeHost::last_error();
}

TEST_F(OpenclOps, BoolAddMulMaximum) {
  DevTensor& a = Make<uint8_t>({4}, Bool(), {0, 0, 1, 1});
  DevTensor& b = Make<uint8_t>({4}, Bool(), {0, 1, 0, 1});
  DevTensor& o = Empty({4}, Bool());
  ASSERT_EQ(host_.Call("add.Tensor", {TensorArg(a), TensorArg(b), BoolArg(true)}, {&o}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<uint8_t>(o), (std::vector<uint8_t>{0, 1, 1, 1}));
  ASSERT_EQ(host_.Call("mul.Tensor", {TensorArg(a), TensorArg(b)}, {&o}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<uint8_t>(o), (std::vector<uint8_t>{0, 0, 0, 1}));
  ASSERT_EQ(host_.Call("maximum", {TensorArg(a), TensorArg(b)}, {&o}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<uint8_t>(o), (std::vector<uint8_t>{0, 1, 1, 1}));
}

TEST_F(OpenclOps, FloatDivisionModesAndMinMaxNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  DevTensor& a = Make<float>({4}, F32(), {7, -7, 1, nan});
  DevTensor& b = Make<float>({4}, F32(), {2, 2, nan, 1});
  DevTensor& o = Empty({4}, F32());
  ASSERT_EQ(host_.Call("div.Tensor", {TensorArg(a), TensorArg(b)}, {&o}), BP_STATUS_OK);
  auto r = host_.ToHost<float>(o);
  EXPECT_EQ(r[0], 3.5f);
  EXPECT_EQ(r[1], -3.5f);
  ASSERT_EQ(host_.Call("div.Tensor_mode", {TensorArg(a), TensorArg(b), StrArg("floor")}, {&o}), BP_STATUS_OK);
  r = host_.ToHost<float>(o);
  EXPECT_EQ(r[0], 3.0f);
  EXPECT_EQ(r[1], -4.0f);
  ASSERT_EQ(host_.Call("div.Tensor_mode", {TensorArg(a), TensorArg(b), StrArg("trunc")}, {&o}), BP_STATUS_OK);
  r = host_.ToHost<float>(o);
  EXPECT_EQ(r[1], -3.0f);
  ASSERT_EQ(host_.Call("div.Tensor_mode", {TensorArg(a), TensorArg(b), NoneArg()}, {&o}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<float>(o)[1], -3.5f);
  ASSERT_EQ(host_.Call("maximum", {TensorArg(a), TensorArg(b)}, {&o}), BP_STATUS_OK);
  r = host_.ToHost<float>(o);
  EXPECT_EQ(r[0], 7.0f);
  EXPECT_TRUE(std::isnan(r[2]));
  EXPECT_TRUE(std::isnan(r[3]));
  ASSERT_EQ(host_.Call("minimum", {TensorArg(a), TensorArg(b)}, {&o}), BP_STATUS_OK);
  r = host_.ToHost<float>(o);
  EXPECT_EQ(r[0], 2.0f);
  EXPECT_TRUE(std::isnan(r[2]));
  ASSERT_EQ(host_.Call("pow.Tensor_Tensor", {TensorArg(b), TensorArg(a)}, {&o}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<float>(o)[0], 128.0f);
}

TEST_F(OpenclOps, Comparisons) {
  DevTensor& a = Make<float>({3}, F32(), {1, 2, 3});
  DevTensor& bb = Make<float>({1}, F32(), {2});
  DevTensor b = FakeHost::View(bb, {3}, {0}, 0);
  DevTensor& o = Empty({3}, Bool());
  const std::pair<const char*, std::vector<uint8_t>> cases[] = {
      {"eq.Tensor", {0, 1, 0}}, {"ne.Tensor", {1, 0, 1}}, {"lt.Tensor", {1, 0, 0}},
      {"le.Tensor", {1, 1, 0}}, {"gt.Tensor", {0, 0, 1}}, {"ge.Tensor", {0, 1, 1}}};
  for (const auto& c : cases) {
    ASSERT_EQ(host_.Call(c.first, {TensorArg(a), TensorArg(b)}, {&o}), BP_STATUS_OK) << c.first;
    EXPECT_EQ(host_.ToHost<uint8_t>(o), c.second) << c.first;
  }
}

TEST_F(OpenclOps, Where) {
  DevTensor& c = Make<uint8_t>({4}, Bool(), {1, 0, 1, 0});
  DevTensor& a = Make<int64_t>({4}, I64(), {1, 2, 3, 4});
  DevTensor& b = Make<int64_t>({4}, I64(), {-1, -2, -3, -4});
  DevTensor& o = Empty({4}, I64());
  ASSERT_EQ(host_.Call("where.self", {TensorArg(c), TensorArg(a), TensorArg(b)}, {&o}), BP_STATUS_OK)
      << FakeHost::last_error();
  EXPECT_EQ(host_.ToHost<int64_t>(o), (std::vector<int64_t>{1, -2, 3, -4}));
}

TEST_F(OpenclOps, UnaryMath) {
  DevTensor& a = Make<float>({4}, F32(), {-1.0f, 0.0f, 0.5f, 2.0f});
  DevTensor& o = Empty({4}, F32());
  struct Case {
    const char* op;
    double (*ref)(double);
  };
  const Case cases[] = {
      {"exp", [](double x) { return std::exp(x); }},
      {"sin", [](double x) { return std::sin(x); }},
      {"cos", [](double x) { return std::cos(x); }},
      {"atan", [](double x) { return std::atan(x); }},
      {"tanh", [](double x) { return std::tanh(x); }},
      {"erf", [](double x) { return std::erf(x); }},
      {"sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); }},
      {"silu", [](double x) { return x / (1.0 + std::exp(-x)); }},
      {"neg", [](double x) { return -x; }},
      {"abs", [](double x) { return std::fabs(x); }},
      {"relu", [](double x) { return x < 0 ? 0.0 : x; }},
  };
  for (const Case& c : cases) {
    ASSERT_EQ(host_.Call(c.op, {TensorArg(a)}, {&o}), BP_STATUS_OK) << c.op << ": " << FakeHost::last_error();
    auto r = host_.ToHost<float>(o);
    const float in[4] = {-1.0f, 0.0f, 0.5f, 2.0f};
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(r[i], c.ref(in[i]), 1e-6 * (1 + std::fabs(c.ref(in[i])))) << c.op << i;
  }
  DevTensor& p = Make<float>({3}, F32(), {4.0f, 1.0f, 0.25f});
  ASSERT_EQ(host_.Call("sqrt", {TensorArg(p)}, {&o}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<float>(o)[0], 2.0f);
  ASSERT_EQ(host_.Call("rsqrt", {TensorArg(p)}, {&o}), BP_STATUS_OK);
  EXPECT_NEAR(host_.ToHost<float>(o)[2], 2.0f, 1e-6);
  ASSERT_EQ(host_.Call("log", {TensorArg(p)}, {&o}), BP_STATUS_OK);
  EXPECT_NEAR(host_.ToHost<float>(o)[0], std::log(4.0), 1e-6);
  ASSERT_EQ(host_.Call("gelu", {TensorArg(a), StrArg("none")}, {&o}), BP_STATUS_OK);
  EXPECT_NEAR(host_.ToHost<float>(o)[3], 2.0 * 0.5 * (1 + std::erf(2.0 / std::sqrt(2.0))), 1e-6);
  ASSERT_EQ(host_.Call("gelu", {TensorArg(a), StrArg("tanh")}, {&o}), BP_STATUS_OK);
  EXPECT_NEAR(host_.ToHost<float>(o)[3],
              0.5 * 2.0 * (1 + std::tanh(std::sqrt(2.0 / M_PI) * (2.0 + 0.044715 * 8.0))), 1e-6);
  EXPECT_EQ(host_.Call("gelu", {TensorArg(a), StrArg("fast")}, {&o}), BP_STATUS_INVALID_ARGUMENT);
}

TEST_F(OpenclOps, Float64WhenTheDeviceHasIt) {
  bp_device_properties_t p{};
  p.struct_size = sizeof p;
  host_.backend().device_properties(host_.backend().backend_data, 0, &p);
  DevTensor& a = Make<double>({2}, F64(), {1.5, 2.5});
  DevTensor& o = Empty({2}, F64());
  const bp_status_t st = host_.Call("mul.Tensor", {TensorArg(a), TensorArg(a)}, {&o});
  if ((p.capabilities & BP_DEVICE_CAP_FP64) == 0) {
    EXPECT_EQ(st, BP_STATUS_UNIMPLEMENTED) << "float64 without cl_khr_fp64 must hand over to the fallback";
    return;
  }
  ASSERT_EQ(st, BP_STATUS_OK) << FakeHost::last_error();
  EXPECT_EQ(host_.ToHost<double>(o), (std::vector<double>{2.25, 6.25}));
}

TEST_F(OpenclOps, HalfAndBfloat16AsStorage) {
  // 1.0, 2.5, -3.0 in float16 and bfloat16 bit patterns.
  DevTensor& h = Make<uint16_t>({3}, F16(), {0x3c00, 0x4100, 0xc200});
  DevTensor& ho = Empty({3}, F16());
  ASSERT_EQ(host_.Call("add.Tensor", {TensorArg(h), TensorArg(h), IntArg(1)}, {&ho}), BP_STATUS_OK)
      << FakeHost::last_error();
  EXPECT_EQ(host_.ToHost<uint16_t>(ho), (std::vector<uint16_t>{0x4000, 0x4500, 0xc600}));
  DevTensor& bf = Make<uint16_t>({3}, BF16(), {0x3f80, 0x4020, 0xc040});
  DevTensor& bo = Empty({3}, BF16());
  ASSERT_EQ(host_.Call("mul.Tensor", {TensorArg(bf), TensorArg(bf)}, {&bo}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<uint16_t>(bo), (std::vector<uint16_t>{0x3f80, 0x40c8, 0x4110}));  // 1, 6.25, 9
}

TEST_F(OpenclOps, FillAndCopyWithConversion) {
  DevTensor& buf = Make<float>({6}, F32(), std::vector<float>(6, 0.0f));
  DevTensor col = FakeHost::View(buf, {3}, {2}, 1);  // elements 1, 3, 5
  ASSERT_EQ(host_.Call("fill_.Scalar", {TensorArg(col), DoubleArg(2.5)}, {&col}), BP_STATUS_OK)
      << FakeHost::last_error();
  EXPECT_EQ(host_.ToHost<float>(buf), (std::vector<float>{0, 2.5f, 0, 2.5f, 0, 2.5f}));

  DevTensor& f = Make<float>({4}, F32(), {-1.7f, 0.0f, 2.9f, 300.0f});
  DevTensor& i = Empty({4}, I32());
  ASSERT_EQ(host_.Call("copy_", {TensorArg(i), TensorArg(f), BoolArg(false)}, {&i}), BP_STATUS_OK)
      << FakeHost::last_error();
  EXPECT_EQ(host_.ToHost<int32_t>(i), (std::vector<int32_t>{-1, 0, 2, 300}));
  DevTensor& bl = Empty({4}, Bool());
  ASSERT_EQ(host_.Call("copy_", {TensorArg(bl), TensorArg(f), BoolArg(false)}, {&bl}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<uint8_t>(bl), (std::vector<uint8_t>{1, 0, 1, 1}));
  DevTensor& d = Empty({4}, F64());
  ASSERT_EQ(host_.Call("copy_", {TensorArg(d), TensorArg(i), BoolArg(false)}, {&d}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<double>(d), (std::vector<double>{-1, 0, 2, 300}));
  DevTensor& h = Empty({4}, F16());
  ASSERT_EQ(host_.Call("copy_", {TensorArg(h), TensorArg(i), BoolArg(false)}, {&h}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<uint16_t>(h), (std::vector<uint16_t>{0xbc00, 0x0000, 0x4000, 0x5cb0}));
  // Broadcast copy: a [3] row into a [2,3] transposed destination.
  DevTensor& row = Make<int64_t>({3}, I64(), {7, 8, 9});
  DevTensor rowb = FakeHost::View(row, {2, 3}, {0, 1}, 0);
  DevTensor& dst = Make<int64_t>({6}, I64(), std::vector<int64_t>(6, 0));
  DevTensor dstT = FakeHost::View(dst, {2, 3}, {1, 2}, 0);
  ASSERT_EQ(host_.Call("copy_", {TensorArg(dstT), TensorArg(rowb), BoolArg(false)}, {&dstT}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<int64_t>(dst), (std::vector<int64_t>{7, 7, 8, 8, 9, 9}));
  // Same dtype, contiguous, with offsets: clEnqueueCopyBuffer path.
  DevTensor src2 = FakeHost::View(dst, {3}, {1}, 3);
  DevTensor dst2 = FakeHost::View(row, {3}, {1}, 0);
  ASSERT_EQ(host_.Call("copy_", {TensorArg(dst2), TensorArg(src2), BoolArg(false)}, {&dst2}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<int64_t>(row), (std::vector<int64_t>{8, 9, 9}));
  // Overlapping views of one buffer: reversed in place through a temporary.
  DevTensor rev = FakeHost::View(dst, {6}, {-1}, 5);
  ASSERT_EQ(host_.Call("copy_", {TensorArg(dst), TensorArg(rev), BoolArg(false)}, {&dst}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<int64_t>(dst), (std::vector<int64_t>{9, 9, 8, 8, 7, 7}));
}

TEST_F(OpenclOps, Cat) {
  DevTensor& a = Make<float>({2, 1}, F32(), {1, 2});
  DevTensor& b = Make<float>({2, 2}, F32(), {3, 4, 5, 6});
  DevTensor& e = Empty({2, 0}, F32());
  DevTensor& o = Empty({2, 3}, F32());
  std::vector<const DLTensor*> list = {a.get(), e.get(), b.get()};
  ASSERT_EQ(host_.Call("cat", {TensorListArg(list), IntArg(1)}, {&o}), BP_STATUS_OK) << FakeHost::last_error();
  EXPECT_EQ(host_.ToHost<float>(o), (std::vector<float>{1, 3, 4, 2, 5, 6}));
}

TEST_F(OpenclOps, EmptyTensorsAreNoOps) {
  DevTensor& a = Empty({0, 3}, F32());
  DevTensor& o = Empty({0, 3}, F32());
  EXPECT_EQ(host_.Call("add.Tensor", {TensorArg(a), TensorArg(a), IntArg(1)}, {&o}), BP_STATUS_OK);
  EXPECT_EQ(host_.Call("exp", {TensorArg(a)}, {&o}), BP_STATUS_OK);
}

TEST_F(OpenclOps, ZeroDimTensors) {
  DevTensor& s = Make<float>({}, F32(), {3});
  DevTensor& o = Empty({}, F32());
  ASSERT_EQ(host_.Call("add.Tensor", {TensorArg(s), TensorArg(s), IntArg(1)}, {&o}), BP_STATUS_OK)
      << FakeHost::last_error();
  EXPECT_EQ(host_.ToHost<float>(o), (std::vector<float>{6}));
  const std::vector<int64_t> none;
  ASSERT_EQ(host_.Call("sum.dim_IntList", {TensorArg(s), IntListArg(none), BoolArg(false), NoneArg()}, {&o}),
            BP_STATUS_OK)
      << FakeHost::last_error();
  EXPECT_EQ(host_.ToHost<float>(o), (std::vector<float>{3}));
  DevTensor& i = Empty({}, I64());
  ASSERT_EQ(host_.Call("copy_", {TensorArg(i), TensorArg(s), BoolArg(false)}, {&i}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<int64_t>(i), (std::vector<int64_t>{3}));
  ASSERT_EQ(host_.Call("softmax.int", {TensorArg(s), IntArg(0), NoneArg()}, {&o}), BP_STATUS_OK)
      << FakeHost::last_error();
  EXPECT_EQ(host_.ToHost<float>(o), (std::vector<float>{1}));
}

}  // namespace
}  // namespace bpcl_test
