// ONNX QuantizeLinear / DequantizeLinear on the CPU: the native path (one
// quantize_linear / dequantize_linear call) against the decomposition on the
// same values. QuantizeLinear of an int32 x (allowed by ONNX) takes the
// decomposition, which casts x to float32 and divides there as the kernel
// does: integer-valued x, cast to int32 beside the float32 original, gives
// both paths in one graph, and their results must be equal. Scales are
// powers of two so exact halves (x / scale = 2.5) occur; both ends saturate.
// MatMulInteger: the same zero points as [M] (native) and [M, 1] (the
// decomposition). The session's observer tells which operators each node
// called. DynamicQuantizeLinear: against ONNX's equations.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bponnx/graph.h"
#include "graph_builder.h"

namespace {

using bponnx::Model;
using bponnx::Session;
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

class QuantizeNativeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/bponnx_qdq_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_EQ(bp_context_create(nullptr, &ctx_), BP_STATUS_OK);
    ASSERT_EQ(bp_plugin_load(ctx_, BP_BUILD_PLUGIN_DIR "/libbackplane_cpu.so", nullptr), BP_STATUS_OK)
        << bp_last_error_message();
  }
  void TearDown() override {
    for (bp_tensor_t* t : held_) bp_tensor_release(t);
    session_.reset();
    bp_context_destroy(ctx_);
    std::system(("rm -rf " + dir_).c_str());
  }
  template <typename T>
  std::vector<T> values(bp_tensor_t* t) {
    std::vector<T> v(static_cast<size_t>(bp_tensor_numel(t)));
    EXPECT_EQ(bp_tensor_to_host(t, v.data(), v.size() * sizeof(T)), BP_STATUS_OK);
    return v;
  }
  // Runs the graph on x; native[name] tells whether that node called one
  // of the native operators.
  bool run(const Graph& g, const std::vector<int64_t>& xs, const std::vector<float>& x, std::vector<bp_tensor_t*>* outs,
           std::string* err) {
    bp_tensor_t* xt = nullptr;
    EXPECT_EQ(bp_tensor_from_host(ctx_, bp_device_t{0, 0}, static_cast<int32_t>(xs.size()), xs.data(),
                                  DLDataType{kDLFloat, 32, 1}, x.data(), x.size() * 4, &xt),
              BP_STATUS_OK);
    held_.push_back(xt);
    return run_with(g, {{"x", xt}}, outs, err);
  }
  bool run_with(const Graph& g, const std::map<std::string, bp_tensor_t*>& in, std::vector<bp_tensor_t*>* outs,
                std::string* err) {
    EXPECT_TRUE(Model::load(g.save(dir_ + "/m.onnx"), &model_, err)) << *err;
    session_ = std::make_unique<Session>(ctx_, bp_device_t{0, 0}, &model_);
    bp_op_t *q = nullptr, *dq = nullptr, *mm = nullptr;  // the native operators
    bp_op_find(ctx_, "quantize_linear", &q);
    bp_op_find(ctx_, "dequantize_linear", &dq);
    bp_op_find(ctx_, "matmul_integer", &mm);
    session_->set_observer([&, q, dq, mm](const bponnx::NodeRun& r) {
      bool called = false;
      for (bp_op_t* op : r.ops) called = called || op == q || op == dq || op == mm;
      native_[r.node->name] = called;
    });
    const bool ok = session_->run(in, outs, err);
    for (bp_tensor_t* t : *outs) held_.push_back(t);
    return ok;
  }
  std::string dir_;
  bp_context_t* ctx_ = nullptr;
  Model model_;
  std::unique_ptr<Session> session_;
  std::vector<bp_tensor_t*> held_;
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
  const std::vector<int64_t> as = {3, 4};
  bp_tensor_t* at = nullptr;
  ASSERT_EQ(
      bp_tensor_from_host(ctx_, bp_device_t{0, 0}, 2, as.data(), DLDataType{kDLUInt, 8, 1}, a.data(), a.size(), &at),
      BP_STATUS_OK);
  held_.push_back(at);
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

}  // namespace
