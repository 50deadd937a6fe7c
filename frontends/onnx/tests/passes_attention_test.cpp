// The attention pass on small hand-built graphs: the forms torch exports
// (q scaled first, scores scaled after, a float mask added, masked_fill as
// Where) become one backplane.Attention node with the same outputs as the
// session with every pass off; near misses stay as they are.
#include <algorithm>
#include <limits>

#include "passes_fixture.h"

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

void attr_int(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

// A bool initializer of `dims` (values 0 / 1).
void bool_init(Graph* g, const std::string& name, std::vector<int64_t> dims, const std::vector<int>& v) {
  auto* t = g->g()->add_initializer();
  t->set_name(name);
  t->set_data_type(9);
  for (int64_t d : dims) t->add_dims(d);
  for (int x : v) t->add_int32_data(x);
}

// The strictly upper triangle of an n x n matrix (keys after the query).
std::vector<int> upper(int n) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) v.push_back(j > i ? 1 : 0);
  }
  return v;
}

// X [b, 5, 8] -> q, k, v (MatMul by constant weights), kt = Transpose(k)
// [b, 8, 5]; then `scores(g)` makes the Softmax input "x" from q and kt,
// Softmax(x, axis) -> p, MatMul(p, v) -> Y [b, 5, 8].
Graph attention_graph(const std::function<void(Graph*)>& scores, int64_t axis = -1, int64_t b = 2) {
  Graph g;
  g.input("X", {b, 5, 8});
  g.init("Wq", {8, 8}, ramp(64, -0.5f, 0.5f, 21));
  g.init("Wk", {8, 8}, ramp(64, -0.5f, 0.5f, 22));
  g.init("Wv", {8, 8}, ramp(64, -0.5f, 0.5f, 23));
  g.node("MatMul", {"X", "Wq"}, {"q"});
  g.node("MatMul", {"X", "Wk"}, {"k"});
  g.node("MatMul", {"X", "Wv"}, {"v"});
  attr_ints(g.node("Transpose", {"k"}, {"kt"}), "perm", {0, 2, 1});
  g.init("c", {}, {2.828427f});
  g.init("one", {}, {1.0f});
  g.init("ninf", {}, {-kInf});
  scores(&g);
  attr_int(g.node("Softmax", {"x"}, {"p"}), "axis", axis);
  g.node("MatMul", {"p", "v"}, {"Y"});
  g.output("Y", {b, 5, 8});
  return g;
}

const Ops kFused = {"MatMul", "MatMul", "MatMul", "Transpose", "Attention"};

