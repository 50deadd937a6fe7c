// ONNX's quantization operators -> Backplane quantize_linear /
// dequantize_linear / matmul_integer / conv_integer where the device runs
// them natively, else pointwise, reduction, matmul and conv2d calls: QuantizeLinear,
// DequantizeLinear, DynamicQuantizeLinear, MatMulInteger, ConvInteger,
// QLinearMatMul and QLinearConv (int8 / uint8,
// per-tensor and per-axis scales and zero points).
//
// Integer products run as matmul_integer / conv_integer where the device
// has those kernels natively; elsewhere in float64: every int8/uint8
// product and any sum of fewer than 2^37 of them is exact there, so the
// int32 results equal an integer GEMM's, and a backend without integer
// matmul or conv kernels runs them (through the CPU fallback when it lacks
// float64 too). Requantization
// follows ONNX's reference: the combined scale in the scales' dtype, the
// product in float64, rounded half to even, plus the zero point, saturated.
#include <cmath>
#include <string>
#include <vector>

#include "bponnx/exec.h"
#include "conv_window.h"

namespace bponnx {

namespace {

using Outs = std::vector<bp_tensor_t*>;
using Ins = std::vector<NodeInput>;

bool present(const Ins& in, size_t k) { return in.size() > k && in[k].present(); }

int64_t numel_of(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

bool is_quantized(DType d) { return d == DType::kUInt8 || d == DType::kInt8; }

// Refuses (NotMapped) a dtype other than int8 and uint8.
void need_quantized(const OnnxNode& n, DType d) {
  if (!is_quantized(d)) throw NotMapped{"dtype " + n.op_type + "(" + dtype_name(d) + ")"};
}
void need_quantized(const OnnxNode& n, bp_tensor_t* t) { need_quantized(n, dtype_of(t)); }

// The integer range of a quantized dtype.
void range_of(const OnnxNode& n, DType d, double* lo, double* hi) {
  need_quantized(n, d);
  *lo = d == DType::kUInt8 ? 0 : -128;
  *hi = d == DType::kUInt8 ? 255 : 127;
}

// Refuses a scale known on the host that is not positive and finite: the
// quotient would be inf or NaN, and the saturated result meaningless.
void check_scale(const OnnxNode& n, const NodeInput& scale, const char* name) {
  if (scale.host == nullptr) return;
  for (double v : scale.host->values) {
    if (!(v > 0) || !std::isfinite(v)) {
      throw CallFailed{n.op_type + ": INVALID_ARGUMENT: argument '" + name +
                       "' must hold positive finite scales but holds " + std::to_string(v)};
    }
  }
}

// The check along_axis makes, with ONNX's argument names: true (per
// tensor or already shaped to broadcast) or false (per axis, valid; *axis
// normalized); throws otherwise.
bool as_is_along_axis(const OnnxNode& n, const std::vector<int64_t>& ts, const char* name, int64_t* axis,
                      const std::vector<int64_t>& xs) {
  const int64_t rank = static_cast<int64_t>(xs.size());
  // Per tensor, or already shaped to broadcast (QLinearMatMul's [.., M, 1]).
  if ((numel_of(ts) == 1 && ts.size() <= 1) || (rank > 1 && static_cast<int64_t>(ts.size()) == rank)) return true;
  if (*axis < 0) *axis += rank;
  if (ts.size() != 1 || *axis < 0 || *axis >= rank || ts[0] != xs[static_cast<size_t>(*axis)]) {
    throw CallFailed{n.op_type + ": INVALID_ARGUMENT: argument '" + name +
                     "' must be a scalar or a 1-D tensor of the size of axis " + std::to_string(*axis) +
                     " of the input, but has sizes " + sizes_str(ts)};
  }
  return false;
}

// A scale or zero point for dim `axis` of a rank-`rank` input of sizes
// `xs`: a one-element tensor as it is (per tensor), a 1-D one of
// xs[axis] elements reshaped to broadcast along `axis` (per axis).
bp_tensor_t* along_axis(Exec& ex, const OnnxNode& n, bp_tensor_t* t, const char* name, int64_t axis,
                        const std::vector<int64_t>& xs) {
  const std::vector<int64_t> ts = sizes_of(t);
  const int64_t rank = static_cast<int64_t>(xs.size());
  if (as_is_along_axis(n, ts, name, &axis, xs)) return t;
  std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
  shape[static_cast<size_t>(axis)] = ts[0];
  return ex.call("reshape", {vt(t), vl(shape)});
}

// x - zero_point in dtype `d` (the zero point already shaped to broadcast;
// nullptr: zero).
bp_tensor_t* shifted(Exec& ex, bp_tensor_t* x, bp_tensor_t* zero_point, DType d) {
  bp_tensor_t* xd = ex.cast(x, d);
  if (zero_point == nullptr) return xd;
  return ex.call("sub.Tensor", {vt(xd), vt(ex.cast(zero_point, d)), vi(1)});
}

// saturate(round(q) + zero_point) as dtype `out` (q floating; the zero point
// shaped to broadcast, nullptr: zero), as ONNX's QuantizeLinear.
bp_tensor_t* requantize(Exec& ex, const OnnxNode& n, bp_tensor_t* q, bp_tensor_t* zero_point, DType out) {
  double lo = 0, hi = 0;
  range_of(n, out, &lo, &hi);
  const DType d = dtype_of(q);
  bp_tensor_t* y = ex.call("round", {vt(q)});
  if (zero_point != nullptr) y = ex.call("add.Tensor", {vt(y), vt(ex.cast(zero_point, d)), vi(1)});
  y = ex.call("maximum", {vt(y), vt(ex.scalar(lo, d))});
  y = ex.call("minimum", {vt(y), vt(ex.scalar(hi, d))});
  return ex.call("to.dtype", {vt(y), vdtype(out), vb(false), vb(false)});
}

// The scale (input 1) and the optional zero point (input 2) of
// QuantizeLinear / DequantizeLinear, shaped for the node's axis; `prefix` is
// ONNX's name for them ("y" or "x"), `bp_op` the operator the scale's dtype
// must be claimed by.
struct LinearParams {
  bp_tensor_t* scale;
  bp_tensor_t* zero_point;  // nullptr: zero
  DType dtype;              // the scale's
};
LinearParams linear_params(Exec& ex, const OnnxNode& n, const Ins& in, const std::string& prefix, const char* bp_op) {
  const std::string scale = prefix + "_scale", zero_point = prefix + "_zero_point";
  check_scale(n, in[1], scale.c_str());
  const std::vector<int64_t> xs = sizes_of(in[0].t);
  const int64_t axis = n.get_int("axis", 1);
  LinearParams p{nullptr, nullptr, dtype_of(in[1].t)};
  need_dtype(n.op_type, bp_op, p.dtype);
  p.scale = along_axis(ex, n, in[1].t, scale.c_str(), axis, xs);
  if (present(in, 2)) p.zero_point = along_axis(ex, n, in[2].t, zero_point.c_str(), axis, xs);
  return p;
}

// The native path of QuantizeLinear / DequantizeLinear: one
// quantize_linear / dequantize_linear call where the device has its own
// kernel and the node fits the operator (float32 scales of one element or
// 1-D, the zero point in the quantized dtype: int8 or uint8, or int32 for
// DequantizeLinear's int32 x). Elsewhere the operator would
// run through the CPU fallback; the decomposition keeps the work on the
// device. Sizes are checked first as the decomposition checks them, so
// errors name ONNX's arguments (y_scale, x_zero_point, ...).
bool linear_native(Exec& ex, const OnnxNode& n, const Ins& in, const char* op, const std::string& prefix,
                   DType quantized, Outs* r) {
  if (dtype_of(in[1].t) != DType::kFloat32 || sizes_of(in[1].t).size() > 1 || n.get_int("block_size", 0) != 0)
    return false;
  if (present(in, 2) && dtype_of(in[2].t) != quantized) return false;
  if (!runs_natively(ex.ctx(), op, ex.device().backend)) return false;
  const std::vector<int64_t> xs = sizes_of(in[0].t);
  int64_t axis = n.get_int("axis", 1);
  as_is_along_axis(n, sizes_of(in[1].t), (prefix + "_scale").c_str(), &axis, xs);
  axis = n.get_int("axis", 1);
  if (present(in, 2)) as_is_along_axis(n, sizes_of(in[2].t), (prefix + "_zero_point").c_str(), &axis, xs);
  std::vector<bp_value_t> args = {vt(in[0].t), vt(in[1].t), present(in, 2) ? vt(in[2].t) : vnone(),
                                  vi(n.get_int("axis", 1))};
  if (std::string(op) == "quantize_linear") args.push_back(vdtype(quantized));
  *r = {ex.call_multi(op, args, 1)[0]};
  return true;
}

// QuantizeLinear-10/13 (int8/uint8 outputs; axis for per-axis scales).
Outs quantize_linear(Exec& ex, const OnnxNode& n, const Ins& in) {
  const DType out = present(in, 2) ? dtype_of(in[2].t) : DType::kUInt8;
  Outs native;
  if (dtype_of(in[0].t) == DType::kFloat32 && is_quantized(out)) {
    check_scale(n, in[1], "y_scale");
    if (linear_native(ex, n, in, "quantize_linear", "y", out, &native)) return native;
  }
  const LinearParams p = linear_params(ex, n, in, "y", "div.Tensor");
  bp_tensor_t* q = ex.call("div.Tensor", {vt(ex.cast(in[0].t, p.dtype)), vt(p.scale)});
  return {requantize(ex, n, q, p.zero_point, out)};
}

// DequantizeLinear-10/13: (x - zero_point) * scale in the scale's dtype.
Outs dequantize_linear(Exec& ex, const OnnxNode& n, const Ins& in) {
  const DType xd = dtype_of(in[0].t);
  if (xd != DType::kInt8 && xd != DType::kUInt8 && xd != DType::kInt32) {
    throw NotMapped{"dtype " + n.op_type + "(" + dtype_name(xd) + ")"};
  }
  check_scale(n, in[1], "x_scale");
  Outs native;
  if (linear_native(ex, n, in, "dequantize_linear", "x", xd, &native)) return native;
  const LinearParams p = linear_params(ex, n, in, "x", "mul.Tensor");
  return {ex.call("mul.Tensor", {vt(shifted(ex, in[0].t, p.zero_point, p.dtype)), vt(p.scale)})};
}

// DynamicQuantizeLinear-11: uint8 with the scale and zero point that map
// [min(x, 0), max(x, 0)] onto [0, 255]; an all-zero x gets the scale 1/255
// (ONNX's reference: the range is 1 where max == min), not 0. The 0-D scale
// and zero point are a few scalar calls; y is one quantize_linear call where
// the device has its own kernel, else QuantizeLinear's decomposition.
Outs dynamic_quantize_linear(Exec& ex, const OnnxNode& n, const Ins& in) {
  const DType d = dtype_of(in[0].t);
  if (d != DType::kFloat32) throw NotMapped{"dtype " + n.op_type + "(" + dtype_name(d) + ")"};
  bp_tensor_t* zero = ex.scalar(0.0, d);
  const std::vector<int64_t> all;
  bp_tensor_t* lo = ex.call("minimum", {vt(ex.call("amin", {vt(in[0].t), vl(all), vb(false)})), vt(zero)});
  bp_tensor_t* hi = ex.call("maximum", {vt(ex.call("amax", {vt(in[0].t), vl(all), vb(false)})), vt(zero)});
  bp_tensor_t* range = ex.call("sub.Tensor", {vt(hi), vt(lo), vi(1)});
  range = ex.call("where.self",
                  {vt(ex.call("eq.Tensor", {vt(range), vt(zero)})), vt(ex.scalar(1.0, d)), vt(range)});
  bp_tensor_t* scale = ex.call("div.Tensor", {vt(range), vt(ex.scalar(255.0, d))});
  bp_tensor_t* zp =
      requantize(ex, n, ex.call("div.Tensor", {vt(ex.call("neg", {vt(lo)})), vt(scale)}), nullptr, DType::kUInt8);
  if (runs_natively(ex.ctx(), "quantize_linear", ex.device().backend)) {
    bp_tensor_t* y = ex.call_multi("quantize_linear", {vt(in[0].t), vt(scale), vt(zp), vi(1), vdtype(DType::kUInt8)},
                                   1)[0];
    return {y, scale, zp};
  }
  bp_tensor_t* y = requantize(ex, n, ex.call("div.Tensor", {vt(in[0].t), vt(scale)}), zp, DType::kUInt8);
  return {y, scale, zp};
}

// The scale or zero point of a matmul's A: per tensor, or per row (M
// values, broadcast along K).
bp_tensor_t* per_row(Exec& ex, const OnnxNode& n, bp_tensor_t* a, const NodeInput& v, const char* name) {
  if (!v.present()) return nullptr;
  const std::vector<int64_t> as = sizes_of(a);
  const int64_t rank = static_cast<int64_t>(as.size());
  return along_axis(ex, n, v.t, name, rank < 2 ? 0 : rank - 2, as);
}

// The scale or zero point of a matmul's B: per tensor, or per column (N
// values, the last dim).
bp_tensor_t* per_column(Exec& ex, const OnnxNode& n, bp_tensor_t* b, const NodeInput& v, const char* name) {
  if (!v.present()) return nullptr;
  const std::vector<int64_t> bs = sizes_of(b);
  return along_axis(ex, n, v.t, name, static_cast<int64_t>(bs.size()) - 1, bs);
}

// (a - a_zero_point) @ (b - b_zero_point), exact, in float64.
bp_tensor_t* integer_matmul(Exec& ex, const OnnxNode& n, bp_tensor_t* a, bp_tensor_t* azp, bp_tensor_t* b,
                            bp_tensor_t* bzp) {
  need_quantized(n, a);
  need_quantized(n, b);
  need_dtype(n.op_type, "matmul", DType::kFloat64);
  return ex.call("matmul", {vt(shifted(ex, a, azp, DType::kFloat64)), vt(shifted(ex, b, bzp, DType::kFloat64))});
}

// The native path of MatMulInteger: one matmul_integer call where the
// device has its own kernel, int8/uint8 operands and zero points per
// tensor or 1-D (per row of a, per column of b) in their operand's dtype.
// ONNX's N-D zero points ([.., M, 1], [.., 1, N]) take the decomposition.
bool matmul_integer_native(Exec& ex, const Ins& in, Outs* r) {
  const DType ad = dtype_of(in[0].t), bd = dtype_of(in[1].t);
  if (!is_quantized(ad) || !is_quantized(bd)) return false;
  for (size_t k = 2; k < 4; ++k) {
    if (present(in, k) && (sizes_of(in[k].t).size() > 1 || dtype_of(in[k].t) != (k == 2 ? ad : bd))) return false;
  }
  if (!runs_natively(ex.ctx(), "matmul_integer", ex.device().backend)) return false;
  *r = {ex.call("matmul_integer", {vt(in[0].t), vt(in[1].t), present(in, 2) ? vt(in[2].t) : vnone(),
                                   present(in, 3) ? vt(in[3].t) : vnone()})};
  return true;
}

// MatMulInteger-10: int32 (a - a_zero_point) @ (b - b_zero_point).
Outs matmul_integer(Exec& ex, const OnnxNode& n, const Ins& in) {
  Outs native;
  if (matmul_integer_native(ex, in, &native)) return native;
  bp_tensor_t* azp = present(in, 2) ? per_row(ex, n, in[0].t, in[2], "a_zero_point") : nullptr;
  bp_tensor_t* bzp = present(in, 3) ? per_column(ex, n, in[1].t, in[3], "b_zero_point") : nullptr;
  bp_tensor_t* acc = integer_matmul(ex, n, in[0].t, azp, in[1].t, bzp);
  return {ex.call("to.dtype", {vt(acc), vdtype(DType::kInt32), vb(false), vb(false)})};
}

// The accumulator `acc` (float64, exact) requantized: acc * (x_scale *
// w_scale / y_scale), the factor in the scales' dtype as ONNX's reference
// computes it, then saturate(round(.) + y_zero_point).
bp_tensor_t* requantize_accumulator(Exec& ex, const OnnxNode& n, bp_tensor_t* acc, bp_tensor_t* x_scale,
                                    bp_tensor_t* w_scale, bp_tensor_t* y_scale, bp_tensor_t* y_zero_point) {
  const DType d = dtype_of(y_scale);
  bp_tensor_t* f = ex.call("mul.Tensor", {vt(ex.cast(x_scale, d)), vt(ex.cast(w_scale, d))});
  f = ex.call("div.Tensor", {vt(f), vt(y_scale)});
  bp_tensor_t* q = ex.call("mul.Tensor", {vt(acc), vt(ex.cast(f, DType::kFloat64))});
  return requantize(ex, n, q, y_zero_point, dtype_of(y_zero_point));
}

// QLinearMatMul-10: inputs a, a_scale, a_zero_point, b, b_scale,
// b_zero_point, y_scale, y_zero_point.
Outs qlinear_matmul(Exec& ex, const OnnxNode& n, const Ins& in) {
  check_scale(n, in[1], "a_scale");
  check_scale(n, in[4], "b_scale");
  check_scale(n, in[6], "y_scale");
  bp_tensor_t* a = in[0].t;
  bp_tensor_t* b = in[3].t;
  // The accumulator from matmul_integer where the device runs it (exact in
  // int32, then in float64 as the decomposition's), else the decomposition.
  Outs native;
  bp_tensor_t* acc = nullptr;
  if (matmul_integer_native(ex, Ins{in[0], in[3], in[2], in[5]}, &native)) {
    acc = ex.cast(native[0], DType::kFloat64);
  } else {
    acc = integer_matmul(ex, n, a, per_row(ex, n, a, in[2], "a_zero_point"), b,
                         per_column(ex, n, b, in[5], "b_zero_point"));
  }
  return {requantize_accumulator(ex, n, acc, per_row(ex, n, a, in[1], "a_scale"),
                                 per_column(ex, n, b, in[4], "b_scale"), in[6].t, in[7].t)};
}

// conv(x - x_zero_point, w - w_zero_point) + bias in float64 (exact), with
// the Conv mapping's attribute handling (pads, strides, dilations, group).
// w's zero point is per tensor or per output channel.
bp_tensor_t* integer_conv(Exec& ex, const OnnxNode& n, const NodeInput& x, const NodeInput& xzp, const NodeInput& w,
                          const NodeInput& wzp, const NodeInput* bias) {
  need_quantized(n, x.t);
  need_quantized(n, w.t);
  need_dtype(n.op_type, "conv2d", DType::kFloat64);
  const std::vector<int64_t> ws = sizes_of(w.t);
  bp_tensor_t* xz = xzp.present() ? along_axis(ex, n, xzp.t, "x_zero_point", 1, sizes_of(x.t)) : nullptr;
  bp_tensor_t* wz = wzp.present() ? along_axis(ex, n, wzp.t, "w_zero_point", 0, ws) : nullptr;
  Ins conv_in(2);
  conv_in[0].t = shifted(ex, x.t, xz, DType::kFloat64);
  conv_in[1].t = shifted(ex, w.t, wz, DType::kFloat64);
  if (bias != nullptr && bias->present()) {
    conv_in.emplace_back();
    conv_in[2].t = ex.cast(bias->t, DType::kFloat64);
  }
  return map_table().at("Conv")(ex, n, conv_in)[0];
}

// The native path of ConvInteger and of QLinearConv's accumulator: one
// conv_integer call (int32) where the device has its own kernel and the
// node fits: int8/uint8 x and w with 1 or 2 spatial dims, x_zero_point one
// element in x's dtype, w_zero_point one element or [C_out] in w's dtype,
// and (QLinearConv) B left out or [C_out]. Symmetric pads are
// conv_integer's padding; asymmetric ones (explicit or auto_pad SAME_*)
// pad x with x_zero_point first, so the padding still adds 0 after the
// shift, when that value is known on the host; else the decomposition
// runs. nullptr where the node does not fit.
bp_tensor_t* conv_integer_native(Exec& ex, const OnnxNode& n, const NodeInput& x, const NodeInput& xzp,
                                 const NodeInput& w, const NodeInput& wzp, const NodeInput* bias) {
  const DType xd = dtype_of(x.t), wd = dtype_of(w.t);
  if (!is_quantized(xd) || !is_quantized(wd)) return nullptr;
  const std::vector<int64_t> xs = sizes_of(x.t), ws = sizes_of(w.t);
  if ((xs.size() != 3 && xs.size() != 4) || ws.size() != xs.size()) return nullptr;
  if (xzp.present()) {
    const std::vector<int64_t> zs = sizes_of(xzp.t);
    if (zs.size() > 1 || numel_of(zs) != 1 || dtype_of(xzp.t) != xd) return nullptr;
  }
  if (wzp.present()) {
    const std::vector<int64_t> zs = sizes_of(wzp.t);
    if (zs.size() > 1 || (numel_of(zs) != 1 && numel_of(zs) != ws[0]) || dtype_of(wzp.t) != wd) return nullptr;
  }
  if (bias != nullptr && bias->present() && sizes_of(bias->t) != std::vector<int64_t>{ws[0]}) return nullptr;
  if (!runs_natively(ex.ctx(), "conv_integer", ex.device().backend)) return nullptr;
  Window win = window(n, xs, std::vector<int64_t>(ws.begin() + 2, ws.end()));
  const bool pad_first = !symmetric(win);
  if (pad_first && xzp.present() && (xzp.host == nullptr || xzp.host->values.size() != 1)) return nullptr;
  bp_tensor_t* x4 = to4d(ex, x.t, win);
  if (pad_first) x4 = pad_explicitly(ex, x4, &win, xzp.present() ? xzp.host->values[0] : 0.0);
  bp_tensor_t* y = ex.call("conv_integer", {vt(x4), vt(to4d(ex, w.t, win)), xzp.present() ? vt(xzp.t) : vnone(),
                                            wzp.present() ? vt(wzp.t) : vnone(), vl(win.stride), vl(win.pad_begin),
                                            vl(win.dilation), vi(n.get_int("group", 1))});
  return from4d(ex, y, win);
}

// ConvInteger-10: inputs x, w, x_zero_point, w_zero_point; int32 output.
Outs conv_integer(Exec& ex, const OnnxNode& n, const Ins& in) {
  const NodeInput none;
  const NodeInput& xzp = present(in, 2) ? in[2] : none;
  const NodeInput& wzp = present(in, 3) ? in[3] : none;
  if (bp_tensor_t* y = conv_integer_native(ex, n, in[0], xzp, in[1], wzp, nullptr)) return {y};
  bp_tensor_t* acc = integer_conv(ex, n, in[0], xzp, in[1], wzp, nullptr);
  return {ex.call("to.dtype", {vt(acc), vdtype(DType::kInt32), vb(false), vb(false)})};
}

// QLinearConv-10: inputs x, x_scale, x_zero_point, w, w_scale,
// w_zero_point, y_scale, y_zero_point, B (int32 bias, optional).
Outs qlinear_conv(Exec& ex, const OnnxNode& n, const Ins& in) {
  check_scale(n, in[1], "x_scale");
  check_scale(n, in[4], "w_scale");
  check_scale(n, in[6], "y_scale");
  const NodeInput* bias = present(in, 8) ? &in[8] : nullptr;
  // The accumulator from conv_integer where the device runs it (exact in
  // int32, then in float64 as the decomposition's, B added there), else
  // the decomposition.
  bp_tensor_t* acc = conv_integer_native(ex, n, in[0], in[2], in[3], in[5], bias);
  if (acc != nullptr) {
    acc = ex.cast(acc, DType::kFloat64);
    if (bias != nullptr) {
      std::vector<int64_t> bs(sizes_of(acc).size() - 1, 1);
      bs[0] = sizes_of(bias->t)[0];  // [C_out, 1, ...]: broadcasts along dim 1
      bp_tensor_t* b = ex.call("reshape", {vt(ex.cast(bias->t, DType::kFloat64)), vl(bs)});
      acc = ex.call("add.Tensor", {vt(acc), vt(b), vi(1)});
    }
  } else {
    acc = integer_conv(ex, n, in[0], in[2], in[3], in[5], bias);
  }
  // w_scale per output channel scales dim 1 of the output.
  const std::vector<int64_t> ys = sizes_of(acc);
  bp_tensor_t* w_scale = along_axis(ex, n, in[4].t, "w_scale", 1, ys);
  return {requantize_accumulator(ex, n, acc, in[1].t, w_scale, in[6].t, in[7].t)};
}

}  // namespace

void register_quantization(MapTable* t) {
  MapTable& m = *t;
  m["QuantizeLinear"] = quantize_linear;
  m["DequantizeLinear"] = dequantize_linear;
  m["DynamicQuantizeLinear"] = dynamic_quantize_linear;
  m["MatMulInteger"] = matmul_integer;
  m["QLinearMatMul"] = qlinear_matmul;
  m["ConvInteger"] = conv_integer;
  m["QLinearConv"] = qlinear_conv;
}

}  // namespace bponnx
