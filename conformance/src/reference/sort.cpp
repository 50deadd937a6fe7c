// topk: samples and the reference (a full sort of each lane). Lanes hold
// distinct values (a shuffled range, exact in every claimed dtype) so the
// indices are unambiguous; NaN counts as the largest value. Only sorted
// results are checked: sorted=False leaves the order unspecified, as torch.
#include <algorithm>
#include <cmath>
#include <utility>

#include "family.h"

namespace bpc {
namespace {

// A tensor of `sizes` whose lanes along every dim hold distinct values: a
// shuffled range of numel values (halves for floats, from -n/2; integers
// from 0 for uint8, else from -n/2).
TensorInput distinct(Rng& rng, DType d, std::vector<int64_t> sizes, Layout layout = Layout::kContiguous) {
  TensorInput in;
  in.layout = layout;
  in.t.dtype = d;
  in.t.sizes = std::move(sizes);
  const int64_t n = numel_of(in.t.sizes);
  for (int64_t j = 0; j < n; ++j) {
    const double v = d == DType::kUInt8 ? static_cast<double>(j) : static_cast<double>(j - n / 2);
    in.t.values.push_back(dtype_is_float(d) ? v * 0.5 : v);
  }
  for (int64_t j = n - 1; j > 0; --j)
    std::swap(in.t.values[static_cast<size_t>(j)], in.t.values[static_cast<size_t>(rng.integer(0, j))]);
  return in;
}

std::vector<Sample> topk_samples(const std::string&, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  std::vector<Sample> out;
  auto add = [&](const std::string& desc, TensorInput in, int64_t k, int64_t dim, bool largest, bool quick = true,
                 bool error = false) {
    Sample s;
    s.desc = desc + (largest ? "" : ", smallest");
    s.quick = quick;
    s.expect_error = error;
    s.args.push_back(Arg::tensor_of(std::move(in)));
    s.args.push_back(Arg::int_of(k));
    s.args.push_back(Arg::int_of(dim));
    s.args.push_back(Arg::bool_of(largest));
    s.args.push_back(Arg::bool_of(true));
    out.push_back(std::move(s));
  };
  add("[10] k 3", distinct(rng, d, {10}), 3, 0, true);
  add("[4,7] k 2 dim 1", distinct(rng, d, {4, 7}), 2, 1, false);
  add("[5,6] k 5 dim 0 (whole dim)", distinct(rng, d, {5, 6}), 5, 0, true);
  add("[2,3,9] k 4 dim -1", distinct(rng, d, {2, 3, 9}), 4, -1, true);
  add("[2,6,3] k 2 dim 1", distinct(rng, d, {2, 6, 3}), 2, 1, false);
  add("transposed view [6,5] k 3 dim 1", distinct(rng, d, {6, 5}, Layout::kTransposed), 3, 1, true);
  add("k 0", distinct(rng, d, {3, 4}), 0, 1, true);
  add("0-dim k 1", distinct(rng, d, {}), 1, 0, true);
  add("zero-size (0,5) k 2 dim 1", distinct(rng, d, {0, 5}), 2, 1, true);
  add("long rows [2,100] k 10", distinct(rng, d, {2, 100}), 10, 1, true, false);
  if (dtype_is_float(d)) {
    TensorInput nan = tensor_of_values(d, {1.0, NAN, 3.0, 2.0, -INFINITY, INFINITY});
    add("NaN is the largest, with +-inf", nan, 3, 0, true);
    add("NaN is the largest, with +-inf", nan, 3, 0, false);
  }
  add("error: k 8 larger than size 7", distinct(rng, d, {3, 7}), 8, 1, true, true, true);
  add("error: dim 2 of a 2-D tensor", distinct(rng, d, {3, 7}), 1, 2, true, true, true);
  return out;
}

Expected topk_reference(const std::string&, const Sample& s) {
  const HostTensor& in = tensor_arg(s, 0);
  const int64_t k = s.args.at(1).i;
  const int32_t nd = in.ndim();
  const int64_t dim = nd == 0 ? 0 : (s.args.at(2).i < 0 ? s.args[2].i + nd : s.args[2].i);
  const bool largest = s.args.at(3).b;
  int64_t outer = 1, len = 1, inner = 1;
  for (int32_t i = 0; i < nd; ++i) (i < dim ? outer : i == dim ? len : inner) *= in.sizes[static_cast<size_t>(i)];
  HostTensor values, indices;
  values.dtype = in.dtype;
  indices.dtype = DType::kInt64;
  values.sizes = in.sizes;
  if (nd > 0) values.sizes[static_cast<size_t>(dim)] = k;
  indices.sizes = values.sizes;
  values.values.assign(static_cast<size_t>(outer * k * inner), 0.0);
  indices.values.assign(values.values.size(), 0.0);
  // NaN above every number; among equals (only NaNs here) the lower index first.
  auto before = [largest](const std::pair<double, int64_t>& a, const std::pair<double, int64_t>& b) {
    const bool an = std::isnan(a.first), bn = std::isnan(b.first);
    if (an != bn) return largest ? an : bn;
    if (!an && a.first != b.first) return largest ? a.first > b.first : a.first < b.first;
    return a.second < b.second;
  };
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t q = 0; q < inner; ++q) {
      std::vector<std::pair<double, int64_t>> lane;
      for (int64_t j = 0; j < len; ++j) lane.push_back({in.values[static_cast<size_t>((o * len + j) * inner + q)], j});
      std::sort(lane.begin(), lane.end(), before);
      for (int64_t j = 0; j < k; ++j) {
        const size_t at = static_cast<size_t>((o * k + j) * inner + q);
        values.values[at] = lane[static_cast<size_t>(j)].first;
        indices.values[at] = static_cast<double>(lane[static_cast<size_t>(j)].second);
      }
    }
  }
  Expected e;
  e.outputs.push_back(std::move(values));
  e.outputs.push_back(std::move(indices));
  return e;
}

}  // namespace

void register_sort_ops(std::vector<OpDef>* defs) { defs->push_back({"topk", topk_samples, topk_reference, 0.0}); }

}  // namespace bpc
