// ONNX operators mapped onto several Backplane operators (ScatterND, Resize, GridSample, Slice, Compress, Unique,
// QuantizeLinear / DequantizeLinear, NonMaxSuppression,
// GatherElements, the recurrent cells), on small graphs built here: results
// worked out by hand, and bad input reported as one error naming the node.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdlib>
#include <limits>
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

class OpsMappingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/bponnx_ops_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_EQ(bp_context_create(nullptr, &ctx_), BP_STATUS_OK);
    ASSERT_EQ(bp_plugin_load(ctx_, BP_BUILD_PLUGIN_DIR "/libbackplane_cpu.so", nullptr), BP_STATUS_OK)
        << bp_last_error_message();
  }
  void TearDown() override {
    for (bp_tensor_t* t : held_) bp_tensor_release(t);
    session_.reset();  // its initializers live on the context
    bp_context_destroy(ctx_);
    std::system(("rm -rf " + dir_).c_str());
  }
  bp_tensor_t* tensor(std::vector<int64_t> sizes, DLDataType dt, const void* data, size_t bytes) {
    bp_tensor_t* t = nullptr;
    EXPECT_EQ(bp_tensor_from_host(ctx_, bp_device_t{0, 0}, static_cast<int32_t>(sizes.size()), sizes.data(), dt, data,
                                  bytes, &t),
              BP_STATUS_OK);
    held_.push_back(t);
    return t;
  }
  bp_tensor_t* floats(std::vector<int64_t> sizes, const std::vector<float>& v) {
    return tensor(std::move(sizes), DLDataType{kDLFloat, 32, 1}, v.data(), v.size() * 4);
  }
  bp_tensor_t* ints(std::vector<int64_t> sizes, const std::vector<int64_t>& v) {
    return tensor(std::move(sizes), DLDataType{kDLInt, 64, 1}, v.data(), v.size() * 8);
  }
  std::vector<float> values(bp_tensor_t* t) {
    std::vector<float> v(static_cast<size_t>(bp_tensor_numel(t)));
    EXPECT_EQ(bp_tensor_to_host(t, v.data(), v.size() * 4), BP_STATUS_OK);
    return v;
  }
  // Runs the graph; returns false with *err when the session fails.
  bool run(const Graph& g, const std::map<std::string, bp_tensor_t*>& in, std::vector<bp_tensor_t*>* outs,
           std::string* err) {
    EXPECT_TRUE(Model::load(g.save(dir_ + "/m.onnx"), &model_, err)) << *err;
    session_ = std::make_unique<Session>(ctx_, bp_device_t{0, 0}, &model_);
    const bool ok = session_->run(in, outs, err);
    for (bp_tensor_t* t : *outs) held_.push_back(t);
    return ok;
  }
  std::string dir_;
  bp_context_t* ctx_ = nullptr;
  Model model_;
  std::unique_ptr<Session> session_;
  std::vector<bp_tensor_t*> held_;
};

TEST_F(OpsMappingTest, ScatterNDWithIndicesOnTheDevice) {
  // 70 rows of data [70, 2] = 0; 66 index tuples (more than the executor
  // copies to the host), row r gets update r + 1 in both columns; -1 is the
  // last row.
  Graph g(13);
  g.input("data", {70, 2});
  g.input("idx", {66, 1}, 7);
  g.input("upd", {66, 2});
  g.output("y", {70, 2});
  g.node("ScatterND", {"data", "idx", "upd"}, {"y"}, "scatter_rows");
  std::vector<int64_t> idx;
  std::vector<float> upd;
  for (int64_t k = 0; k < 66; ++k) {
    idx.push_back(k == 65 ? -1 : k);
    upd.insert(upd.end(), {static_cast<float>(k + 1), static_cast<float>(k + 1)});
  }
  std::vector<bp_tensor_t*> outs;
  std::string err;
  bp_tensor_t* data = floats({70, 2}, std::vector<float>(140, 0.f));
  ASSERT_TRUE(run(g, {{"data", data}, {"idx", ints({66, 1}, idx)}, {"upd", floats({66, 2}, upd)}}, &outs, &err)) << err;
  const std::vector<float> y = values(outs.at(0));
  for (int64_t r = 0; r < 70; ++r) {
    const float want = r < 65 ? static_cast<float>(r + 1) : r == 69 ? 66.f : 0.f;
    EXPECT_EQ(y[static_cast<size_t>(2 * r)], want) << r;
  }
  // A row out of range (70) fails the run naming the node; nothing is returned.
  idx[3] = 70;
  outs.clear();
  EXPECT_FALSE(run(g, {{"data", data}, {"idx", ints({66, 1}, idx)}, {"upd", floats({66, 2}, upd)}}, &outs, &err));
  EXPECT_TRUE(outs.empty());
  EXPECT_NE(err.find("scatter_rows"), std::string::npos) << err;
  EXPECT_NE(err.find("INVALID_ARGUMENT"), std::string::npos) << err;
  // The indices are read back on this error path: the message names the
  // model's index, its position and ONNX's range.
  EXPECT_NE(err.find("ScatterND: INVALID_ARGUMENT: argument 'indices' holds 70 at position 3; expected an index in "
                     "[-70, 70) for data dim 0"),
            std::string::npos)
      << err;
}

