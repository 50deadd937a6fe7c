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

int fuse_gelu(PassGraph* g) {
  Matcher m(g);
  std::vector<bool> drop(g->nodes.size(), false);
  int fused = 0;
  for (size_t k = 0; k < g->nodes.size(); ++k) {
    OnnxNode& outer = g->nodes[k];  // Mul(inner, 0.5)
    if (outer.op_type != "Mul" || !outer.domain.empty() || outer.inputs.size() != 2) continue;
    const std::string inner_v = m.other_than(outer, 0.5);
    const OnnxNode* inner = m.made_by(inner_v, "Mul");  // Mul(x, add)
    if (inner == nullptr || !m.read_by(inner_v)) continue;
    for (int side = 0; side < 2; ++side) {
      const std::string x = inner->inputs[side], add_v = inner->inputs[1 - side];
      const OnnxNode* add = m.made_by(add_v, "Add");  // Add(erf, 1)
      if (add == nullptr || !m.read_by(add_v)) continue;
      const std::string erf_v = m.other_than(*add, 1.0);
      const OnnxNode* erf = m.made_by(erf_v, "Erf", 1);
      if (erf == nullptr || !m.read_by(erf_v)) continue;
      const OnnxNode* div = m.made_by(erf->inputs[0], "Div");  // Div(x, sqrt 2)
      if (div == nullptr || !m.read_by(erf->inputs[0]) || div->inputs[0] != x ||
          !m.scalar(div->inputs[1], std::sqrt(2.0))) {
        continue;
      }
      for (const std::string& v : {erf->inputs[0], erf_v, add_v, inner_v}) drop[m.producer.at(v)] = true;
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
  drop_nodes(g, drop);
  return fused;
}

}  // namespace passes
}  // namespace bponnx
