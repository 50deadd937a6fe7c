// ONNX Resize (opset 10 to 17) and Upsample on 4-D inputs that keep N and C:
// upsample_nearest2d, upsample_bilinear2d, or two matmuls with
// interpolation weights worked out on the host.
//
// nearest: the source index of every output row and column is worked out on
// the host with the node's coordinate_transformation_mode and nearest_mode
// (as the ONNX spec defines them). When those indices are the ones
// upsample_nearest2d takes (its rule in ops.yaml: min(floor(dst * scale),
// in - 1) in float32), the operator runs; otherwise two index_select calls
// gather the rows and columns, which is exact for every mode.
// linear: align_corners, half_pixel and pytorch_half_pixel are
// upsample_bilinear2d's own coordinates (pytorch_half_pixel samples
// position 0 for an output size of 1: that axis is narrowed to its first
// element first).
// cubic, and linear in the other modes (asymmetric, tf_crop_and_resize,
// align_corners whose in * scale is fractional, which ONNX divides by):
// both modes are separable, so the output is Wh . X . Ww^T, Wh and Ww the
// [out, in] coefficient matrices of the two axes, built on the host exactly
// as the ONNX reference picks neighbours and coefficients (cubic_coeff_a,
// exclude_outside, edge padding); outputs outside a tf_crop_and_resize crop
// take extrapolation_value. One difference from the reference: an Inf or
// NaN in X turns its whole output plane (its N, C slice) to NaN (the
// matmuls multiply it by zero weights), where the reference confines it to
// the outputs that read it.
// Not mapped: antialias, axes, keep_aspect_ratio_policy, linear with
// tf_half_pixel_for_nn, nearest with tf_crop_and_resize.
#include <cmath>
#include <string>

#include "bponnx/exec.h"

namespace bponnx {
namespace {

using Outs = std::vector<bp_tensor_t*>;
using Ins = std::vector<NodeInput>;

std::string num_list(const std::vector<double>& v) {
  std::string s = "[";
  for (size_t k = 0; k < v.size(); ++k) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v[k]);
    s += (k ? "," : "") + std::string(buf);
  }
  return s + "]";
}

// What Resize resizes to: the output sizes and, when the node gave scales,
// the scale of each dim (0 when the sizes were given).
struct Target {
  std::vector<int64_t> sizes;
  std::vector<double> scales;
};

Target target(const OnnxNode& n, const Ins& in, const std::vector<int64_t>& xs) {
  Target t;
  const size_t rank = xs.size();
  // Resize-10: (X, scales); Resize-11+: (X, roi, scales, sizes); Upsample-9: (X, scales); Upsample-7: attribute.
  const bool upsample = n.op_type == "Upsample";
  const size_t scales_at = (upsample || n.opset < 11) ? 1 : 2;
  std::vector<double> scales;
  if (upsample && n.opset < 9) {
    if (!n.has("scales")) throw NotMapped{"attribute Upsample.scales=missing"};
    scales = n.attrs.at("scales").floats;
  } else if (in.size() > scales_at && in[scales_at].present() && bp_tensor_numel(in[scales_at].t) > 0) {
    scales = host_of(in[scales_at]).values;
  }
  if (!scales.empty()) {
    if (scales.size() != rank) throw NotMapped{"input " + n.op_type + ".scales=" + num_list(scales) + " (rank)"};
    for (size_t k = 0; k < rank; ++k) {
      if (!(scales[k] > 0)) throw NotMapped{"input " + n.op_type + ".scales=" + num_list(scales)};
      t.sizes.push_back(static_cast<int64_t>(std::floor(static_cast<double>(xs[k]) * scales[k])));
    }
    t.scales = scales;
    return t;
  }
  if (in.size() > 3 && in[3].present()) {
    t.sizes = host_ints(host_of(in[3]));
    if (t.sizes.size() != rank) throw NotMapped{"input Resize.sizes of rank " + std::to_string(t.sizes.size())};
    t.scales.assign(rank, 0.0);
    return t;
  }
  throw NotMapped{"input " + n.op_type + ".scales and sizes both missing"};
}

// The resized length of axis k as the ONNX reference takes it: in * scale
// (not rounded) when the node gave scales, else the output size.
double resized_length(const Target& t, const std::vector<int64_t>& xs, size_t k) {
  return t.scales[k] > 0 ? static_cast<double>(xs[k]) * t.scales[k] : static_cast<double>(t.sizes[k]);
}

