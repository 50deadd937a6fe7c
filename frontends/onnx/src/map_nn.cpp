// ONNX linear algebra and neural-network operators -> matmul, addmm,
// softmax, conv2d, pooling and normalization; backplane.ConvFused (made by
// the conv-act pass) -> conv2d_fused. 1-D convolutions and pools run
// as 2-D ones with a unit height; padding PyTorch's operators cannot express
// (asymmetric, or wider than half the kernel) is applied explicitly first
// where the result stays exact (Conv, MaxPool, AveragePool counting the pad).
#include <algorithm>
#include <limits>

#include "bponnx/exec.h"
#include "conv_window.h"
#include "passes/pass.h"

namespace bponnx {

namespace {

using Outs = std::vector<bp_tensor_t*>;
using Ins = std::vector<NodeInput>;

void only_outputs(const OnnxNode& n, size_t count, const char* what) {
  for (size_t k = count; k < n.outputs.size(); ++k) {
    if (!n.outputs[k].empty()) throw NotMapped{std::string("output ") + n.op_type + "." + what};
  }
}

}  // namespace

// The window helpers conv_window.h declares (ConvInteger uses them too).
Window window(const OnnxNode& n, const std::vector<int64_t>& xs, const std::vector<int64_t>& kernel) {
  const size_t sp = xs.size() - 2;
  if (sp != 1 && sp != 2) throw NotMapped{"attribute " + n.op_type + ".kernel_shape=" + list_str(kernel) + " (" +
                                          std::to_string(sp) + "-D)"};
  Window w;
  w.kernel = kernel;
  w.stride = n.get_ints("strides", std::vector<int64_t>(sp, 1));
  w.dilation = n.get_ints("dilations", std::vector<int64_t>(sp, 1));
  std::vector<int64_t> pads = n.get_ints("pads", std::vector<int64_t>(2 * sp, 0));
  const std::string auto_pad = n.get_string("auto_pad", "NOTSET");
  for (size_t k = 0; k < sp; ++k) {
    int64_t b = pads[k], e = pads[k + sp];
    if (auto_pad == "VALID") {
      b = e = 0;
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t in = xs[k + 2], s = w.stride[k];
      const int64_t out = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + (kernel[k] - 1) * w.dilation[k] + 1 - in);
      b = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      e = total - b;
    } else if (auto_pad != "NOTSET") {
      unsupported_attr(n.op_type, "auto_pad", auto_pad);
    }
    w.pad_begin.push_back(b);
    w.pad_end.push_back(e);
  }
  if (sp == 1) {
    w.one_d = true;
    for (auto* v : {&w.kernel, &w.stride, &w.dilation, &w.pad_begin, &w.pad_end}) v->insert(v->begin(), 1);
    w.pad_begin[0] = w.pad_end[0] = 0;
  }
  return w;
}

bool symmetric(const Window& w) { return w.pad_begin == w.pad_end; }

// x padded explicitly by the window's pads (with `value`); the window's pads become 0.
bp_tensor_t* pad_explicitly(Exec& ex, bp_tensor_t* x, Window* w, double value) {
  std::vector<int64_t> xs = sizes_of(x), os = xs;
  for (size_t k = 0; k < 2; ++k) os[k + 2] += w->pad_begin[k] + w->pad_end[k];
  bp_tensor_t* y = ex.full(os, dtype_of(x), value);
  bp_tensor_t* dst = y;
  for (size_t k = 0; k < 2; ++k) {
    dst = ex.call("narrow", {vt(dst), vi(static_cast<int64_t>(k + 2)), vi(w->pad_begin[k]), vi(xs[k + 2])});
  }
  ex.call("copy_", {vt(dst), vt(x)});
  w->pad_begin = w->pad_end = {0, 0};
  return y;
}

bp_tensor_t* to4d(Exec& ex, bp_tensor_t* x, const Window& w) {
  return w.one_d ? ex.call("unsqueeze", {vt(x), vi(2)}) : x;
}
bp_tensor_t* from4d(Exec& ex, bp_tensor_t* y, const Window& w) {
  return w.one_d ? ex.call("squeeze.dim", {vt(y), vi(2)}) : y;
}

