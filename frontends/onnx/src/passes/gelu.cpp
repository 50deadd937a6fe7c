// gelu: the Erf form of GELU as torch exports it,
//   y = Mul(Mul(x, Add(Erf(Div(x, sqrt(2))), 1)), 0.5),
// (either operand order of the Add and Muls) becomes one Gelu node (the
// `gelu` operator, approximate "none"). Left alone when an intermediate has
// another reader or is a graph output, or a constant is not the float32
// scalar the formula needs.
#include <cmath>

#include "pass.h"

namespace bponnx {
namespace passes {

namespace {

// Reads a graph: producers and reader counts of values.
struct Match {
  PassGraph* g;
  std::map<std::string, size_t> producer;
  std::map<std::string, int> readers;

  const OnnxNode* made_by(const std::string& v, const char* op) const {
    const auto it = producer.find(v);
    if (it == producer.end()) return nullptr;
    const OnnxNode& n = g->nodes[it->second];
    return n.op_type == op && n.domain.empty() && n.inputs.size() == 2 && n.outputs.size() == 1 ? &n : nullptr;
  }
  bool scalar(const std::string& v, double want) const {
    std::vector<float> f;
    return float_initializer(*g, v, &f) && f.size() == 1 && std::fabs(f[0] - want) <= 1e-6 * std::fabs(want);
  }
  // The operand of binary node `n` that is not the scalar `want`; "" when neither is.
  std::string other_than(const OnnxNode& n, double want) const {
    if (scalar(n.inputs[1], want)) return n.inputs[0];
    if (scalar(n.inputs[0], want)) return n.inputs[1];
    return "";
  }
  bool single_reader(const std::string& v) const {
    const auto it = readers.find(v);
    return it != readers.end() && it->second == 1;
  }
};

}  // namespace

int fuse_gelu(PassGraph* g) {
  Match m{g, {}, reader_counts(*g)};
  for (size_t k = 0; k < g->nodes.size(); ++k) {
    for (const std::string& o : g->nodes[k].outputs) m.producer[o] = k;
  }
  std::vector<bool> drop(g->nodes.size(), false);
  int fused = 0;
  for (size_t k = 0; k < g->nodes.size(); ++k) {
    OnnxNode& outer = g->nodes[k];  // Mul(inner, 0.5)
    if (outer.op_type != "Mul" || !outer.domain.empty() || outer.inputs.size() != 2) continue;
    const std::string inner_v = m.other_than(outer, 0.5);
    const OnnxNode* inner = m.made_by(inner_v, "Mul");  // Mul(x, add)
    if (inner == nullptr || !m.single_reader(inner_v)) continue;
    for (int side = 0; side < 2; ++side) {
      const std::string x = inner->inputs[side], add_v = inner->inputs[1 - side];
      const OnnxNode* add = m.made_by(add_v, "Add");  // Add(erf, 1)
      if (add == nullptr || !m.single_reader(add_v)) continue;
      const std::string erf_v = m.other_than(*add, 1.0);
      const auto erf_it = m.producer.find(erf_v);
      if (erf_v.empty() || erf_it == m.producer.end() || !m.single_reader(erf_v)) continue;
      const OnnxNode& erf = g->nodes[erf_it->second];
      if (erf.op_type != "Erf" || !erf.domain.empty() || erf.inputs.size() != 1) continue;
      const OnnxNode* div = m.made_by(erf.inputs[0], "Div");  // Div(x, sqrt 2)
      if (div == nullptr || !m.single_reader(erf.inputs[0]) || div->inputs[0] != x ||
          !m.scalar(div->inputs[1], std::sqrt(2.0))) {
        continue;
      }
      for (const std::string& v : {erf.inputs[0], erf_v, add_v, inner_v}) drop[m.producer.at(v)] = true;
      OnnxNode gelu;
      gelu.name = outer.name;
      gelu.op_type = "Gelu";
      gelu.opset = outer.opset;
      gelu.inputs = {x};
      gelu.outputs = outer.outputs;
      outer = std::move(gelu);
      ++fused;
      break;
    }
  }
  std::vector<OnnxNode> kept;
  for (size_t k = 0; k < g->nodes.size(); ++k) {
    if (!drop[k]) kept.push_back(std::move(g->nodes[k]));
  }
  g->nodes = std::move(kept);
  return fused;
}

}  // namespace passes
}  // namespace bponnx
