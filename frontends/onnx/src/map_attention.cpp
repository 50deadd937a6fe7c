// backplane.Attention (made by the attention pass) ->
// scaled_dot_product_attention.
//
// Inputs: Q [..., L, E], KT [..., E, S] (the key already transposed, as the
// graph's MatMul read it), V [..., S, Ev], optional mask. Attributes: scale
// (float, what multiplied the scores), mask_kind: "none", "add" (a float
// mask added to the scaled scores), "keep" (bool, True takes part) or "drop"
// (bool, True is hidden: masked_fill's form, Where(mask, -inf, scores)).
// The key is handed to the operator as a transposed view of KT (no copy).
// Where the operator cannot take the inputs as they come (a rank below 2, a
// dtype it does not claim, a mask that would grow the scores' sizes), the
// node runs as the graph had it: MatMul, Mul, the mask, Softmax, MatMul.
#include <limits>

#include "bponnx/exec.h"

namespace bponnx {

namespace {

using Outs = std::vector<bp_tensor_t*>;
using Ins = std::vector<NodeInput>;

// torch's broadcasting of two size lists; false when they do not broadcast.
bool broadcast(std::vector<int64_t> a, std::vector<int64_t> b, std::vector<int64_t>* out) {
  if (a.size() < b.size()) a.swap(b);
  out->assign(a.begin(), a.end());
  const size_t lead = a.size() - b.size();
  for (size_t i = 0; i < b.size(); ++i) {
    int64_t& o = (*out)[lead + i];
    if (b[i] == o || b[i] == 1) continue;
    if (o != 1) return false;
    o = b[i];
  }
  return true;
}

std::vector<int64_t> batch_of(const std::vector<int64_t>& s) { return {s.begin(), s.end() - 2}; }

// True when scaled_dot_product_attention takes these inputs as they are.
bool fits(bp_tensor_t* q, bp_tensor_t* kt, bp_tensor_t* v, bp_tensor_t* mask, const std::string& kind) {
  const std::vector<int64_t> qs = sizes_of(q), ks = sizes_of(kt), vs = sizes_of(v);
  const DType d = dtype_of(q);
  if (qs.size() < 2 || ks.size() < 2 || vs.size() < 2) return false;
  if ((d != DType::kFloat32 && d != DType::kFloat64) || dtype_of(kt) != d || dtype_of(v) != d) return false;
  if (qs.back() != ks[ks.size() - 2] || ks.back() != vs[vs.size() - 2]) return false;
  std::vector<int64_t> b, scores;
  if (!broadcast(batch_of(qs), batch_of(ks), &b) || !broadcast(b, batch_of(vs), &b)) return false;
  if (mask == nullptr) return true;
  if (dtype_of(mask) != (kind == "add" ? d : DType::kBool)) return false;
  scores = b;
  scores.push_back(qs[qs.size() - 2]);
  scores.push_back(ks.back());
  std::vector<int64_t> grown;
  return sizes_of(mask).size() <= scores.size() && broadcast(scores, sizes_of(mask), &grown) && grown == scores;
}

Outs attention(Exec& ex, const OnnxNode& n, const Ins& in) {
  bp_tensor_t* q = in[0].t;
  bp_tensor_t* kt = in[1].t;
  bp_tensor_t* v = in[2].t;
  bp_tensor_t* mask = in.size() > 3 && in[3].present() ? in[3].t : nullptr;
  const std::string kind = n.get_string("mask_kind", mask != nullptr ? "add" : "none");
  if ((kind == "none") != (mask == nullptr)) unsupported_attr(map_key(n), "mask_kind", kind);
  if (kind != "none" && kind != "add" && kind != "keep" && kind != "drop") {
    unsupported_attr(map_key(n), "mask_kind", kind);
  }
  const double scale = n.get_float("scale", 1.0);
  if (fits(q, kt, v, mask, kind)) {
    need_dtype(map_key(n), "scaled_dot_product_attention", dtype_of(q));
    // drop -> keep: True where the graph's mask is False.
    if (kind == "drop") mask = ex.call("eq.Tensor", {vt(mask), vt(ex.scalar(0.0, DType::kBool))});
    bp_tensor_t* k = ex.call("transpose.int", {vt(kt), vi(-2), vi(-1)});
    return {ex.call("scaled_dot_product_attention", {vt(q), vt(k), vt(v), vt(mask), vd(0.0), vb(false), vd(scale)})};
  }
  // The unfused graph, operator by operator.
  bp_tensor_t* s = ex.call("matmul", {vt(q), vt(kt)});
  if (scale != 1.0) s = ex.call("mul.Tensor", {vt(s), vt(ex.scalar(scale, dtype_of(s)))});
  if (kind == "add") s = ex.call("add.Tensor", {vt(s), vt(mask)});
  if (kind == "keep" || kind == "drop") {
    bp_tensor_t* ninf = ex.scalar(-std::numeric_limits<double>::infinity(), dtype_of(s));
    s = kind == "keep" ? ex.call("where.self", {vt(mask), vt(s), vt(ninf)})
                       : ex.call("where.self", {vt(mask), vt(ninf), vt(s)});
  }
  s = ex.call("softmax.int", {vt(s), vi(-1)});
  return {ex.call("matmul", {vt(s), vt(v)})};
}

}  // namespace

void register_attention(MapTable* t) { (*t)[std::string(kBackplaneDomain) + ".Attention"] = attention; }

}  // namespace bponnx
