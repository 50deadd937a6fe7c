// ONNX operators whose result's size depends on the values: Compress and
// Unique. The values that decide it are read on the host (a device tensor is
// read back, and the session then runs node by node rather than replaying a
// plan, as for NonMaxSuppression); the selected data are gathered on the
// device with index_select.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "bponnx/exec.h"

namespace bponnx {

namespace {
using Outs = std::vector<bp_tensor_t*>;
using Ins = std::vector<NodeInput>;

// Slices in lexicographic order, element by element, with every NaN equal to
// every other and after all numbers (numpy.unique's equal_nan): a strict
// weak order, which `<` on doubles is not once a NaN is in.
struct SliceLess {
  bool operator()(const std::vector<double>& a, const std::vector<double>& b) const {
    for (size_t k = 0; k < a.size() && k < b.size(); ++k) {
      const bool na = std::isnan(a[k]), nb = std::isnan(b[k]);
      if (na != nb) return nb;
      if (!na && a[k] != b[k]) return a[k] < b[k];
    }
    return a.size() < b.size();
  }
};
// The input and the axis the selection runs along: `axis` when the node
// has one, else dim 0 of the input flattened. Throws CallFailed for a 0-dim input.
bp_tensor_t* along_axis_or_flat(Exec& ex, const OnnxNode& n, bp_tensor_t* x, int64_t* axis) {
  const int64_t rank = static_cast<int64_t>(sizes_of(x).size());
  if (rank == 0) throw CallFailed{n.op_type + ": input must have rank >= 1 but is 0-dim"};
  *axis = 0;
  if (n.has("axis")) {
    *axis = norm_axis(n, n.get_int("axis", 0), rank);
    return x;
  }
  return ex.call("reshape", {vt(x), vl({-1})});
}

}  // namespace

void register_selection(MapTable* t) {
  // Compress: the slices along `axis` (of the flattened input without one)
  // whose condition entry is true; entries past the condition's end count as
  // false. The result's size depends on the condition's values: they are
  // read on the host (a device condition is read back, and the session then
  // runs node by node, as for NonMaxSuppression).
  (*t)["Compress"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    int64_t axis = 0;
    bp_tensor_t* x = along_axis_or_flat(ex, n, in[0].t, &axis);
    const std::vector<int64_t> xs = sizes_of(x);
    const int64_t len = xs[static_cast<size_t>(axis)];
    const HostTensor& cond = host_of(in[1]);
    if (cond.ndim() != 1) throw CallFailed{"Compress: condition must be 1-D but has sizes " + sizes_str(cond.sizes)};
    std::vector<int64_t> keep;
    for (int64_t i = 0; i < len && i < cond.numel(); ++i) {
      if (cond.values[static_cast<size_t>(i)] != 0) keep.push_back(i);
    }
    if (keep.empty()) {
      std::vector<int64_t> out = xs;
      out[static_cast<size_t>(axis)] = 0;
      return {ex.full(out, dtype_of(x), 0.0)};
    }
    need_dtype(n.op_type, "index_select", dtype_of(x));
    return {ex.call("index_select", {vt(x), vi(axis), vt(upload_ints(ex, keep))})};
  };
  // Unique (as numpy.unique): the distinct elements (or slices along
  // `axis`), sorted ascending (lexicographically for slices) or in order of
  // first occurrence, with the index of each one's first occurrence, every
  // element's position in Y and the counts. The values are read on the host
  // (the result's size depends on them); Y is gathered from X on the device.
  // NaNs count as equal to each other (numpy's equal_nan) and sort last.
  (*t)["Unique"] = [](Exec& ex, const OnnxNode& n, const Ins& in) -> Outs {
    int64_t axis = 0;
    bp_tensor_t* x = along_axis_or_flat(ex, n, in[0].t, &axis);
    const std::vector<int64_t> xs = sizes_of(x);
    const HostTensor& h = host_of(in[0]);  // row-major: the flattened order too
    // Slice i along `axis`: its elements in row-major order of the other dims.
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= xs[static_cast<size_t>(d)];
    for (size_t d = static_cast<size_t>(axis) + 1; d < xs.size(); ++d) inner *= xs[d];
    const int64_t len = xs[static_cast<size_t>(axis)];
    std::vector<std::vector<double>> slices(static_cast<size_t>(len));
    for (int64_t i = 0; i < len; ++i) {
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t k = 0; k < inner; ++k) {
          slices[static_cast<size_t>(i)].push_back(h.values[static_cast<size_t>((o * len + i) * inner + k)]);
        }
      }
    }
    std::vector<int64_t> first;  // first occurrence of each distinct slice, in order of occurrence
    std::vector<int64_t> inverse(static_cast<size_t>(len));
    std::map<std::vector<double>, int64_t, SliceLess> seen;  // slice -> its position in `first`
    for (int64_t i = 0; i < len; ++i) {
      const auto it = seen.emplace(slices[static_cast<size_t>(i)], static_cast<int64_t>(first.size()));
      if (it.second) first.push_back(i);
      inverse[static_cast<size_t>(i)] = it.first->second;
    }
    std::vector<int64_t> order(first.size());  // Y's entries, as positions in `first`
    for (size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int64_t>(k);
    if (n.get_int("sorted", 1) != 0) {
      std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return SliceLess()(slices[static_cast<size_t>(first[static_cast<size_t>(a)])],
                           slices[static_cast<size_t>(first[static_cast<size_t>(b)])]);
      });
    }
    std::vector<int64_t> rank(order.size()), indices, counts(order.size(), 0);
    for (size_t k = 0; k < order.size(); ++k) {
      rank[static_cast<size_t>(order[k])] = static_cast<int64_t>(k);
      indices.push_back(first[static_cast<size_t>(order[k])]);
    }
    for (int64_t& v : inverse) {
      v = rank[static_cast<size_t>(v)];
      ++counts[static_cast<size_t>(v)];
    }
    need_dtype(n.op_type, "index_select", dtype_of(x));
    Outs outs = {ex.call("index_select", {vt(x), vi(axis), vt(upload_ints(ex, indices))}), upload_ints(ex, indices),
                 upload_ints(ex, inverse), upload_ints(ex, counts)};
    outs.resize(std::min(outs.size(), n.outputs.size()));
    return outs;
  };
}

}  // namespace bponnx
