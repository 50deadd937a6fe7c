// conv-act: Conv [-> Add(residual)] [-> activation] becomes one
// backplane.ConvFused node (the conv2d_fused operator: one kernel, oneDNN
// post-ops on the CPU). Runs after conv-bn and gelu. At least the Add or the
// activation must be there (a lone Conv stays a Conv).
//   activation: Relu, LeakyRelu, HardSwish, HardSigmoid, Sigmoid, Gelu (erf,
//   as the gelu pass makes it), Clip with constant float32 min/max (or
//   attributes before opset 11), and SiLU written as Mul(c, Sigmoid(c)) with
//   c the Conv's (or the Add's) output.
//   residual: the other operand of the Add. The pass knows no shapes: the
//   mapping (map_nn.cpp) hands it to conv2d_fused when it has the Conv
//   output's sizes, and adds it after the call otherwise (a broadcasting Add).
// Weights need not be constants (post-ops do not care). Left alone: any
// intermediate value read by another node or a graph output, a Clip whose
// bounds are not constants, a Gelu with approximate="tanh", a Conv whose
// Add another Conv took (the two branches of a residual block), and
// everything when the session's device has no native conv2d_fused kernel
// (other backends would run it through the CPU fallback; their unfused
// graph stays on the device).
#include <limits>

#include "bponnx/exec.h"
#include "pass.h"

