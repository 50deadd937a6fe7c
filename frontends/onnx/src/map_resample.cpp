// ONNX Resize (opset 10 to 17) and Upsample -> upsample_nearest2d and
// upsample_bilinear2d, on 4-D inputs that keep N and C.
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
// element first). With scales whose in * scale is fractional, ONNX's
// align_corners divides by that unrounded length: not mapped, as are
// asymmetric, tf_half_pixel_for_nn and tf_crop_and_resize with linear, and
// the cubic mode.
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

// The ONNX source coordinate of output index x along an axis of `in`
// (scale: the node's scale, or out / in when it gave sizes; len: resized_length).
double onnx_source(const std::string& mode, int64_t x, int64_t in, double len, double scale) {
  const double xd = static_cast<double>(x);
  if (mode == "half_pixel") return (xd + 0.5) / scale - 0.5;
  if (mode == "pytorch_half_pixel") return len > 1 ? (xd + 0.5) / scale - 0.5 : 0.0;
  if (mode == "align_corners") return len == 1 ? 0.0 : xd * static_cast<double>(in - 1) / (len - 1);
  if (mode == "asymmetric") return xd / scale;
  return (xd + 0.5) / scale;  // tf_half_pixel_for_nn
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

bp_tensor_t* index_tensor(Exec& ex, const std::vector<int64_t>& idx) {
  HostTensor h;
  h.dtype = DType::kInt64;
  h.sizes = {static_cast<int64_t>(idx.size())};
  for (int64_t i : idx) h.values.push_back(static_cast<double>(i));
  return ex.upload(h);
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
    const int64_t in = xs[a + 2], out = t.sizes[a + 2];
    const double scale = t.scales[a + 2] > 0 ? t.scales[a + 2] : static_cast<double>(out) / static_cast<double>(in);
    for (int64_t o = 0; o < out; ++o) {
      int64_t i = round_nearest(nearest, onnx_source(coord, o, in, resized_length(t, xs, a + 2), scale));
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
  bp_tensor_t* rows = ex.call("index_select", {vt(x), vi(2), vt(index_tensor(ex, idx[0]))});
  return {ex.call("index_select", {vt(rows), vi(3), vt(index_tensor(ex, idx[1]))})};
}

Outs resize_linear(Exec& ex, const OnnxNode& n, bp_tensor_t* x, const std::vector<int64_t>& xs, const Target& t,
                   const std::string& coord) {
  if (coord != "half_pixel" && coord != "pytorch_half_pixel" && coord != "align_corners") {
    unsupported_attr(n.op_type, "coordinate_transformation_mode", coord + " with mode=linear");
  }
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
  for (size_t a = 2; ac && a < 4; ++a) {
    // ONNX's align_corners divides by in * scale - 1, upsample_bilinear2d by out - 1.
    if (t.sizes[a] > 1 && resized_length(t, xs, a) != static_cast<double>(t.sizes[a])) {
      unsupported_attr(n.op_type, "coordinate_transformation_mode",
                       "align_corners with scales " + num_list(t.scales) + " (a fractional resized length)");
    }
  }
  auto scale_arg = [&](size_t a) { return !ac && scales[a] > 0 ? vd(scales[a]) : vnone(); };
  return {ex.call("upsample_bilinear2d", {vt(x), vl(size), vb(ac), scale_arg(2), scale_arg(3)})};
}

Outs resize(Exec& ex, const OnnxNode& n, const Ins& in) {
  const std::vector<int64_t> xs = sizes_of(in[0].t);
  std::string mode = n.get_string("mode", "nearest");
  if (mode == "bilinear") mode = "linear";  // Upsample-7's name
  if (mode != "nearest" && mode != "linear") unsupported_attr(n.op_type, "mode", mode);
  if (n.get_int("antialias", 0) != 0) unsupported_attr(n.op_type, "antialias", "1");
  if (n.has("axes")) unsupported_attr(n.op_type, "axes", "given");
  if (n.get_string("keep_aspect_ratio_policy", "stretch") != "stretch") {
    unsupported_attr(n.op_type, "keep_aspect_ratio_policy", n.get_string("keep_aspect_ratio_policy", ""));
  }
  const bool legacy = n.op_type == "Upsample" || n.opset < 11;
  const std::string coord = legacy ? "asymmetric" : n.get_string("coordinate_transformation_mode", "half_pixel");
  if (coord == "tf_crop_and_resize") unsupported_attr(n.op_type, "coordinate_transformation_mode", coord);
  if (coord != "half_pixel" && coord != "pytorch_half_pixel" && coord != "align_corners" && coord != "asymmetric" &&
      coord != "tf_half_pixel_for_nn") {
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
  return resize_linear(ex, n, in[0].t, xs, t, coord);
}

}  // namespace

void register_resample(MapTable* t) {
  (*t)["Resize"] = resize;
  (*t)["Upsample"] = resize;
}

}  // namespace bponnx