namespace {

// x in the channels-last memory format (same sizes, NHWC strides): x itself
// when it already is, or when the two layouts coincide (one channel, or a
// 1 x 1 image); else a copy (permute to NHWC, contiguous, permute back).
bp_tensor_t* channels_last(Exec& ex, bp_tensor_t* x) {
  if (bp_tensor_ndim(x) != 4) return x;
  const int64_t* s = bp_tensor_sizes(x);
  const int64_t* st = bp_tensor_strides(x);
  if (s[1] == 1 || s[2] * s[3] == 1) return x;
  if (st[1] == 1 && st[3] == s[1] && st[2] == s[3] * s[1] && (s[0] == 1 || st[0] == s[1] * s[2] * s[3])) return x;
  bp_tensor_t* nhwc = ex.call("contiguous", {vt(ex.call("permute", {vt(x), vl({0, 2, 3, 1})}))});
  return ex.call("permute", {vt(nhwc), vl({0, 3, 1, 2})});
}

Outs pool(Exec& ex, const OnnxNode& n, const Ins& in, bool is_max) {
  const DType d = dtype_of(in[0].t);
  const char* op = is_max ? "max_pool2d" : "avg_pool2d";
  need_dtype(n.op_type, op, d);
  only_outputs(n, 1, "Indices");
  const std::vector<int64_t> xs = sizes_of(in[0].t);
  if (!n.has("kernel_shape")) throw NotMapped{"attribute " + n.op_type + ".kernel_shape=missing"};
  Window w = window(n, xs, n.get_ints("kernel_shape", {}));
  const bool ceil = n.get_int("ceil_mode", 0) != 0;
  const bool include_pad = n.get_int("count_include_pad", 0) != 0;
  bp_tensor_t* x = to4d(ex, in[0].t, w);
  bool fits = symmetric(w);
  for (size_t k = 0; k < 2; ++k) {
    const int64_t limit = is_max ? (w.dilation[k] * (w.kernel[k] - 1) + 1) / 2 : w.kernel[k] / 2;
    fits = fits && w.pad_begin[k] <= limit;
  }
  if (!fits) {
    // Exact only when the pad value is what the pool would use: -inf for max,
    // 0 counted in the divisor for average; and without ceil_mode's end rule.
    if (ceil) unsupported_attr(n.op_type, "pads", list_str(n.get_ints("pads", {})) + " with ceil_mode=1");
    if (!is_max && !include_pad) {
      // The average over the real elements only: the zero-padded input's
      // window average over the padded 0/1 mask's (both divide by the window size).
      if (w.dilation != std::vector<int64_t>{1, 1}) unsupported_attr(n.op_type, "dilations", list_str(w.dilation));
      Window wm = w;
      bp_tensor_t* ones = ex.full(sizes_of(x), d, 1.0);
      bp_tensor_t* xp = pad_explicitly(ex, x, &w, 0.0);
      bp_tensor_t* mp = pad_explicitly(ex, ones, &wm, 0.0);
      bp_tensor_t* sum = ex.call(op, {vt(xp), vl(w.kernel), vl(w.stride), vl(w.pad_begin), vb(false), vb(true)});
      bp_tensor_t* cnt = ex.call(op, {vt(mp), vl(w.kernel), vl(w.stride), vl(w.pad_begin), vb(false), vb(true)});
      return {from4d(ex, ex.call("div.Tensor", {vt(sum), vt(cnt)}), w)};
    }
    x = pad_explicitly(ex, x, &w, is_max ? -std::numeric_limits<double>::infinity() : 0.0);
  }
  bp_tensor_t* y;
  if (is_max) {
    y = ex.call(op, {vt(x), vl(w.kernel), vl(w.stride), vl(w.pad_begin), vl(w.dilation), vb(ceil)});
  } else {
    if (w.dilation != std::vector<int64_t>{1, 1}) unsupported_attr(n.op_type, "dilations", list_str(w.dilation));
    y = ex.call(op, {vt(x), vl(w.kernel), vl(w.stride), vl(w.pad_begin), vb(ceil), vb(include_pad)});
  }
  return {from4d(ex, y, w)};
}

// ConvTranspose (1-D as 2-D with a unit height). The pads come from `pads`,
// or from output_shape / auto_pad SAME_* as the spec computes them. Equal
// pads on both sides are conv_transpose2d's padding; otherwise it runs
// unpadded (its full output, extended by output_padding where the end pad
// is smaller than the ONNX output_padding, or negative) and each side is
// cropped. 3-D and a negative begin pad are not mapped.
Outs conv_transpose(Exec& ex, const OnnxNode& n, const Ins& in) {
  need_dtype(n.op_type, "conv_transpose2d.input", dtype_of(in[0].t));
  const std::vector<int64_t> xs = sizes_of(in[0].t), ws = sizes_of(in[1].t);
  const size_t sp = xs.size() - 2;
  if (sp != 1 && sp != 2) throw NotMapped{"input ConvTranspose.X of rank " + std::to_string(xs.size()) + " (" +
                                          std::to_string(sp) + "-D)"};
  std::vector<int64_t> stride = n.get_ints("strides", std::vector<int64_t>(sp, 1));
  std::vector<int64_t> dil = n.get_ints("dilations", std::vector<int64_t>(sp, 1));
  std::vector<int64_t> out_pad = n.get_ints("output_padding", std::vector<int64_t>(sp, 0));
  std::vector<int64_t> pads = n.get_ints("pads", std::vector<int64_t>(2 * sp, 0));
  const std::string auto_pad = n.get_string("auto_pad", "NOTSET");
  std::vector<int64_t> out_shape = n.get_ints("output_shape", {});
  if (out_shape.size() > sp) out_shape.erase(out_shape.begin(), out_shape.end() - static_cast<long>(sp));
  if (out_shape.empty() && (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER")) {
    for (size_t k = 0; k < sp; ++k) out_shape.push_back(xs[k + 2] * stride[k]);
  } else if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
    unsupported_attr(n.op_type, "auto_pad", auto_pad);
  }
  if (auto_pad == "VALID") pads.assign(2 * sp, 0);
  if (!out_shape.empty()) {
    if (out_shape.size() != sp) unsupported_attr(n.op_type, "output_shape", list_str(out_shape));
    for (size_t k = 0; k < sp; ++k) {
      const int64_t total =
          stride[k] * (xs[k + 2] - 1) + out_pad[k] + (ws[k + 2] - 1) * dil[k] + 1 - out_shape[k];
      // The spec's halves round down (a negative total, an output past the
      // full one, leaves a negative end pad: extra rows that get the bias only).
      const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      pads[k] = auto_pad == "SAME_UPPER" ? half : total - half;
      pads[k + sp] = total - pads[k];
    }
  }
  for (size_t k = 0; k < sp; ++k) {
    if (pads[k] < 0) unsupported_attr(n.op_type, "pads", list_str(pads));
  }
  std::vector<int64_t> begin(pads.begin(), pads.begin() + static_cast<long>(sp));
  std::vector<int64_t> end(pads.begin() + static_cast<long>(sp), pads.end());
  bp_tensor_t* x = in[0].t;
  bp_tensor_t* w = in[1].t;
  std::vector<int64_t> kernel(ws.begin() + 2, ws.end()), insize(xs.begin() + 2, xs.end());
  if (sp == 1) {
    x = ex.call("unsqueeze", {vt(x), vi(2)});
    w = ex.call("unsqueeze", {vt(w), vi(2)});
    // A unit height: size, stride, dilation and kernel 1; no pads.
    for (auto* v : {&stride, &dil, &kernel, &insize}) v->insert(v->begin(), 1);
    for (auto* v : {&out_pad, &begin, &end}) v->insert(v->begin(), 0);
  }
  bp_tensor_t* bias = in.size() > 2 && in[2].present() ? in[2].t : nullptr;
  const int64_t group = n.get_int("group", 1);
  bp_tensor_t* y;
  if (begin == end) {
    y = ex.call("conv_transpose2d.input", {vt(x), vt(w), vt(bias), vl(stride), vl(begin), vl(out_pad), vi(group), vl(dil)});
  } else {
    std::vector<int64_t> extra(2);
    for (size_t k = 0; k < 2; ++k) {
      extra[k] = std::max<int64_t>(0, out_pad[k] - end[k]);
      if (extra[k] >= std::max(stride[k], dil[k])) unsupported_attr(n.op_type, "pads", list_str(pads) + " with output_padding");
    }
    const std::vector<int64_t> zero{0, 0};
    y = ex.call("conv_transpose2d.input", {vt(x), vt(w), vt(bias), vl(stride), vl(zero), vl(extra), vi(group), vl(dil)});
    for (size_t k = 0; k < 2; ++k) {
      const int64_t full = (insize[k] - 1) * stride[k] + dil[k] * (kernel[k] - 1) + 1;
      const int64_t len = full + out_pad[k] - begin[k] - end[k];
      y = ex.call("narrow", {vt(y), vi(static_cast<int64_t>(k + 2)), vi(begin[k]), vi(len)});
    }
    y = ex.call("contiguous", {vt(y)});
  }
  return {sp == 1 ? ex.call("squeeze.dim", {vt(y), vi(2)}) : y};
}

// Global pools: a reduction over the spatial dims, kept.
MapFn global_pool(const char* op) {
  return [op](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    need_dtype(n.op_type, op, dtype_of(in[0].t));
    std::vector<int64_t> dims;
    for (int64_t k = 2; k < bp_tensor_ndim(in[0].t); ++k) dims.push_back(k);
    return {ex.call(op, {vt(in[0].t), vl(dims), vb(true)})};
  };
}

// Softmax / LogSoftmax: before opset 13 the input is seen as 2-D [prod(:axis), prod(axis:)].
MapFn softmax(const char* op) {
  return [op](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    need_dtype(n.op_type, op, dtype_of(in[0].t));
    const std::vector<int64_t> xs = sizes_of(in[0].t);
    const int64_t rank = static_cast<int64_t>(xs.size());
    int64_t axis = n.get_int("axis", n.opset < 13 ? 1 : -1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= std::max<int64_t>(rank, 1)) unsupported_attr(n.op_type, "axis", std::to_string(axis));
    if (n.opset >= 13) return {ex.call(op, {vt(in[0].t), vi(axis)})};
    int64_t a = 1, b = 1;
    for (int64_t k = 0; k < rank; ++k) (k < axis ? a : b) *= xs[static_cast<size_t>(k)];
    bp_tensor_t* flat = ex.call("reshape", {vt(in[0].t), vl({a, b})});
    return {ex.call("reshape", {vt(ex.call(op, {vt(flat), vi(1)})), vl(xs)})};
  };
}

// What Conv and backplane.ConvFused hand to conv2d / conv2d_fused: the
// window, x and W as 4-D (x padded explicitly where the pads are
// asymmetric, channels-last where the channels-last pass marked the node)
// and the bias (nullptr when left out).
struct ConvArgs {
  Window w;
  bp_tensor_t *x, *weight, *bias;
};

ConvArgs conv_args(Exec& ex, const OnnxNode& n, const Ins& in) {
  const std::vector<int64_t> xs = sizes_of(in[0].t), ws = sizes_of(in[1].t);
  ConvArgs c{window(n, xs, std::vector<int64_t>(ws.begin() + 2, ws.end())), nullptr, nullptr, nullptr};
  c.x = to4d(ex, in[0].t, c.w);
  c.weight = to4d(ex, in[1].t, c.w);
  if (!symmetric(c.w)) c.x = pad_explicitly(ex, c.x, &c.w, 0.0);
  if (n.get_int(passes::kChannelsLastAttr, 0) != 0) c.x = channels_last(ex, c.x);
  c.bias = in.size() > 2 && in[2].present() ? in[2].t : nullptr;
  return c;
}

// The activation of a ConvFused node as the ONNX node it came from, run
// through its own mapping (for a residual conv2d_fused cannot take).
bp_tensor_t* activation(Exec& ex, const OnnxNode& fused, bp_tensor_t* y) {
  const std::string act = fused.get_string("activation", "none");
  if (act == "none") return y;
  if (act == "silu") return ex.call("mul.Tensor", {vt(y), vt(ex.call("sigmoid", {vt(y)}))});
  OnnxNode n;
  n.name = fused.name;
  n.opset = 13;
  OnnxAttribute a;
  a.kind = OnnxAttribute::kFloat;
  if (act == "clip") {  // opset 6: bounds as attributes
    n.op_type = "Clip";
    n.opset = 6;
    a.f = fused.get_float("alpha", 0.0);
    n.attrs["min"] = a;
    a.f = fused.get_float("beta", 0.0);
    n.attrs["max"] = a;
  } else if (act == "leaky_relu" || act == "hardsigmoid") {
    n.op_type = act == "leaky_relu" ? "LeakyRelu" : "HardSigmoid";
    a.f = fused.get_float("alpha", 0.0);
    n.attrs["alpha"] = a;
    a.f = fused.get_float("beta", 0.0);
    if (act == "hardsigmoid") n.attrs["beta"] = a;
  } else {
    n.op_type = act == "relu" ? "Relu" : act == "sigmoid" ? "Sigmoid" : act == "hardswish" ? "HardSwish" : "Gelu";
    if (act != "relu" && act != "sigmoid" && act != "hardswish" && act != "gelu") {
      unsupported_attr(map_key(fused), "activation", act);
    }
  }
  n.inputs = {"x"};
  n.outputs = {"y"};
  return map_table().at(n.op_type)(ex, n, {NodeInput{y}})[0];
}

// backplane.ConvFused(X, W, B, R) with Conv's attributes and activation,
// alpha, beta: act(Conv(X, W, B) + R) as one conv2d_fused. A residual R of
// other sizes than the Conv's output (the Add broadcast) runs as conv2d_fused
// without it, then Add and the activation's own mapping.
Outs conv_fused(Exec& ex, const OnnxNode& n, const Ins& in) {
  need_dtype(map_key(n), "conv2d_fused", dtype_of(in[0].t));
  const std::vector<int64_t> xs = sizes_of(in[0].t);
  const ConvArgs c = conv_args(ex, n, in);  // the channels-last mark is the Conv's, copied by conv-act
  const Window& w = c.w;
  bp_tensor_t *x = c.x, *wt = c.weight, *bias = c.bias;
  bp_tensor_t* r = in.size() > 3 && in[3].present() ? in[3].t : nullptr;
  // The output's sizes, 4-D, to see whether R has them.
  const std::vector<int64_t> x4 = sizes_of(x), w4 = sizes_of(wt);
  std::vector<int64_t> y4 = {x4[0], w4[0]};
  for (size_t k = 0; k < 2; ++k) {
    y4.push_back((x4[k + 2] + 2 * w.pad_begin[k] - w.dilation[k] * (w4[k + 2] - 1) - 1) / w.stride[k] + 1);
  }
  bp_tensor_t* r4 = r != nullptr && sizes_of(r).size() == xs.size() ? to4d(ex, r, w) : nullptr;
  const bool fits = r == nullptr || (r4 != nullptr && sizes_of(r4) == y4 && dtype_of(r) == dtype_of(x));
  const std::string act = fits ? n.get_string("activation", "none") : "none";
  bp_tensor_t* y = ex.call("conv2d_fused", {vt(x), vt(wt), vt(bias), vl(w.stride), vl(w.pad_begin), vl(w.dilation),
                                            vi(n.get_int("group", 1)), vt(fits ? r4 : nullptr), vs(act.c_str()),
                                            vd(n.get_float("alpha", 0.0)), vd(n.get_float("beta", 0.0))});
  y = from4d(ex, y, w);
  if (fits) return {y};
  return {activation(ex, n, ex.call("add.Tensor", {vt(y), vt(r)}))};
}

}  // namespace

