// conv-bn: Conv/ConvTranspose -> BatchNormalization (inference mode) becomes
// one Conv with scaled weights and a shifted bias:
//   s = scale / sqrt(var + epsilon), W' = W * s (per output channel),
//   B' = (B - mean) * s + bias.
// Left alone: a Conv output read by anything besides the BN (or a graph
// output), non-constant or non-float32 weights or BN parameters, a BN in
// training mode or asking for its running statistics, a grouped ConvTranspose.
#include <cmath>

#include "pass.h"

namespace bponnx {
namespace passes {

namespace {

// Folds BN node `bn` into conv node `conv`; false (graph untouched) when it
// does not fit.
bool fold(PassGraph* g, OnnxNode* conv, const OnnxNode& bn) {
  const bool transpose = conv->op_type == "ConvTranspose";
  if (transpose && conv->get_int("group", 1) != 1) return false;
  if (bn.inputs.size() != 5 || bn.get_int("training_mode", 0) != 0) return false;
  for (size_t k = 1; k < bn.outputs.size(); ++k) {
    if (!bn.outputs[k].empty()) return false;
  }
  std::vector<float> w, b, scale, shift, mean, var;
  if (conv->inputs.size() < 2 || !float_initializer(*g, conv->inputs[1], &w)) return false;
  const bool has_bias = conv->inputs.size() > 2 && !conv->inputs[2].empty();
  if (has_bias && !float_initializer(*g, conv->inputs[2], &b)) return false;
  if (!float_initializer(*g, bn.inputs[1], &scale) || !float_initializer(*g, bn.inputs[2], &shift) ||
      !float_initializer(*g, bn.inputs[3], &mean) || !float_initializer(*g, bn.inputs[4], &var)) {
    return false;
  }
  const std::vector<int64_t> wsizes = g->initializers.at(conv->inputs[1]).sizes;
  const size_t ch_dim = transpose ? 1 : 0;  // the output-channel dim of W
  if (wsizes.size() < 3) return false;
  const size_t m = static_cast<size_t>(wsizes[ch_dim]);
  if (scale.size() != m || shift.size() != m || mean.size() != m || var.size() != m) return false;
  if (has_bias && b.size() != m) return false;
  if (!has_bias) b.assign(m, 0.0f);
  const double eps = bn.get_float("epsilon", 1e-5);
  std::vector<float> s(m);
  for (size_t c = 0; c < m; ++c) {
    const double d = static_cast<double>(var[c]) + eps;
    if (!(d > 0.0)) return false;  // a negative variance: leave the model's own result
    s[c] = static_cast<float>(scale[c] / std::sqrt(d));
    b[c] = static_cast<float>((static_cast<double>(b[c]) - mean[c]) * s[c] + shift[c]);
  }
  // W is [M, C/g, k...] (Conv) or [C, M, k...] (ConvTranspose, group 1).
  const size_t inner = w.size() / static_cast<size_t>(wsizes[0]) / (transpose ? m : 1);
  for (size_t i = 0; i < w.size(); ++i) {
    const size_t c = transpose ? (i / inner) % m : i / inner;
    w[i] *= s[c];
  }
  // New initializers: the originals may be read elsewhere (dead-nodes drops them if not).
  const std::string wname = fresh_name(*g, conv->inputs[1] + "_bn");
  g->initializers[wname] = float_tensor(wsizes, w);
  const std::string bname = fresh_name(*g, bn.outputs[0] + "_bias");
  g->initializers[bname] = float_tensor({static_cast<int64_t>(m)}, b);
  conv->inputs.resize(3);
  conv->inputs[1] = wname;
  conv->inputs[2] = bname;
  conv->outputs[0] = bn.outputs[0];
  return true;
}

}  // namespace

int fold_conv_batchnorm(PassGraph* g) {
  int folded = 0;
  std::map<std::string, size_t> producer;  // value -> index of the Conv making it
  std::map<std::string, int> readers = reader_counts(*g);
  std::vector<bool> drop(g->nodes.size(), false);
  for (size_t k = 0; k < g->nodes.size(); ++k) {
    OnnxNode& n = g->nodes[k];
    if (!n.domain.empty()) continue;
    if ((n.op_type == "Conv" || n.op_type == "ConvTranspose") && n.outputs.size() == 1) {
      producer[n.outputs[0]] = k;
      continue;
    }
    if (n.op_type != "BatchNormalization" || n.inputs.empty()) continue;
    const auto it = producer.find(n.inputs[0]);
    // The BN must be the Conv output's only reader, else both results are needed.
    if (it == producer.end() || readers[n.inputs[0]] != 1) continue;
    if (fold(g, &g->nodes[it->second], n)) {
      drop[k] = true;
      producer.erase(it);
      ++folded;
    }
  }
  std::vector<OnnxNode> kept;
  for (size_t k = 0; k < g->nodes.size(); ++k) {
    if (!drop[k]) kept.push_back(std::move(g->nodes[k]));
  }
  g->nodes = std::move(kept);
  return folded;
}

}  // namespace passes
}  // namespace bponnx