namespace bponnx {
namespace passes {

namespace {

// A constant float32 scalar (initializer) into *out; "" (absent) gives dflt.
bool const_bound(const PassGraph& g, const std::string& v, float dflt, float* out) {
  if (v.empty()) {
    *out = dflt;
    return true;
  }
  std::vector<float> f;
  if (!float_initializer(g, v, &f) || f.size() != 1) return false;
  *out = f[0];
  return true;
}

struct Act {
  std::string name = "none";
  double alpha = 0.0, beta = 0.0;
};

// The activation node `n` reading `x` as conv2d_fused's activation; false
// when it is none of those it takes.
bool activation_of(const PassGraph& g, const OnnxNode& n, const std::string& x, Act* a) {
  const std::string& t = n.op_type;
  if (n.outputs.size() != 1 || n.inputs.empty() || n.inputs[0] != x) return false;
  if (t == "Relu" || t == "Sigmoid" || t == "HardSwish") {
    a->name = t == "Relu" ? "relu" : t == "Sigmoid" ? "sigmoid" : "hardswish";
    return n.inputs.size() == 1;
  }
  if (t == "Gelu") {  // opset 20, or made by the gelu pass
    a->name = "gelu";
    return n.inputs.size() == 1 && n.get_string("approximate", "none") == "none";
  }
  if (t == "LeakyRelu") {
    a->name = "leaky_relu";
    a->alpha = n.get_float("alpha", 0.01);
    return n.inputs.size() == 1;
  }
  if (t == "HardSigmoid") {
    a->name = "hardsigmoid";
    a->alpha = n.get_float("alpha", 0.2);
    a->beta = n.get_float("beta", 0.5);
    return n.inputs.size() == 1;
  }
  if (t == "Clip") {
    const float inf = std::numeric_limits<float>::infinity();
    float lo = -inf, hi = inf;
    if (n.opset < 11) {
      lo = static_cast<float>(n.get_float("min", -inf));
      hi = static_cast<float>(n.get_float("max", inf));
    } else if (!const_bound(g, n.inputs.size() > 1 ? n.inputs[1] : "", -inf, &lo) ||
               !const_bound(g, n.inputs.size() > 2 ? n.inputs[2] : "", inf, &hi)) {
      return false;
    }
    a->name = "clip";
    a->alpha = lo;
    a->beta = hi;
    return lo <= hi;
  }
  return false;
}

// The index of the one node reading `v` (a default-domain node), when `v`
// has exactly that one reader and is no graph output.
bool sole_reader_index(const PassGraph& g, const Matcher& m, const std::string& v, size_t* index) {
  if (!m.read_by(v)) return false;
  for (const std::string& o : g.outputs) {
    if (o == v) return false;
  }
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    for (const std::string& in : g.nodes[k].inputs) {
      if (in == v) {
        *index = k;
        return g.nodes[k].domain.empty();
      }
    }
  }
  return false;
}

// SiLU written out: `y` read by exactly Sigmoid(y) -> s and Mul(y, s) (either
// order), s read by the Mul only. The Sigmoid's and the Mul's indices.
bool silu_of(const PassGraph& g, const Matcher& m, const std::string& y, size_t* sig, size_t* mul) {
  if (!m.read_by(y, 2)) return false;
  for (const std::string& o : g.outputs) {
    if (o == y) return false;
  }
  for (size_t j = 0; j < g.nodes.size(); ++j) {
    const OnnxNode& n = g.nodes[j];
    if (n.op_type != "Sigmoid" || !n.domain.empty() || n.inputs.size() != 1 || n.inputs[0] != y ||
        n.outputs.size() != 1) {
      continue;
    }
    if (!sole_reader_index(g, m, n.outputs[0], mul)) return false;
    const OnnxNode& p = g.nodes[*mul];
    const std::string& s = n.outputs[0];
    *sig = j;
    return p.op_type == "Mul" && p.inputs.size() == 2 && p.outputs.size() == 1 &&
           ((p.inputs[0] == y && p.inputs[1] == s) || (p.inputs[0] == s && p.inputs[1] == y));
  }
  return false;
}

}  // namespace

int fuse_conv_activation(PassGraph* g) {
  if (!runs_natively(g->ctx, "conv2d_fused", g->device.backend)) return 0;
  Matcher m(g);
  std::vector<bool> drop(g->nodes.size(), false);
  // Nodes already part of a fusion (the Matcher still sees the graph as it
  // was): a Conv whose reader another Conv took (the two branches of a
  // residual Add) stays a Conv.
  std::vector<bool> taken(g->nodes.size(), false);
  auto free_reader = [&](const std::string& v, size_t* i) { return sole_reader_index(*g, m, v, i) && !taken[*i]; };
  int fused = 0;
  for (size_t k = 0; k < g->nodes.size(); ++k) {
    const OnnxNode& conv = g->nodes[k];
    if (conv.op_type != "Conv" || !conv.domain.empty() || conv.outputs.size() != 1 || conv.inputs.size() < 2 ||
        conv.inputs.size() > 3) {
      continue;
    }
    std::vector<size_t> chain = {k};  // the nodes the fused node replaces, in graph order
    std::string y = conv.outputs[0];  // the chain's value so far
    std::string residual;
    size_t i = 0;
    if (free_reader(y, &i)) {
      const OnnxNode& add = g->nodes[i];
      if (add.op_type == "Add" && add.inputs.size() == 2 && add.outputs.size() == 1 && add.inputs[0] != add.inputs[1]) {
        residual = add.inputs[0] == y ? add.inputs[1] : add.inputs[0];
        chain.push_back(i);
        y = add.outputs[0];
      }
    }
    Act act;
    size_t sig = 0, mul = 0;
    if (free_reader(y, &i) && activation_of(*g, g->nodes[i], y, &act)) {
      chain.push_back(i);
    } else if (silu_of(*g, m, y, &sig, &mul) && !taken[sig] && !taken[mul]) {
      act = Act{};
      act.name = "silu";
      chain.push_back(sig);
      chain.push_back(mul);
    } else {
      act = Act{};
    }
    if (chain.size() == 1) continue;  // a lone Conv
    const size_t last = chain.back();
    OnnxNode f;
    f.name = conv.name;
    f.op_type = "ConvFused";
    f.domain = kBackplaneDomain;
    f.opset = 1;
    f.inputs = {conv.inputs[0], conv.inputs[1], conv.inputs.size() > 2 ? conv.inputs[2] : "", residual};
    f.outputs = g->nodes[last].outputs;
    f.attrs = conv.attrs;
    OnnxAttribute a;
    a.kind = OnnxAttribute::kString;
    a.s = act.name;
    f.attrs["activation"] = a;
    a.kind = OnnxAttribute::kFloat;
    a.f = act.alpha;
    f.attrs["alpha"] = a;
    a.f = act.beta;
    f.attrs["beta"] = a;
    // The fused node takes the last node's place: every input it reads (the
    // residual too) is made before that.
    for (size_t j : chain) drop[j] = j != last, taken[j] = true;
    g->nodes[last] = std::move(f);
    ++fused;
  }
  drop_nodes(g, drop);
  return fused;
}

}  // namespace passes
}  // namespace bponnx