// One resized axis: what the coordinate transformation reads.
struct Axis {
  int64_t in = 0;   // input length
  int64_t out = 0;  // output length
  double len = 0;   // resized_length
  double scale = 0; // the node's scale, or out / in when it gave sizes
  double roi_start = 0, roi_end = 1;  // tf_crop_and_resize's crop (fractions of in - 1)
};

Axis axis_of(const Target& t, const std::vector<int64_t>& xs, size_t k) {
  Axis a;
  a.in = xs[k];
  a.out = t.sizes[k];
  a.len = resized_length(t, xs, k);
  a.scale = t.scales[k] > 0 ? t.scales[k] : static_cast<double>(a.out) / static_cast<double>(a.in);
  return a;
}

// The ONNX source coordinate of output index x along axis `a`, as the
// reference implementation computes it (tf_crop_and_resize: may fall
// outside [0, in - 1], the caller extrapolates).
double onnx_source(const std::string& mode, int64_t x, const Axis& a) {
  const double xd = static_cast<double>(x), in1 = static_cast<double>(a.in - 1);
  if (mode == "half_pixel") return (xd + 0.5) / a.scale - 0.5;
  if (mode == "pytorch_half_pixel") return a.len == 1 ? -0.5 : (xd + 0.5) / a.scale - 0.5;
  if (mode == "align_corners") return a.len == 1 ? 0.0 : xd * in1 / (a.len - 1);
  if (mode == "asymmetric") return xd / a.scale;
  if (mode == "tf_crop_and_resize") {
    const double span = a.roi_end - a.roi_start;
    return (a.len == 1 ? span * in1 / 2 : xd * span * in1 / (a.len - 1)) + a.roi_start * in1;
  }
  return (xd + 0.5) / a.scale;  // tf_half_pixel_for_nn
}

int64_t round_nearest(const std::string& mode, double v) {
  const double f = std::floor(v);
  if (mode == "floor") return static_cast<int64_t>(f);
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(v));
  if (v - f == 0.5) return static_cast<int64_t>(mode == "round_prefer_ceil" ? f + 1 : f);
  return static_cast<int64_t>(std::round(v));
}

// upsample_nearest2d's source index (ops.yaml: float32 arithmetic).
int64_t op_nearest_source(int64_t x, int64_t in, int64_t out, double factor) {
  const float scale = factor > 0 ? static_cast<float>(1.0 / factor) : static_cast<float>(in) / static_cast<float>(out);
  return std::min(static_cast<int64_t>(std::floor(static_cast<float>(x) * scale)), in - 1);
}

Outs resize_nearest(Exec& ex, const OnnxNode& n, bp_tensor_t* x, const std::vector<int64_t>& xs, const Target& t,
                    const std::string& coord) {
  // Resize-10 and Upsample sample asymmetric coordinates and floor them.
  const bool legacy = n.op_type == "Upsample" || n.opset < 11;
  const std::string nearest = legacy ? "floor" : n.get_string("nearest_mode", "round_prefer_floor");
  if (nearest != "floor" && nearest != "ceil" && nearest != "round_prefer_floor" && nearest != "round_prefer_ceil") {
    unsupported_attr(n.op_type, "nearest_mode", nearest);
  }
  std::vector<int64_t> idx[2];
  bool same = true;
  for (size_t a = 0; a < 2; ++a) {
    const Axis ax = axis_of(t, xs, a + 2);
    const int64_t in = ax.in, out = ax.out;
    for (int64_t o = 0; o < out; ++o) {
      int64_t i = round_nearest(nearest, onnx_source(coord, o, ax));
      i = std::max<int64_t>(0, std::min(in - 1, i));
      idx[a].push_back(i);
      same = same && i == op_nearest_source(o, in, out, t.scales[a + 2]);
    }
  }
  const std::vector<int64_t> size{t.sizes[2], t.sizes[3]};
  if (same) {
    need_dtype(n.op_type, "upsample_nearest2d", dtype_of(x));
    auto scale_arg = [&](size_t a) { return t.scales[a] > 0 ? vd(t.scales[a]) : vnone(); };
    return {ex.call("upsample_nearest2d", {vt(x), vl(size), scale_arg(2), scale_arg(3)})};
  }
  need_dtype(n.op_type, "index_select", dtype_of(x));
  bp_tensor_t* rows = ex.call("index_select", {vt(x), vi(2), vt(upload_ints(ex, idx[0]))});
  return {ex.call("index_select", {vt(rows), vi(3), vt(upload_ints(ex, idx[1]))})};
}

