// The graph optimizer's passes (src/passes): on small hand-built graphs,
// each pass rewrites what it should (the session's model() shows the
// nodes that run), leaves almost-matching patterns alone, and the outputs
// match the same session with every pass off.
#include "passes_fixture.h"

namespace {

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
