// ONNX LSTM and GRU on the CPU: the native path (one lstm_layer / gru_layer
// call) against the per-step decomposition on the same node. A
// sequence_lens input of full lengths changes no value but sends the node
// down the decomposition, so one graph gives both results; the session's
// observer tells which operators each run called.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "bponnx/graph.h"
#include "graph_builder.h"
#include "native_ops_fixture.h"

namespace {

using bptest::Graph;

struct Config {
  bool lstm;
  std::string direction;
  int64_t layout;
  bool bias, initial, lbr;
};

std::string Name(const Config& c) {
  return std::string(c.lstm ? "LSTM" : "GRU") + " " + c.direction + " layout " + std::to_string(c.layout) +
         (c.bias ? " bias" : "") + (c.initial ? " initial states" : "") + (c.lbr ? " linear_before_reset" : "");
}

class RecurrentNativeTest : public NativeOpsTest<::testing::TestWithParam<Config>> {
 protected:
  // Runs the graph once; *native tells whether the recurrent operator ran.
  bool run(const Graph& g, const std::map<std::string, bp_tensor_t*>& in, std::vector<bp_tensor_t*>* outs,
           bool* native, std::string* err) {
    const bool ok = run_graph(g, in, {"lstm_layer", "gru_layer"}, outs, err);
    *native = any_called();
    return ok;
  }
  std::vector<float> values(bp_tensor_t* t) { return NativeOpsTest::values<float>(t); }
  std::vector<std::vector<float>> native_;  // the native run's outputs
};

// Deterministic values in [-scale, scale].
std::vector<float> Values(size_t n, uint32_t seed, float scale) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 1;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = scale * (static_cast<float>(s >> 8) / static_cast<float>(1u << 24) * 2.0f - 1.0f);
  }
  return v;
}

TEST_P(RecurrentNativeTest, NativeMatchesTheDecomposition) {
  const Config c = GetParam();
  const int64_t T = 5, B = 3, I = 4, H = 6, G = c.lstm ? 4 : 3, D = c.direction == "bidirectional" ? 2 : 1;
  const std::vector<int64_t> xs = c.layout ? std::vector<int64_t>{B, T, I} : std::vector<int64_t>{T, B, I};
  const std::vector<int64_t> ss = c.layout ? std::vector<int64_t>{B, D, H} : std::vector<int64_t>{D, B, H};
  const std::vector<int64_t> ys =
      c.layout ? std::vector<int64_t>{B, T, D, H} : std::vector<int64_t>{T, D, B, H};
  for (bool with_lens : {false, true}) {
    Graph g(14);
    g.input("x", xs);
    g.init("w", {D, G * H, I}, Values(static_cast<size_t>(D * G * H * I), 1, 0.5f));
    g.init("r", {D, G * H, H}, Values(static_cast<size_t>(D * G * H * H), 2, 0.5f));
    std::vector<std::string> ins = {"x", "w", "r", "", "", "", ""};
    if (c.bias) {
      g.init("b", {D, 2 * G * H}, Values(static_cast<size_t>(D * 2 * G * H), 3, 0.5f));
      ins[3] = "b";
    }
    if (with_lens) {
      g.input("lens", {B}, 6);  // int32
      ins[4] = "lens";
    }
    if (c.initial) {
      g.input("h0", ss);
      ins[5] = "h0";
      if (c.lstm) {
        g.input("c0", ss);
        ins[6] = "c0";
      }
    }
    if (!c.lstm) ins.resize(6);
    std::vector<std::string> outs = {"y", "y_h"};
    g.output("y", ys);
    g.output("y_h", ss);
    if (c.lstm) {
      outs.push_back("y_c");
      g.output("y_c", ss);
    }
    auto* n = g.node(c.lstm ? "LSTM" : "GRU", ins, outs, "cell");
    auto* a = n->add_attribute();
    a->set_name("hidden_size");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(H);
    a = n->add_attribute();
    a->set_name("direction");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(c.direction);
    a = n->add_attribute();
    a->set_name("layout");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(c.layout);
    if (!c.lstm) {
      a = n->add_attribute();
      a->set_name("linear_before_reset");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(c.lbr ? 1 : 0);
    }
    const DLDataType f32{kDLFloat, 32, 1};
    const std::vector<float> x = Values(static_cast<size_t>(T * B * I), 4, 1.0f);
    const std::vector<float> s0 = Values(static_cast<size_t>(D * B * H), 5, 1.0f);
    const std::vector<float> s1 = Values(static_cast<size_t>(D * B * H), 7, 1.0f);
    const std::vector<int32_t> lens(static_cast<size_t>(B), static_cast<int32_t>(T));
    std::map<std::string, bp_tensor_t*> in = {{"x", tensor(xs, f32, x.data(), x.size() * 4)}};
    if (with_lens) in["lens"] = tensor({B}, DLDataType{kDLInt, 32, 1}, lens.data(), lens.size() * 4);
    if (c.initial) {
      in["h0"] = tensor(ss, f32, s0.data(), s0.size() * 4);
      if (c.lstm) in["c0"] = tensor(ss, f32, s1.data(), s1.size() * 4);
    }
    std::vector<bp_tensor_t*> result;
    std::string err;
    bool native = false;
    ASSERT_TRUE(run(g, in, &result, &native, &err)) << Name(c) << ": " << err;
    EXPECT_EQ(native, !with_lens) << Name(c);
    ASSERT_EQ(result.size(), outs.size());
    if (!with_lens) {
      for (bp_tensor_t* t : result) native_.push_back(values(t));
      continue;
    }
    for (size_t k = 0; k < result.size(); ++k) {
      const std::vector<float> want = values(result[k]);
      ASSERT_EQ(native_[k].size(), want.size()) << Name(c) << " output " << outs[k];
      float worst = 0.0f;
      for (size_t j = 0; j < want.size(); ++j) worst = std::max(worst, std::fabs(native_[k][j] - want[j]));
      EXPECT_LT(worst, 2e-5f) << Name(c) << " output " << outs[k];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cells, RecurrentNativeTest,
    ::testing::Values(Config{true, "forward", 0, true, true, false}, Config{true, "reverse", 0, false, false, false},
                      Config{true, "bidirectional", 0, true, true, false},
                      Config{true, "bidirectional", 1, true, true, false},
                      Config{false, "forward", 0, true, true, true}, Config{false, "forward", 0, true, false, false},
                      Config{false, "reverse", 1, false, true, true},
                      Config{false, "bidirectional", 0, true, true, true},
                      Config{false, "bidirectional", 1, true, false, false}));

}  // namespace
