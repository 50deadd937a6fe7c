// The fixture of the graph optimizer's pass tests (passes_test.cpp,
// passes_conv_test.cpp): hand-built graphs saved and loaded, sessions on the
// CPU device with passes on or off, and their outputs compared.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bponnx/graph.h"
#include "graph_builder.h"

namespace {

using bponnx::Model;
using bponnx::Session;
using bptest::Graph;

inline void attr_ints(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

inline void attr_float(onnx::NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

inline onnx::TensorProto* int64_init(Graph* g, const std::string& name, std::vector<int64_t> dims,
                              const std::vector<int64_t>& v) {
  auto* t = g->g()->add_initializer();
  t->set_name(name);
  t->set_data_type(7);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t x : v) t->add_int64_data(x);
  return t;
}

// Deterministic values in [lo, hi).
inline std::vector<float> ramp(size_t n, float lo, float hi, uint32_t seed) {
  std::vector<float> v(n);
  for (size_t k = 0; k < n; ++k) {
    seed = seed * 1664525u + 1013904223u;
    v[k] = lo + (hi - lo) * static_cast<float>(seed >> 8) / static_cast<float>(1u << 24);
  }
  return v;
}

class PassesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/bponnx_passes_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_EQ(bp_context_create(nullptr, &ctx_), BP_STATUS_OK);
    ASSERT_EQ(bp_plugin_load(ctx_, BP_BUILD_PLUGIN_DIR "/libbackplane_cpu.so", nullptr), BP_STATUS_OK)
        << bp_last_error_message();
    ASSERT_EQ(bp_device_parse(ctx_, "cpu", &dev_), BP_STATUS_OK);
  }
  void TearDown() override {
    if (ctx_ != nullptr) bp_context_destroy(ctx_);
    std::system(("rm -rf " + dir_).c_str());
  }
  // Saves and loads `g` (model_ holds it).
  void load(const Graph& g) {
    std::string err;
    ASSERT_TRUE(Model::load(g.save(dir_ + "/m.onnx"), &model_, &err)) << err;
  }
  // The op types the session runs after preparing with `disabled` passes off.
  std::vector<std::string> ops(const std::vector<std::string>& disabled) {
    Session s(ctx_, dev_, &model_);
    std::string err;
    for (const std::string& p : disabled) EXPECT_TRUE(s.disable_pass(p, &err)) << err;
    EXPECT_TRUE(s.prepare(&err)) << err;
    std::vector<std::string> out;
    for (const auto& n : s.model().nodes()) out.push_back(n.op_type);
    return out;
  }
  // Every graph output's values for input `x` (float32 of `sizes`).
  std::vector<std::vector<float>> run(const std::vector<std::string>& disabled, const std::string& in,
                                      std::vector<int64_t> sizes, const std::vector<float>& x) {
    Session s(ctx_, dev_, &model_);
    std::string err;
    for (const std::string& p : disabled) EXPECT_TRUE(s.disable_pass(p, &err)) << err;
    bp_tensor_t* t = nullptr;
    EXPECT_EQ(bp_tensor_from_host(ctx_, dev_, static_cast<int32_t>(sizes.size()), sizes.data(),
                                  DLDataType{kDLFloat, 32, 1}, x.data(), x.size() * 4, &t),
              BP_STATUS_OK);
    std::vector<bp_tensor_t*> outs;
    EXPECT_TRUE(s.run({{in, t}}, &outs, &err)) << err;
    bp_tensor_release(t);
    std::vector<std::vector<float>> vals;
    for (bp_tensor_t* o : outs) {
      std::vector<float> v(static_cast<size_t>(bp_tensor_numel(o)));
      EXPECT_EQ(bp_tensor_to_host(o, v.data(), v.size() * 4), BP_STATUS_OK);
      vals.push_back(v);
      bp_tensor_release(o);
    }
    return vals;
  }
  // Optimized and unoptimized runs agree (rtol 1e-4, atol 1e-5).
  void expect_same_outputs(const std::string& in, std::vector<int64_t> sizes) {
    size_t n = 1;
    for (int64_t d : sizes) n *= static_cast<size_t>(d);
    const std::vector<float> x = ramp(n, -2.0f, 2.0f, 7);
    const auto opt = run({}, in, sizes, x);
    const auto ref = run({"all"}, in, sizes, x);
    ASSERT_EQ(opt.size(), ref.size());
    for (size_t o = 0; o < ref.size(); ++o) {
      ASSERT_EQ(opt[o].size(), ref[o].size());
      for (size_t k = 0; k < ref[o].size(); ++k) {
        EXPECT_NEAR(opt[o][k], ref[o][k], 1e-5 + 1e-4 * std::fabs(ref[o][k])) << "output " << o << " at " << k;
      }
    }
  }
  // Conv(X, W[3, 2, 3, 3], B) -> c; BatchNormalization(c) -> Y. `w_input`: W is a graph input.
  Graph conv_bn(bool w_input) {
    Graph g;
    g.input("X", {1, 2, 5, 5});
    if (w_input) {
      g.input("W", {3, 2, 3, 3});
    } else {
      g.init("W", {3, 2, 3, 3}, ramp(54, -1.0f, 1.0f, 1));
    }
    g.init("B", {3}, {0.1f, -0.2f, 0.3f});
    attr_ints(g.node("Conv", {"X", "W", "B"}, {"c"}), "pads", {1, 1, 1, 1});
    add_bn(&g, "c", "Y", 3);
    g.output("Y", {1, 3, 5, 5});
    return g;
  }
  void add_bn(Graph* g, const std::string& in, const std::string& out, int64_t m) {
    const size_t n = static_cast<size_t>(m);
    g->init("scale", {m}, ramp(n, 0.5f, 1.5f, 2));
    g->init("shift", {m}, ramp(n, -0.5f, 0.5f, 3));
    g->init("mean", {m}, ramp(n, -0.3f, 0.3f, 4));
    g->init("var", {m}, ramp(n, 0.2f, 2.0f, 5));
    attr_float(g->node("BatchNormalization", {in, "scale", "shift", "mean", "var"}, {out}), "epsilon", 1e-3f);
  }
  bp_context_t* ctx_ = nullptr;
  bp_device_t dev_{};
  std::string dir_;
  Model model_;
};

using Ops = std::vector<std::string>;

}  // namespace