// True when upsample_bilinear2d computes ONNX's linear Resize in `coord`:
// its own coordinates, and for align_corners a whole resized length (ONNX
// divides by in * scale - 1, the operator by out - 1).
bool bilinear_op_serves(const std::string& coord, const Target& t, const std::vector<int64_t>& xs) {
  if (coord == "half_pixel" || coord == "pytorch_half_pixel") return true;
  if (coord != "align_corners") return false;
  for (size_t a = 2; a < 4; ++a) {
    if (t.sizes[a] > 1 && resized_length(t, xs, a) != static_cast<double>(t.sizes[a])) return false;
  }
  return true;
}

Outs resize_linear(Exec& ex, const OnnxNode& n, bp_tensor_t* x, const std::vector<int64_t>& xs, const Target& t,
                   const std::string& coord) {
  need_dtype(n.op_type, "upsample_bilinear2d", dtype_of(x));
  const std::vector<int64_t> size{t.sizes[2], t.sizes[3]};
  std::vector<double> scales = t.scales;
  if (coord == "pytorch_half_pixel") {
    for (size_t a = 2; a < 4; ++a) {
      if (t.sizes[a] == 1 && xs[a] > 1) {
        x = ex.call("narrow", {vt(x), vi(static_cast<int64_t>(a)), vi(0), vi(1)});
        scales[a] = 0.0;  // 1 -> 1: copied
      }
    }
  }
  const bool ac = coord == "align_corners";
  auto scale_arg = [&](size_t a) { return !ac && scales[a] > 0 ? vd(scales[a]) : vnone(); };
  return {ex.call("upsample_bilinear2d", {vt(x), vl(size), vb(ac), scale_arg(2), scale_arg(3)})};
}

// One axis of a separable resize: the [out, in] coefficient matrix (row o
// weighs the input positions output o reads) and which outputs fall outside
// a tf_crop_and_resize crop.
struct AxisWeights {
  std::vector<double> w;
  std::vector<char> outside;
};

// The reference's coefficients for a sample at fraction `ratio` past its
// left neighbour: cubic (Keys, with a = cubic_a) over 4 neighbours (the one
// before the left neighbour first), linear over 2. Resize passes a ratio in
// (0, 1], GridSample one in [0, 1).
int coefficients(bool cubic, double ratio, double cubic_a, double c[4]) {
  if (!cubic) {
    c[0] = 1 - ratio;
    c[1] = ratio;
    return 2;
  }
  const double A = cubic_a, r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
  c[0] = ((A * r1 - 5 * A) * r1 + 8 * A) * r1 - 4 * A;
  c[1] = ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1;
  c[2] = ((A + 2) * q - (A + 3)) * q * q + 1;
  c[3] = ((A * q1 - 5 * A) * q1 + 8 * A) * q1 - 4 * A;
  return 4;
}

AxisWeights axis_weights(bool cubic, const std::string& coord, const Axis& a, double cubic_a, bool exclude_outside) {
  AxisWeights r;
  r.w.assign(static_cast<size_t>(a.out * a.in), 0.0);
  r.outside.assign(static_cast<size_t>(a.out), 0);
  for (int64_t o = 0; o < a.out; ++o) {
    const double x = onnx_source(coord, o, a);
    if (coord == "tf_crop_and_resize" && (x < 0 || x > static_cast<double>(a.in - 1))) {
      r.outside[static_cast<size_t>(o)] = 1;
      continue;
    }
    // ratio in (0, 1]: an integral x counts as 1 past the position before it.
    const double f = std::floor(x);
    const bool whole = x == f;
    double c[4];
    const int n = coefficients(cubic, whole ? 1.0 : x - f, cubic_a, c);
    // The neighbours: the n positions nearest x in the input padded with n / 2
    // edge copies each side (ties to the lower), a contiguous window.
    const int64_t pad = n / 2;
    int64_t lo = static_cast<int64_t>(whole ? f - 1 : f) - (pad - 1);
    lo = std::max(-pad, std::min(a.in + pad - n, lo));
    double sum = 0;
    for (int k = 0; k < n; ++k) {
      const int64_t i = lo + k;
      if (exclude_outside && (i < 0 || i >= a.in)) c[k] = 0;
      sum += c[k];
    }
    for (int k = 0; k < n; ++k) {
      const int64_t i = std::max<int64_t>(0, std::min(a.in - 1, lo + k));
      r.w[static_cast<size_t>(o * a.in + i)] += exclude_outside ? c[k] / sum : c[k];
    }
  }
  return r;
}

