// ONNX NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss -> pointwise,
// reduction and log_softmax calls. Backplane has no gather: the target's
// class is picked with a one-hot mask (target == class position), which
// touches exactly one class per element, so the sums stay exact.
#include "bponnx/exec.h"

namespace bponnx {

namespace {

using Outs = std::vector<bp_tensor_t*>;
using Ins = std::vector<NodeInput>;

// 0, 1, ..., n-1 along dim 1 of a rank-`rank` int64 tensor (size 1 elsewhere).
bp_tensor_t* class_positions(Exec& ex, int64_t n, int64_t rank) {
  HostTensor h;
  h.dtype = DType::kInt64;
  h.sizes.assign(static_cast<size_t>(rank), 1);
  h.sizes[1] = n;
  for (int64_t k = 0; k < n; ++k) h.values.push_back(static_cast<double>(k));
  return ex.upload(h);
}

// The loss of log-probabilities `logp` [N, C, d...] for `target` [N, d...],
// with optional class weights [C], ignore_index and reduction, as ONNX's
// NegativeLogLikelihoodLoss defines it.
bp_tensor_t* nll(Exec& ex, const OnnxNode& n, bp_tensor_t* logp, bp_tensor_t* target, bp_tensor_t* weight) {
  const DType d = dtype_of(logp);
  const std::vector<int64_t> xs = sizes_of(logp);
  const int64_t rank = static_cast<int64_t>(xs.size());
  const std::string reduction = n.get_string("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean") unsupported_attr(n.op_type, "reduction", reduction);
  bp_tensor_t* t = ex.call("unsqueeze", {vt(target), vi(1)});
  bp_tensor_t* mask = ex.call("eq.Tensor", {vt(t), vt(class_positions(ex, xs[1], rank))});
  if (n.has("ignore_index")) {
    bp_tensor_t* valid = ex.call("ne.Tensor", {vt(t), vt(ex.scalar(static_cast<double>(n.get_int("ignore_index", 0)),
                                                                    dtype_of(target)))});
    mask = ex.call("mul.Tensor", {vt(mask), vt(valid)});
  }
  bp_tensor_t* w = ex.scalar(1.0, d);
  if (weight != nullptr) {
    std::vector<int64_t> ws(static_cast<size_t>(rank), 1);
    ws[1] = xs[1];
    w = ex.call("reshape", {vt(weight), vl(ws)});
  }
  bp_tensor_t* wm = ex.call("where.self", {vt(mask), vt(w), vt(ex.scalar(0.0, d))});
  const std::vector<int64_t> class_dim{1};
  bp_tensor_t* loss = ex.call("neg", {vt(ex.call("sum.dim_IntList", {vt(ex.call("mul.Tensor", {vt(logp), vt(wm)})),
                                                                      vl(class_dim), vb(false)}))});
  if (reduction == "none") return loss;
  bp_tensor_t* total = ex.call("sum.dim_IntList", {vt(loss), vnone(), vb(false)});
  if (reduction == "sum") return total;
  bp_tensor_t* wsum = ex.call("sum.dim_IntList", {vt(wm), vnone(), vb(false)});
  return ex.call("div.Tensor", {vt(total), vt(wsum)});
}

}  // namespace

void register_losses(MapTable* t) {
  MapTable& m = *t;
  m["NegativeLogLikelihoodLoss"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    need_dtype(n.op_type, "where.self", dtype_of(in[0].t));
    if (!dtype_is_float(dtype_of(in[0].t))) throw NotMapped{"dtype " + n.op_type + "(" + dtype_name(dtype_of(in[0].t)) + ")"};
    bp_tensor_t* weight = in.size() > 2 && in[2].present() ? in[2].t : nullptr;
    return {nll(ex, n, in[0].t, in[1].t, weight)};
  };
  m["SoftmaxCrossEntropyLoss"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    need_dtype(n.op_type, "log_softmax.int", dtype_of(in[0].t));
    bp_tensor_t* logp = ex.call("log_softmax.int", {vt(in[0].t), vi(1)});
    bp_tensor_t* weight = in.size() > 2 && in[2].present() ? in[2].t : nullptr;
    Outs outs{nll(ex, n, logp, in[1].t, weight)};
    if (n.outputs.size() > 1) outs.push_back(logp);
    return outs;
  };
}

}  // namespace bponnx