TEST_F(OpsMappingTest, GatherElementsIndexOutOfRangeNamesNodeIndexAndRange) {
  Graph g(13);
  g.input("x", {2, 3});
  g.input("i", {2, 2}, 7);
  g.output("y", {2, 2});
  g.node("GatherElements", {"x", "i"}, {"y"}, "pick")->add_attribute()->set_name("axis");
  auto* a = g.g()->mutable_node(0)->mutable_attribute(0);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(1);
  std::vector<bp_tensor_t*> outs;
  std::string err;
  bp_tensor_t* x = floats({2, 3}, {0, 1, 2, 3, 4, 5});
  ASSERT_TRUE(run(g, {{"x", x}, {"i", ints({2, 2}, {2, -3, 1, -1})}}, &outs, &err)) << err;
  EXPECT_EQ(values(outs.at(0)), (std::vector<float>{2, 0, 4, 5}));
  outs.clear();
  EXPECT_FALSE(run(g, {{"x", x}, {"i", ints({2, 2}, {0, 1, 3, 0})}}, &outs, &err));
  EXPECT_NE(err.find("pick"), std::string::npos) << err;
  // Host-known indices are checked by the mapping ("[-3, 3)", as ONNX counts),
  // device ones by the kernel after wrapping ("[0, 3)"): either names both.
  EXPECT_NE(err.find("INVALID_ARGUMENT"), std::string::npos) << err;
  EXPECT_NE(err.find("argument 'ind"), std::string::npos) << err;
  EXPECT_NE(err.find("holds 3 at position 2"), std::string::npos) << err;
  EXPECT_NE(err.find(", 3)"), std::string::npos) << err;
  // 80 indices stay on the device; the failing call reads them back to name the model's index.
  Graph g80(13);
  g80.input("x", {2, 3});
  g80.input("i", {2, 40}, 7);
  g80.output("y", {2, 40});
  auto* ax = g80.node("GatherElements", {"x", "i"}, {"y"}, "pick80")->add_attribute();
  ax->set_name("axis");
  ax->set_type(onnx::AttributeProto::INT);
  ax->set_i(1);
  std::vector<int64_t> many(80, -1);
  many[45] = -4;
  outs.clear();
  EXPECT_FALSE(run(g80, {{"x", x}, {"i", ints({2, 40}, many)}}, &outs, &err));
  EXPECT_NE(err.find("pick80"), std::string::npos) << err;
  EXPECT_NE(err.find("GatherElements: INVALID_ARGUMENT: argument 'indices' holds -4 at position 45; expected an "
                     "index in [-3, 3)"),
            std::string::npos)
      << err;
}