TEST_F(PassesTest, AttentionFormsBecomeOneNode) {
  struct Case {
    const char* what;
    std::function<void(Graph*)> scores;
  };
  const std::vector<Case> cases = {
      {"q scaled first: MatMul(Div(q, c), kt)",
       [](Graph* g) {
         g->node("Div", {"q", "c"}, {"qs"});
         g->node("MatMul", {"qs", "kt"}, {"x"});
       }},
      {"scores scaled after: Mul(c, MatMul(q, kt))",
       [](Graph* g) {
         g->node("MatMul", {"q", "kt"}, {"s"});
         g->node("Mul", {"c", "s"}, {"x"});
       }},
      {"no scale",
       [](Graph* g) {
         g->node("MatMul", {"q", "kt"}, {"x"});
       }},
      {"baddbmm form: Add(Mul(MatMul(Div(q, c), kt), 1), Mul(M, 1))",
       [](Graph* g) {
         g->init("M", {5, 5}, ramp(25, -1.0f, 1.0f, 24));
         g->node("Div", {"q", "c"}, {"qs"});
         g->node("MatMul", {"qs", "kt"}, {"s"});
         g->node("Mul", {"s", "one"}, {"s1"});
         g->node("Mul", {"M", "one"}, {"m1"});
         g->node("Add", {"s1", "m1"}, {"x"});
       }},
      {"float mask first: Add(M, Div(MatMul(q, kt), c))",
       [](Graph* g) {
         g->init("M", {2, 1, 5}, ramp(10, -1.0f, 1.0f, 25));
         g->node("MatMul", {"q", "kt"}, {"s"});
         g->node("Div", {"s", "c"}, {"s1"});
         g->node("Add", {"M", "s1"}, {"x"});
       }},
      {"masked_fill: Where(C, -inf, scores), C the causal triangle",
       [](Graph* g) {
         bool_init(g, "C", {5, 5}, upper(5));
         g->node("MatMul", {"q", "kt"}, {"s"});
         g->node("Div", {"s", "c"}, {"s1"});
         g->node("Where", {"C", "ninf", "s1"}, {"x"});
       }},
      {"masked_fill with a computed mask: Where(Greater(W, ReduceMean(X)), -inf, scores)",
       [](Graph* g) {
         // The diagonal of W is -10, below any mean of X: every query keeps its own key.
         std::vector<float> w = ramp(25, -1.0f, 1.0f, 28);
         for (int i = 0; i < 5; ++i) w[static_cast<size_t>(i * 6)] = -10.0f;
         g->init("W", {5, 5}, w);
         attr_int(g->node("ReduceMean", {"X"}, {"r"}), "keepdims", 0);
         g->node("Greater", {"W", "r"}, {"C"});
         g->node("MatMul", {"q", "kt"}, {"s"});
         g->node("Where", {"C", "ninf", "s"}, {"x"});
       }},
      {"Where(C, scores, -inf): C True keeps",
       [](Graph* g) {
         std::vector<int> keep = upper(5);
         for (int& b : keep) b = 1 - b;
         bool_init(g, "C", {5, 5}, keep);
         g->node("MatMul", {"q", "kt"}, {"s"});
         g->node("Where", {"C", "s", "ninf"}, {"x"});
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    load(attention_graph(c.scores));
    Ops fused = ops({});
    fused.erase(std::remove_if(fused.begin(), fused.end(),
                               [](const std::string& op) { return op == "ReduceMean" || op == "Greater"; }),
                fused.end());
    EXPECT_EQ(fused, kFused);
    expect_same_outputs("X", {2, 5, 8});
    EXPECT_NE(ops({"attention"}), kFused);
  }
}

TEST_F(PassesTest, AttentionNearMissesStay) {
  struct Case {
    const char* what;
    std::function<void(Graph*)> scores;
    int64_t axis;
  };
  const std::vector<Case> cases = {
      {"Softmax over axis 1",
       [](Graph* g) {
         g->node("MatMul", {"q", "kt"}, {"x"});
       },
       1},
      {"scale not constant: Mul(s, ReduceMean(X))",
       [](Graph* g) {
         attr_int(g->node("ReduceMean", {"X"}, {"r"}), "keepdims", 0);
         g->node("MatMul", {"q", "kt"}, {"s"});
         g->node("Mul", {"s", "r"}, {"x"});
       },
       -1},
      {"scores read twice: Add(s, s)",
       [](Graph* g) {
         g->node("MatMul", {"q", "kt"}, {"s"});
         g->node("Add", {"s", "s"}, {"x"});
       },
       -1},
      {"Where fill -1e9, not -inf",
       [](Graph* g) {
         bool_init(g, "C", {5, 5}, upper(5));
         g->init("big", {}, {-1e9f});
         g->node("MatMul", {"q", "kt"}, {"s"});
         g->node("Where", {"C", "big", "s"}, {"x"});
       },
       -1},
      {"mask added before the scale: Mul(Add(s, M), c)",
       [](Graph* g) {
         g->init("M", {5, 5}, ramp(25, -1.0f, 1.0f, 26));
         g->node("MatMul", {"q", "kt"}, {"s"});
         g->node("Add", {"s", "M"}, {"a"});
         g->node("Mul", {"a", "c"}, {"x"});
       },
       -1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    load(attention_graph(c.scores, c.axis));
    for (const std::string& op : ops({})) EXPECT_NE(op, "Attention");
  }
}

TEST_F(PassesTest, AttentionIntermediateAsGraphOutputStays) {
  // The scores are a graph output: the fused node would lose them.
  Graph g = attention_graph([](Graph* g) { g->node("MatMul", {"q", "kt"}, {"x"}); });
  g.output("x", {2, 5, 5});
  load(g);
  for (const std::string& op : ops({})) EXPECT_NE(op, "Attention");
  // The probabilities too.
  Graph h = attention_graph([](Graph* g) { g->node("MatMul", {"q", "kt"}, {"x"}); });
  h.output("p", {2, 5, 5});
  load(h);
  for (const std::string& op : ops({})) EXPECT_NE(op, "Attention");
}

TEST_F(PassesTest, AttentionMaskGrowingTheScoresRunsUnfused) {
  // Batch 1 with a mask of batch 3: the Add broadcasts the scores up to
  // [3, 5, 5], which the operator does not do; the mapping runs the ops as
  // the graph had them, with the same outputs.
  Graph g = attention_graph(
      [](Graph* g) {
        g->init("M", {3, 5, 5}, ramp(75, -1.0f, 1.0f, 27));
        g->node("MatMul", {"q", "kt"}, {"s"});
        g->node("Add", {"s", "M"}, {"x"});
      },
      -1, 1);
  g.g()->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(3);
  load(g);
  EXPECT_EQ(ops({}), kFused);
  expect_same_outputs("X", {1, 5, 8});
}

}  // namespace
