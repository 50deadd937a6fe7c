// ONNX reductions and shape/data-movement operators -> Backplane reductions,
// views, cat, copy_/fill_ and to.dtype. Shape-like inputs (axes, shape,
// starts/ends, pads, repeats) are read on the host.
#include <algorithm>
#include <numeric>

#include "bponnx/exec.h"
#include "shape_fold.h"

namespace bponnx {

namespace {

using Outs = std::vector<bp_tensor_t*>;
using Ins = std::vector<NodeInput>;

// Reduce*: `axes` an attribute up to opset `axes_input_from` - 1, an optional
// input from then on; noop_with_empty_axes; keepdims defaults to 1.
struct ReduceSpec {
  bool noop = false;          // axes empty and noop_with_empty_axes: identity
  std::vector<int64_t> axes;  // normalized, sorted; empty = all
  bool keepdims = true;
};
ReduceSpec reduce_spec(const OnnxNode& n, const Ins& in, int64_t axes_input_from) {
  ReduceSpec s;
  std::vector<int64_t> axes;
  if (n.opset >= axes_input_from) {
    if (in.size() > 1 && in[1].present()) axes = host_ints(host_of(in[1]));
  } else {
    axes = n.get_ints("axes", {});
  }
  s.keepdims = n.get_int("keepdims", 1) != 0;
  if (axes.empty() && n.get_int("noop_with_empty_axes", 0) != 0) s.noop = true;
  const int64_t rank = bp_tensor_ndim(in[0].t);
  for (int64_t a : axes) s.axes.push_back(norm_axis(n, a, rank));
  std::sort(s.axes.begin(), s.axes.end());
  if (s.axes.empty()) {
    for (int64_t a = 0; a < rank; ++a) s.axes.push_back(a);
  }
  return s;
}

// One reduction call with the spec's dims; the dtype of x kept for sums.
bp_tensor_t* reduce(Exec& ex, const char* op, bp_tensor_t* x, const ReduceSpec& s) {
  if (bp_tensor_ndim(x) == 0) return ex.call("clone", {vt(x)});
  return ex.call(op, {vt(x), vl(s.axes), vb(s.keepdims)});
}

// ReduceSum/Mean/Max/Min and the composite reductions (L1, L2, LogSum, ...).
MapFn reduction(const char* op, int64_t axes_input_from, const char* pre, const char* post, bool float_only) {
  return [=](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const DType d = dtype_of(in[0].t);
    need_dtype(n.op_type, op, d);
    if (float_only && !dtype_is_float(d)) throw NotMapped{"dtype " + n.op_type + "(" + dtype_name(d) + ")"};
    const ReduceSpec s = reduce_spec(n, in, axes_input_from);
    bp_tensor_t* x = in[0].t;
    if (pre != nullptr) {
      x = std::string(pre) == "square" ? ex.call("mul.Tensor", {vt(x), vt(x)}) : ex.call(pre, {vt(x)});
    }
    if (s.noop) return {ex.call("clone", {vt(x)})};
    bp_tensor_t* y = ex.cast(reduce(ex, op, x, s), d);  // integer sums come back in int64
    if (post != nullptr) y = ex.call(post, {vt(y)});
    return {y};
  };
}

// 0, 1, ..., n-1 along `axis` of a rank-`rank` tensor (size 1 elsewhere), int64.
bp_tensor_t* positions(Exec& ex, int64_t n, int64_t axis, int64_t rank) {
  HostTensor h;
  h.dtype = DType::kInt64;
  h.sizes.assign(static_cast<size_t>(rank), 1);
  h.sizes[static_cast<size_t>(axis)] = n;
  for (int64_t k = 0; k < n; ++k) h.values.push_back(static_cast<double>(k));
  return ex.upload(h);
}

// ArgMax / ArgMin. ArgMax taking the first index is argmax itself; ArgMin
// and select_last_index=1 mark the positions equal to the amax/amin and
// take the smallest or largest such position.
MapFn arg(bool is_min) {
  return [is_min](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const DType d = dtype_of(in[0].t);
    need_dtype(n.op_type, is_min ? "amin" : "argmax", d);
    const bool last = n.get_int("select_last_index", 0) != 0;
    const int64_t rank = bp_tensor_ndim(in[0].t);
    const int64_t axis = norm_axis(n, n.get_int("axis", 0), rank);
    const bool keep = n.get_int("keepdims", 1) != 0;
    if (!is_min && !last) return {ex.call("argmax", {vt(in[0].t), vi(axis), vb(keep)})};
    const std::vector<int64_t> dims{axis};
    bp_tensor_t* ext = ex.call(is_min ? "amin" : "amax", {vt(in[0].t), vl(dims), vb(true)});
    bp_tensor_t* mask = ex.call("eq.Tensor", {vt(in[0].t), vt(ext)});
    bp_tensor_t* pos = positions(ex, sizes_of(in[0].t)[static_cast<size_t>(axis)], axis, rank);
    bp_tensor_t* other = ex.scalar(last ? -1.0 : 4611686018427387904.0, DType::kInt64);
    bp_tensor_t* sel = ex.call("where.self", {vt(mask), vt(pos), vt(other)});
    return {ex.call(last ? "amax" : "amin", {vt(sel), vl(dims), vb(keep)})};
  };
}

// Unsqueeze/Squeeze axes: attribute before opset 13, input from 13.
std::vector<int64_t> axes_of(const OnnxNode& n, const Ins& in) {
  if (n.opset >= 13) return in.size() > 1 && in[1].present() ? host_ints(host_of(in[1])) : std::vector<int64_t>{};
  return n.get_ints("axes", {});
}

int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return std::max(lo, std::min(hi, v)); }

}  // namespace

