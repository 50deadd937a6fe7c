// lstm_layer and gru_layer: samples and naive double references written
// from ONNX's LSTM-14 and GRU-14 equations (gate orders i, o, f, c and
// z, r, h; bias = Wb then Rb), one time step and one batch row at a time.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>

#include "family.h"

namespace bpc {
namespace {

Domain dom(double lo, double hi) {
  Domain d;
  d.lo = lo;
  d.hi = hi;
  return d;
}

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

struct RnnCase {
  const char* desc;
  int64_t T, B, I, H, direction;
  bool bias, lbr;  // lbr: GRU's linear_before_reset
  const char* error;  // nullptr, "direction", "h0" or "bias": what the sample gets wrong
  bool quick;
};

const RnnCase kLstmCases[] = {
    {"forward T3 B2 I4 H3, bias", 3, 2, 4, 3, 0, true, false, nullptr, true},
    {"reverse T4 B1 I2 H5, no bias", 4, 1, 2, 5, 1, false, false, nullptr, true},
    {"bidirectional T5 B3 I3 H4, bias", 5, 3, 3, 4, 2, true, false, nullptr, true},
    {"forward T1 B1 I1 H1", 1, 1, 1, 1, 0, true, false, nullptr, true},
    {"bidirectional T12 B2 I8 H16, bias (longer)", 12, 2, 8, 16, 2, true, false, nullptr, false},
    {"no step T0: final state is the initial one", 0, 2, 3, 2, 0, true, false, nullptr, true},
    {"error: direction 3", 2, 1, 2, 2, 3, true, false, "direction", true},
    {"error: h0 of the wrong batch", 2, 2, 2, 2, 0, true, false, "h0", true},
    {"error: bias [D, 4H] instead of [D, 8H]", 2, 1, 2, 2, 0, true, false, "bias", true},
};

const RnnCase kGruCases[] = {
    {"forward T3 B2 I4 H3, bias", 3, 2, 4, 3, 0, true, false, nullptr, true},
    {"forward T3 B2 I4 H3, bias, linear_before_reset", 3, 2, 4, 3, 0, true, true, nullptr, true},
    {"reverse T4 B1 I2 H5, no bias", 4, 1, 2, 5, 1, false, false, nullptr, true},
    {"bidirectional T5 B3 I3 H4, bias, linear_before_reset", 5, 3, 3, 4, 2, true, true, nullptr, true},
    {"bidirectional T5 B2 I3 H4, bias", 5, 2, 3, 4, 2, true, false, nullptr, true},
    {"forward T12 B2 I8 H16, linear_before_reset (longer)", 12, 2, 8, 16, 0, true, true, nullptr, false},
    {"no step T0: final state is the initial one", 0, 2, 3, 2, 2, true, true, nullptr, true},
    {"error: direction -1", 2, 1, 2, 2, -1, true, false, "direction", true},
    {"error: h0 of the wrong batch", 2, 2, 2, 2, 0, true, false, "h0", true},
    {"error: bias [D, 3H] instead of [D, 6H]", 2, 1, 2, 2, 0, true, true, "bias", true},
};

std::vector<Sample> recurrent_samples(bool lstm, DType d, uint64_t seed) {
  Rng rng(seed);
  std::vector<Sample> out;
  const int64_t G = lstm ? 4 : 3;
  for (const RnnCase& c : lstm ? std::vector<RnnCase>(std::begin(kLstmCases), std::end(kLstmCases))
                               : std::vector<RnnCase>(std::begin(kGruCases), std::end(kGruCases))) {
    const int64_t D = c.direction == 2 ? 2 : 1;
    const int64_t B0 = c.error != nullptr && std::string(c.error) == "h0" ? c.B + 1 : c.B;
    const int64_t bias_w = c.error != nullptr && std::string(c.error) == "bias" ? G * c.H : 2 * G * c.H;
    Sample s;
    s.desc = c.desc;
    s.quick = c.quick;
    s.expect_error = c.error != nullptr;
    // Weights in [-0.5, 0.5]: gates stay away from saturation, as trained
    // layers mostly do, so the outputs exercise the whole cell.
    s.args.push_back(Arg::tensor_of(make_input(rng, d, {c.T, c.B, c.I}, dom(-1, 1))));
    s.args.push_back(Arg::tensor_of(make_input(rng, d, {D, B0, c.H}, dom(-1, 1))));
    if (lstm) s.args.push_back(Arg::tensor_of(make_input(rng, d, {D, c.B, c.H}, dom(-1, 1))));
    s.args.push_back(Arg::tensor_of(make_input(rng, d, {D, G * c.H, c.I}, dom(-0.5, 0.5))));
    s.args.push_back(Arg::tensor_of(make_input(rng, d, {D, G * c.H, c.H}, dom(-0.5, 0.5))));
    s.args.push_back(c.bias ? Arg::tensor_of(make_input(rng, d, {D, bias_w}, dom(-0.5, 0.5))) : Arg::none());
    s.args.push_back(Arg::int_of(c.direction));
    if (!lstm) s.args.push_back(Arg::bool_of(c.lbr));
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<Sample> lstm_samples(const std::string&, DType d, uint64_t seed, bool) {
  return recurrent_samples(true, d, seed);
}
std::vector<Sample> gru_samples(const std::string&, DType d, uint64_t seed, bool) {
  return recurrent_samples(false, d, seed);
}

Expected recurrent_reference(bool lstm, const Sample& s) {
  const HostTensor& x = tensor_arg(s, 0);
  const HostTensor& h0 = tensor_arg(s, 1);
  const int a = lstm ? 1 : 0;  // LSTM has c0 at 2: later arguments move by one
  const HostTensor* c0 = lstm ? &tensor_arg(s, 2) : nullptr;
  const HostTensor& w = tensor_arg(s, 2 + a);
  const HostTensor& r = tensor_arg(s, 3 + a);
  const HostTensor* b = s.args.at(static_cast<size_t>(4 + a)).kind == Arg::kTensor ? &tensor_arg(s, 4 + a) : nullptr;
  const int64_t direction = s.args.at(static_cast<size_t>(5 + a)).i;
  const bool lbr = !lstm && s.args.at(6).b;
  const int64_t T = x.sizes[0], B = x.sizes[1], I = x.sizes[2], H = r.sizes[2], G = lstm ? 4 : 3;
  const int64_t D = direction == 2 ? 2 : 1;
  HostTensor y, hn, cn;
  y.dtype = hn.dtype = cn.dtype = x.dtype;
  y.sizes = {T, B, D * H};
  hn.sizes = cn.sizes = {D, B, H};
  y.values.assign(static_cast<size_t>(T * B * D * H), 0.0);
  hn.values = h0.values;
  if (lstm) cn.values = c0->values;
  auto W = [&](int64_t d, int64_t row, int64_t k) { return w.values[static_cast<size_t>((d * G * H + row) * I + k)]; };
  auto R = [&](int64_t d, int64_t row, int64_t k) { return r.values[static_cast<size_t>((d * G * H + row) * H + k)]; };
  auto bias = [&](int64_t d, int64_t k) { return b ? b->values[static_cast<size_t>(d * 2 * G * H + k)] : 0.0; };
  std::vector<double> xw(static_cast<size_t>(G * H)), hr(static_cast<size_t>(G * H)), h(static_cast<size_t>(H));
  for (int64_t d = 0; d < D; ++d) {
    const bool reverse = direction == 1 || d == 1;
    for (int64_t n = 0; n < B; ++n) {
      double* hs = &hn.values[static_cast<size_t>((d * B + n) * H)];
      double* cs = lstm ? &cn.values[static_cast<size_t>((d * B + n) * H)] : nullptr;
      for (int64_t step = 0; step < T; ++step) {
        const int64_t t = reverse ? T - 1 - step : step;
        const double* xt = &x.values[static_cast<size_t>((t * B + n) * I)];
        for (int64_t g = 0; g < G * H; ++g) {
          double sx = bias(d, g), sh = bias(d, G * H + g);
          for (int64_t k = 0; k < I; ++k) sx += W(d, g, k) * xt[k];
          for (int64_t k = 0; k < H; ++k) sh += R(d, g, k) * hs[k];
          xw[static_cast<size_t>(g)] = sx;
          hr[static_cast<size_t>(g)] = sh;
        }
        auto gate_at = [&](int64_t k, int64_t j) {
          return xw[static_cast<size_t>(k * H + j)] + hr[static_cast<size_t>(k * H + j)];
        };
        for (int64_t j = 0; j < H; ++j) {
          auto gate = [&](int64_t k) { return gate_at(k, j); };
          if (lstm) {
            const double i = sigmoid(gate(0)), o = sigmoid(gate(1)), f = sigmoid(gate(2)), cc = std::tanh(gate(3));
            cs[j] = f * cs[j] + i * cc;
            h[static_cast<size_t>(j)] = o * std::tanh(cs[j]);
          } else {
            const double z = sigmoid(gate(0)), rr = sigmoid(gate(1));
            double cand;
            if (lbr) {
              cand = std::tanh(xw[static_cast<size_t>(2 * H + j)] + rr * hr[static_cast<size_t>(2 * H + j)]);
            } else {  // (r (.) h) R_h^T + Rb_h: unit k's state scaled by unit k's reset gate
              double sh = bias(d, G * H + 2 * H + j);
              for (int64_t k = 0; k < H; ++k) sh += R(d, 2 * H + j, k) * sigmoid(gate_at(1, k)) * hs[k];
              cand = std::tanh(xw[static_cast<size_t>(2 * H + j)] + sh);
            }
            h[static_cast<size_t>(j)] = (1.0 - z) * cand + z * hs[j];
          }
        }
        // GRU's reset gate reads the previous state for every j: update after.
        for (int64_t j = 0; j < H; ++j) {
          hs[j] = h[static_cast<size_t>(j)];
          y.values[static_cast<size_t>((t * B + n) * D * H + d * H + j)] = hs[j];
        }
      }
    }
  }
  Expected e;
  // Each step sums I + H products per gate, and rounding carries through
  // the steps; the states stay within about 1 in magnitude (c may grow).
  e.reduce_len = (T + 1) * (I + H + 4);
  e.outputs.push_back(std::move(y));
  e.outputs.push_back(std::move(hn));
  if (lstm) e.outputs.push_back(std::move(cn));
  for (const HostTensor& o : e.outputs) {
    std::vector<double> mag(o.values.size());
    for (size_t k = 0; k < mag.size(); ++k) mag[k] = std::max(1.0, std::fabs(o.values[k]));
    e.mag.push_back(std::move(mag));
  }
  return e;
}

Expected lstm_reference(const std::string&, const Sample& s) { return recurrent_reference(true, s); }
Expected gru_reference(const std::string&, const Sample& s) { return recurrent_reference(false, s); }

}  // namespace

void register_recurrent_ops(std::vector<OpDef>* defs) {
  defs->push_back({"lstm_layer", lstm_samples, lstm_reference, 0.0});
  defs->push_back({"gru_layer", gru_samples, gru_reference, 0.0});
}

}  // namespace bpc
