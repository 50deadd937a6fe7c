// ONNX QuantizeLinear / DequantizeLinear on the CPU: the native path (one
// quantize_linear / dequantize_linear call) against the decomposition on the
// same values. QuantizeLinear of an int32 x (allowed by ONNX) takes the
// decomposition, which casts x to float32 and divides there as the kernel
// does: integer-valued x, cast to int32 beside the float32 original, gives
// both paths in one graph, and their results must be equal. Scales are
// powers of two so exact halves (x / scale = 2.5) occur; both ends saturate.
// MatMulInteger: the same zero points as [M] (native) and [M, 1] (the
// decomposition); ConvInteger / QLinearConv: as a scalar or [C_out]
// (native) and [1, 1, 1, 1] or [C_out, 1, 1, 1] (the decomposition). The
// session's observer tells which operators each node called.
// DynamicQuantizeLinear: against ONNX's equations.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bponnx/graph.h"
#include "graph_builder.h"
#include "native_ops_fixture.h"

namespace {

using bptest::Graph;

constexpr int kUInt8 = 2, kInt8 = 3, kInt32 = 6;

// An int8 / uint8 initializer (ONNX keeps them in int32_data).
void IntInit(Graph* g, const std::string& name, std::vector<int64_t> dims, int elem, std::vector<int32_t> values) {
  auto* t = g->g()->add_initializer();
  t->set_name(name);
  t->set_data_type(elem);
  for (int64_t d : dims) t->add_dims(d);
  for (int32_t v : values) t->add_int32_data(v);
}

void SetInt(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void SetInts(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void SetString(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

// count values spread over an int8 (-128..127) or uint8 (0..255) range.
std::vector<int32_t> Spread(size_t count, int elem, int salt) {
  std::vector<int32_t> v(count);
  for (size_t i = 0; i < count; ++i) {
    const int u = static_cast<int>((i * 97 + static_cast<size_t>(salt) * 31) % 256);
    v[i] = elem == kInt8 ? u - 128 : u;
  }
  return v;
}

class QuantizeNativeTest : public NativeOpsTest<> {
 protected:
  // Runs the graph on x (float32).
  bool run(const Graph& g, const std::vector<int64_t>& xs, const std::vector<float>& x, std::vector<bp_tensor_t*>* outs,
           std::string* err) {
    return run_with(g, {{"x", tensor(xs, DLDataType{kDLFloat, 32, 1}, x.data(), x.size() * 4)}}, outs, err);
  }
  // native_[name]: whether that node called one of the native operators.
  bool run_with(const Graph& g, const std::map<std::string, bp_tensor_t*>& in, std::vector<bp_tensor_t*>* outs,
                std::string* err) {
    const bool ok =
        run_graph(g, in, {"quantize_linear", "dequantize_linear", "matmul_integer", "conv_integer"}, outs, err);
    native_ = called_;
    return ok;
  }
  std::map<std::string, bool> native_;
};

TEST_F(QuantizeNativeTest, NativeMatchesTheDecomposition) {
  const std::vector<int64_t> xs = {2, 3, 4};
  Graph g(13);
  g.input("x", xs);
  g.init("s_t", {}, {2.0f});
  IntInit(&g, "zp_t", {}, kUInt8, {250});
  g.init("s_a", {3}, {0.5f, 0.25f, 2.0f});
  IntInit(&g, "zp_a", {3}, kInt8, {-3, 0, 4});
  SetInt(g.node("Cast", {"x"}, {"xi"}, "cast"), "to", kInt32);
  g.node("QuantizeLinear", {"x", "s_t", "zp_t"}, {"q_t"}, "q_t");
  g.node("QuantizeLinear", {"xi", "s_t", "zp_t"}, {"q_t_ref"}, "q_t_ref");
  SetInt(g.node("QuantizeLinear", {"x", "s_a", "zp_a"}, {"q_a"}, "q_a"), "axis", 1);
  SetInt(g.node("QuantizeLinear", {"xi", "s_a", "zp_a"}, {"q_a_ref"}, "q_a_ref"), "axis", -2);
  g.node("QuantizeLinear", {"x", "s_t"}, {"q_u"}, "q_u");  // no zero point: uint8
  g.node("QuantizeLinear", {"xi", "s_t"}, {"q_u_ref"}, "q_u_ref");
  SetInt(g.node("DequantizeLinear", {"q_a", "s_a", "zp_a"}, {"d_a"}, "d_a"), "axis", 1);
  g.node("DequantizeLinear", {"q_t", "s_t", "zp_t"}, {"d_t"}, "d_t");
  const std::vector<std::string> outs = {"q_t", "q_t_ref", "q_a", "q_a_ref", "q_u", "q_u_ref", "d_a", "d_t"};
  const int elems[] = {kUInt8, kUInt8, kInt8, kInt8, kUInt8, kUInt8, 1, 1};
  for (size_t k = 0; k < outs.size(); ++k) g.value(g.g()->mutable_output(), outs[k], xs, elems[k]);
  // Integers in [-40, 40] (x / 0.25 saturates int8 at both ends), odd ones
  // giving halves with the scales 2 and 0.5 ... 0.25 exact.
  std::vector<float> x(24);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((static_cast<int>(i) * 37) % 81 - 40);
  x[0] = 5.0f;  // / 2 = 2.5 -> 2
  x[1] = 7.0f;  // / 2 = 3.5 -> 4
  std::vector<bp_tensor_t*> result;
  std::string err;
  ASSERT_TRUE(run(g, xs, x, &result, &err)) << err;
  ASSERT_EQ(result.size(), outs.size());
  for (const char* name : {"q_t", "q_a", "q_u", "d_a", "d_t"}) EXPECT_TRUE(native_[name]) << name;
  for (const char* name : {"q_t_ref", "q_a_ref", "q_u_ref"}) EXPECT_FALSE(native_[name]) << name;
  EXPECT_EQ(values<uint8_t>(result[0]), values<uint8_t>(result[1]));
  EXPECT_EQ(values<int8_t>(result[2]), values<int8_t>(result[3]));
  EXPECT_EQ(values<uint8_t>(result[4]), values<uint8_t>(result[5]));
  const std::vector<uint8_t> qt = values<uint8_t>(result[0]);
  EXPECT_EQ(qt[0], 252);  // 2.5 -> 2, + 250
  EXPECT_EQ(qt[1], 254);  // 3.5 -> 4, + 250
  // Dequantize: (q - zero point) * scale, exactly in float32 here.
  const std::vector<int8_t> qa = values<int8_t>(result[2]);
  const std::vector<float> da = values<float>(result[6]), dt = values<float>(result[7]);
  const float sa[3] = {0.5f, 0.25f, 2.0f};
  const int za[3] = {-3, 0, 4};
  for (size_t i = 0; i < qa.size(); ++i) {
    const size_t c = (i / 4) % 3;
    EXPECT_EQ(da[i], static_cast<float>(qa[i] - za[c]) * sa[c]) << i;
    EXPECT_EQ(dt[i], static_cast<float>(qt[i] - 250) * 2.0f) << i;
  }
}

TEST_F(QuantizeNativeTest, ZeroScaleNamesTheNode) {
  Graph g(13);
  g.input("x", {3});
  g.init("s", {}, {0.0f});
  g.node("QuantizeLinear", {"x", "s"}, {"q"}, "quant_zero");
  g.value(g.g()->mutable_output(), "q", {3}, kUInt8);
  std::vector<bp_tensor_t*> result;
  std::string err;
  EXPECT_FALSE(run(g, {3}, {1.0f, 2.0f, 3.0f}, &result, &err));
  EXPECT_NE(err.find("quant_zero"), std::string::npos) << err;
  EXPECT_NE(err.find("y_scale"), std::string::npos) << err;
}

// MatMulInteger and QLinearMatMul: zero points of a given as [M] take the
// native path, the same values as [M, 1] (ONNX's N-D form) the decomposition.
TEST_F(QuantizeNativeTest, MatMulIntegerNativeMatchesTheDecomposition) {
  Graph g(13);
  g.input("a", {3, 4}, kUInt8);
  IntInit(&g, "b", {4, 5}, kInt8, {-128, 127, 3, -7, 0, 55, -60, 127, 1, 2, 9, -9, 100, -100, 4, 5, 6, 7, -128, 8});
  IntInit(&g, "za_v", {3}, kUInt8, {0, 128, 255});
  IntInit(&g, "za_m", {3, 1}, kUInt8, {0, 128, 255});
  IntInit(&g, "zb", {5}, kInt8, {-3, 0, 5, 127, -128});
  g.node("MatMulInteger", {"a", "b", "za_v", "zb"}, {"y"}, "mm");
  g.node("MatMulInteger", {"a", "b", "za_m", "zb"}, {"y_ref"}, "mm_ref");
  // QLinearMatMul takes its accumulator from the same operator.
  g.init("sa", {}, {0.02f});
  g.init("sb", {5}, {0.01f, 0.02f, 0.03f, 0.04f, 0.05f});
  g.init("sy", {}, {0.5f});
  IntInit(&g, "zy", {}, kUInt8, {128});
  g.node("QLinearMatMul", {"a", "sa", "za_v", "b", "sb", "zb", "sy", "zy"}, {"q"}, "qmm");
  g.node("QLinearMatMul", {"a", "sa", "za_m", "b", "sb", "zb", "sy", "zy"}, {"q_ref"}, "qmm_ref");
  g.value(g.g()->mutable_output(), "y", {3, 5}, kInt32);
  g.value(g.g()->mutable_output(), "y_ref", {3, 5}, kInt32);
  g.value(g.g()->mutable_output(), "q", {3, 5}, kUInt8);
  g.value(g.g()->mutable_output(), "q_ref", {3, 5}, kUInt8);
  const std::vector<uint8_t> a = {0, 255, 128, 7, 1, 2, 3, 250, 255, 255, 0, 0};
  bp_tensor_t* at = tensor({3, 4}, DLDataType{kDLUInt, 8, 1}, a.data(), a.size());
  std::vector<bp_tensor_t*> result;
  std::string err;
  ASSERT_TRUE(run_with(g, {{"a", at}}, &result, &err)) << err;
  ASSERT_EQ(result.size(), 4u);
  EXPECT_TRUE(native_["mm"]);
  EXPECT_FALSE(native_["mm_ref"]);
  EXPECT_TRUE(native_["qmm"]);
  EXPECT_FALSE(native_["qmm_ref"]);
  EXPECT_EQ(values<int32_t>(result[0]), values<int32_t>(result[1]));
  EXPECT_EQ(values<uint8_t>(result[2]), values<uint8_t>(result[3]));
}

// DynamicQuantizeLinear: y from one quantize_linear call, against ONNX's
// equations in float32 (scale = range / 255, zero point = round(-min /
// scale) saturated, y = saturate(round(x / scale) + zero point), halves to
// even); an all-zero x gets the scale 1 / 255 (ONNX: range 1 where max ==
// min) and y all zero, not a zero scale's error or NaN.
TEST_F(QuantizeNativeTest, DynamicQuantizeLinearOnQuantizeLinear) {
  for (const bool zeros : {false, true}) {
    SCOPED_TRACE(zeros ? "all zero" : "mixed signs");
    Graph g(13);
    g.input("x", {2, 5});
    g.node("DynamicQuantizeLinear", {"x"}, {"y", "s", "zp"}, "dql");
    g.value(g.g()->mutable_output(), "y", {2, 5}, kUInt8);
    g.value(g.g()->mutable_output(), "s", {}, 1);
    g.value(g.g()->mutable_output(), "zp", {}, kUInt8);
    std::vector<float> x = {-1.5f, 0.25f, 3.0f, 2.75f, -0.5f, 0.0f, 1.0f, -1.0f, 2.0f, 0.125f};
    if (zeros) x.assign(10, 0.0f);
    std::vector<bp_tensor_t*> result;
    std::string err;
    ASSERT_TRUE(run(g, {2, 5}, x, &result, &err)) << err;
    ASSERT_EQ(result.size(), 3u);
    EXPECT_TRUE(native_["dql"]);
    float lo = 0, hi = 0;
    for (float v : x) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    const float scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
    const float zp = std::min(255.0f, std::max(0.0f, std::nearbyint(-lo / scale)));
    EXPECT_EQ(values<float>(result[1]), std::vector<float>{scale});
    EXPECT_EQ(values<uint8_t>(result[2]), std::vector<uint8_t>{static_cast<uint8_t>(zp)});
    const std::vector<uint8_t> y = values<uint8_t>(result[0]);
    for (size_t i = 0; i < x.size(); ++i) {
      const float want = std::min(255.0f, std::max(0.0f, std::nearbyint(x[i] / scale) + zp));
      EXPECT_EQ(y[i], static_cast<uint8_t>(want)) << i;
    }
  }
}

// ConvInteger and QLinearConv: each node runs twice, its zero points as a
// scalar / [C_out] (native: one conv_integer call) and as 4-D (3-D) tensors
// of the same values (the float64 decomposition); both must agree exactly.
// Configurations: per-channel weight zero points with symmetric pads;
// groups, strides, dilations and asymmetric pads (x padded with its zero
// point first); depthwise with auto_pad SAME_LOWER; a 1x1 uint8 weight
// without zero point; a 1-D convolution; QLinearConv with and without B.
TEST_F(QuantizeNativeTest, ConvIntegerNativeMatchesTheDecomposition) {
  Graph g(13);
  g.input("x", {1, 4, 7, 7}, kUInt8);
  g.input("x1", {1, 2, 9}, kInt8);
  IntInit(&g, "zx", {}, kUInt8, {131});
  IntInit(&g, "zx4", {1, 1, 1, 1}, kUInt8, {131});
  IntInit(&g, "zx1", {}, kInt8, {-5});
  IntInit(&g, "zx1_3", {1, 1, 1}, kInt8, {-5});
  IntInit(&g, "w_a", {4, 4, 3, 3}, kInt8, Spread(144, kInt8, 1));
  IntInit(&g, "zw_a", {4}, kInt8, {-3, 0, 7, 127});
  IntInit(&g, "zw_a4", {4, 1, 1, 1}, kInt8, {-3, 0, 7, 127});
  IntInit(&g, "w_b", {6, 2, 3, 3}, kInt8, Spread(108, kInt8, 2));
  IntInit(&g, "zw_s", {}, kInt8, {-9});
  IntInit(&g, "w_c", {4, 1, 2, 2}, kInt8, Spread(16, kInt8, 3));
  IntInit(&g, "zw_c", {4}, kInt8, {1, -1, 0, 5});
  IntInit(&g, "w_d", {3, 4, 1, 1}, kUInt8, Spread(12, kUInt8, 4));
  IntInit(&g, "w_e", {3, 2, 3}, kInt8, Spread(18, kInt8, 5));
  IntInit(&g, "zw_e", {3}, kInt8, {4, -4, 0});
  IntInit(&g, "zw_e3", {3, 1, 1}, kInt8, {4, -4, 0});
  struct Conv {
    std::string name;
    std::vector<std::string> ins, ref_ins;
    std::vector<int64_t> out;
  };
  const std::vector<Conv> convs = {
      {"a", {"x", "w_a", "zx", "zw_a"}, {"x", "w_a", "zx4", "zw_a4"}, {1, 4, 7, 7}},
      {"b", {"x", "w_b", "zx", "zw_s"}, {"x", "w_b", "zx4", "zw_s"}, {1, 6, 3, 4}},
      {"c", {"x", "w_c", "zx", "zw_c"}, {"x", "w_c", "zx4", "zw_c"}, {1, 4, 7, 7}},
      {"d", {"x", "w_d", "zx"}, {"x", "w_d", "zx4"}, {1, 3, 7, 7}},
      {"e", {"x1", "w_e", "zx1", "zw_e"}, {"x1", "w_e", "zx1_3", "zw_e3"}, {1, 3, 10}},
  };
  auto attrs = [](onnx::NodeProto* n, const std::string& c) {
    if (c == "a") SetInts(n, "pads", {1, 1, 1, 1});
    if (c == "b") {
      SetInt(n, "group", 2);
      SetInts(n, "strides", {2, 2});
      SetInts(n, "dilations", {2, 1});
      SetInts(n, "pads", {0, 1, 2, 1});
    }
    if (c == "c") {
      SetInt(n, "group", 4);
      SetString(n, "auto_pad", "SAME_LOWER");
    }
    if (c == "e") SetInts(n, "pads", {1, 2});
  };
  for (const Conv& c : convs) {
    attrs(g.node("ConvInteger", c.ins, {"y_" + c.name}, "ci_" + c.name), c.name);
    attrs(g.node("ConvInteger", c.ref_ins, {"y_" + c.name + "_ref"}, "ci_" + c.name + "_ref"), c.name);
    g.value(g.g()->mutable_output(), "y_" + c.name, c.out, kInt32);
    g.value(g.g()->mutable_output(), "y_" + c.name + "_ref", c.out, kInt32);
  }
  // QLinearConv takes its accumulator from the same operator (configs a and b).
  g.init("sx", {}, {0.05f});
  g.init("sw_a", {4}, {0.01f, 0.02f, 0.03f, 0.04f});
  g.init("sw_b", {}, {0.015f});
  g.init("sy", {}, {0.7f});
  IntInit(&g, "zy", {}, kUInt8, {100});
  IntInit(&g, "bias", {4}, kInt32, {-1000, 0, 77, 20000});
  attrs(g.node("QLinearConv", {"x", "sx", "zx", "w_a", "sw_a", "zw_a", "sy", "zy", "bias"}, {"q_a"}, "qc_a"), "a");
  attrs(g.node("QLinearConv", {"x", "sx", "zx4", "w_a", "sw_a", "zw_a4", "sy", "zy", "bias"}, {"q_a_ref"}, "qc_a_ref"),
        "a");
  attrs(g.node("QLinearConv", {"x", "sx", "zx", "w_b", "sw_b", "zw_s", "sy", "zy"}, {"q_b"}, "qc_b"), "b");
  attrs(g.node("QLinearConv", {"x", "sx", "zx4", "w_b", "sw_b", "zw_s", "sy", "zy"}, {"q_b_ref"}, "qc_b_ref"), "b");
  for (const char* q : {"q_a", "q_a_ref"}) g.value(g.g()->mutable_output(), q, {1, 4, 7, 7}, kUInt8);
  for (const char* q : {"q_b", "q_b_ref"}) g.value(g.g()->mutable_output(), q, {1, 6, 3, 4}, kUInt8);

  std::vector<uint8_t> x(196);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>((i * 53 + 11) % 256);
  const std::vector<int8_t> x1 = {-128, 127, 0, -5, 5, 100, -100, 3, 64, 1, 2, 3, -4, -5, 90, -90, 127, -128};
  bp_tensor_t* xt = tensor({1, 4, 7, 7}, DLDataType{kDLUInt, 8, 1}, x.data(), x.size());
  bp_tensor_t* x1t = tensor({1, 2, 9}, DLDataType{kDLInt, 8, 1}, x1.data(), x1.size());
  std::vector<bp_tensor_t*> result;
  std::string err;
  ASSERT_TRUE(run_with(g, {{"x", xt}, {"x1", x1t}}, &result, &err)) << err;
  ASSERT_EQ(result.size(), 2 * convs.size() + 4);
  for (size_t k = 0; k < convs.size(); ++k) {
    EXPECT_TRUE(native_["ci_" + convs[k].name]) << convs[k].name;
    EXPECT_FALSE(native_["ci_" + convs[k].name + "_ref"]) << convs[k].name;
    EXPECT_EQ(values<int32_t>(result[2 * k]), values<int32_t>(result[2 * k + 1])) << convs[k].name;
  }
  // One element by hand: config d (1x1, no weight zero point) at (0, 0, 0, 0)
  // is sum over c of (x[c, 0, 0] - 131) * w_d[0, c].
  const std::vector<int32_t> wd = Spread(12, kUInt8, 4);
  int32_t d0 = 0;
  for (size_t c = 0; c < 4; ++c) d0 += (static_cast<int32_t>(x[c * 49]) - 131) * wd[c];
  EXPECT_EQ(values<int32_t>(result[6])[0], d0);
  const size_t q = 2 * convs.size();
  for (const char* name : {"qc_a", "qc_b"}) EXPECT_TRUE(native_[name]) << name;
  for (const char* name : {"qc_a_ref", "qc_b_ref"}) EXPECT_FALSE(native_[name]) << name;
  EXPECT_EQ(values<uint8_t>(result[q]), values<uint8_t>(result[q + 1]));
  EXPECT_EQ(values<uint8_t>(result[q + 2]), values<uint8_t>(result[q + 3]));
}

// A zero w_scale still fails naming the node and ONNX's argument.
TEST_F(QuantizeNativeTest, QLinearConvZeroScaleNamesTheNode) {
  Graph g(13);
  g.input("x", {1, 1, 3, 3}, kUInt8);
  g.init("s", {}, {0.1f});
  g.init("sw0", {}, {0.0f});
  IntInit(&g, "z", {}, kUInt8, {0});
  IntInit(&g, "w", {1, 1, 1, 1}, kUInt8, {2});
  g.node("QLinearConv", {"x", "s", "z", "w", "sw0", "z", "s", "z"}, {"q"}, "qconv_zero");
  g.value(g.g()->mutable_output(), "q", {1, 1, 3, 3}, kUInt8);
  const std::vector<uint8_t> x(9, 3);
  bp_tensor_t* xt = tensor({1, 1, 3, 3}, DLDataType{kDLUInt, 8, 1}, x.data(), x.size());
  std::vector<bp_tensor_t*> result;
  std::string err;
  EXPECT_FALSE(run_with(g, {{"x", xt}}, &result, &err));
  EXPECT_NE(err.find("qconv_zero"), std::string::npos) << err;
  EXPECT_NE(err.find("w_scale"), std::string::npos) << err;
}

}  // namespace
