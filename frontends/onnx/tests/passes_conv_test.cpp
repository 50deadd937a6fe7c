// The graph optimizer's convolution passes on small hand-built graphs:
// conv-act (Conv [+ residual Add] [+ activation] -> backplane.ConvFused)
// and channels-last; each fuses or marks what it should, leaves almost-
// matching patterns alone, and the outputs match the session with every
// pass off.
#include "passes_fixture.h"

namespace {

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

}  // namespace
