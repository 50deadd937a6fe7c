// layer-norm: layer normalization as torch exports it below opset 17,
//   d = Sub(x, ReduceMean(x, axes))
//   y = Div(d, Sqrt(Add(ReduceMean(Pow(d, 2), axes), eps))) * weight + bias
// (Add's operands in either order, bias optional), becomes one
// LayerNormalization node (the `layer_norm` operator) over the trailing
// dims. Left alone when an intermediate has another reader or is a graph
// output, when the axes are not the last ones written as negative numbers
// (-k .. -1: the rank is not known here), when keepdims is 0, when the
// exponent, eps, weight or bias are not float32 initializers, or when the
// weight or bias has another rank than the normalized dims.
#include <algorithm>
#include <vector>

#include "pass.h"

namespace bponnx {
namespace passes {
namespace {

// The trailing dims a ReduceMean averages over as -k .. -1, or 0 when its
// axes are not that (or keepdims is 0).
int64_t trailing_dims(const OnnxNode& rm) {
  if (rm.get_int("keepdims", 1) != 1) return 0;
  std::vector<int64_t> axes = rm.get_ints("axes", {});
  std::sort(axes.begin(), axes.end());
  const int64_t k = static_cast<int64_t>(axes.size());
  for (int64_t i = 0; i < k; ++i) {
    if (axes[static_cast<size_t>(i)] != i - k) return 0;
  }
  return k;
}

// The one node reading `v` (index), or -1.
int64_t reader_of(const PassGraph& g, const std::string& v) {
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    if (std::count(g.nodes[k].inputs.begin(), g.nodes[k].inputs.end(), v) > 0) return static_cast<int64_t>(k);
  }
  return -1;
}

// The operand of default-domain binary node `n` (op `op`) other than `v`
// when it is a float32 initializer of rank `rank`; "" otherwise.
std::string affine_operand(const PassGraph& g, const OnnxNode& n, const char* op, const std::string& v,
                           int64_t rank) {
  if (n.op_type != op || !n.domain.empty() || n.inputs.size() != 2 || n.outputs.size() != 1) return "";
  const std::string& p = n.inputs[0] == v ? n.inputs[1] : n.inputs[0];
  if (n.inputs[0] != v && n.inputs[1] != v) return "";
  std::vector<float> values;
  const auto it = g.initializers.find(p);
  if (!float_initializer(g, p, &values) || static_cast<int64_t>(it->second.sizes.size()) != rank) return "";
  return p;
}

}  // namespace

int fuse_layer_norm(PassGraph* g) {
  Matcher m(g);
  std::vector<bool> drop(g->nodes.size(), false);
  int fused = 0;
  for (size_t k = 0; k < g->nodes.size(); ++k) {
    const OnnxNode& div = g->nodes[k];  // Div(d, Sqrt(...))
    if (drop[k] || div.op_type != "Div" || !div.domain.empty() || div.inputs.size() != 2 || div.outputs.size() != 1) {
      continue;
    }
    const std::string& d = div.inputs[0];
    const OnnxNode* sub = m.made_by(d, "Sub");
    if (sub == nullptr || !m.read_by(d, 2)) continue;
    const std::string& x = sub->inputs[0];
    const OnnxNode* mean = m.made_by(sub->inputs[1], "ReduceMean", 1);
    if (mean == nullptr || !m.read_by(sub->inputs[1]) || mean->inputs[0] != x) continue;
    const int64_t dims = trailing_dims(*mean);
    if (dims == 0) continue;
    const OnnxNode* root = m.made_by(div.inputs[1], "Sqrt", 1);
    if (root == nullptr || !m.read_by(div.inputs[1])) continue;
    const OnnxNode* add = m.made_by(root->inputs[0], "Add");
    if (add == nullptr || !m.read_by(root->inputs[0])) continue;
    std::vector<float> eps;
    const int eps_at = float_initializer(*g, add->inputs[1], &eps) ? 1 : 0;
    if (!float_initializer(*g, add->inputs[static_cast<size_t>(eps_at)], &eps) || eps.size() != 1 || !(eps[0] >= 0)) {
      continue;
    }
    const std::string& var_v = add->inputs[static_cast<size_t>(1 - eps_at)];
    const OnnxNode* var = m.made_by(var_v, "ReduceMean", 1);
    if (var == nullptr || !m.read_by(var_v) || trailing_dims(*var) != dims) continue;
    const OnnxNode* pow = m.made_by(var->inputs[0], "Pow");
    if (pow == nullptr || !m.read_by(var->inputs[0]) || pow->inputs[0] != d || !m.scalar(pow->inputs[1], 2.0)) continue;
    // The affine part: Mul by the weight (required: LayerNormalization's Scale), then Add of the bias.
    const std::string& normalized = div.outputs[0];
    const int64_t mul_at = m.read_by(normalized) ? reader_of(*g, normalized) : -1;
    if (mul_at < 0) continue;
    const OnnxNode& mul = g->nodes[static_cast<size_t>(mul_at)];
    const std::string weight = affine_operand(*g, mul, "Mul", normalized, dims);
    if (weight.empty()) continue;
    int64_t last = mul_at;
    std::string bias;
    if (m.read_by(mul.outputs[0])) {
      const int64_t add_at = reader_of(*g, mul.outputs[0]);
      bias = add_at < 0 ? "" : affine_operand(*g, g->nodes[static_cast<size_t>(add_at)], "Add", mul.outputs[0], dims);
      if (!bias.empty()) last = add_at;
    }
    for (const std::string& v : {sub->inputs[1], d, var->inputs[0], var_v, root->inputs[0], div.inputs[1]}) {
      drop[m.producer.at(v)] = true;
    }
    drop[k] = true;
    if (last != mul_at) drop[static_cast<size_t>(mul_at)] = true;
    OnnxNode& out = g->nodes[static_cast<size_t>(last)];
    OnnxNode ln;
    ln.name = out.name;
    ln.op_type = "LayerNormalization";
    ln.opset = out.opset;
    ln.inputs = {x, weight};
    if (!bias.empty()) ln.inputs.push_back(bias);
    ln.outputs = out.outputs;
    ln.attrs["axis"].kind = OnnxAttribute::kInt;
    ln.attrs["axis"].i = -dims;
    ln.attrs["epsilon"].kind = OnnxAttribute::kFloat;
    ln.attrs["epsilon"].f = eps[0];
    out = std::move(ln);
    ++fused;
  }
  drop_nodes(g, drop);
  return fused;
}

}  // namespace passes
}  // namespace bponnx
