// conv_transpose2d: samples and a naive double reference in scatter form
// (every input element adds weight * x into the outputs its taps reach),
// the opposite loop order of a gather-form kernel.
#include <cmath>

#include "family.h"

namespace bpc {
namespace {

Domain dom(double lo, double hi) {
  Domain d;
  d.lo = lo;
  d.hi = hi;
  return d;
}

struct Shape {
  const char* desc;
  std::vector<int64_t> in, w;
  bool bias;
  std::vector<int64_t> stride, pad, out_pad;
  int64_t groups;
  std::vector<int64_t> dil;
  bool error;
};

std::vector<Sample> conv_transpose_samples(const std::string&, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  const Shape shapes[] = {
      {"[1,2,3,3] * [2,3,3,3] + bias", {1, 2, 3, 3}, {2, 3, 3, 3}, true, {1, 1}, {0, 0}, {0, 0}, 1, {1, 1}, false},
      {"stride 2, padding 1, output_padding 1",
       {2, 3, 4, 5},
       {3, 2, 3, 3},
       true,
       {2, 2},
       {1, 1},
       {1, 1},
       1,
       {1, 1},
       false},
      {"stride [3,2], padding [1,0], output_padding [2,1]",
       {1, 2, 3, 4},
       {2, 2, 3, 2},
       false,
       {3, 2},
       {1, 0},
       {2, 1},
       1,
       {1, 1},
       false},
      {"groups 2", {1, 4, 3, 3}, {4, 3, 2, 2}, true, {2, 2}, {0, 0}, {0, 0}, 2, {1, 1}, false},
      {"dilation 2, output_padding 1 (< dilation)",
       {1, 2, 4, 3},
       {2, 2, 2, 3},
       true,
       {1, 1},
       {1, 1},
       {1, 1},
       1,
       {2, 2},
       false},
      {"unbatched [2,3,3]", {2, 3, 3}, {2, 1, 2, 2}, true, {2, 2}, {0, 0}, {0, 0}, 1, {1, 1}, false},
      {"transposed-conv upsampling [1,4,8,8] k4 s2 p1",
       {1, 4, 8, 8},
       {4, 3, 4, 4},
       true,
       {2, 2},
       {1, 1},
       {0, 0},
       1,
       {1, 1},
       false},
      {"error: weight for 3 input channels, input has 2",
       {1, 2, 3, 3},
       {3, 2, 3, 3},
       false,
       {1, 1},
       {0, 0},
       {0, 0},
       1,
       {1, 1},
       true},
      {"error: output_padding 2 not smaller than stride 2 or dilation 1",
       {1, 2, 3, 3},
       {2, 2, 3, 3},
       false,
       {2, 2},
       {0, 0},
       {2, 2},
       1,
       {1, 1},
       true},
  };
  std::vector<Sample> out;
  for (const Shape& sh : shapes) {
    Sample s;
    s.desc = sh.desc;
    s.expect_error = sh.error;
    const int64_t c_out = sh.w[1] * sh.groups;
    s.args.push_back(Arg::tensor_of(make_input(rng, d, sh.in, dom(-1, 1))));
    s.args.push_back(Arg::tensor_of(make_input(rng, d, sh.w, dom(-1, 1))));
    s.args.push_back(sh.bias ? Arg::tensor_of(make_input(rng, d, {c_out}, dom(-1, 1))) : Arg::none());
    s.args.push_back(Arg::ints_of(sh.stride));
    s.args.push_back(Arg::ints_of(sh.pad));
    s.args.push_back(Arg::ints_of(sh.out_pad));
    s.args.push_back(Arg::int_of(sh.groups));
    s.args.push_back(Arg::ints_of(sh.dil));
    out.push_back(std::move(s));
  }
  return out;
}

Expected conv_transpose_reference(const std::string&, const Sample& s) {
  HostTensor in = tensor_arg(s, 0);
  const bool unbatched = in.ndim() == 3;
  if (unbatched) in.sizes.insert(in.sizes.begin(), 1);
  const HostTensor& w = tensor_arg(s, 1);
  const HostTensor* bias = s.args.at(2).kind == Arg::kTensor ? &s.args[2].tensor.t : nullptr;
  const auto& st = s.args.at(3).ints;
  const auto& pd = s.args.at(4).ints;
  const auto& op = s.args.at(5).ints;
  const int64_t g = s.args.at(6).i;
  const auto& dl = s.args.at(7).ints;
  const int64_t N = in.sizes[0], C = in.sizes[1], H = in.sizes[2], W = in.sizes[3];
  const int64_t OG = w.sizes[1], KH = w.sizes[2], KW = w.sizes[3], O = OG * g, CG = C / g;
  const int64_t OH = (H - 1) * st[0] - 2 * pd[0] + dl[0] * (KH - 1) + op[0] + 1;
  const int64_t OW = (W - 1) * st[1] - 2 * pd[1] + dl[1] * (KW - 1) + op[1] + 1;
  HostTensor r;
  r.dtype = in.dtype;
  r.sizes = {N, O, OH, OW};
  r.values.assign(static_cast<size_t>(N * O * OH * OW), 0.0);
  std::vector<double> mag(r.values.size(), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t k = 0; k < OH * OW; ++k) {
        const size_t at = static_cast<size_t>((n * O + o) * OH * OW + k);
        r.values[at] = bias ? bias->values[static_cast<size_t>(o)] : 0.0;
        mag[at] = std::fabs(r.values[at]);
      }
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t x = 0; x < W; ++x) {
          const double v = in.values[static_cast<size_t>(((n * C + c) * H + y) * W + x)];
          const int64_t grp = c / CG;
          for (int64_t ol = 0; ol < OG; ++ol)
            for (int64_t i = 0; i < KH; ++i)
              for (int64_t j = 0; j < KW; ++j) {
                const int64_t oy = y * st[0] - pd[0] + i * dl[0], ox = x * st[1] - pd[1] + j * dl[1];
                if (oy < 0 || oy >= OH || ox < 0 || ox >= OW) continue;
                const int64_t o = grp * OG + ol;
                const double p = v * w.values[static_cast<size_t>(((c * OG + ol) * KH + i) * KW + j)];
                const size_t at = static_cast<size_t>(((n * O + o) * OH + oy) * OW + ox);
                r.values[at] += p;
                mag[at] += std::fabs(p);
              }
        }
  if (unbatched) r.sizes.erase(r.sizes.begin());
  Expected e = single_output(std::move(r));
  e.mag.push_back(std::move(mag));
  e.reduce_len = CG * KH * KW;
  return e;
}

}  // namespace

void register_conv_transpose_ops(std::vector<OpDef>* defs) {
  defs->push_back({"conv_transpose2d.input", conv_transpose_samples, conv_transpose_reference, 0.0});
}

}  // namespace bpc
