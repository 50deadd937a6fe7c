// ONNX GatherElements, ScatterElements and ScatterND -> Backplane gather,
// scatter.src and scatter_reduce.two. ONNX counts negative indices from the
// end; they are moved up by the dimension's size first. Indices known on the
// host are checked here, so an out-of-range one is reported as the model
// gave it; indices on the device are checked by the kernel, and read back to
// name the model's index only when it fails.
#include <algorithm>
#include <string>

#include "bponnx/exec.h"

namespace bponnx {

namespace {

using Outs = std::vector<bp_tensor_t*>;
using Ins = std::vector<NodeInput>;

int64_t norm_axis(const OnnxNode& n, int64_t rank) { return bponnx::norm_axis(n, n.get_int("axis", 0), rank); }

DType index_dtype(const OnnxNode& n, const NodeInput& in) {
  const DType it = dtype_of(in.t);
  if (it != DType::kInt64 && it != DType::kInt32)
    throw NotMapped{"dtype " + n.op_type + ".indices(" + dtype_name(it) + ")"};
  return it;
}

// Throws CallFailed naming the node's operator, the bad index, its position
// and the range ONNX allows, when a host-known index lies outside [-bound, bound).
void check_host_index(const OnnxNode& n, const NodeInput& in, const std::vector<int64_t>& bounds) {
  if (in.host == nullptr) return;
  const std::vector<int64_t> v = host_ints(*in.host);
  for (size_t j = 0; j < v.size(); ++j) {
    const int64_t b = bounds[j % bounds.size()];
    if (v[j] < -b || v[j] >= b) {
      throw CallFailed{n.op_type + ": INVALID_ARGUMENT: argument 'indices' holds " + std::to_string(v[j]) +
                       " at position " + std::to_string(j) + "; expected an index in [" + std::to_string(-b) + ", " +
                       std::to_string(b) + ")" +
                       (n.op_type == "ScatterND" ? " for data dim " + std::to_string(j % bounds.size()) : "")};
    }
  }
}

// Runs f (the node's operator calls). When they fail and the indices were
// only on the device, they are read back (on this error path only) and
// checked as check_host_index does, so the error names the index the model
// gave and its range; otherwise the operator's error stands.
template <typename F>
bp_tensor_t* checked(Exec& ex, const OnnxNode& n, const NodeInput& in, const std::vector<int64_t>& bounds, F f) {
  try {
    return f();
  } catch (const CallFailed&) {
    if (in.host == nullptr && !bounds.empty()) {
      const HostTensor h = ex.to_host(in.t);
      NodeInput read = in;
      read.host = &h;
      check_host_index(n, read, bounds);
    }
    throw;
  }
}

// idx + bound where idx < 0 (bound a scalar or a tensor broadcasting to idx).
bp_tensor_t* wrap_negative(Exec& ex, bp_tensor_t* idx, bp_tensor_t* bound) {
  bp_tensor_t* neg = ex.call("lt.Tensor", {vt(idx), vt(ex.scalar(0, dtype_of(idx)))});
  return ex.call("where.self", {vt(neg), vt(ex.call("add.Tensor", {vt(idx), vt(bound)})), vt(idx)});
}

// The Backplane reduce of ScatterElements/ScatterND's `reduction`, "" for none.
std::string reduce_of(const OnnxNode& n) {
  const std::string r = n.get_string("reduction", "none");
  if (r == "none") return "";
  if (r == "add") return "sum";
  if (r == "mul") return "prod";
  if (r == "max") return "amax";
  if (r == "min") return "amin";
  unsupported_attr(n.op_type, "reduction", r);
}

bp_tensor_t* scatter(Exec& ex, const OnnxNode& n, bp_tensor_t* data, int64_t axis, bp_tensor_t* index,
                     bp_tensor_t* updates) {
  const std::string r = reduce_of(n);
  const DType d = dtype_of(data);
  need_dtype(n.op_type, r.empty() ? "scatter.src" : "scatter_reduce.two", d);
  if (r.empty()) return ex.call("scatter.src", {vt(data), vi(axis), vt(index), vt(updates)});
  return ex.call("scatter_reduce.two", {vt(data), vi(axis), vt(index), vt(updates), vs(r.c_str()), vb(true)});
}

}  // namespace

void register_scatter_gather(MapTable* t) {
  MapTable& m = *t;
  m["GatherElements"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    need_dtype(n.op_type, "gather", dtype_of(in[0].t));
    const std::vector<int64_t> xs = sizes_of(in[0].t);
    const int64_t axis = norm_axis(n, static_cast<int64_t>(xs.size()));
    const DType it = index_dtype(n, in[1]);
    const int64_t len = xs.empty() ? 1 : xs[static_cast<size_t>(axis)];
    check_host_index(n, in[1], {len});
    return {checked(ex, n, in[1], {len}, [&] {
      bp_tensor_t* idx = wrap_negative(ex, in[1].t, ex.scalar(static_cast<double>(len), it));
      return ex.call("gather", {vt(in[0].t), vi(axis), vt(idx)});
    })};
  };
  m["ScatterElements"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const std::vector<int64_t> xs = sizes_of(in[0].t);
    const int64_t axis = norm_axis(n, static_cast<int64_t>(xs.size()));
    const DType it = index_dtype(n, in[1]);
    const int64_t len = xs.empty() ? 1 : xs[static_cast<size_t>(axis)];
    check_host_index(n, in[1], {len});
    return {checked(ex, n, in[1], {len}, [&] {
      bp_tensor_t* idx = wrap_negative(ex, in[1].t, ex.scalar(static_cast<double>(len), it));
      return scatter(ex, n, in[0].t, axis, idx, in[2].t);
    })};
  };
  m["Scatter"] = m["ScatterElements"];  // opset 9-10's name of ScatterElements
  // ScatterND as one scatter along dim 0 of data seen as [N, S] (N the
  // product of the k indexed dims, S the rest): each index tuple becomes its
  // row number (computed on the host when the indices are there), expanded
  // over the row's S elements. Rows with a component out of range get row
  // N on the device, which the kernel rejects (then `checked` names the tuple).
  m["ScatterND"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    const std::vector<int64_t> ds = sizes_of(in[0].t), is = sizes_of(in[1].t);
    index_dtype(n, in[1]);
    if (is.empty()) throw NotMapped{"input ScatterND.indices of rank 0"};
    const int64_t k = is.back();
    if (k > static_cast<int64_t>(ds.size())) {
      throw CallFailed{n.op_type + ": INVALID_ARGUMENT: argument 'indices' has tuples of " + std::to_string(k) +
                       " components; expected at most data's rank " + std::to_string(ds.size())};
    }
    int64_t rows = 1, row_len = 1, count = 1;
    for (size_t j = 0; j < ds.size(); ++j) (static_cast<int64_t>(j) < k ? rows : row_len) *= ds[j];
    for (size_t j = 0; j + 1 < is.size(); ++j) count *= is[j];
    const std::vector<int64_t> bounds(ds.begin(), ds.begin() + k);
    std::vector<int64_t> strides(static_cast<size_t>(k), 1);
    for (int64_t j = k - 2; j >= 0; --j)
      strides[static_cast<size_t>(j)] = strides[static_cast<size_t>(j) + 1] * ds[static_cast<size_t>(j) + 1];
    bp_tensor_t* row = nullptr;
    if (in[1].host != nullptr) {
      if (k > 0) check_host_index(n, in[1], bounds);
      const std::vector<int64_t> v = host_ints(*in[1].host);
      HostTensor h;
      h.dtype = DType::kInt64;
      h.sizes = {count, 1};
      for (int64_t i = 0; i < count; ++i) {
        int64_t r = 0;
        for (int64_t c = 0; c < k; ++c) {
          const int64_t x = v[static_cast<size_t>(i * k + c)];
          r += (x < 0 ? x + bounds[static_cast<size_t>(c)] : x) * strides[static_cast<size_t>(c)];
        }
        h.values.push_back(static_cast<double>(r));
      }
      row = ex.upload(h);
    } else {
      HostTensor hb, hs;
      hb.dtype = hs.dtype = DType::kInt64;
      hb.sizes = hs.sizes = {k};
      for (int64_t c = 0; c < k; ++c) {
        hb.values.push_back(static_cast<double>(bounds[static_cast<size_t>(c)]));
        hs.values.push_back(static_cast<double>(strides[static_cast<size_t>(c)]));
      }
      bp_tensor_t* b = ex.upload(hb);
      bp_tensor_t* idx = ex.cast(ex.call("reshape", {vt(in[1].t), vl({count, k})}), DType::kInt64);
      idx = wrap_negative(ex, idx, b);
      // 1 in a row with a component below 0 or at/above its bound (after wrapping).
      bp_tensor_t* low = ex.cast(ex.call("lt.Tensor", {vt(idx), vt(ex.scalar(0, DType::kInt64))}), DType::kInt64);
      bp_tensor_t* high = ex.cast(ex.call("ge.Tensor", {vt(idx), vt(b)}), DType::kInt64);
      bp_tensor_t* bad = ex.call("amax", {vt(ex.call("add.Tensor", {vt(low), vt(high)})), vl({1}), vb(true)});
      row = ex.call("sum.dim_IntList", {vt(ex.call("mul.Tensor", {vt(idx), vt(ex.upload(hs))})), vl({1}), vb(true)});
      row = ex.call("where.self",
                    {vt(ex.cast(bad, DType::kBool)), vt(ex.scalar(static_cast<double>(rows), DType::kInt64)), vt(row)});
    }
    bp_tensor_t* data = ex.call("reshape", {vt(in[0].t), vl({rows, row_len})});
    bp_tensor_t* upd = ex.call("reshape", {vt(in[2].t), vl({count, row_len})});
    bp_tensor_t* index = ex.call("expand", {vt(row), vl({count, row_len})});
    bp_tensor_t* y = checked(ex, n, in[1], bounds, [&] { return scatter(ex, n, data, 0, index, upd); });
    return {ex.call("reshape", {vt(y), vl(ds)})};
  };
}

}  // namespace bponnx
