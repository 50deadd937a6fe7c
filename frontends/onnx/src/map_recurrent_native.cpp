// The native path of ONNX LSTM and GRU (map_recurrent_native.h): one
// lstm_layer / gru_layer call instead of ~13 calls per time step. Layout 1
// (batch first) is permuted around the call; Y comes from the operator's
// [T, B, D*H] output viewed as [T, B, D, H] and permuted to ONNX's
// [T, D, B, H].
#include "map_recurrent_native.h"

#include <string>

#include "bponnx/exec.h"

namespace bponnx {

namespace {

bp_tensor_t* swap01(Exec& ex, bp_tensor_t* t) { return ex.call("permute", {vt(t), vl({1, 0, 2})}); }

}  // namespace

bool map_recurrent_native(Exec& ex, const OnnxNode& n, const std::vector<NodeInput>& in, bool lstm,
                          std::vector<bp_tensor_t*>* outs) {
  auto opt = [&](size_t k) { return in.size() > k && in[k].present() ? in[k].t : nullptr; };
  const char* op = lstm ? "lstm_layer" : "gru_layer";
  if (in.size() < 3 || opt(4) != nullptr || (lstm && opt(7) != nullptr)) return false;
  for (size_t k = 0; k < in.size(); ++k)
    if (in[k].present() && k != 4 && dtype_of(in[k].t) != DType::kFloat32) return false;
  const std::string direction = n.get_string("direction", "forward");
  const int64_t dir = direction == "forward" ? 0 : direction == "reverse" ? 1 : direction == "bidirectional" ? 2 : -1;
  // Elsewhere the operator would run through the CPU fallback; the
  // decomposition keeps the work on the device.
  if (dir < 0 || !runs_natively(ex.ctx(), op, ex.device().backend)) return false;
  const std::vector<int64_t> xs = sizes_of(in[0].t), rs = sizes_of(in[2].t);
  if (xs.size() != 3 || rs.size() != 3) return false;  // the decomposition names the error
  const bool batch_first = n.get_int("layout", 0) != 0;
  const int64_t dirs = dir == 2 ? 2 : 1, hidden = rs[2], batch = batch_first ? xs[0] : xs[1];
  if (n.get_int("hidden_size", hidden) != hidden) return false;
  bp_tensor_t* x = batch_first ? swap01(ex, in[0].t) : in[0].t;
  auto state = [&](bp_tensor_t* s) {
    if (s == nullptr) return ex.full({dirs, batch, hidden}, DType::kFloat32, 0.0);
    return batch_first ? swap01(ex, s) : s;
  };
  bp_tensor_t* h0 = state(opt(5));
  std::vector<bp_tensor_t*> r;
  if (lstm) {
    bp_tensor_t* c0 = state(opt(6));
    r = ex.call_multi(op, {vt(x), vt(h0), vt(c0), vt(in[1].t), vt(in[2].t), vt(opt(3)), vi(dir)}, 3);
  } else {
    r = ex.call_multi(
        op,
        {vt(x), vt(h0), vt(in[1].t), vt(in[2].t), vt(opt(3)), vi(dir), vb(n.get_int("linear_before_reset", 0) != 0)},
        2);
  }
  const std::vector<int64_t> ys = sizes_of(r[0]);  // [T, B, D*H]
  bp_tensor_t* y4 = ex.call("reshape", {vt(r[0]), vl({ys[0], ys[1], dirs, hidden})});
  // ONNX's Y: [T, D, B, H], or [B, T, D, H] with layout 1.
  bp_tensor_t* y =
      ex.call("contiguous", {vt(ex.call("permute", {vt(y4), vl(batch_first ? std::vector<int64_t>{1, 0, 2, 3}
                                                                           : std::vector<int64_t>{0, 2, 1, 3})}))});
  outs->clear();
  outs->push_back(y);
  for (size_t k = 1; k < r.size(); ++k)
    outs->push_back(batch_first ? ex.call("contiguous", {vt(swap01(ex, r[k]))}) : r[k]);
  outs->resize(n.outputs.size() < outs->size() ? n.outputs.size() : outs->size());
  return true;
}

}  // namespace bponnx
