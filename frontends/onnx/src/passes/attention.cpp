// attention: scaled dot-product attention written out becomes one
// backplane.Attention node (the scaled_dot_product_attention operator):
//
//   MatMul(q', KT) -> [scale] -> [mask] -> Softmax(axis -1) -> MatMul(., V)
//
//   q'     q, or q scaled first: Mul(q, c) / Mul(c, q) / Div(q, c), any
//          number of them (torch's nn.MultiheadAttention scales q);
//   scale  Mul / Div of the scores by constants (hand-written attention);
//   mask   Add(scores, M) (either order): M a float mask, added after the
//          scale, as torch.baddbmm does in nn.MultiheadAttention; or
//          Where(C, -inf, scores) (masked_fill: C True hides a key; a
//          constant C is inverted once, here) or Where(C, scores, -inf)
//          (C True keeps it).
//   KT     the key as the MatMul reads it, [..., E, S]: the mapping hands
//          the operator a transposed view of it (no copy).
// Constants c are float32 one-element initializers (constant-fold turns
// Constant nodes into those first); the fused node's `scale` is their
// product. The pass knows no shapes: the mapping (map_attention.cpp) runs
// the operator where it takes the inputs as they come, and the unfused ops
// otherwise (a mask that would grow the scores, a dtype it does not claim).
// Left alone: any intermediate value read by another node or a graph output,
// a scale that is no constant, Softmax over another axis, a Where whose fill
// is not -inf, a mask added before a scale (the scale would scale it too),
// and everything when the session's device has no native
// scaled_dot_product_attention kernel (other backends would run it through
// the CPU fallback; their unfused graph stays on the device).
#include <cmath>
#include <map>

#include "bponnx/exec.h"
#include "pass.h"