Outs resize_separable(Exec& ex, const OnnxNode& n, const Ins& in, const std::vector<int64_t>& xs, const Target& t,
                      const std::string& mode, const std::string& coord) {
  if (coord == "tf_half_pixel_for_nn") {
    unsupported_attr(n.op_type, "coordinate_transformation_mode", coord + " with mode=" + mode);
  }
  bp_tensor_t* x = in[0].t;
  const DType dt = dtype_of(x);
  need_dtype(n.op_type, "matmul", dt);
  Axis axes[2] = {axis_of(t, xs, 2), axis_of(t, xs, 3)};
  if (coord == "tf_crop_and_resize") {
    std::vector<double> roi;
    if (in.size() > 1 && in[1].present()) roi = host_of(in[1]).values;
    if (roi.size() != 8) throw NotMapped{"input " + n.op_type + ".roi of " + std::to_string(roi.size()) + " values (8)"};
    for (size_t k = 0; k < 2; ++k) {
      if (roi[k] != 0 || roi[4 + k] != 1) throw NotMapped{"input " + n.op_type + ".roi cropping N or C"};
    }
    for (size_t k = 0; k < 2; ++k) {
      axes[k].roi_start = roi[2 + k];
      axes[k].roi_end = roi[6 + k];
    }
  }
  const bool cubic = mode == "cubic";
  const double cubic_a = n.get_float("cubic_coeff_a", -0.75);
  const bool exclude = n.get_int("exclude_outside", 0) != 0;
  const AxisWeights wh = axis_weights(cubic, coord, axes[0], cubic_a, exclude);
  const AxisWeights ww = axis_weights(cubic, coord, axes[1], cubic_a, exclude);
  HostTensor h;
  h.dtype = dt;
  h.sizes = {axes[0].out, axes[0].in};
  h.values = wh.w;
  HostTensor w;  // Ww^T: [in, out]
  w.dtype = dt;
  w.sizes = {axes[1].in, axes[1].out};
  w.values.resize(ww.w.size());
  for (int64_t o = 0; o < axes[1].out; ++o) {
    for (int64_t i = 0; i < axes[1].in; ++i) {
      w.values[static_cast<size_t>(i * axes[1].out + o)] = ww.w[static_cast<size_t>(o * axes[1].in + i)];
    }
  }
  // [oh, H] @ [N, C, H, W] -> [N, C, oh, W]; @ [W, ow] -> [N, C, oh, ow].
  bp_tensor_t* y = ex.call("matmul", {vt(ex.upload(h)), vt(x)});
  y = ex.call("matmul", {vt(y), vt(ex.upload(w))});
  const double fill = n.get_float("extrapolation_value", 0.0);
  bool crop_out = false;
  for (char c : wh.outside) crop_out = crop_out || c;
  for (char c : ww.outside) crop_out = crop_out || c;
  if (!crop_out || fill == 0) return {y};
  // Outside the crop the weights are zero; the extrapolation value is added there.
  HostTensor m;
  m.dtype = dt;
  m.sizes = {axes[0].out, axes[1].out};
  for (int64_t i = 0; i < axes[0].out; ++i) {
    for (int64_t j = 0; j < axes[1].out; ++j) {
      m.values.push_back(wh.outside[static_cast<size_t>(i)] || ww.outside[static_cast<size_t>(j)] ? fill : 0.0);
    }
  }
  return {ex.call("add.Tensor", {vt(y), vt(ex.upload(m))})};
}

