// Resampling operators (upsample_nearest2d, upsample_bilinear2d): samples
// and naive references. Bilinear interpolates in double. The nearest source
// index is discontinuous, so the reference takes torch's definition as it
// is, float32 arithmetic included: min(floor(float(dst) * float(scale)),
// in - 1) with scale = 1 / scale_factor when given (> 0), else in / out
// (torch 1.13's multi-channel kernel; its single-plane path special-cases
// out == in and out == 2 * in, which differs only with explicit scale
// factors). Bilinear copies an axis whose size does not change.
#include <algorithm>
#include <cmath>

#include "family.h"

namespace bpc {
namespace {

Domain dom(double lo, double hi) {
  Domain d;
  d.lo = lo;
  d.hi = hi;
  d.ilo = 0;
  d.ihi = 255;
  return d;
}

struct Resize {
  const char* desc;
  std::vector<int64_t> in;
  std::vector<int64_t> out;  // output_size
  double sh, sw;             // scale factors; 0: None
  bool align_corners;
  Layout layout;
  bool quick;
  bool error;
};

std::vector<Sample> upsample_samples(const std::string& op, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  const bool bilinear = op == "upsample_bilinear2d";
  std::vector<Resize> shapes = {
      {"[1,2,3,4] -> [6,8] (2x)", {1, 2, 3, 4}, {6, 8}, 0, 0, false, Layout::kContiguous, true, false},
      {"[2,3,5,4] -> [7,9] (odd ratios)", {2, 3, 5, 4}, {7, 9}, 0, 0, false, Layout::kContiguous, true, false},
      {"downsample [1,2,9,7] -> [4,3]", {1, 2, 9, 7}, {4, 3}, 0, 0, false, Layout::kContiguous, true, false},
      {"scale factors 1.7 x 0.6: [1,1,5,7] -> [8,4]",
       {1, 1, 5, 7},
       {8, 4},
       1.7,
       0.6,
       false,
       Layout::kContiguous,
       true,
       false},
      {"same size [1,2,4,5]", {1, 2, 4, 5}, {4, 5}, 0, 0, false, Layout::kContiguous, true, false},
      {"scale factors 1.1 x 2.3 keep or double a size: [1,2,4,3] -> [4,6]",
       {1, 2, 4, 3},
       {4, 6},
       1.1,
       2.3,
       false,
       Layout::kContiguous,
       true,
       false},
      {"one pixel [1,2,1,1] -> [3,2]", {1, 2, 1, 1}, {3, 2}, 0, 0, false, Layout::kContiguous, true, false},
      {"to one pixel [1,1,4,6] -> [1,1]", {1, 1, 4, 6}, {1, 1}, 0, 0, false, Layout::kContiguous, true, false},
      {"transposed view [1,3,6,5] -> [10,11]", {1, 3, 6, 5}, {10, 11}, 0, 0, false, Layout::kTransposed, true, false},
      {"zero-size batch [0,2,3,3] -> [5,5]", {0, 2, 3, 3}, {5, 5}, 0, 0, false, Layout::kContiguous, true, false},
      {"large [2,8,33,31] -> [64,45]", {2, 8, 33, 31}, {64, 45}, 0, 0, false, Layout::kContiguous, false, false},
      {"error: 3-D input [2,3,4]", {2, 3, 4}, {6, 8}, 0, 0, false, Layout::kContiguous, true, true},
      {"error: output size 0", {1, 1, 3, 3}, {0, 4}, 0, 0, false, Layout::kContiguous, true, true},
  };
  if (bilinear) {
    std::vector<Resize> ac;
    for (Resize r : shapes) {
      if (r.error) continue;
      r.align_corners = true;
      ac.push_back(r);
    }
    ac[0].desc = "align_corners [1,2,3,4] -> [6,8]";
    ac[1].desc = "align_corners [2,3,5,4] -> [7,9]";
    ac[2].desc = "align_corners downsample [1,2,9,7] -> [4,3]";
    ac[3].desc = "align_corners ignores scale factors [1,1,5,7] -> [8,4]";
    shapes.insert(shapes.end(), ac.begin(), ac.begin() + 4);
    shapes.push_back({"align_corners to one pixel [1,1,4,6] -> [1,1]",
                      {1, 1, 4, 6},
                      {1, 1},
                      0,
                      0,
                      true,
                      Layout::kContiguous,
                      true,
                      false});
  }
  std::vector<Sample> out;
  for (const Resize& r : shapes) {
    Sample s;
    s.desc = r.desc;
    s.quick = r.quick;
    s.expect_error = r.error;
    s.args.push_back(Arg::tensor_of(make_input(rng, d, r.in, dom(-2, 2), r.layout)));
    s.args.push_back(Arg::ints_of(r.out));
    if (bilinear) s.args.push_back(Arg::bool_of(r.align_corners));
    s.args.push_back(r.sh > 0 ? Arg::double_of(r.sh) : Arg::none());
    s.args.push_back(r.sw > 0 ? Arg::double_of(r.sw) : Arg::none());
    out.push_back(std::move(s));
  }
  return out;
}

// The scale factor argument at i, 0 when None or not > 0.
double scale_of(const Sample& s, size_t i) {
  return i < s.args.size() && s.args[i].kind == Arg::kDouble && s.args[i].d > 0 ? s.args[i].d : 0.0;
}

int64_t nearest_source(int64_t dst, int64_t in, int64_t out, double factor) {
  const float scale = factor > 0 ? static_cast<float>(1.0 / factor) : static_cast<float>(in) / static_cast<float>(out);
  return std::min(static_cast<int64_t>(std::floor(static_cast<float>(dst) * scale)), in - 1);
}

// The source position of dst along one axis, in double.
double linear_source(int64_t dst, int64_t in, int64_t out, bool align_corners, double factor) {
  if (out == in) return static_cast<double>(dst);  // an unchanged axis is copied, whatever the scale factor
  if (align_corners)
    return out > 1 ? static_cast<double>(dst) * static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  const double scale = factor > 0 ? 1.0 / factor : static_cast<double>(in) / static_cast<double>(out);
  return std::max(0.0, (static_cast<double>(dst) + 0.5) * scale - 0.5);
}

Expected upsample_reference(const std::string& op, const Sample& s) {
  const bool bilinear = op == "upsample_bilinear2d";
  const HostTensor& in = tensor_arg(s, 0);
  const auto& size = s.args.at(1).ints;
  const bool ac = bilinear && s.args.at(2).b;
  const size_t first_scale = bilinear ? 3 : 2;
  const double fh = scale_of(s, first_scale), fw = scale_of(s, first_scale + 1);
  const int64_t N = in.sizes[0], C = in.sizes[1], H = in.sizes[2], W = in.sizes[3];
  const int64_t OH = size[0], OW = size[1];
  HostTensor r;
  r.dtype = in.dtype;
  r.sizes = {N, C, OH, OW};
  std::vector<double> mag;
  for (int64_t nc = 0; nc < N * C; ++nc) {
    const double* x = in.values.data() + nc * H * W;
    for (int64_t oy = 0; oy < OH; ++oy) {
      for (int64_t ox = 0; ox < OW; ++ox) {
        if (!bilinear) {
          r.values.push_back(x[nearest_source(oy, H, OH, fh) * W + nearest_source(ox, W, OW, fw)]);
          continue;
        }
        const double sy = linear_source(oy, H, OH, ac, fh), sx = linear_source(ox, W, OW, ac, fw);
        const int64_t y0 = std::min(static_cast<int64_t>(sy), H - 1), x0 = std::min(static_cast<int64_t>(sx), W - 1);
        const int64_t y1 = std::min(y0 + 1, H - 1), x1 = std::min(x0 + 1, W - 1);
        const double ly = std::min(sy - static_cast<double>(y0), 1.0), lx = std::min(sx - static_cast<double>(x0), 1.0);
        const double w[4] = {(1 - ly) * (1 - lx), (1 - ly) * lx, ly * (1 - lx), ly * lx};
        const double v[4] = {x[y0 * W + x0], x[y0 * W + x1], x[y1 * W + x0], x[y1 * W + x1]};
        double acc = 0.0, m = 0.0;
        for (int k = 0; k < 4; ++k) {
          acc += w[k] * v[k];
          m += std::fabs(w[k] * v[k]);
        }
        r.values.push_back(acc);
        mag.push_back(m);
      }
    }
  }
  Expected e = single_output(std::move(r));
  if (bilinear) {
    // Weights computed in the dtype's compute type (float for float32) move
    // the result by a few ulp of the terms' magnitude.
    e.mag.push_back(std::move(mag));
    e.reduce_len = 4;
  }
  return e;
}

}  // namespace

void register_resample_ops(std::vector<OpDef>* defs) {
  defs->push_back({"upsample_nearest2d", upsample_samples, upsample_reference, 0.0});
  defs->push_back({"upsample_bilinear2d", upsample_samples, upsample_reference, 0.0});
}

}  // namespace bpc