TEST_F(OpsMappingTest, RecurrentNodeWithOtherActivationsIsRefusedNamingIt) {
  Graph g(14);
  g.input("x", {1, 1, 2});
  g.output("y", {1, 1, 1, 1});
  g.init("w", {1, 3, 2}, std::vector<float>(6, 0.5f));
  g.init("r", {1, 3, 1}, std::vector<float>(3, 0.5f));
  auto* n = g.node("GRU", {"x", "w", "r"}, {"y"}, "gru0");
  auto* hs = n->add_attribute();
  hs->set_name("hidden_size");
  hs->set_type(onnx::AttributeProto::INT);
  hs->set_i(1);
  auto* act = n->add_attribute();
  act->set_name("activations");
  act->set_type(onnx::AttributeProto::STRINGS);
  act->add_strings("Relu");
  act->add_strings("Tanh");
  std::vector<bp_tensor_t*> outs;
  std::string err;
  EXPECT_FALSE(run(g, {{"x", floats({1, 1, 2}, {1, 2})}}, &outs, &err));
  EXPECT_NE(err.find("gru0"), std::string::npos) << err;
  EXPECT_NE(err.find("attribute GRU.activations=Relu,Tanh"), std::string::npos) << err;
  // The defaults spelled out run: z = r = sigmoid(1.5), h~ = tanh(1.5), H = (1 - z) * h~.
  act->clear_strings();
  act->add_strings("Sigmoid");
  act->add_strings("Tanh");
  outs.clear();
  ASSERT_TRUE(run(g, {{"x", floats({1, 1, 2}, {1, 2})}}, &outs, &err)) << err;
  const double z = 1.0 / (1.0 + std::exp(-1.5));
  EXPECT_NEAR(values(outs.at(0)).at(0), (1.0 - z) * std::tanh(1.5), 1e-6);
}

onnx::AttributeProto* attr(onnx::NodeProto* n, const std::string& name) {
  auto* a = n->add_attribute();
  a->set_name(name);
  return a;
}

TEST_F(OpsMappingTest, EinsumChainsThreeOperandsAndInfersTheOutput) {
  // A [[1, 2], [3, 4]], B [[1, 0], [1, 1]], v [1, 2]: A B = [[3, 2], [7, 4]],
  // (A B) v = [7, 15]; "ij,jk" alone keeps the labels used once, sorted: ik.
  for (const std::string eq : {"ij,jk,k->i", "ij, jk"}) {
    const bool chain = eq.find("->") != std::string::npos;
    Graph g(13);
    g.input("a", {2, 2});
    g.input("b", {2, 2});
    if (chain) g.input("v", {2});
    g.output("y", chain ? std::vector<int64_t>{2} : std::vector<int64_t>{2, 2});
    auto* n =
        g.node("Einsum", chain ? std::vector<std::string>{"a", "b", "v"} : std::vector<std::string>{"a", "b"}, {"y"});
    auto* e = attr(n, "equation");
    e->set_type(onnx::AttributeProto::STRING);
    e->set_s(eq);
    std::map<std::string, bp_tensor_t*> in = {{"a", floats({2, 2}, {1, 2, 3, 4})}, {"b", floats({2, 2}, {1, 0, 1, 1})}};
    if (chain) in["v"] = floats({2}, {1, 2});
    std::vector<bp_tensor_t*> outs;
    std::string err;
    ASSERT_TRUE(run(g, in, &outs, &err)) << eq << ": " << err;
    EXPECT_EQ(values(outs.at(0)), chain ? (std::vector<float>{7, 15}) : (std::vector<float>{3, 2, 7, 4})) << eq;
  }
}

TEST_F(OpsMappingTest, ReverseRnnWithSequenceLengthsStartsAtEachSequencesEnd) {
  // Batch 0 has 2 valid steps of 3, batch 1 all 3. Batch 0's result must be
  // that of the same RNN run on its first 2 steps alone, and its Y at step 2 zero.
  auto graph = [&](int64_t steps, int64_t batch, bool lens) {
    Graph g(14);
    g.input("x", {steps, batch, 2});
    if (lens) g.input("lens", {batch}, 6);  // int32
    g.output("y", {steps, 1, batch, 3});
    g.output("y_h", {1, batch, 3});
    g.init("w", {1, 3, 2}, {0.5f, -0.3f, 0.8f, 0.1f, -0.6f, 0.4f});
    g.init("r", {1, 3, 3}, {0.2f, -0.1f, 0.3f, 0.4f, 0.5f, -0.2f, -0.3f, 0.1f, 0.6f});
    g.init("bias", {1, 6}, {0.1f, -0.2f, 0.05f, 0.3f, 0.0f, -0.1f});
    auto* n = g.node("RNN", {"x", "w", "r", "bias", lens ? "lens" : ""}, {"y", "y_h"}, "rnn0");
    auto* h = attr(n, "hidden_size");
    h->set_type(onnx::AttributeProto::INT);
    h->set_i(3);
    auto* d = attr(n, "direction");
    d->set_type(onnx::AttributeProto::STRING);
    d->set_s("reverse");
    return g;
  };
  const std::vector<float> x = {1, 2, -1, 0.5f, 0.3f, -0.7f, 2, 1, -0.4f, 0.9f, 1.5f, -1.2f};  // [3, 2, 2]
  const std::vector<int32_t> lens = {2, 3};
  std::vector<bp_tensor_t*> outs, ref;
  std::string err;
  bp_tensor_t* l = tensor({2}, DLDataType{kDLInt, 32, 1}, lens.data(), 8);
  ASSERT_TRUE(run(graph(3, 2, true), {{"x", floats({3, 2, 2}, x)}, {"lens", l}}, &outs, &err)) << err;
  const std::vector<float> y = values(outs.at(0)), y_h = values(outs.at(1));
  // Batch 0's two steps alone: x[0][0], x[1][0].
  ASSERT_TRUE(run(graph(2, 1, false), {{"x", floats({2, 1, 2}, {x[0], x[1], x[4], x[5]})}}, &ref, &err)) << err;
  const std::vector<float> ry = values(ref.at(0)), ry_h = values(ref.at(1));
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_FLOAT_EQ(y_h[k], ry_h[k]) << k;
    EXPECT_FLOAT_EQ(y[k], ry[k]) << k;          // step 0, batch 0
    EXPECT_FLOAT_EQ(y[6 + k], ry[3 + k]) << k;  // step 1, batch 0
    EXPECT_EQ(y[12 + k], 0.f) << k;             // step 2, batch 0: past its length
  }
  EXPECT_NE(y_h[0], y_h[3]);  // batch 1 ran its own 3 steps
}