Outs resize(Exec& ex, const OnnxNode& n, const Ins& in) {
  const std::vector<int64_t> xs = sizes_of(in[0].t);
  std::string mode = n.get_string("mode", "nearest");
  if (mode == "bilinear") mode = "linear";  // Upsample-7's name
  if (mode != "nearest" && mode != "linear" && mode != "cubic") unsupported_attr(n.op_type, "mode", mode);
  if (n.get_int("antialias", 0) != 0) unsupported_attr(n.op_type, "antialias", "1");
  if (n.has("axes")) unsupported_attr(n.op_type, "axes", "given");
  if (n.get_string("keep_aspect_ratio_policy", "stretch") != "stretch") {
    unsupported_attr(n.op_type, "keep_aspect_ratio_policy", n.get_string("keep_aspect_ratio_policy", ""));
  }
  const bool legacy = n.op_type == "Upsample" || n.opset < 11;
  const std::string coord = legacy ? "asymmetric" : n.get_string("coordinate_transformation_mode", "half_pixel");
  if (mode == "nearest" && coord == "tf_crop_and_resize") {
    unsupported_attr(n.op_type, "coordinate_transformation_mode", coord + " with mode=nearest");
  }
  if (coord != "half_pixel" && coord != "pytorch_half_pixel" && coord != "align_corners" && coord != "asymmetric" &&
      coord != "tf_half_pixel_for_nn" && coord != "tf_crop_and_resize") {
    unsupported_attr(n.op_type, "coordinate_transformation_mode", coord);
  }
  if (xs.size() != 4) throw NotMapped{"input " + n.op_type + ".X of rank " + std::to_string(xs.size()) + " (4-D only)"};
  const Target t = target(n, in, xs);
  if (t.sizes[0] != xs[0] || t.sizes[1] != xs[1]) {
    throw NotMapped{"input " + n.op_type + " resizing N or C (sizes [" + std::to_string(t.sizes[0]) + "," +
                    std::to_string(t.sizes[1]) + ",...] of [" + std::to_string(xs[0]) + "," + std::to_string(xs[1]) +
                    ",...])"};
  }
  if (t.sizes[2] < 1 || t.sizes[3] < 1) throw NotMapped{"input " + n.op_type + " to an empty output"};
  if (mode == "nearest") return resize_nearest(ex, n, in[0].t, xs, t, coord);
  if (mode == "linear" && bilinear_op_serves(coord, t, xs)) return resize_linear(ex, n, in[0].t, xs, t, coord);
  return resize_separable(ex, n, in, xs, t, mode, coord);
}

// GridSample (opset 16: bilinear / nearest / bicubic; 20: linear / cubic)
// on 4-D inputs, with PyTorch's grid_sample semantics as the ONNX reference
// spells them. Where each output samples depends on the grid's values, so
// the grid is read on the host (the session then runs node by node) and
// every output gets its taps (1, 4 or 16 input positions) and weights there;
// the device gathers the taps from X and sums them, weighted:
//   Y[n, c, p] = sum_t W[n, p, t] * X[n, c, I[n, p, t]]  (X seen as [N, C, H*W]).
// A tap outside the input under padding_mode "zeros" has weight 0 (so an
// Inf in X at the position it points to gives NaN, where the reference gives 0).
struct GridAxis {
  int64_t len = 0;
  bool align = false;
  std::string padding;
  double lo() const { return align ? 0.0 : -0.5; }
  double hi() const { return align ? static_cast<double>(len - 1) : static_cast<double>(len) - 0.5; }
  // A coordinate reflected by the near border until it lies within [lo, hi].
  double reflect(double v) const {
    const double r = hi() - lo();
    if (r <= 0) return lo();
    if (v < lo() || v > hi()) {
      const double d = v < lo() ? lo() - v : v - hi();
      const int64_t k = static_cast<int64_t>(d / r);
      const double rest = d - static_cast<double>(k) * r;
      const bool near_low = (v < lo()) == (k % 2 == 0);
      v = near_low ? lo() + rest : hi() - rest;
    }
    return v;
  }
  // The source coordinate of normalized grid value g, padding applied.
  double source(double g, bool nearest) const {
    double v = align ? (g + 1) / 2 * static_cast<double>(len - 1) : ((g + 1) * static_cast<double>(len) - 1) / 2;
    if (nearest) v = std::nearbyint(v);
    if (v < lo() || v > hi()) {
      if (padding == "border") v = std::max(0.0, std::min(static_cast<double>(len - 1), v));
      if (padding == "reflection") v = reflect(v);
    }
    return v;
  }
  // The input index a tap at integer position i reads, or -1 for a zero.
  int64_t tap(int64_t i) const {
    if (i >= 0 && i < len) return i;
    if (padding == "zeros") return -1;
    if (padding == "border") return std::max<int64_t>(0, std::min(len - 1, i));
    return std::max<int64_t>(0, std::min(len - 1, static_cast<int64_t>(reflect(static_cast<double>(i)))));
  }
  // Taps (index or -1) and weights along this axis for grid value g.
  int taps(double g, const std::string& mode, int64_t idx[4], double w[4]) const {
    if (mode == "nearest") {
      idx[0] = tap(static_cast<int64_t>(source(g, true)));
      w[0] = 1;
      return 1;
    }
    // Resize's coefficients (Keys with a = -0.75 for cubic) at the fraction
    // past floor(v); the taps start at floor(v) (linear) or one before (cubic).
    const double v = source(g, false), f = std::floor(v);
    const int count = coefficients(mode == "cubic", v - f, -0.75, w);
    const int64_t first = static_cast<int64_t>(f) - (count == 4 ? 1 : 0);
    for (int k = 0; k < count; ++k) idx[k] = tap(first + k);
    return count;
  }
};