namespace bponnx {
namespace passes {

namespace {

// A float32 one-element initializer's value.
bool constant(const PassGraph& g, const std::string& v, double* out) {
  std::vector<float> f;
  if (!float_initializer(g, v, &f) || f.size() != 1) return false;
  *out = f[0];
  return true;
}

// The node making `v` (default domain, one output), when `v` has that node's
// reader as its only reader; nullptr otherwise.
const OnnxNode* sole_maker(const Matcher& m, const std::string& v, size_t* index) {
  if (!m.read_by(v)) return nullptr;
  const auto it = m.producer.find(v);
  if (it == m.producer.end()) return nullptr;
  const OnnxNode& n = m.g->nodes[it->second];
  if (!n.domain.empty() || n.outputs.size() != 1) return nullptr;
  *index = it->second;
  return &n;
}

// Follows Mul/Div by constants back from `v` (each value read only by the
// next node), multiplying *scale; returns the first value that is not such
// a product, and adds the nodes passed to *chain.
std::string unscale(const Matcher& m, std::string v, double* scale, std::vector<size_t>* chain) {
  size_t i = 0;
  for (const OnnxNode* n = sole_maker(m, v, &i); n != nullptr && n->inputs.size() == 2; n = sole_maker(m, v, &i)) {
    double c = 0.0;
    if (n->op_type == "Mul" && constant(*m.g, n->inputs[1], &c)) {
      v = n->inputs[0];
    } else if (n->op_type == "Mul" && constant(*m.g, n->inputs[0], &c)) {
      v = n->inputs[1];
    } else if (n->op_type == "Div" && constant(*m.g, n->inputs[1], &c) && c != 0.0) {
      v = n->inputs[0];
      c = 1.0 / c;
    } else {
      break;
    }
    *scale *= c;
    chain->push_back(i);
  }
  return v;
}

// The scores' side: [scale ->] MatMul(q', KT), `v` its last value. Fills
// q, kt, *scale and the nodes in *chain; false when `v` is not that.
bool scores_of(const Matcher& m, const std::string& v, double* scale, std::vector<size_t>* chain, std::string* q,
               std::string* kt) {
  const std::string mm_out = unscale(m, v, scale, chain);
  size_t i = 0;
  const OnnxNode* mm = sole_maker(m, mm_out, &i);
  if (mm == nullptr || mm->op_type != "MatMul" || mm->inputs.size() != 2) return false;
  chain->push_back(i);
  *kt = mm->inputs[1];
  *q = unscale(m, mm->inputs[0], scale, chain);
  return std::isfinite(*scale);
}

bool is_neg_inf(const PassGraph& g, const std::string& v) {
  double c = 0.0;
  return constant(g, v, &c) && std::isinf(c) && c < 0;
}

struct Match {
  std::string q, kt, v, mask, mask_kind = "none";
  double scale = 1.0;
  std::vector<size_t> chain;  // the nodes replaced
  size_t last = 0;            // the final MatMul: the fused node takes its place
};

// The attention pattern around Softmax node `k`; false when it is not one.
bool match(const Matcher& m, size_t k, Match* r) {
  const PassGraph& g = *m.g;
  const OnnxNode& sm = g.nodes[k];
  if (sm.op_type != "Softmax" || !sm.domain.empty() || sm.inputs.size() != 1 || sm.outputs.size() != 1) return false;
  if (sm.get_int("axis", sm.opset < 13 ? 1 : -1) != -1) return false;
  // Softmax -> MatMul(p, V), p read by nothing else.
  if (!m.read_by(sm.outputs[0])) return false;
  for (size_t j = k + 1; j < g.nodes.size(); ++j) {
    const OnnxNode& n = g.nodes[j];
    if (n.inputs.size() == 2 && (n.inputs[0] == sm.outputs[0] || n.inputs[1] == sm.outputs[0])) {
      if (n.op_type != "MatMul" || !n.domain.empty() || n.inputs[0] != sm.outputs[0] || n.inputs[1] == sm.outputs[0] ||
          n.outputs.size() != 1) {
        return false;
      }
      r->last = j;
      r->v = n.inputs[1];
      break;
    }
  }
  if (r->v.empty()) return false;
  r->chain = {k, r->last};
  // The mask, if any, right before the Softmax.
  const std::string& x = sm.inputs[0];
  size_t i = 0;
  const OnnxNode* pre = sole_maker(m, x, &i);
  if (pre != nullptr && pre->op_type == "Add" && pre->inputs.size() == 2 && pre->inputs[0] != pre->inputs[1]) {
    for (int side = 0; side < 2; ++side) {
      Match t = *r;
      t.chain.push_back(i);
      if (scores_of(m, pre->inputs[static_cast<size_t>(side)], &t.scale, &t.chain, &t.q, &t.kt)) {
        t.mask = pre->inputs[static_cast<size_t>(1 - side)];
        t.mask_kind = "add";
        *r = std::move(t);
        return true;
      }
    }
    return false;
  }
  if (pre != nullptr && pre->op_type == "Where" && pre->inputs.size() == 3) {
    const bool drop = is_neg_inf(g, pre->inputs[1]), keep = is_neg_inf(g, pre->inputs[2]);
    if (drop == keep) return false;
    r->chain.push_back(i);
    r->mask = pre->inputs[0];
    r->mask_kind = drop ? "drop" : "keep";
    return scores_of(m, pre->inputs[drop ? 2 : 1], &r->scale, &r->chain, &r->q, &r->kt);
  }
  return scores_of(m, x, &r->scale, &r->chain, &r->q, &r->kt);
}

// A masked_fill mask that is a bool initializer becomes its inverse, once
// (a "keep" mask the operator takes as it is): the mapping would otherwise
// invert it on every run. *mask and *kind change only when it is one.
void invert_constant_mask(PassGraph* g, std::map<std::string, std::string>* inverted, std::string* mask,
                          std::string* kind) {
  if (*kind != "drop") return;
  auto known = inverted->find(*mask);
  if (known == inverted->end()) {
    const auto it = g->initializers.find(*mask);
    if (it == g->initializers.end() || it->second.dtype != DType::kBool || !it->second.unsupported.empty() ||
        it->second.bytes.size() != static_cast<size_t>(it->second.numel())) {
      return;
    }
    RawTensor keep = it->second;
    for (char& b : keep.bytes) b = b != 0 ? 0 : 1;
    const std::string name = fresh_name(*g, *mask + "_keep");
    g->initializers[name] = std::move(keep);
    known = inverted->emplace(*mask, name).first;
  }
  *mask = known->second;
  *kind = "keep";
}

}  // namespace

int fuse_attention(PassGraph* g) {
  if (!runs_natively(g->ctx, "scaled_dot_product_attention", g->device.backend)) return 0;
  Matcher m(g);
  std::vector<bool> drop(g->nodes.size(), false);
  std::map<std::string, std::string> inverted;  // bool initializer -> its inverse
  int fused = 0;
  for (size_t k = 0; k < g->nodes.size(); ++k) {
    Match r;
    if (!match(m, k, &r)) continue;
    invert_constant_mask(g, &inverted, &r.mask, &r.mask_kind);
    OnnxNode f;
    f.name = g->nodes[k].name;
    f.op_type = "Attention";
    f.domain = kBackplaneDomain;
    f.opset = 1;
    f.inputs = {r.q, r.kt, r.v};
    if (!r.mask.empty()) f.inputs.push_back(r.mask);
    f.outputs = g->nodes[r.last].outputs;
    OnnxAttribute a;
    a.kind = OnnxAttribute::kFloat;
    a.f = r.scale;
    f.attrs["scale"] = a;
    a.kind = OnnxAttribute::kString;
    a.s = r.mask_kind;
    f.attrs["mask_kind"] = a;
    // Every input the fused node reads is made before the final MatMul,
    // whose place it takes (the chain's values have no other readers).
    for (size_t j : r.chain) drop[j] = j != r.last;
    g->nodes[r.last] = std::move(f);
    ++fused;
  }
  drop_nodes(g, drop);
  return fused;
}

}  // namespace passes
}  // namespace bponnx