// A QDQ pair as a quantized model has it: QuantizeLinear with a per-column
// scale and int8 zero point (axis 1), then DequantizeLinear back. Worked by
// hand: q = saturate(round_half_even(x / scale) + zp), x' = (q - zp) * scale.
Graph QdqGraph(const std::vector<float>& scale, int64_t scale_len) {
  Graph g(13);
  g.input("x", {2, 3});
  g.output("q", {2, 3});
  g.output("z", {2, 3});
  g.init("scale", {scale_len}, scale);
  auto* zp = g.g()->add_initializer();
  zp->set_name("zp");
  zp->set_data_type(onnx::TensorProto::INT8);
  zp->add_dims(3);
  for (int32_t v : {0, 1, -2}) zp->add_int32_data(v);
  g.node("QuantizeLinear", {"x", "scale", "zp"}, {"q"}, "quant");
  g.node("DequantizeLinear", {"q", "scale", "zp"}, {"z"}, "dequant");
  return g;
}

TEST_F(OpsMappingTest, QuantizeLinearPerAxisRoundsHalvesToEvenAndSaturates) {
  const std::vector<float> x = {-1.0f, 0.25f, 2.0f, 3.0f, -0.75f, 1000.0f};
  std::vector<bp_tensor_t*> outs;
  std::string err;
  ASSERT_TRUE(run(QdqGraph({0.5f, 0.5f, 4.0f}, 3), {{"x", floats({2, 3}, x)}}, &outs, &err)) << err;
  ASSERT_EQ(outs.size(), 2u);
  ASSERT_EQ(bp_tensor_dtype(outs[0]).code, kDLInt);
  ASSERT_EQ(bp_tensor_dtype(outs[0]).bits, 8);
  std::vector<int8_t> q(6);
  ASSERT_EQ(bp_tensor_to_host(outs[0], q.data(), q.size()), BP_STATUS_OK);
  // 0.25 / 0.5 = 0.5 -> 0 and -0.75 / 0.5 = -1.5 -> -2 (halves to even),
  // 2 / 4 = 0.5 -> 0; 1000 / 4 + (-2) = 248 saturates to 127.
  EXPECT_EQ(q, (std::vector<int8_t>{-2, 1, -2, 6, -1, 127}));
  EXPECT_EQ(values(outs[1]), (std::vector<float>{-1, 0, 0, 3, -1, 516}));
}