void register_tensor_ops(MapTable* t) {
  MapTable& m = *t;
  m["ReduceSum"] = reduction("sum.dim_IntList", 13, nullptr, nullptr, false);
  m["ReduceMean"] = reduction("mean.dim", 18, nullptr, nullptr, false);
  m["ReduceMax"] = reduction("amax", 18, nullptr, nullptr, false);
  m["ReduceMin"] = reduction("amin", 18, nullptr, nullptr, false);
  m["ReduceL1"] = reduction("sum.dim_IntList", 18, "abs", nullptr, false);
  m["ReduceL2"] = reduction("sum.dim_IntList", 18, "square", "sqrt", true);
  m["ReduceSumSquare"] = reduction("sum.dim_IntList", 18, "square", nullptr, false);
  m["ReduceLogSum"] = reduction("sum.dim_IntList", 18, nullptr, "log", true);
  m["ReduceLogSumExp"] = reduction("sum.dim_IntList", 18, "exp", "log", true);
  // ReduceProd: prod.dim_int takes one dim, so one call per axis (kept), the
  // reduced dims dropped at the end unless keepdims.
  m["ReduceProd"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const DType d = dtype_of(in[0].t);
    need_dtype(n.op_type, "prod.dim_int", d);
    const ReduceSpec s = reduce_spec(n, in, 18);
    if (s.noop || bp_tensor_ndim(in[0].t) == 0) return {ex.call("clone", {vt(in[0].t)})};
    bp_tensor_t* y = in[0].t;
    for (int64_t a : s.axes) y = ex.call("prod.dim_int", {vt(y), vi(a), vb(true)});
    if (!s.keepdims) {
      std::vector<int64_t> kept;
      const std::vector<int64_t> ys = sizes_of(y);
      for (size_t k = 0; k < ys.size(); ++k) {
        if (!std::binary_search(s.axes.begin(), s.axes.end(), static_cast<int64_t>(k))) kept.push_back(ys[k]);
      }
      y = ex.call("reshape", {vt(y), vl(kept)});
    }
    return {ex.cast(y, d)};  // integer products come back in int64
  };
  // TopK: k an attribute before opset 10, an input after; both outputs.
  m["TopK"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    need_dtype(n.op_type, "topk", dtype_of(in[0].t));
    const int64_t rank = bp_tensor_ndim(in[0].t);
    const int64_t axis = norm_axis(n, n.get_int("axis", -1), rank);
    const int64_t k = n.opset < 10 ? n.get_int("k", 0) : host_ints(host_of(in[1])).at(0);
    const std::vector<bp_value_t> args = {vt(in[0].t), vi(k), vi(axis), vb(n.get_int("largest", 1) != 0),
                                          vb(n.get_int("sorted", 1) != 0)};
    return ex.call_multi("topk", args, 2);
  };
  m["ArgMax"] = arg(false);
  m["ArgMin"] = arg(true);

  // Hardmax: 1 at the first maximum along axis (before opset 13: of the 2-D view), else 0.
  m["Hardmax"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const DType d = dtype_of(in[0].t);
    need_dtype(n.op_type, "argmax", d);
    const std::vector<int64_t> xs = sizes_of(in[0].t);
    const int64_t rank = static_cast<int64_t>(xs.size());
    int64_t axis = norm_axis(n, n.get_int("axis", n.opset < 13 ? 1 : -1), rank);
    bp_tensor_t* x = in[0].t;
    if (n.opset < 13) {
      int64_t a = 1, b = 1;
      for (int64_t k = 0; k < rank; ++k) (k < axis ? a : b) *= xs[static_cast<size_t>(k)];
      x = ex.call("reshape", {vt(x), vl({a, b})});
      axis = 1;
    }
    const std::vector<int64_t> s2 = sizes_of(x);
    bp_tensor_t* idx = ex.call("argmax", {vt(x), vi(axis), vb(true)});
    bp_tensor_t* pos = positions(ex, s2[static_cast<size_t>(axis)], axis, static_cast<int64_t>(s2.size()));
    bp_tensor_t* y = ex.cast(ex.call("eq.Tensor", {vt(pos), vt(idx)}), d);
    return {ex.call("reshape", {vt(y), vl(xs)})};
  };
  // CumSum (floats): a matmul along the axis with a 0/1 triangular matrix made
  // on the host (inclusive or exclusive, forward or reverse).
  m["CumSum"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const DType d = dtype_of(in[0].t);
    need_dtype(n.op_type, "matmul", d);
    const int64_t rank = bp_tensor_ndim(in[0].t);
    const int64_t axis = norm_axis(n, host_ints(host_of(in[1])).at(0), rank);
    const int64_t len = sizes_of(in[0].t)[static_cast<size_t>(axis)];
    const bool exclusive = n.get_int("exclusive", 0) != 0, reverse = n.get_int("reverse", 0) != 0;
    HostTensor tri;  // tri[i][j] = 1 when input i adds into output j
    tri.dtype = d;
    tri.sizes = {len, len};
    for (int64_t i = 0; i < len; ++i) {
      for (int64_t j = 0; j < len; ++j) {
        const bool in_sum = reverse ? (exclusive ? i > j : i >= j) : (exclusive ? i < j : i <= j);
        tri.values.push_back(in_sum ? 1.0 : 0.0);
      }
    }
    bp_tensor_t* x = ex.call("transpose.int", {vt(in[0].t), vi(axis), vi(rank - 1)});
    bp_tensor_t* y = ex.call("matmul", {vt(x), vt(ex.upload(tri))});
    return {ex.call("contiguous", {vt(ex.call("transpose.int", {vt(y), vi(axis), vi(rank - 1)}))})};
  };
  // Trilu: the input where the (row, column) mask made on the host keeps it, else 0.
  m["Trilu"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const DType d = dtype_of(in[0].t);
    need_dtype(n.op_type, "where.self", d);
    const std::vector<int64_t> xs = sizes_of(in[0].t);
    const int64_t k = in.size() > 1 && in[1].present() ? host_ints(host_of(in[1])).at(0) : 0;
    const bool upper = n.get_int("upper", 1) != 0;
    HostTensor mask;
    mask.dtype = DType::kBool;
    const int64_t rows = xs[xs.size() - 2], cols = xs.back();
    mask.sizes = {rows, cols};
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) mask.values.push_back(upper ? j - i >= k : j - i <= k);
    }
    return {ex.call("where.self", {vt(ex.upload(mask)), vt(in[0].t), vt(ex.scalar(0, d))})};
  };

  m["Cast"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    DType to;
    std::string name;
    if (!dtype_from_onnx(static_cast<int>(n.get_int("to", 0)), &to, &name)) {
      throw NotMapped{"dtype " + n.op_type + "(" + name + ")"};
    }
    need_dtype(n.op_type, "to.dtype", dtype_of(in[0].t));
    return {ex.call("to.dtype", {vt(in[0].t), vdtype(to), vb(false), vb(true)})};
  };
  m["CastLike"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    need_dtype(n.op_type, "to.dtype", dtype_of(in[0].t));
    return {ex.call("to.dtype", {vt(in[0].t), vdtype(dtype_of(in[1].t)), vb(false), vb(true)})};
  };
  m["Concat"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    need_dtype(n.op_type, "cat", dtype_of(in[0].t));
    std::vector<bp_tensor_t*> list;
    for (const NodeInput& i : in) list.push_back(i.t);
    bp_value_t l{};
    l.kind = BP_VALUE_TENSOR_LIST;
    l.u.tensor_list.data = list.data();
    l.u.tensor_list.size = static_cast<int64_t>(list.size());
    return {ex.call("cat", {l, vi(norm_axis(n, n.get_int("axis", 0), bp_tensor_ndim(in[0].t)))})};
  };
  m["Transpose"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    std::vector<int64_t> perm(static_cast<size_t>(bp_tensor_ndim(in[0].t)));
    std::iota(perm.rbegin(), perm.rend(), 0);
    perm = n.get_ints("perm", perm);
    return {ex.call("permute", {vt(in[0].t), vl(perm)})};
  };
  // Shape (from opset 15, sizes[start:end]) and Size: int64 values made on
  // the host from the sizes alone (shape_fold.h, which folds them too).
  m["Shape"] = m["Size"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    return {ex.upload(shape_value(n, sizes_of(in[0].t)))};
  };
  // Gather, the result reshaped to data[:axis] + indices + data[axis+1:].
  // Indices known on the host (constants, shapes, short token lists): one
  // narrow per index (views), concatenated. Indices on the device:
  // index_select with the flattened indices, negative ones (ONNX counts them
  // from the end) moved up by the axis size first.
  m["Gather"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const std::vector<int64_t> xs = sizes_of(in[0].t);
    const int64_t rank = static_cast<int64_t>(xs.size());
    const int64_t axis = norm_axis(n, n.get_int("axis", 0), rank);
    const int64_t len = xs[static_cast<size_t>(axis)];
    if (in[1].host == nullptr) {
      need_dtype(n.op_type, "index_select", dtype_of(in[0].t));
      const DType it = dtype_of(in[1].t);
      if (it != DType::kInt64 && it != DType::kInt32)
        throw NotMapped{std::string("dtype Gather.indices(") + dtype_name(it) + ")"};
      std::vector<int64_t> out_sizes(xs.begin(), xs.begin() + axis);
      const std::vector<int64_t> is = sizes_of(in[1].t);
      out_sizes.insert(out_sizes.end(), is.begin(), is.end());
      out_sizes.insert(out_sizes.end(), xs.begin() + axis + 1, xs.end());
      bp_tensor_t* idx = ex.call("reshape", {vt(in[1].t), vl({-1})});
      bp_tensor_t* neg = ex.call("lt.Tensor", {vt(idx), vt(ex.scalar(0, it))});
      idx = ex.call(
          "where.self",
          {vt(neg), vt(ex.call("add.Tensor", {vt(idx), vt(ex.scalar(static_cast<double>(len), it))})), vt(idx)});
      bp_tensor_t* y = ex.call("index_select", {vt(in[0].t), vi(axis), vt(idx)});
      return {ex.call("reshape", {vt(y), vl(out_sizes)})};
    }
    std::vector<int64_t> idx = host_ints(host_of(in[1]));
    for (int64_t& i : idx) {
      if (i < -len || i >= len)
        throw CallFailed{"Gather: index " + std::to_string(i) + " out of range for axis size " + std::to_string(len)};
      if (i < 0) i += len;
    }
    std::vector<int64_t> out_sizes(xs.begin(), xs.begin() + axis);
    out_sizes.insert(out_sizes.end(), host_of(in[1]).sizes.begin(), host_of(in[1]).sizes.end());
    out_sizes.insert(out_sizes.end(), xs.begin() + axis + 1, xs.end());
    if (idx.empty()) return {ex.full(out_sizes, dtype_of(in[0].t), 0.0)};
    std::vector<bp_tensor_t*> parts;
    for (int64_t i : idx) parts.push_back(ex.call("narrow", {vt(in[0].t), vi(axis), vi(i), vi(1)}));
    bp_value_t l{};
    l.kind = BP_VALUE_TENSOR_LIST;
    l.u.tensor_list.data = parts.data();
    l.u.tensor_list.size = static_cast<int64_t>(parts.size());
    bp_tensor_t* y = parts.size() == 1 ? ex.call("contiguous", {vt(parts[0])}) : ex.call("cat", {l, vi(axis)});
    return {ex.call("reshape", {vt(y), vl(out_sizes)})};
  };
  // Reshape: 0 copies the input's size (unless allowzero), -1 is inferred.
  m["Reshape"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    std::vector<int64_t> shape = n.opset < 5 ? n.get_ints("shape", {}) : host_ints(host_of(in[1]));
    const std::vector<int64_t> xs = sizes_of(in[0].t);
    if (n.get_int("allowzero", 0) == 0) {
      for (size_t k = 0; k < shape.size(); ++k) {
        if (shape[k] == 0 && k < xs.size()) shape[k] = xs[k];
      }
    }
    return {ex.call("reshape", {vt(in[0].t), vl(shape)})};
  };
  m["Flatten"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const std::vector<int64_t> xs = sizes_of(in[0].t);
    const int64_t rank = static_cast<int64_t>(xs.size());
    int64_t axis = n.get_int("axis", 1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis > rank) unsupported_attr(n.op_type, "axis", std::to_string(n.get_int("axis", 1)));
    int64_t a = 1, b = 1;
    for (int64_t k = 0; k < rank; ++k) (k < axis ? a : b) *= xs[static_cast<size_t>(k)];
    return {ex.call("reshape", {vt(in[0].t), vl({a, b})})};
  };
  m["Unsqueeze"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    std::vector<int64_t> axes = axes_of(n, in);
    const int64_t out_rank = bp_tensor_ndim(in[0].t) + static_cast<int64_t>(axes.size());
    for (int64_t& a : axes) a = norm_axis(n, a, out_rank);
    std::sort(axes.begin(), axes.end());
    bp_tensor_t* y = in[0].t;
    for (int64_t a : axes) y = ex.call("unsqueeze", {vt(y), vi(a)});
    return {y};
  };
  m["Squeeze"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    std::vector<int64_t> axes = axes_of(n, in);
    const std::vector<int64_t> xs = sizes_of(in[0].t);
    const int64_t rank = static_cast<int64_t>(xs.size());
    if (axes.empty()) {
      for (int64_t k = 0; k < rank; ++k) {
        if (xs[static_cast<size_t>(k)] == 1) axes.push_back(k);
      }
    }
    for (int64_t& a : axes) a = norm_axis(n, a, rank);
    std::sort(axes.rbegin(), axes.rend());
    bp_tensor_t* y = in[0].t;
    for (int64_t a : axes) y = ex.call("squeeze.dim", {vt(y), vi(a)});
    return {y};
  };
  // Expand broadcasts both ways: the result has the broadcast of both shapes.
  m["Expand"] = [](Exec& ex, const OnnxNode&, const Ins& in) -> Outs {
    std::vector<int64_t> shape = host_ints(host_of(in[1]));
    std::vector<int64_t> xs = sizes_of(in[0].t);
    const size_t r = std::max(shape.size(), xs.size());
    shape.insert(shape.begin(), r - shape.size(), 1);
    xs.insert(xs.begin(), r - xs.size(), 1);
    for (size_t k = 0; k < r; ++k) shape[k] = shape[k] == 1 ? xs[k] : shape[k];
    return {ex.call("expand", {vt(in[0].t), vl(shape)})};
  };
  // Slice: attributes before opset 10, inputs (starts, ends, axes, steps) after.
  m["Slice"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    std::vector<int64_t> starts, ends, axes, steps;
    if (n.opset < 10) {
      starts = n.get_ints("starts", {});
      ends = n.get_ints("ends", {});
      axes = n.get_ints("axes", {});
    } else {
      starts = host_ints(host_of(in[1]));
      ends = host_ints(host_of(in[2]));
      if (in.size() > 3 && in[3].present()) axes = host_ints(host_of(in[3]));
      if (in.size() > 4 && in[4].present()) steps = host_ints(host_of(in[4]));
    }
    const std::vector<int64_t> xs = sizes_of(in[0].t);
    const int64_t rank = static_cast<int64_t>(xs.size());
    if (axes.empty()) {
      for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
    }
    if (steps.empty()) steps.assign(starts.size(), 1);
    for (int64_t s : steps) {
      if (s == 0) unsupported_attr(n.op_type, "steps", list_str(steps));
    }
    bp_tensor_t* y = in[0].t;
    for (size_t k = 0; k < starts.size(); ++k) {
      const int64_t a = norm_axis(n, axes[k], rank);
      const int64_t dim = xs[static_cast<size_t>(a)];
      const int64_t step = steps[k];
      int64_t s = starts[k] < 0 ? starts[k] + dim : starts[k];
      int64_t e = ends[k] < 0 ? ends[k] + dim : ends[k];
      if (step > 0) {
        s = clamp64(s, 0, dim);
        e = clamp64(e, s, dim);
        y = ex.call("slice.Tensor", {vt(y), vi(a), vi(s), vi(e), vi(step)});
        continue;
      }
      // A negative step walks s, s + step, ... while > e (ONNX clamps s to
      // [0, dim - 1] and e to [-1, dim - 1]): the same elements as the
      // forward slice from the last of them, reversed by index_select.
      s = clamp64(s, 0, dim - 1);
      e = clamp64(e, -1, dim - 1);
      const int64_t count = dim > 0 && s > e ? (s - e - step - 1) / -step : 0;
      const int64_t first = s + (count - 1) * step;
      y = ex.call("slice.Tensor", {vt(y), vi(a), vi(count > 0 ? first : 0), vi(count > 0 ? s + 1 : 0), vi(-step)});
      if (count > 1) {
        std::vector<int64_t> back;
        for (int64_t i = count - 1; i >= 0; --i) back.push_back(i);
        y = ex.call("index_select", {vt(y), vi(a), vt(upload_ints(ex, back))});
      }
    }
    return {y};
  };
  // Split into equal parts or the given sizes (attribute before opset 13, input after).
  m["Split"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const std::vector<int64_t> xs = sizes_of(in[0].t);
    const int64_t axis = norm_axis(n, n.get_int("axis", 0), static_cast<int64_t>(xs.size()));
    std::vector<int64_t> split =
        n.opset >= 13 ? (in.size() > 1 && in[1].present() ? host_ints(host_of(in[1])) : std::vector<int64_t>{})
                      : n.get_ints("split", {});
    const int64_t parts = static_cast<int64_t>(n.outputs.size());
    const int64_t dim = xs[static_cast<size_t>(axis)];
    if (split.empty()) {
      if (dim % parts != 0) unsupported_attr(n.op_type, "split", "uneven");
      split.assign(static_cast<size_t>(parts), dim / parts);
    }
    Outs outs;
    int64_t start = 0;
    for (int64_t len : split) {
      outs.push_back(ex.call("narrow", {vt(in[0].t), vi(axis), vi(start), vi(len)}));
      start += len;
    }
    return outs;
  };
  // Tile: reshape to [1, d0, 1, d1, ...], expand to [r0, d0, r1, d1, ...], reshape.
  m["Tile"] = [](Exec& ex, const OnnxNode&, const Ins& in) -> Outs {
    const std::vector<int64_t> xs = sizes_of(in[0].t);
    const std::vector<int64_t> reps = host_ints(host_of(in[1]));
    std::vector<int64_t> inter, big, out;
    for (size_t k = 0; k < xs.size(); ++k) {
      inter.insert(inter.end(), {1, xs[k]});
      big.insert(big.end(), {reps[k], xs[k]});
      out.push_back(reps[k] * xs[k]);
    }
    bp_tensor_t* y = ex.call("reshape", {vt(in[0].t), vl(inter)});
    y = ex.call("expand", {vt(y), vl(big)});
    return {ex.call("reshape", {vt(y), vl(out)})};
  };
  m["DepthToSpace"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const std::vector<int64_t> s = sizes_of(in[0].t);
    const int64_t bs = n.get_int("blocksize", 1), c = s[1] / (bs * bs);
    const bool crd = n.get_string("mode", "DCR") == "CRD";
    bp_tensor_t* y = ex.call("reshape", {vt(in[0].t), vl(crd ? std::vector<int64_t>{s[0], c, bs, bs, s[2], s[3]}
                                                             : std::vector<int64_t>{s[0], bs, bs, c, s[2], s[3]})});
    y = ex.call("permute",
                {vt(y), vl(crd ? std::vector<int64_t>{0, 1, 4, 2, 5, 3} : std::vector<int64_t>{0, 3, 4, 1, 5, 2})});
    return {ex.call("reshape", {vt(y), vl({s[0], c, s[2] * bs, s[3] * bs})})};
  };
  m["SpaceToDepth"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const std::vector<int64_t> s = sizes_of(in[0].t);
    const int64_t bs = n.get_int("blocksize", 1);
    bp_tensor_t* y = ex.call("reshape", {vt(in[0].t), vl({s[0], s[1], s[2] / bs, bs, s[3] / bs, bs})});
    y = ex.call("permute", {vt(y), vl({0, 3, 5, 1, 2, 4})});
    return {ex.call("reshape", {vt(y), vl({s[0], s[1] * bs * bs, s[2] / bs, s[3] / bs})})};
  };
  // Pad (mode constant): a filled output, the input copied into a view of it.
  m["Pad"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const std::string mode = n.get_string("mode", "constant");
    const DType d = dtype_of(in[0].t);
    need_dtype(n.op_type, "copy_", d);
    std::vector<int64_t> pads = n.opset < 11 ? n.get_ints("pads", {}) : host_ints(host_of(in[1]));
    if (mode == "edge" || mode == "reflect") {
      // Each border built from one-wide narrows of the input (reflect
      // mirrors without the edge element), then cat along the axis.
      const size_t r = pads.size() / 2;
      bp_tensor_t* y = in[0].t;
      for (size_t k = 0; k < r; ++k) {
        const int64_t b = pads[k], e = pads[k + r], dim = sizes_of(y)[k], ax = static_cast<int64_t>(k);
        if (b < 0 || e < 0 || (mode == "reflect" && (b >= dim || e >= dim))) {
          unsupported_attr(n.op_type, "pads", list_str(pads) + " with mode=" + mode);
        }
        if (b == 0 && e == 0) continue;
        std::vector<bp_tensor_t*> parts;
        for (int64_t i = b; i >= 1; --i)
          parts.push_back(ex.call("narrow", {vt(y), vi(ax), vi(mode == "edge" ? 0 : i), vi(1)}));
        parts.push_back(y);
        for (int64_t i = 1; i <= e; ++i) {
          parts.push_back(ex.call("narrow", {vt(y), vi(ax), vi(mode == "edge" ? dim - 1 : dim - 1 - i), vi(1)}));
        }
        bp_value_t l{};
        l.kind = BP_VALUE_TENSOR_LIST;
        l.u.tensor_list.data = parts.data();
        l.u.tensor_list.size = static_cast<int64_t>(parts.size());
        y = ex.call("cat", {l, vi(ax)});
      }
      return {y == in[0].t ? ex.call("clone", {vt(y)}) : y};
    }
    if (mode != "constant") unsupported_attr(n.op_type, "mode", mode);
    double value = n.get_float("value", 0.0);
    if (n.opset >= 11 && in.size() > 2 && in[2].present() && !host_of(in[2]).values.empty())
      value = host_of(in[2]).values[0];
    if (in.size() > 3 && in[3].present()) unsupported_attr(n.op_type, "axes", "input");
    const std::vector<int64_t> xs = sizes_of(in[0].t);
    const size_t r = xs.size();
    std::vector<int64_t> os(r);
    for (size_t k = 0; k < r; ++k) os[k] = xs[k] + pads[k] + pads[k + r];
    bp_tensor_t* y = ex.full(os, d, value);
    bp_tensor_t* dst = y;
    bp_tensor_t* src = in[0].t;
    for (size_t k = 0; k < r; ++k) {
      const int64_t b = pads[k], e = pads[k + r];
      // Negative pads crop the input; positive ones leave a border in the output.
      src = ex.call("narrow", {vt(src), vi(static_cast<int64_t>(k)), vi(std::max<int64_t>(0, -b)),
                               vi(xs[k] + std::min<int64_t>(0, b) + std::min<int64_t>(0, e))});
      dst = ex.call("narrow", {vt(dst), vi(static_cast<int64_t>(k)), vi(std::max<int64_t>(0, b)),
                               vi(xs[k] + std::min<int64_t>(0, b) + std::min<int64_t>(0, e))});
    }
    ex.call("copy_", {vt(dst), vt(src)});
    return {y};
  };
  m["ConstantOfShape"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    DType d = DType::kFloat32;
    double v = 0.0;
    if (n.has("value")) {
      const RawTensor& t = n.attrs.at("value").tensor;
      if (!t.unsupported.empty()) throw NotMapped{"dtype " + n.op_type + "(" + t.unsupported + ")"};
      d = t.dtype;
      HostTensor h;
      if (!host_from_raw(t, &h)) h = ex.to_host(ex.upload(t));  // float16/bfloat16: rounded by the device
      if (!h.values.empty()) v = h.values[0];
    }
    return {ex.full(host_ints(host_of(in[0])), d, v)};
  };
  // Dropout at inference (or with ratio 0) is the identity; a mask output is all true.
  m["Dropout"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const bool training = n.opset >= 12 && in.size() > 2 && in[2].present() && host_of(in[2]).values.at(0) != 0.0;
    const bool zero_ratio = n.opset >= 12 && in.size() > 1 && in[1].present() && host_of(in[1]).values.at(0) == 0.0;
    if ((training && !zero_ratio) || n.get_int("is_test", 1) == 0) unsupported_attr(n.op_type, "training_mode", "1");
    Outs outs{ex.call("clone", {vt(in[0].t)})};
    if (n.outputs.size() > 1 && !n.outputs[1].empty()) outs.push_back(ex.full(sizes_of(in[0].t), DType::kBool, 1.0));
    return outs;
  };
}

}  // namespace bponnx
