// ONNX operators that generate tensors from positions: OneHot, EyeLike,
// Range and the window functions. Positions 0..n-1 are uploaded from the
// host; the arithmetic (comparison, scaling, cos) runs on the device.
#include <cmath>

#include "bponnx/exec.h"

namespace bponnx {

namespace {

using Outs = std::vector<bp_tensor_t*>;
using Ins = std::vector<NodeInput>;

// 0, 1, ..., n-1 in `d`, along `axis` of a rank-`rank` tensor (size 1 elsewhere).
bp_tensor_t* positions(Exec& ex, int64_t n, int64_t axis, int64_t rank, DType d) {
  HostTensor h;
  h.dtype = d;
  h.sizes.assign(static_cast<size_t>(rank), 1);
  h.sizes[static_cast<size_t>(axis)] = n;
  for (int64_t k = 0; k < n; ++k) h.values.push_back(static_cast<double>(k));
  return ex.upload(h);
}

DType output_dtype(const OnnxNode& n, const char* attr, DType dflt) {
  if (!n.has(attr)) return dflt;
  DType d;
  std::string name;
  if (!dtype_from_onnx(static_cast<int>(n.get_int(attr, 1)), &d, &name)) {
    throw NotMapped{"dtype " + n.op_type + "(" + name + ")"};
  }
  return d;
}

// Hann, Hamming, Blackman: a0 + a1 cos(2 pi n / N) + a2 cos(4 pi n / N),
// N = size (periodic) or size - 1 (symmetric).
MapFn window(double a0, double a1, double a2) {
  return [=](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const DType d = output_dtype(n, "output_datatype", DType::kFloat32);
    if (!dtype_is_float(d)) throw NotMapped{"dtype " + n.op_type + "(" + dtype_name(d) + ")"};
    need_dtype(n.op_type, "cos", d);
    const int64_t size = host_ints(host_of(in[0])).at(0);
    const double den = n.get_int("periodic", 1) != 0 ? static_cast<double>(size) : static_cast<double>(size - 1);
    bp_tensor_t* pos = positions(ex, size, 0, 1, d);
    auto term = [&](double a, double mult) {
      bp_tensor_t* arg = ex.call("mul.Tensor", {vt(pos), vt(ex.scalar(mult * M_PI / den, d))});
      return ex.call("mul.Tensor", {vt(ex.call("cos", {vt(arg)})), vt(ex.scalar(a, d))});
    };
    bp_tensor_t* y = ex.call("add.Tensor", {vt(term(a1, 2.0)), vt(ex.scalar(a0, d))});
    if (a2 != 0.0) y = ex.call("add.Tensor", {vt(y), vt(term(a2, 4.0))});
    return {y};
  };
}

}  // namespace

void register_generators(MapTable* t) {
  MapTable& m = *t;
  // OneHot: values[1] where indices (negative ones wrapped by depth) equal the position along axis, else values[0].
  m["OneHot"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    need_dtype(n.op_type, "where.self", dtype_of(in[2].t));
    const int64_t depth = static_cast<int64_t>(host_of(in[1]).values.at(0));
    const int64_t out_rank = bp_tensor_ndim(in[0].t) + 1;
    int64_t axis = n.get_int("axis", -1);
    if (axis < 0) axis += out_rank;
    if (axis < 0 || axis >= out_rank) unsupported_attr(n.op_type, "axis", std::to_string(n.get_int("axis", -1)));
    bp_tensor_t* idx = ex.cast(in[0].t, DType::kInt64);
    bp_tensor_t* wrapped = ex.call("add.Tensor", {vt(idx), vt(ex.scalar(static_cast<double>(depth), DType::kInt64))});
    idx = ex.call("where.self", {vt(ex.call("lt.Tensor", {vt(idx), vt(ex.scalar(0, DType::kInt64))})), vt(wrapped), vt(idx)});
    idx = ex.call("unsqueeze", {vt(idx), vi(axis)});
    bp_tensor_t* mask = ex.call("eq.Tensor", {vt(idx), vt(positions(ex, depth, axis, out_rank, DType::kInt64))});
    bp_tensor_t* off = ex.call("narrow", {vt(in[2].t), vi(0), vi(0), vi(1)});
    bp_tensor_t* on = ex.call("narrow", {vt(in[2].t), vi(0), vi(1), vi(1)});
    return {ex.call("where.self", {vt(mask), vt(on), vt(off)})};
  };
  // EyeLike: ones where column - row == k, in the input's sizes.
  m["EyeLike"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const DType d = output_dtype(n, "dtype", dtype_of(in[0].t));
    need_dtype(n.op_type, "to.dtype", d);
    const std::vector<int64_t> xs = sizes_of(in[0].t);
    if (xs.size() != 2) throw NotMapped{"input: EyeLike of a rank-" + std::to_string(xs.size()) + " tensor"};
    bp_tensor_t* diff = ex.call("sub.Tensor", {vt(positions(ex, xs[1], 1, 2, DType::kInt64)),
                                               vt(positions(ex, xs[0], 0, 2, DType::kInt64))});
    bp_tensor_t* eye = ex.call("eq.Tensor", {vt(diff), vt(ex.scalar(static_cast<double>(n.get_int("k", 0)), DType::kInt64))});
    return {ex.cast(eye, d)};
  };
  // Range: start + delta * (0 .. n-1), n = max(ceil((limit - start) / delta), 0), in the inputs' dtype.
  m["Range"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const DType d = dtype_of(in[0].t);
    need_dtype(n.op_type, "mul.Tensor", d);
    const double start = host_of(in[0]).values.at(0), limit = host_of(in[1]).values.at(0), delta = host_of(in[2]).values.at(0);
    const int64_t count = std::max<int64_t>(static_cast<int64_t>(std::ceil((limit - start) / delta)), 0);
    bp_tensor_t* y = ex.call("mul.Tensor", {vt(positions(ex, count, 0, 1, d)), vt(in[2].t)});
    return {ex.call("add.Tensor", {vt(y), vt(in[0].t)})};
  };
  m["HannWindow"] = window(0.5, -0.5, 0.0);
  m["HammingWindow"] = window(25.0 / 46.0, -(1.0 - 25.0 / 46.0), 0.0);
  m["BlackmanWindow"] = window(0.42, -0.5, 0.08);
}

}  // namespace bponnx