TEST_F(OpsMappingTest, QuantizeLinearRefusesAZeroScaleAndAMisSizedOneNamingTheNode) {
  std::vector<bp_tensor_t*> outs;
  std::string err;
  EXPECT_FALSE(run(QdqGraph({0.5f, 0.0f, 4.0f}, 3), {{"x", floats({2, 3}, std::vector<float>(6, 1.f))}}, &outs, &err));
  EXPECT_TRUE(outs.empty());
  EXPECT_NE(err.find("quant"), std::string::npos) << err;
  EXPECT_NE(err.find("QuantizeLinear: INVALID_ARGUMENT: argument 'y_scale' must hold positive finite scales"),
            std::string::npos)
      << err;
  outs.clear();
  EXPECT_FALSE(run(QdqGraph({0.5f, 0.5f}, 2), {{"x", floats({2, 3}, std::vector<float>(6, 1.f))}}, &outs, &err));
  EXPECT_TRUE(outs.empty());
  EXPECT_NE(err.find("argument 'y_scale' must be a scalar or a 1-D tensor of the size of axis 1 of the input, but "
                     "has sizes [2]"),
            std::string::npos)
      << err;
}

TEST_F(OpsMappingTest, NonMaxSuppressionKeepsTheBestOfOverlappingBoxesAndRefusesBadShapes) {
  // Boxes 0 and 1 overlap with IoU 0.9 (> 0.5): 1 (score 0.9) suppresses 0
  // (0.8); box 2 lies apart and stays; box 3 scores under the threshold.
  auto graph = [](int64_t boxes_last) {
    Graph g(11);
    g.input("boxes", {1, 4, boxes_last});
    g.input("scores", {1, 1, 4});
    g.output("sel", {3, 3});
    auto* m = g.g()->add_initializer();  // max_output_boxes_per_class: int64
    m->set_name("max_out");
    m->set_data_type(onnx::TensorProto::INT64);
    m->add_dims(1);
    m->add_int64_data(10);
    g.init("iou", {1}, {0.5f});
    g.init("score_min", {1}, {0.3f});
    g.node("NonMaxSuppression", {"boxes", "scores", "max_out", "iou", "score_min"}, {"sel"}, "nms");
    return g;
  };
  const std::vector<float> boxes = {0, 0, 1, 1, 0, 0, 1, 0.9f, 5, 5, 6, 6, 8, 8, 9, 9};
  std::vector<bp_tensor_t*> outs;
  std::string err;
  ASSERT_TRUE(run(graph(4), {{"boxes", floats({1, 4, 4}, boxes)}, {"scores", floats({1, 1, 4}, {0.8f, 0.9f, 0.7f, 0.2f})}},
                  &outs, &err))
      << err;
  std::vector<int64_t> sel(static_cast<size_t>(bp_tensor_numel(outs.at(0))));
  ASSERT_EQ(bp_tensor_to_host(outs[0], sel.data(), sel.size() * 8), BP_STATUS_OK);
  EXPECT_EQ(sel, (std::vector<int64_t>{0, 0, 1, 0, 0, 2}));
  outs.clear();
  EXPECT_FALSE(run(graph(3), {{"boxes", floats({1, 4, 3}, std::vector<float>(12, 0.f))},
                              {"scores", floats({1, 1, 4}, {0.8f, 0.9f, 0.7f, 0.2f})}},
                   &outs, &err));
  EXPECT_TRUE(outs.empty());
  EXPECT_NE(err.find("nms"), std::string::npos) << err;
  EXPECT_NE(err.find("NonMaxSuppression: INVALID_ARGUMENT: expected boxes [batches, boxes, 4] and scores [batches, "
                     "classes, boxes] but got boxes [1, 4, 3] and scores [1, 1, 4]"),
            std::string::npos)
      << err;
}

}  // namespace

TEST_F(OpsMappingTest, UpsampleLinearTakesAsymmetricCoordinatesAndRepeatsTheEdge) {
  // Upsample-9 samples source x = out / 2: 0 -> 1, 0.5 -> 1.5, 1 -> 2 and
  // 1.5 -> 2 (its right neighbour is the edge copy), along both axes.
  Graph g(9);
  g.input("x", {1, 1, 2, 2});
  g.output("y", {1, 1, 4, 4});
  g.init("scales", {4}, {1, 1, 2, 2});
  auto* n = g.node("Upsample", {"x", "scales"}, {"y"}, "up");
  auto* mode = attr(n, "mode");
  mode->set_type(onnx::AttributeProto::STRING);
  mode->set_s("linear");
  std::vector<bp_tensor_t*> outs;
  std::string err;
  ASSERT_TRUE(run(g, {{"x", floats({1, 1, 2, 2}, {1, 2, 3, 4})}}, &outs, &err)) << err;
  EXPECT_EQ(values(outs.at(0)), (std::vector<float>{1, 1.5, 2, 2, 2, 2.5, 3, 3, 3, 3.5, 4, 4, 3, 3.5, 4, 4}));
}