void register_nn(MapTable* t) {
  MapTable& m = *t;
  m["MatMul"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    need_dtype(n.op_type, "matmul", dtype_of(in[0].t));
    return {ex.call("matmul", {vt(in[0].t), vt(in[1].t)})};
  };
  // Gemm: alpha * A' B' + beta * C, C broadcast to [M, N] (optional from opset 11).
  m["Gemm"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    need_dtype(n.op_type, "addmm", dtype_of(in[0].t));
    bp_tensor_t* a = in[0].t;
    bp_tensor_t* b = in[1].t;
    if (n.get_int("transA", 0)) a = ex.call("transpose.int", {vt(a), vi(0), vi(1)});
    if (n.get_int("transB", 0)) b = ex.call("transpose.int", {vt(b), vi(0), vi(1)});
    const double alpha = n.get_float("alpha", 1.0), beta = n.get_float("beta", 1.0);
    if (in.size() > 2 && in[2].present()) {
      return {ex.call("addmm", {vt(in[2].t), vt(a), vt(b), vd(beta), vd(alpha)})};
    }
    bp_tensor_t* y = ex.call("matmul", {vt(a), vt(b)});
    if (alpha != 1.0) y = ex.call("mul.Tensor", {vt(y), vt(ex.scalar(alpha, dtype_of(y)))});
    return {y};
  };
  m["Softmax"] = softmax("softmax.int");
  m["LogSoftmax"] = softmax("log_softmax.int");

  m["Conv"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    need_dtype(n.op_type, "conv2d", dtype_of(in[0].t));
    const ConvArgs c = conv_args(ex, n, in);
    bp_tensor_t* y = ex.call("conv2d", {vt(c.x), vt(c.weight), vt(c.bias), vl(c.w.stride), vl(c.w.pad_begin),
                                        vl(c.w.dilation), vi(n.get_int("group", 1))});
    return {from4d(ex, y, c.w)};
  };
  m["ConvTranspose"] = conv_transpose;
  m[std::string(kBackplaneDomain) + ".ConvFused"] = conv_fused;
  m["MaxPool"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    if (n.get_int("storage_order", 0) != 0) unsupported_attr(n.op_type, "storage_order", "1");
    return pool(ex, n, in, true);
  };
  m["AveragePool"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs { return pool(ex, n, in, false); };
  m["GlobalAveragePool"] = global_pool("mean.dim");
  m["GlobalMaxPool"] = global_pool("amax");

  // Batch normalization with the running statistics; in training mode
  // (opset 14+) with the batch's (biased variance), and the updated running
  // statistics as outputs 1 and 2: running * momentum + batch * (1 - momentum).
  m["BatchNormalization"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    need_dtype(n.op_type, "batch_norm", dtype_of(in[0].t));
    const bool training = n.get_int("training_mode", 0) != 0;
    if (n.opset < 7 && n.get_int("is_test", 0) == 0) unsupported_attr(n.op_type, "is_test", "0");
    if (n.opset < 9 && n.get_int("spatial", 1) == 0) unsupported_attr(n.op_type, "spatial", "0");
    if (!training) only_outputs(n, 1, "running statistics");
    if (training) only_outputs(n, 3, "saved statistics");
    const DType d = dtype_of(in[0].t);
    const double momentum = n.get_float("momentum", 0.9), eps = n.get_float("epsilon", 1e-5);
    bp_tensor_t* args[4];
    for (int k = 0; k < 4; ++k) args[k] = ex.cast(in[static_cast<size_t>(k) + 1].t, d);
    if (!training) {
      return {ex.call("batch_norm", {vt(in[0].t), vt(args[0]), vt(args[1]), vt(args[2]), vt(args[3]), vb(false),
                                     vd(momentum), vd(eps), vb(false)})};
    }
    need_dtype(n.op_type, "mean.dim", d);
    std::vector<int64_t> dims{0}, keep_c(static_cast<size_t>(bp_tensor_ndim(in[0].t)), 1);
    for (int64_t k = 2; k < bp_tensor_ndim(in[0].t); ++k) dims.push_back(k);
    keep_c[1] = sizes_of(in[0].t)[1];
    bp_tensor_t* mean = ex.call("mean.dim", {vt(in[0].t), vl(dims), vb(false)});
    bp_tensor_t* c = ex.call("sub.Tensor", {vt(in[0].t), vt(ex.call("reshape", {vt(mean), vl(keep_c)}))});
    bp_tensor_t* var = ex.call("mean.dim", {vt(ex.call("mul.Tensor", {vt(c), vt(c)})), vl(dims), vb(false)});
    Outs outs{ex.call("batch_norm", {vt(in[0].t), vt(args[0]), vt(args[1]), vt(mean), vt(var), vb(false),
                                     vd(momentum), vd(eps), vb(false)})};
    auto blend = [&](bp_tensor_t* running, bp_tensor_t* batch) {
      return ex.call("add.Tensor", {vt(ex.call("mul.Tensor", {vt(running), vt(ex.scalar(momentum, d))})),
                                    vt(ex.call("mul.Tensor", {vt(batch), vt(ex.scalar(1.0 - momentum, d))}))});
    };
    if (n.outputs.size() > 1) outs.push_back(blend(args[2], mean));
    if (n.outputs.size() > 2) outs.push_back(blend(args[3], var));
    return outs;
  };
  // LayerNormalization over dims axis..; Mean and InvStdDev outputs computed alongside.
  m["LayerNormalization"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const DType d = dtype_of(in[0].t);
    need_dtype(n.op_type, "layer_norm", d);
    if (n.get_int("stash_type", 1) != 1) unsupported_attr(n.op_type, "stash_type", std::to_string(n.get_int("stash_type", 1)));
    const std::vector<int64_t> xs = sizes_of(in[0].t);
    const int64_t rank = static_cast<int64_t>(xs.size());
    int64_t axis = n.get_int("axis", -1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) unsupported_attr(n.op_type, "axis", std::to_string(n.get_int("axis", -1)));
    const std::vector<int64_t> shape(xs.begin() + axis, xs.end());
    const double eps = n.get_float("epsilon", 1e-5);
    // Scale and B broadcast to the normalized shape; layer_norm takes them of that shape.
    auto fit = [&](bp_tensor_t* t) { return sizes_of(t) == shape ? t : ex.call("expand", {vt(t), vl(shape)}); };
    bp_tensor_t* bias = in.size() > 2 && in[2].present() ? fit(in[2].t) : nullptr;
    Outs outs{ex.call("layer_norm", {vt(in[0].t), vl(shape), vt(fit(in[1].t)), vt(bias), vd(eps)})};
    if (n.outputs.size() > 1) {
      std::vector<int64_t> dims;
      for (int64_t k = axis; k < rank; ++k) dims.push_back(k);
      bp_tensor_t* mean = ex.call("mean.dim", {vt(in[0].t), vl(dims), vb(true)});
      bp_tensor_t* c = ex.call("sub.Tensor", {vt(in[0].t), vt(mean)});
      bp_tensor_t* var = ex.call("mean.dim", {vt(ex.call("mul.Tensor", {vt(c), vt(c)})), vl(dims), vb(true)});
      outs.push_back(mean);
      if (n.outputs.size() > 2) {
        outs.push_back(ex.call("rsqrt", {vt(ex.call("add.Tensor", {vt(var), vt(ex.scalar(eps, d))}))}));
      }
    }
    return outs;
  };
  // MeanVarianceNormalization: (x - mean) / sqrt(mean((x - mean)^2)) over axes (default [0, 2, 3]).
  m["MeanVarianceNormalization"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const DType d = dtype_of(in[0].t);
    need_dtype(n.op_type, "mean.dim", d);
    const int64_t rank = bp_tensor_ndim(in[0].t);
    std::vector<int64_t> axes = n.get_ints("axes", {0, 2, 3});
    for (int64_t& a : axes) {
      if (a < 0) a += rank;
      if (a < 0 || a >= rank) unsupported_attr(n.op_type, "axes", list_str(n.get_ints("axes", {})));
    }
    bp_tensor_t* mean = ex.call("mean.dim", {vt(in[0].t), vl(axes), vb(true)});
    bp_tensor_t* c = ex.call("sub.Tensor", {vt(in[0].t), vt(mean)});
    bp_tensor_t* var = ex.call("mean.dim", {vt(ex.call("mul.Tensor", {vt(c), vt(c)})), vl(axes), vb(true)});
    // ONNX's function body adds 1e-9 to the standard deviation.
    bp_tensor_t* sd = ex.call("add.Tensor", {vt(ex.call("sqrt", {vt(var)})), vt(ex.scalar(1e-9, d))});
    return {ex.call("div.Tensor", {vt(c), vt(sd)})};
  };
  // LRN: x / (bias + alpha / size * sum of x^2 over `size` neighbouring channels) ^ beta,
  // the channel sum as an average pool (counting the zero pad) over [N, 1, C, H*W].
  m["LRN"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const DType d = dtype_of(in[0].t);
    need_dtype(n.op_type, "avg_pool2d", d);
    const int64_t size = n.get_int("size", 1);
    if (size % 2 == 0) unsupported_attr(n.op_type, "size", std::to_string(size) + " (even: asymmetric window)");
    const std::vector<int64_t> xs = sizes_of(in[0].t);
    int64_t rest = 1;
    for (size_t k = 2; k < xs.size(); ++k) rest *= xs[k];
    bp_tensor_t* sq = ex.call("mul.Tensor", {vt(in[0].t), vt(in[0].t)});
    sq = ex.call("reshape", {vt(sq), vl({xs[0], 1, xs[1], rest})});
    const std::vector<int64_t> kernel{size, 1}, stride{1, 1}, pad{(size - 1) / 2, 0};
    bp_tensor_t* avg = ex.call("avg_pool2d", {vt(sq), vl(kernel), vl(stride), vl(pad), vb(false), vb(true)});
    avg = ex.call("reshape", {vt(avg), vl(xs)});
    const double alpha = n.get_float("alpha", 1e-4), beta = n.get_float("beta", 0.75), bias = n.get_float("bias", 1.0);
    // avg * size * alpha / size = avg * alpha.
    bp_tensor_t* den = ex.call("add.Tensor", {vt(ex.call("mul.Tensor", {vt(avg), vt(ex.scalar(alpha, d))})),
                                              vt(ex.scalar(bias, d))});
    den = ex.call("pow.Tensor_Tensor", {vt(den), vt(ex.scalar(beta, d))});
    return {ex.call("div.Tensor", {vt(in[0].t), vt(den)})};
  };
  // InstanceNormalization: layer_norm over the spatial dims, then scale and bias per channel.
  m["InstanceNormalization"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    need_dtype(n.op_type, "layer_norm", dtype_of(in[0].t));
    const std::vector<int64_t> xs = sizes_of(in[0].t);
    const std::vector<int64_t> shape(xs.begin() + 2, xs.end());
    std::vector<int64_t> per_channel(xs.size() - 1, 1);
    per_channel[0] = xs[1];
    bp_tensor_t* y = ex.call("layer_norm", {vt(in[0].t), vl(shape), vnone(), vnone(), vd(n.get_float("epsilon", 1e-5))});
    y = ex.call("mul.Tensor", {vt(y), vt(ex.call("reshape", {vt(in[1].t), vl(per_channel)}))});
    return {ex.call("add.Tensor", {vt(y), vt(ex.call("reshape", {vt(in[2].t), vl(per_channel)}))})};
  };
}

}  // namespace bponnx
