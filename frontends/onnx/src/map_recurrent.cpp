// ONNX RNN, GRU and LSTM -> Backplane linear, sigmoid, tanh and pointwise
// ops, one time step at a time, where the native lstm_layer / gru_layer
// path (map_recurrent_native.cpp) does not apply: the input
// projections of all steps in one linear call, then per step one linear of
// the hidden state and the gate arithmetic. Directions forward, reverse and
// bidirectional; sequence_lens (a step past a sequence's length keeps its
// state and writes zeros to Y); initial states; LSTM peepholes; layout 0/1.
// Only the default activations (Tanh; Sigmoid/Tanh; Sigmoid/Tanh/Tanh) are
// mapped: a node naming others, or using clip or input_forget, is refused
// with an error naming the attribute.
#include <string>

#include "bponnx/exec.h"
#include "map_recurrent_native.h"

namespace bponnx {

namespace {

using Outs = std::vector<bp_tensor_t*>;
using Ins = std::vector<NodeInput>;

enum class Cell { kRnn, kGru, kLstm };

// What every step of one direction reads.
struct Dir {
  bp_tensor_t* xw = nullptr;  // [T, B, G*H]: X W^T + Wb for every step
  bp_tensor_t* r = nullptr;   // [G*H, H]
  bp_tensor_t* rb = nullptr;  // [G*H] or nullptr
  bp_tensor_t* p = nullptr;   // LSTM peepholes [3*H] (i, o, f) or nullptr
  bp_tensor_t* h = nullptr;   // state [B, H]
  bp_tensor_t* c = nullptr;   // LSTM cell state [B, H]
};

// Gate k of t's last dim (hidden wide).
bp_tensor_t* gate(Exec& ex, bp_tensor_t* t, int64_t k, int64_t hidden) {
  return ex.call("narrow", {vt(t), vi(bp_tensor_ndim(t) - 1), vi(k * hidden), vi(hidden)});
}
bp_tensor_t* add(Exec& ex, bp_tensor_t* a, bp_tensor_t* b) { return ex.call("add.Tensor", {vt(a), vt(b)}); }
bp_tensor_t* mul(Exec& ex, bp_tensor_t* a, bp_tensor_t* b) { return ex.call("mul.Tensor", {vt(a), vt(b)}); }
bp_tensor_t* sig(Exec& ex, bp_tensor_t* a) { return ex.call("sigmoid", {vt(a)}); }
bp_tensor_t* th(Exec& ex, bp_tensor_t* a) { return ex.call("tanh", {vt(a)}); }

// Refuses attributes this mapping does not implement, naming them.
void check_attrs(const OnnxNode& n) {
  if (n.has("activations")) {
    const OnnxAttribute& a = n.attrs.at("activations");
    const std::vector<std::string> dflt = n.op_type == "RNN"   ? std::vector<std::string>{"Tanh"}
                                          : n.op_type == "GRU" ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                               : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    // The defaults, once per direction, are what the mapping computes.
    bool is_default = !a.strings.empty();
    for (size_t k = 0; k < a.strings.size(); ++k) is_default = is_default && a.strings[k] == dflt[k % dflt.size()];
    if (!is_default) {
      std::string list;
      for (const std::string& s : a.strings) list += (list.empty() ? "" : ",") + s;
      unsupported_attr(n.op_type, "activations", list);
    }
  }
  for (const char* attr : {"activation_alpha", "activation_beta", "clip"}) {
    if (n.has(attr)) unsupported_attr(n.op_type, attr, "given");
  }
  if (n.get_int("input_forget", 0) != 0) unsupported_attr(n.op_type, "input_forget", "1");
}

// One step of the cell from the step's input projection xw_t [B, G*H];
// updates d.h (and d.c).
void step(Exec& ex, Cell cell, bool linear_before_reset, int64_t hidden, bp_tensor_t* xw_t, Dir* d) {
  if (cell == Cell::kRnn) {
    d->h = th(ex, add(ex, xw_t, ex.call("linear", {vt(d->h), vt(d->r), vt(d->rb)})));
    return;
  }
  if (cell == Cell::kLstm) {
    bp_tensor_t* g = add(ex, xw_t, ex.call("linear", {vt(d->h), vt(d->r), vt(d->rb)}));
    bp_tensor_t* gi = gate(ex, g, 0, hidden);
    bp_tensor_t* go = gate(ex, g, 1, hidden);
    bp_tensor_t* gf = gate(ex, g, 2, hidden);
    bp_tensor_t* gc = gate(ex, g, 3, hidden);
    if (d->p != nullptr) {
      gi = add(ex, gi, mul(ex, gate(ex, d->p, 0, hidden), d->c));
      gf = add(ex, gf, mul(ex, gate(ex, d->p, 2, hidden), d->c));
    }
    d->c = add(ex, mul(ex, sig(ex, gf), d->c), mul(ex, sig(ex, gi), th(ex, gc)));
    if (d->p != nullptr) go = add(ex, go, mul(ex, gate(ex, d->p, 1, hidden), d->c));
    d->h = mul(ex, sig(ex, go), th(ex, d->c));
    return;
  }
  // GRU, gates z, r, h. The h gate's recurrent part sees r * H (default) or
  // is multiplied by r after the linear (linear_before_reset).
  bp_tensor_t* r_zr = ex.call("narrow", {vt(d->r), vi(0), vi(0), vi(2 * hidden)});
  bp_tensor_t* r_h = ex.call("narrow", {vt(d->r), vi(0), vi(2 * hidden), vi(hidden)});
  bp_tensor_t* rb_zr = d->rb != nullptr ? ex.call("narrow", {vt(d->rb), vi(0), vi(0), vi(2 * hidden)}) : nullptr;
  bp_tensor_t* rb_h = d->rb != nullptr ? ex.call("narrow", {vt(d->rb), vi(0), vi(2 * hidden), vi(hidden)}) : nullptr;
  bp_tensor_t* zr = add(ex, ex.call("narrow", {vt(xw_t), vi(1), vi(0), vi(2 * hidden)}),
                        ex.call("linear", {vt(d->h), vt(r_zr), vt(rb_zr)}));
  bp_tensor_t* z = sig(ex, gate(ex, zr, 0, hidden));
  bp_tensor_t* r = sig(ex, gate(ex, zr, 1, hidden));
  bp_tensor_t* hr = linear_before_reset ? mul(ex, r, ex.call("linear", {vt(d->h), vt(r_h), vt(rb_h)}))
                                        : ex.call("linear", {vt(mul(ex, r, d->h)), vt(r_h), vt(rb_h)});
  bp_tensor_t* hh = th(ex, add(ex, gate(ex, xw_t, 2, hidden), hr));
  // H = (1 - z) * hh + z * H = hh + z * (H - hh)
  d->h = add(ex, hh, mul(ex, z, ex.call("sub.Tensor", {vt(d->h), vt(hh)})));
}

MapFn recurrent(Cell cell) {
  return [cell](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const DType dt = dtype_of(in[0].t);
    need_dtype(n.op_type, "linear", dt);
    check_attrs(n);
    Outs native;
    if (cell != Cell::kRnn && map_recurrent_native(ex, n, in, cell == Cell::kLstm, &native)) return native;
    const int64_t gates = cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4;
    const std::string direction = n.get_string("direction", "forward");
    if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
      unsupported_attr(n.op_type, "direction", direction);
    const int64_t dirs = direction == "bidirectional" ? 2 : 1;
    const bool batch_first = n.get_int("layout", 0) != 0;
    bp_tensor_t* x = in[0].t;
    if (batch_first) x = ex.call("permute", {vt(x), vl({1, 0, 2})});
    const std::vector<int64_t> xs = sizes_of(x), ws = sizes_of(in[1].t);
    if (xs.size() != 3 || ws.size() != 3) throw CallFailed{n.op_type + ": INVALID_ARGUMENT: expected a 3-D X and W"};
    const int64_t steps = xs[0], batch = xs[1];
    const int64_t hidden = n.get_int("hidden_size", ws[1] / gates);
    auto opt = [&](size_t k) { return in.size() > k && in[k].present() ? in[k].t : nullptr; };
    bp_tensor_t* b = opt(3);
    bp_tensor_t* lens = opt(4);
    bp_tensor_t* h0 = opt(5);
    bp_tensor_t* c0 = cell == Cell::kLstm ? opt(6) : nullptr;
    bp_tensor_t* peep = cell == Cell::kLstm ? opt(7) : nullptr;
    if (batch_first) {
      if (h0 != nullptr) h0 = ex.call("permute", {vt(h0), vl({1, 0, 2})});
      if (c0 != nullptr) c0 = ex.call("permute", {vt(c0), vl({1, 0, 2})});
    }
    bp_tensor_t* zeros = ex.full({batch, hidden}, dt, 0.0);
    // mask[t]: [B, 1] bool, true where step t lies within the sequence.
    std::vector<bp_tensor_t*> mask(static_cast<size_t>(steps), nullptr);
    if (lens != nullptr) {
      bp_tensor_t* l = ex.call("reshape", {vt(lens), vl({batch, 1})});
      for (int64_t t = 0; t < steps; ++t)
        mask[static_cast<size_t>(t)] =
            ex.call("gt.Tensor", {vt(l), vt(ex.scalar(static_cast<double>(t), dtype_of(l)))});
    }
    Outs ys, yh, yc;
    for (int64_t k = 0; k < dirs; ++k) {
      const bool reverse = direction == "reverse" || k == 1;
      Dir d;
      bp_tensor_t* bk = b != nullptr ? ex.call("select.int", {vt(b), vi(0), vi(k)}) : nullptr;
      bp_tensor_t* wb = bk != nullptr ? ex.call("narrow", {vt(bk), vi(0), vi(0), vi(gates * hidden)}) : nullptr;
      d.rb = bk != nullptr ? ex.call("narrow", {vt(bk), vi(0), vi(gates * hidden), vi(gates * hidden)}) : nullptr;
      d.xw = ex.call("linear", {vt(x), vt(ex.call("select.int", {vt(in[1].t), vi(0), vi(k)})), vt(wb)});
      d.r = ex.call("select.int", {vt(in[2].t), vi(0), vi(k)});
      if (peep != nullptr) d.p = ex.call("select.int", {vt(peep), vi(0), vi(k)});
      d.h = h0 != nullptr ? ex.call("select.int", {vt(h0), vi(0), vi(k)}) : zeros;
      if (cell == Cell::kLstm) d.c = c0 != nullptr ? ex.call("select.int", {vt(c0), vi(0), vi(k)}) : zeros;
      std::vector<bp_tensor_t*> out(static_cast<size_t>(steps), nullptr);
      for (int64_t s = 0; s < steps; ++s) {
        const int64_t t = reverse ? steps - 1 - s : s;
        bp_tensor_t* xw_t = ex.call("select.int", {vt(d.xw), vi(0), vi(t)});
        bp_tensor_t *h_prev = d.h, *c_prev = d.c;
        step(ex, cell, n.get_int("linear_before_reset", 0) != 0, hidden, xw_t, &d);
        bp_tensor_t* y = d.h;
        if (mask[static_cast<size_t>(t)] != nullptr) {
          bp_tensor_t* m = mask[static_cast<size_t>(t)];
          d.h = ex.call("where.self", {vt(m), vt(d.h), vt(h_prev)});
          if (d.c != nullptr) d.c = ex.call("where.self", {vt(m), vt(d.c), vt(c_prev)});
          y = ex.call("where.self", {vt(m), vt(y), vt(zeros)});
        }
        out[static_cast<size_t>(t)] = ex.call("unsqueeze", {vt(y), vi(0)});
      }
      bp_value_t l{};
      l.kind = BP_VALUE_TENSOR_LIST;
      l.u.tensor_list.data = out.data();
      l.u.tensor_list.size = static_cast<int64_t>(out.size());
      ys.push_back(steps > 0 ? ex.call("unsqueeze", {vt(ex.call("cat", {l, vi(0)})), vi(1)})
                             : ex.full({0, 1, batch, hidden}, dt, 0.0));
      yh.push_back(ex.call("unsqueeze", {vt(d.h), vi(0)}));
      if (d.c != nullptr) yc.push_back(ex.call("unsqueeze", {vt(d.c), vi(0)}));
    }
    auto cat = [&](Outs& parts, int64_t dim) {
      bp_value_t l{};
      l.kind = BP_VALUE_TENSOR_LIST;
      l.u.tensor_list.data = parts.data();
      l.u.tensor_list.size = static_cast<int64_t>(parts.size());
      return ex.call("cat", {l, vi(dim)});
    };
    bp_tensor_t* y = cat(ys, 1);    // [T, dirs, B, H]
    bp_tensor_t* y_h = cat(yh, 0);  // [dirs, B, H]
    bp_tensor_t* y_c = cell == Cell::kLstm ? cat(yc, 0) : nullptr;
    if (batch_first) {
      y = ex.call("contiguous", {vt(ex.call("permute", {vt(y), vl({2, 0, 1, 3})}))});
      y_h = ex.call("contiguous", {vt(ex.call("permute", {vt(y_h), vl({1, 0, 2})}))});
      if (y_c != nullptr) y_c = ex.call("contiguous", {vt(ex.call("permute", {vt(y_c), vl({1, 0, 2})}))});
    }
    Outs outs{y, y_h};
    if (cell == Cell::kLstm) outs.push_back(y_c);
    outs.resize(n.outputs.size() < outs.size() ? n.outputs.size() : outs.size());
    return outs;
  };
}

}  // namespace

void register_recurrent(MapTable* t) {
  MapTable& m = *t;
  m["RNN"] = recurrent(Cell::kRnn);
  m["GRU"] = recurrent(Cell::kGru);
  m["LSTM"] = recurrent(Cell::kLstm);
}

}  // namespace bponnx