TEST_F(OpsMappingTest, ResizeCropFillsOutsideTheInputWithTheExtrapolationValue) {
  // tf_crop_and_resize over rows 0..1 and columns 0..2 of a 2x2 input: the
  // third column samples x = 2, past the last column, and takes 10.
  Graph g(13);
  g.input("x", {1, 1, 2, 2});
  g.output("y", {1, 1, 2, 3});
  g.init("roi", {8}, {0, 0, 0, 0, 1, 1, 1, 2});
  auto* sizes = g.g()->add_initializer();
  sizes->set_name("sizes");
  sizes->set_data_type(onnx::TensorProto::INT64);
  sizes->add_dims(4);
  for (int64_t v : {1, 1, 2, 3}) sizes->add_int64_data(v);
  auto* n = g.node("Resize", {"x", "roi", "", "sizes"}, {"y"}, "crop");
  auto* mode = attr(n, "mode");
  mode->set_type(onnx::AttributeProto::STRING);
  mode->set_s("linear");
  auto* coord = attr(n, "coordinate_transformation_mode");
  coord->set_type(onnx::AttributeProto::STRING);
  coord->set_s("tf_crop_and_resize");
  auto* fill = attr(n, "extrapolation_value");
  fill->set_type(onnx::AttributeProto::FLOAT);
  fill->set_f(10);
  std::vector<bp_tensor_t*> outs;
  std::string err;
  ASSERT_TRUE(run(g, {{"x", floats({1, 1, 2, 2}, {1, 2, 3, 4})}}, &outs, &err)) << err;
  EXPECT_EQ(values(outs.at(0)), (std::vector<float>{1, 2, 10, 3, 4, 10}));
}

TEST_F(OpsMappingTest, SliceWithNegativeStepsWalksBackwardFromTheClampedStart) {
  // [0..6]: start -1, end "before the beginning", step -2 -> 6, 4, 2, 0; a
  // start before the beginning clamps to 0 (one element); start <= end: none.
  struct Case {
    int64_t start, end, step;
    std::vector<float> want;
  };
  const int64_t before = std::numeric_limits<int64_t>::min();
  for (const Case& c : {Case{-1, before, -2, {6, 4, 2, 0}}, Case{-100, before, -1, {0}}, Case{2, 5, -1, {}},
                        Case{5, 1, -3, {5, 2}}}) {
    Graph g(13);
    g.input("x", {7});
    g.output("y", {static_cast<int64_t>(c.want.size())});
    for (const auto& [name, v] : std::vector<std::pair<std::string, int64_t>>{
             {"starts", c.start}, {"ends", c.end}, {"axes", 0}, {"steps", c.step}}) {
      auto* t = g.g()->add_initializer();
      t->set_name(name);
      t->set_data_type(onnx::TensorProto::INT64);
      t->add_dims(1);
      t->add_int64_data(v);
    }
    g.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"}, "slice");
    std::vector<bp_tensor_t*> outs;
    std::string err;
    ASSERT_TRUE(run(g, {{"x", floats({7}, {0, 1, 2, 3, 4, 5, 6})}}, &outs, &err)) << err;
    EXPECT_EQ(values(outs.at(0)), c.want) << c.start << ":" << c.end << ":" << c.step;
  }
}

TEST_F(OpsMappingTest, CompressKeepsTheSlicesItsConditionSelectsAndRefusesA2DCondition) {
  // Columns 0 and 2 of [[1, 2, 3], [4, 5, 6]]; a 2-D condition is bad
  // input, reported naming the operator, the argument and the sizes.
  for (const bool bad : {false, true}) {
    Graph g(13);
    g.input("x", {2, 3});
    g.input("c", bad ? std::vector<int64_t>{1, 3} : std::vector<int64_t>{3});
    g.output("y", {2, 2});
    auto* n = g.node("Compress", {"x", "c"}, {"y"}, "compress");
    auto* axis = attr(n, "axis");
    axis->set_type(onnx::AttributeProto::INT);
    axis->set_i(1);
    g.g()->mutable_input(1)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
    const bool c[3] = {true, false, true};
    bp_tensor_t* cond = tensor(bad ? std::vector<int64_t>{1, 3} : std::vector<int64_t>{3},
                               DLDataType{BP_DTYPE_CODE_BOOL, 8, 1}, c, sizeof c);
    std::vector<bp_tensor_t*> outs;
    std::string err;
    const bool ok = run(g, {{"x", floats({2, 3}, {1, 2, 3, 4, 5, 6})}, {"c", cond}}, &outs, &err);
    if (bad) {
      EXPECT_FALSE(ok);
      EXPECT_NE(err.find("Compress: condition must be 1-D but has sizes [1, 3]"), std::string::npos) << err;
    } else {
      ASSERT_TRUE(ok) << err;
      EXPECT_EQ(values(outs.at(0)), (std::vector<float>{1, 3, 4, 6}));
    }
  }
}

