// The graph optimizer's passes (src/passes): on small hand-built graphs,
// each pass rewrites what it should (the session's model() shows the
// nodes that run), leaves almost-matching patterns alone, and the outputs
// match the same session with every pass off.
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

void attr_ints(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void attr_float(onnx::NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

onnx::TensorProto* int64_init(Graph* g, const std::string& name, std::vector<int64_t> dims,
                              const std::vector<int64_t>& v) {
  auto* t = g->g()->add_initializer();
  t->set_name(name);
  t->set_data_type(7);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t x : v) t->add_int64_data(x);
  return t;
}

// Deterministic values in [lo, hi).
std::vector<float> ramp(size_t n, float lo, float hi, uint32_t seed) {
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

TEST_F(PassesTest, EveryPassIsListedAndUnknownNamesAreRefused) {
  const auto passes = bponnx::optimizer_passes();
  ASSERT_GE(passes.size(), 2u);
  Graph g;
  g.input("X", {2});
  g.node("Relu", {"X"}, {"Y"});
  g.output("Y", {2});
  load(g);
  Session s(ctx_, dev_, &model_);
  std::string err;
  for (const auto& p : passes) EXPECT_TRUE(s.disable_pass(p.first, &err)) << err;
  EXPECT_TRUE(s.disable_pass("all", &err)) << err;
  EXPECT_FALSE(s.disable_pass("constant-fold-everything", &err));
  EXPECT_NE(err.find("unknown optimizer pass 'constant-fold-everything'"), std::string::npos) << err;
  EXPECT_NE(err.find("dead-nodes"), std::string::npos) << err;
}

TEST_F(PassesTest, DeadNodesAreRemoved) {
  Graph g;
  g.input("X", {2, 3});
  g.init("unused", {3}, {1, 2, 3});
  g.init("k", {3}, {1, 2, 3});
  g.node("Add", {"X", "k"}, {"a"});
  g.node("Relu", {"a"}, {"Y"});
  g.node("Sigmoid", {"X"}, {"dead1"});
  g.node("Mul", {"dead1", "unused"}, {"dead2"});
  g.output("Y", {2, 3});
  load(g);
  EXPECT_EQ(ops({}), (Ops{"Add", "Relu"}));
  EXPECT_EQ(ops({"dead-nodes"}), (Ops{"Add", "Relu", "Sigmoid", "Mul"}));
  EXPECT_EQ(ops({"dead-nodes", "constant-fold"}), (Ops{"Add", "Relu", "Sigmoid", "Mul"}));
  EXPECT_EQ(ops({"all"}), (Ops{"Add", "Relu", "Sigmoid", "Mul"}));
  expect_same_outputs("X", {2, 3});
}

TEST_F(PassesTest, ConstantsFold) {
  Graph g;
  g.input("X", {2, 3});
  g.init("a", {3}, {1, 2, 3});
  g.init("b", {3}, {0.5f, -1, 4});
  auto* k = g.node("Constant", {}, {"k"});
  auto* attr = k->add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto::TENSOR);
  attr->mutable_t()->set_data_type(1);
  attr->mutable_t()->add_dims(3);
  for (float v : {2.0f, 3.0f, -1.0f}) attr->mutable_t()->add_float_data(v);
  g.node("Add", {"a", "b"}, {"c"});
  g.node("Mul", {"c", "k"}, {"d"});
  g.node("Add", {"X", "d"}, {"Y"});
  g.output("Y", {2, 3});
  load(g);
  EXPECT_EQ(ops({}), (Ops{"Add"}));
  EXPECT_EQ(ops({"constant-fold"}), (Ops{"Constant", "Add", "Mul", "Add"}));
  EXPECT_EQ(ops({"all"}), (Ops{"Constant", "Add", "Mul", "Add"}));
  expect_same_outputs("X", {2, 3});
}

TEST_F(PassesTest, LargeConstantResultsAndGraphOutputsDoNotFold) {
  Graph g;
  g.input("X", {300, 300});
  g.init("one", {1}, {1.5f});
  int64_init(&g, "shape", {2}, {300, 300});
  g.node("Expand", {"one", "shape"}, {"big"});  // 90000 elements: over the 64 Ki limit
  g.node("Add", {"X", "big"}, {"Y"});
  g.node("Neg", {"one"}, {"Z"});  // a graph output: stays a node
  g.output("Y", {300, 300});
  g.output("Z", {1});
  load(g);
  EXPECT_EQ(ops({}), (Ops{"Expand", "Add", "Neg"}));
}

// x * 0.5 * (1 + erf(x / sqrt 2)) as torch exports it (the Add's operands swapped).
Graph erf_gelu() {
  Graph g;
  g.input("X", {2, 5});
  g.init("sqrt2", {}, {1.41421356f});
  g.init("one", {}, {1.0f});
  g.init("half", {}, {0.5f});
  g.node("Div", {"X", "sqrt2"}, {"d"});
  g.node("Erf", {"d"}, {"e"});
  g.node("Add", {"one", "e"}, {"a"});
  g.node("Mul", {"X", "a"}, {"m"});
  g.node("Mul", {"m", "half"}, {"Y"});
  g.output("Y", {2, 5});
  return g;
}

TEST_F(PassesTest, ErfGeluBecomesGelu) {
  load(erf_gelu());
  EXPECT_EQ(ops({}), (Ops{"Gelu"}));
  EXPECT_EQ(ops({"gelu"}), (Ops{"Div", "Erf", "Add", "Mul", "Mul"}));
  expect_same_outputs("X", {2, 5});
}

TEST_F(PassesTest, ErfGeluWithAnIntermediateReadElsewhereIsLeftAlone) {
  Graph g = erf_gelu();
  g.output("e", {2, 5});  // the Erf's result is needed as it is
  load(g);
  EXPECT_EQ(ops({}), (Ops{"Div", "Erf", "Add", "Mul", "Mul"}));
  Graph h = erf_gelu();
  h.g()->mutable_initializer(2)->set_float_data(0, 0.25f);  // not GELU's 0.5
  load(h);
  EXPECT_EQ(ops({}), (Ops{"Div", "Erf", "Add", "Mul", "Mul"}));
}

// Layer normalization over the last dim as torch exports it below opset 17:
// (X - mean) / sqrt(var + eps) * weight + bias, the Add's operands swapped.
Graph written_out_layer_norm() {
  Graph g;
  g.input("X", {2, 3, 4});
  g.init("two", {}, {2.0f});
  g.init("eps", {}, {1e-5f});
  g.init("weight", {4}, {0.5f, 1.0f, 1.5f, 2.0f});
  g.init("bias", {4}, {0.1f, -0.2f, 0.3f, -0.4f});
  attr_ints(g.node("ReduceMean", {"X"}, {"mean"}), "axes", {-1});
  g.node("Sub", {"X", "mean"}, {"d"});
  g.node("Pow", {"d", "two"}, {"sq"});
  attr_ints(g.node("ReduceMean", {"sq"}, {"var"}), "axes", {-1});
  g.node("Add", {"eps", "var"}, {"ve"});
  g.node("Sqrt", {"ve"}, {"sd"});
  g.node("Div", {"d", "sd"}, {"n"});
  g.node("Mul", {"n", "weight"}, {"w"});
  g.node("Add", {"w", "bias"}, {"Y"});
  g.output("Y", {2, 3, 4});
  return g;
}

const Ops kLayerNormWrittenOut = {"ReduceMean", "Sub", "Pow", "ReduceMean", "Add", "Sqrt", "Div", "Mul", "Add"};

TEST_F(PassesTest, WrittenOutLayerNormBecomesLayerNormalization) {
  load(written_out_layer_norm());
  EXPECT_EQ(ops({}), (Ops{"LayerNormalization"}));
  EXPECT_EQ(ops({"layer-norm"}), kLayerNormWrittenOut);
  expect_same_outputs("X", {2, 3, 4});
}

TEST_F(PassesTest, AlmostLayerNormIsLeftAlone) {
  // The centred values read elsewhere; the means over a dim given as a
  // positive number (the rank is not known to the pass); an exponent of 3.
  Graph read = written_out_layer_norm();
  read.output("d", {2, 3, 4});
  load(read);
  EXPECT_EQ(ops({}), kLayerNormWrittenOut);
  Graph leading = written_out_layer_norm();
  leading.g()->mutable_node(0)->mutable_attribute(0)->set_ints(0, 1);
  leading.g()->mutable_node(3)->mutable_attribute(0)->set_ints(0, 1);
  load(leading);
  EXPECT_EQ(ops({}), kLayerNormWrittenOut);
  Graph cube = written_out_layer_norm();
  cube.g()->mutable_initializer(0)->set_float_data(0, 3.0f);
  load(cube);
  EXPECT_EQ(ops({}), kLayerNormWrittenOut);
}

TEST_F(PassesTest, ConvBatchNormFolds) {
  load(conv_bn(false));
  EXPECT_EQ(ops({}), (Ops{"Conv"}));
  EXPECT_EQ(ops({"conv-bn"}), (Ops{"Conv", "BatchNormalization"}));
  expect_same_outputs("X", {1, 2, 5, 5});
}

TEST_F(PassesTest, ConvTransposeBatchNormFolds) {
  Graph g;
  g.input("X", {1, 2, 4, 4});
  g.init("W", {2, 3, 3, 3}, ramp(54, -1.0f, 1.0f, 1));  // [C in, M out, kh, kw]
  g.node("ConvTranspose", {"X", "W"}, {"c"});
  add_bn(&g, "c", "Y", 3);
  g.output("Y", {1, 3, 6, 6});
  load(g);
  EXPECT_EQ(ops({}), (Ops{"ConvTranspose"}));
  expect_same_outputs("X", {1, 2, 4, 4});
}

TEST_F(PassesTest, ConvBatchNormWithASecondReaderIsLeftAlone) {
  Graph g = conv_bn(false);
  g.node("Relu", {"c"}, {"Z"});  // the Conv's output is needed as it is
  g.output("Z", {1, 3, 5, 5});
  load(g);
  EXPECT_EQ(ops({}), (Ops{"Conv", "BatchNormalization", "Relu"}));
  expect_same_outputs("X", {1, 2, 5, 5});
}

TEST_F(PassesTest, ConvBatchNormWithNonConstantWeightsIsLeftAlone) {
  load(conv_bn(true));
  EXPECT_EQ(ops({}), (Ops{"Conv", "BatchNormalization"}));
}

// Conv(X[1,3,5,5], W[3,3,3,3], B, pads 1) -> c, then `tail` adds nodes
// reading c and making Y [1,3,5,5]. `w_input`: W is a graph input.
Graph conv_then(const std::function<void(Graph*)>& tail, bool w_input = false) {
  Graph g;
  g.input("X", {1, 3, 5, 5});
  if (w_input) {
    g.input("W", {3, 3, 3, 3});
  } else {
    g.init("W", {3, 3, 3, 3}, ramp(81, -0.6f, 0.6f, 11));
  }
  g.init("B", {3}, {0.1f, -0.2f, 0.3f});
  attr_ints(g.node("Conv", {"X", "W", "B"}, {"c"}), "pads", {1, 1, 1, 1});
  tail(&g);
  g.output("Y", {1, 3, 5, 5});
  return g;
}

TEST_F(PassesTest, ConvActivationsBecomeConvFused) {
  struct Case {
    const char* what;
    std::function<void(Graph*)> tail;
    Ops unfused;
  };
  const std::vector<Case> cases = {
      {"Relu", [](Graph* g) { g->node("Relu", {"c"}, {"Y"}); }, {"Conv", "Relu"}},
      {"Sigmoid", [](Graph* g) { g->node("Sigmoid", {"c"}, {"Y"}); }, {"Conv", "Sigmoid"}},
      {"HardSwish", [](Graph* g) { g->node("HardSwish", {"c"}, {"Y"}); }, {"Conv", "HardSwish"}},
      {"HardSigmoid",
       [](Graph* g) {
         auto* n = g->node("HardSigmoid", {"c"}, {"Y"});
         attr_float(n, "alpha", 0.25f);
         attr_float(n, "beta", 0.4f);
       },
       {"Conv", "HardSigmoid"}},
      {"LeakyRelu", [](Graph* g) { attr_float(g->node("LeakyRelu", {"c"}, {"Y"}), "alpha", 0.1f); },
       {"Conv", "LeakyRelu"}},
      {"Clip 0..0.5 (constant inputs)",
       [](Graph* g) {
         g->init("lo", {}, {0.0f});
         g->init("hi", {}, {0.5f});
         g->node("Clip", {"c", "lo", "hi"}, {"Y"});
       },
       {"Conv", "Clip"}},
      {"Clip, min only", [](Graph* g) {
         g->init("lo", {}, {-0.2f});
         g->node("Clip", {"c", "lo"}, {"Y"});
       },
       {"Conv", "Clip"}},
      {"SiLU Mul(c, Sigmoid(c))",
       [](Graph* g) {
         g->node("Sigmoid", {"c"}, {"s"});
         g->node("Mul", {"c", "s"}, {"Y"});
       },
       {"Conv", "Sigmoid", "Mul"}},
      {"SiLU Mul(Sigmoid(c), c)",
       [](Graph* g) {
         g->node("Sigmoid", {"c"}, {"s"});
         g->node("Mul", {"s", "c"}, {"Y"});
       },
       {"Conv", "Sigmoid", "Mul"}},
      {"Add(c, X) residual, Relu",
       [](Graph* g) {
         g->node("Add", {"c", "X"}, {"a"});
         g->node("Relu", {"a"}, {"Y"});
       },
       {"Conv", "Add", "Relu"}},
      {"Add(X, c) residual, no activation", [](Graph* g) { g->node("Add", {"X", "c"}, {"Y"}); }, {"Conv", "Add"}},
      {"Add broadcasting [3,1,1], HardSwish",
       [](Graph* g) {
         g->init("r", {3, 1, 1}, {0.5f, -0.5f, 1.0f});
         g->node("Add", {"c", "r"}, {"a"});
         g->node("HardSwish", {"a"}, {"Y"});
       },
       {"Conv", "Add", "HardSwish"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    load(conv_then(c.tail));
    EXPECT_EQ(ops({}), (Ops{"ConvFused"}));
    EXPECT_EQ(ops({"conv-act"}), c.unfused);
    expect_same_outputs("X", {1, 3, 5, 5});
  }
}

TEST_F(PassesTest, ErfGeluAfterConvBecomesConvFused) {
  load(conv_then([](Graph* g) {
    g->init("sqrt2", {}, {1.41421356f});
    g->init("one", {}, {1.0f});
    g->init("half", {}, {0.5f});
    g->node("Div", {"c", "sqrt2"}, {"d"});
    g->node("Erf", {"d"}, {"e"});
    g->node("Add", {"e", "one"}, {"a"});
    g->node("Mul", {"c", "a"}, {"m"});
    g->node("Mul", {"m", "half"}, {"Y"});
  }));
  EXPECT_EQ(ops({}), (Ops{"ConvFused"}));
  EXPECT_EQ(ops({"conv-act"}), (Ops{"Conv", "Gelu"}));
  expect_same_outputs("X", {1, 3, 5, 5});
}

TEST_F(PassesTest, TwoConvsIntoOneAddFuseOnce) {
  // A residual block with a downsample branch: Add(Conv(X), Conv1x1(X)) -> Relu. The first Conv takes the
  // Add and the Relu (the second Conv's output is its residual); the second stays a Conv.
  load(conv_then([](Graph* g) {
    g->init("W2", {3, 3, 1, 1}, ramp(9, -1.0f, 1.0f, 12));
    g->node("Conv", {"X", "W2"}, {"d"});
    g->node("Add", {"c", "d"}, {"a"});
    g->node("Relu", {"a"}, {"Y"});
  }));
  EXPECT_EQ(ops({}), (Ops{"Conv", "ConvFused"}));
  expect_same_outputs("X", {1, 3, 5, 5});
}

TEST_F(PassesTest, ConvWithNonConstantWeightsFuses) {
  load(conv_then([](Graph* g) { g->node("Relu", {"c"}, {"Y"}); }, /*w_input=*/true));
  EXPECT_EQ(ops({}), (Ops{"ConvFused"}));
}

TEST_F(PassesTest, AlmostConvActivationIsLeftAlone) {
  // The Conv output has a second reader: nothing to fuse (the Relu needs c as it is... and so does the Neg).
  Graph two = conv_then([](Graph* g) {
    g->node("Relu", {"c"}, {"Y"});
    g->node("Neg", {"c"}, {"Z"});
  });
  two.output("Z", {1, 3, 5, 5});
  load(two);
  EXPECT_EQ(ops({}), (Ops{"Conv", "Relu", "Neg"}));
  // The Conv output is a graph output.
  Graph out = conv_then([](Graph* g) { g->node("Relu", {"c"}, {"Y"}); });
  out.output("c", {1, 3, 5, 5});
  load(out);
  EXPECT_EQ(ops({}), (Ops{"Conv", "Relu"}));
  // The Add's output is read elsewhere too: Conv + Add fuse, the Relu stays.
  Graph add = conv_then([](Graph* g) {
    g->node("Add", {"c", "X"}, {"a"});
    g->node("Relu", {"a"}, {"Y"});
    g->node("Neg", {"a"}, {"Z"});
  });
  add.output("Z", {1, 3, 5, 5});
  load(add);
  EXPECT_EQ(ops({}), (Ops{"ConvFused", "Relu", "Neg"}));
  expect_same_outputs("X", {1, 3, 5, 5});
  // A Clip whose bound is not a constant.
  Graph clip = conv_then([](Graph* g) {
    g->input("lo", {});
    g->node("Clip", {"c", "lo"}, {"Y"});
  });
  load(clip);
  EXPECT_EQ(ops({}), (Ops{"Conv", "Clip"}));
  // SiLU whose Sigmoid output is read elsewhere too.
  Graph silu = conv_then([](Graph* g) {
    g->node("Sigmoid", {"c"}, {"s"});
    g->node("Mul", {"c", "s"}, {"Y"});
  });
  silu.output("s", {1, 3, 5, 5});
  load(silu);
  EXPECT_EQ(ops({}), (Ops{"Conv", "Sigmoid", "Mul"}));
  // Gelu in its tanh form is no conv2d_fused activation.
  Graph tanh_gelu = conv_then([](Graph* g) {
    auto* n = g->node("Gelu", {"c"}, {"Y"});
    auto* a = n->add_attribute();
    a->set_name("approximate");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s("tanh");
  });
  load(tanh_gelu);
  EXPECT_EQ(ops({}), (Ops{"Conv", "Gelu"}));
}

TEST_F(PassesTest, ConvActivationStaysUnfusedWithoutANativeKernel) {
  // vendor_sim has no conv2d_fused kernel: it would run through the CPU fallback, so the graph stays.
  bp_context_t* ctx = nullptr;
  ASSERT_EQ(bp_context_create(nullptr, &ctx), BP_STATUS_OK);
  ASSERT_EQ(bp_plugin_load(ctx, BP_BUILD_PLUGIN_DIR "/libbackplane_cpu.so", nullptr), BP_STATUS_OK);
  bp_device_t dev{};
  if (bp_plugin_load(ctx, BP_BUILD_PLUGIN_DIR "/libbackplane_vendor_sim.so", nullptr) != BP_STATUS_OK ||
      bp_device_parse(ctx, "vendor_sim", &dev) != BP_STATUS_OK) {
    bp_context_destroy(ctx);
    GTEST_SKIP() << "no vendor_sim device: " << bp_last_error_message();
  }
  load(conv_then([](Graph* g) { g->node("Relu", {"c"}, {"Y"}); }));
  {
    Session s(ctx, dev, &model_);
    std::string err;
    EXPECT_TRUE(s.prepare(&err)) << err;
    Ops got;
    for (const auto& n : s.model().nodes()) got.push_back(n.op_type);
    EXPECT_EQ(got, (Ops{"Conv", "Relu"}));
  }
  bp_context_destroy(ctx);
}

// Conv -> Relu -> Conv (+ the first Conv's output) -> MaxPool -> Y: a
// residual block whose operators all keep the channels-last format.
Graph conv_block() {
  Graph g;
  g.input("X", {1, 4, 6, 6});
  g.init("W1", {8, 4, 3, 3}, ramp(288, -0.5f, 0.5f, 11));
  g.init("W2", {8, 8, 1, 1}, ramp(64, -0.5f, 0.5f, 12));
  attr_ints(g.node("Conv", {"X", "W1"}, {"c1"}), "pads", {1, 1, 1, 1});
  g.node("Relu", {"c1"}, {"r"});
  g.node("Conv", {"r", "W2"}, {"c2"});
  g.node("Add", {"c1", "c2"}, {"s"});
  attr_ints(g.node("MaxPool", {"s"}, {"Y"}), "kernel_shape", {2, 2});
  g.output("Y", {1, 8, 5, 5});
  return g;
}

int channels_last_marks(const Session& s) {
  int marked = 0;
  for (const auto& n : s.model().nodes()) marked += n.get_int("backplane_channels_last", 0) != 0 ? 1 : 0;
  return marked;
}

TEST_F(PassesTest, ChannelsLastMarksCpuConvsAndKeepsTheValues) {
  load(conv_block());
  for (bool off : {false, true}) {
    Session s(ctx_, dev_, &model_);
    std::string err;
    if (off) {
      ASSERT_TRUE(s.disable_pass("channels-last", &err)) << err;
    }
    ASSERT_TRUE(s.prepare(&err)) << err;
    EXPECT_EQ(channels_last_marks(s), off ? 0 : 2);
  }
  expect_same_outputs("X", {1, 4, 6, 6});
}

TEST_F(PassesTest, ChannelsLastLeavesOtherDevicesAlone) {
  // vendor_sim's convolution has no preferred layout: nothing is marked.
  if (bp_plugin_load(ctx_, BP_BUILD_PLUGIN_DIR "/libbackplane_vendor_sim.so", nullptr) != BP_STATUS_OK) {
    GTEST_SKIP() << "the vendor_sim plugin is not built: " << bp_last_error_message();
  }
  bp_device_t sim{};
  ASSERT_EQ(bp_device_parse(ctx_, "vendor_sim", &sim), BP_STATUS_OK) << bp_last_error_message();
  load(conv_block());
  Session s(ctx_, sim, &model_);
  std::string err;
  ASSERT_TRUE(s.prepare(&err)) << err;
  EXPECT_EQ(channels_last_marks(s), 0);
}

TEST_F(PassesTest, BpRunRefusesAnUnknownPass) {
  Graph g;
  g.input("X", {2});
  g.node("Relu", {"X"}, {"Y"});
  g.output("Y", {2});
  const std::string path = g.save(dir_ + "/r.onnx");
  const std::string cmd = std::string(BP_RUN_PATH) + " " + path +
                          " --device cpu --plugin " BP_BUILD_PLUGIN_DIR "/libbackplane_cpu.so --no-opt nope > " + dir_ +
                          "/out.txt 2>&1";
  const int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 2);
  const std::string ok = std::string(BP_RUN_PATH) + " " + path +
                         " --device cpu --plugin " BP_BUILD_PLUGIN_DIR
                         "/libbackplane_cpu.so --no-opt all --no-opt dead-nodes > /dev/null 2>&1";
  EXPECT_EQ(std::system(ok.c_str()), 0);
}

}  // namespace