Outs grid_sample(Exec& ex, const OnnxNode& n, const Ins& in) {
  const std::vector<int64_t> xs = sizes_of(in[0].t);
  std::string mode = n.get_string("mode", n.opset >= 20 ? "linear" : "bilinear");
  if (mode == "bilinear") mode = "linear";
  if (mode == "bicubic") mode = "cubic";
  if (mode != "linear" && mode != "nearest" && mode != "cubic") unsupported_attr(n.op_type, "mode", mode);
  const std::string padding = n.get_string("padding_mode", "zeros");
  if (padding != "zeros" && padding != "border" && padding != "reflection") {
    unsupported_attr(n.op_type, "padding_mode", padding);
  }
  if (xs.size() != 4) throw NotMapped{"input " + n.op_type + ".X of rank " + std::to_string(xs.size()) + " (4-D only)"};
  const HostTensor& grid = host_of(in[1]);
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
  if (grid.ndim() != 4 || grid.sizes[0] != N || grid.sizes[3] != 2) {
    throw CallFailed{n.op_type + ": INVALID_ARGUMENT: argument 'grid' must have sizes [" + std::to_string(N) +
                     ", H_out, W_out, 2] but has sizes " + sizes_str(grid.sizes)};
  }
  const int64_t Ho = grid.sizes[1], Wo = grid.sizes[2], P = Ho * Wo;
  const bool align = n.get_int("align_corners", 0) != 0;
  const GridAxis ax{W, align, padding}, ay{H, align, padding};
  const int per_axis = mode == "nearest" ? 1 : mode == "linear" ? 2 : 4;
  const int64_t T = static_cast<int64_t>(per_axis) * per_axis;
  std::vector<int64_t> index;
  HostTensor weight;
  weight.dtype = dtype_of(in[0].t);
  weight.sizes = {N, 1, P, T};
  index.reserve(static_cast<size_t>(N * P * T));
  for (int64_t b = 0; b < N; ++b) {
    for (int64_t p = 0; p < P; ++p) {
      const size_t at = static_cast<size_t>((b * P + p) * 2);
      int64_t ix[4], iy[4];
      double wx[4], wy[4];
      ax.taps(grid.values[at], mode, ix, wx);  // grid[..., 0] is x (width)
      ay.taps(grid.values[at + 1], mode, iy, wy);
      for (int r = 0; r < per_axis; ++r) {
        for (int c = 0; c < per_axis; ++c) {
          const bool zero = ix[c] < 0 || iy[r] < 0;
          index.push_back(zero ? 0 : iy[r] * W + ix[c]);
          weight.values.push_back(zero ? 0.0 : wy[r] * wx[c]);
        }
      }
    }
  }
  need_dtype(n.op_type, "gather", dtype_of(in[0].t));
  bp_tensor_t* flat = ex.call("reshape", {vt(in[0].t), vl({N, C, H * W})});
  bp_tensor_t* idx = ex.call("reshape", {vt(upload_ints(ex, index)), vl({N, 1, P * T})});
  idx = ex.call("contiguous", {vt(ex.call("expand", {vt(idx), vl({N, C, P * T})}))});
  bp_tensor_t* taps = ex.call("reshape", {vt(ex.call("gather", {vt(flat), vi(2), vt(idx)})), vl({N, C, P, T})});
  bp_tensor_t* y = ex.call("sum.dim_IntList",
                           {vt(ex.call("mul.Tensor", {vt(taps), vt(ex.upload(weight))})), vl({3}), vb(false)});
  return {ex.call("reshape", {vt(y), vl({N, C, Ho, Wo})})};
}

}  // namespace

void register_resample(MapTable* t) {
  (*t)["Resize"] = resize;
  (*t)["Upsample"] = resize;
  (*t)["GridSample"] = grid_sample;
}

}  // namespace bponnx