TEST_F(OpsMappingTest, UniqueCountsNaNsAsOneValueSortedLast) {
  // [2, NaN, 1, NaN, 2] sorted: Y [1, 2, NaN], first indices [2, 0, 1],
  // inverse [1, 2, 0, 2, 1], counts [1, 2, 2] (numpy.unique, equal_nan).
  Graph g(13);
  g.input("x", {5});
  g.output("y", {3});
  g.output("first", {3});
  g.output("inverse", {5});
  g.output("counts", {3});
  for (int k = 1; k < 4; ++k) {
    g.g()->mutable_output(k)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
  }
  g.node("Unique", {"x"}, {"y", "first", "inverse", "counts"}, "unique");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<bp_tensor_t*> outs;
  std::string err;
  ASSERT_TRUE(run(g, {{"x", floats({5}, {2, nan, 1, nan, 2})}}, &outs, &err)) << err;
  ASSERT_EQ(outs.size(), 4u);
  const std::vector<float> y = values(outs[0]);
  ASSERT_EQ(y.size(), 3u);
  EXPECT_EQ(y[0], 1);
  EXPECT_EQ(y[1], 2);
  EXPECT_TRUE(std::isnan(y[2]));
  auto ints = [&](bp_tensor_t* t) {
    std::vector<int64_t> v(static_cast<size_t>(bp_tensor_numel(t)));
    EXPECT_EQ(bp_tensor_to_host(t, v.data(), v.size() * 8), BP_STATUS_OK);
    return v;
  };
  EXPECT_EQ(ints(outs[1]), (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(ints(outs[2]), (std::vector<int64_t>{1, 2, 0, 2, 1}));
  EXPECT_EQ(ints(outs[3]), (std::vector<int64_t>{1, 2, 2}));
}

TEST_F(OpsMappingTest, GridSampleBilinearZerosPaddingAndABadGridIsNamed) {
  // X [[1, 2], [3, 4]], align_corners 1: grid (-1, -1) is pixel (0, 0) = 1,
  // (0, 0) the centre = 2.5, (1, -1) is x = 1, y = 0 -> 2, and (3, 0) lies
  // at x = 2, y = 0.5: its taps at x = 2 and 3 are outside, weight 0 -> 0.
  // A grid whose last dim is not 2 is bad input, named with its sizes.
  for (const bool bad : {false, true}) {
    Graph g(16);
    g.input("x", {1, 1, 2, 2});
    g.input("grid", bad ? std::vector<int64_t>{1, 1, 4, 3} : std::vector<int64_t>{1, 1, 4, 2});
    g.output("y", {1, 1, 1, 4});
    auto* n = g.node("GridSample", {"x", "grid"}, {"y"}, "sample");
    auto* align = attr(n, "align_corners");
    align->set_type(onnx::AttributeProto::INT);
    align->set_i(1);
    const std::vector<float> grid = bad ? std::vector<float>(12, 0.0f)
                                        : std::vector<float>{-1, -1, 0, 0, 1, -1, 3, 0};
    std::vector<bp_tensor_t*> outs;
    std::string err;
    const bool ok = run(g, {{"x", floats({1, 1, 2, 2}, {1, 2, 3, 4})},
                            {"grid", floats(bad ? std::vector<int64_t>{1, 1, 4, 3} : std::vector<int64_t>{1, 1, 4, 2}, grid)}},
                        &outs, &err);
    if (bad) {
      EXPECT_FALSE(ok);
      EXPECT_NE(err.find("argument 'grid' must have sizes [1, H_out, W_out, 2] but has sizes [1, 1, 4, 3]"),
                std::string::npos)
          << err;
    } else {
      ASSERT_TRUE(ok) << err;
      EXPECT_EQ(values(outs.at(0)), (std::vector<float>{1, 2.5, 2, 0}));
    }
  }
}
