// gather, scatter.src, scatter_reduce.two: samples and the naive reference
// (one loop over the index's elements, values in double).
#include <algorithm>
#include <cmath>

#include "family.h"

namespace bpc {
namespace {

// An int64 index of `sizes` whose values lie in [0, bound) along `dim`.
// distinct: no two elements of one line along dim share a value (scatter.src
// leaves any one of duplicate writes, so its samples have none).
TensorInput make_index(Rng& rng, const std::vector<int64_t>& sizes, int64_t dim, int64_t bound, bool distinct,
                       DType it = DType::kInt64) {
  TensorInput t;
  t.t.dtype = it;
  t.t.sizes = sizes;
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  t.t.values.assign(static_cast<size_t>(n), 0.0);
  if (n == 0) return t;
  int64_t inner = 1;
  for (size_t k = static_cast<size_t>(dim) + 1; k < sizes.size(); ++k) inner *= sizes[k];
  const int64_t len = sizes.empty() ? 1 : sizes[static_cast<size_t>(dim)];
  for (int64_t line = 0; line < n / len; ++line) {
    const int64_t o = line / inner, i = line % inner;
    std::vector<int64_t> pick(static_cast<size_t>(bound));
    for (int64_t k = 0; k < bound; ++k) pick[static_cast<size_t>(k)] = k;
    for (int64_t k = bound - 1; k > 0; --k)
      std::swap(pick[static_cast<size_t>(k)], pick[static_cast<size_t>(rng.integer(0, k))]);
    for (int64_t j = 0; j < len; ++j) {
      const int64_t v = distinct ? pick[static_cast<size_t>(j)] : rng.integer(0, bound - 1);
      t.t.values[static_cast<size_t>((o * len + j) * inner + i)] = static_cast<double>(v);
    }
  }
  return t;
}

// Row-major offset of `coord` in `sizes`.
int64_t offset_of(const std::vector<int64_t>& sizes, const std::vector<int64_t>& coord) {
  int64_t off = 0;
  for (size_t k = 0; k < sizes.size(); ++k) off = off * sizes[k] + coord[k];
  return off;
}

// Calls f(j, moved) per index element j (row-major): `moved` is the offset in
// a tensor of `sizes` at j's coordinates with dim set to the index value.
template <typename F>
void for_each_index(const HostTensor& index, const std::vector<int64_t>& sizes, int64_t dim, F f) {
  std::vector<int64_t> coord(index.sizes.size(), 0);
  for (int64_t j = 0; j < index.numel(); ++j) {
    std::vector<int64_t> c = coord;
    if (!c.empty()) c[static_cast<size_t>(dim)] = static_cast<int64_t>(index.values[static_cast<size_t>(j)]);
    f(j, sizes.empty() ? 0 : offset_of(sizes, c));
    for (size_t d = coord.size(); d-- > 0;) {
      if (++coord[d] < index.sizes[d]) break;
      coord[d] = 0;
    }
  }
}

int64_t norm_dim(const Sample& s, const HostTensor& self) {
  const int64_t r = std::max<int64_t>(self.ndim(), 1);
  return s.args.at(1).i < 0 ? s.args[1].i + r : s.args[1].i;
}

// A sample: self, dim, index, then src / reduce / include_self as given.
struct Adder {
  std::vector<Sample>* out;
  void operator()(const char* desc, TensorInput self, int64_t dim, TensorInput index, bool error = false) const {
    Sample s;
    s.desc = desc;
    s.expect_error = error;
    s.args.push_back(Arg::tensor_of(std::move(self)));
    s.args.push_back(Arg::int_of(dim));
    s.args.push_back(Arg::tensor_of(std::move(index)));
    out->push_back(std::move(s));
  }
};

std::vector<Sample> gather_samples(const std::string&, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  Domain dom;
  dom.full_int_range = true;
  std::vector<Sample> out;
  const Adder add{&out};
  add("[4,5] dim 0, index [3,5]", make_input(rng, d, {4, 5}, dom), 0, make_index(rng, {3, 5}, 0, 4, false));
  add("[3,6] dim 1, index [2,4] (smaller)", make_input(rng, d, {3, 6}, dom), 1, make_index(rng, {2, 4}, 1, 6, false));
  add("[2,3,4] dim -1, int32 index", make_input(rng, d, {2, 3, 4}, dom), -1,
      make_index(rng, {2, 3, 7}, 2, 4, false, DType::kInt32));
  add("transposed view [4,5] dim 0", make_input(rng, d, {4, 5}, dom, Layout::kTransposed), 0,
      make_index(rng, {6, 5}, 0, 4, false));
  add("strided view [3,8] dim 1", make_input(rng, d, {3, 8}, dom, Layout::kStrided), 1,
      make_index(rng, {3, 2}, 1, 8, false));
  add("empty index [0,5]", make_input(rng, d, {4, 5}, dom), 0, make_index(rng, {0, 5}, 0, 4, false));
  add("0-dim self, 0-dim index", make_input(rng, d, {}, dom), 0, make_index(rng, {}, 0, 1, false));
  add("error: index 4 out of range for size 4", make_input(rng, d, {4, 2}, dom), 0,
      tensor_of_values(DType::kInt64, {1, 4}), true);
  out.back().args[2].tensor.t.sizes = {1, 2};
  add("error: negative index", make_input(rng, d, {4, 2}, dom), 1, tensor_of_values(DType::kInt64, {-1}), true);
  out.back().args[2].tensor.t.sizes = {1, 1};
  add("error: index of rank 1 for a 2-D self", make_input(rng, d, {4, 2}, dom), 0, tensor_of_values(DType::kInt64, {0}),
      true);
  add("error: index larger than self in dim 1", make_input(rng, d, {4, 2}, dom), 0,
      make_index(rng, {2, 3}, 0, 4, false), true);
  add("error: float index", make_input(rng, d, {4, 2}, dom), 0, make_input(rng, DType::kFloat32, {2, 2}, dom), true);
  return out;
}

Expected gather_reference(const std::string&, const Sample& s) {
  const HostTensor& self = tensor_arg(s, 0);
  const HostTensor& index = tensor_arg(s, 2);
  HostTensor r;
  r.dtype = self.dtype;
  r.sizes = index.sizes;
  r.values.resize(static_cast<size_t>(index.numel()));
  for_each_index(index, self.sizes, norm_dim(s, self), [&](int64_t j, int64_t moved) {
    r.values[static_cast<size_t>(j)] = self.values[static_cast<size_t>(moved)];
  });
  return single_output(std::move(r));
}

// scatter.src and scatter_reduce.two share samples; `reduce` adds its args.
std::vector<Sample> scatter_samples_for(DType d, uint64_t seed, const char* reduce) {
  Rng rng(seed);
  Domain dom;
  // Sums and products stay small (int64 results exact in the double
  // reference); int8/uint8 ones still wrap, as torch's do.
  dom.full_int_range = reduce == nullptr || std::string(reduce) == "amax" || std::string(reduce) == "amin";
  const bool distinct = reduce == nullptr;
  std::vector<Sample> out;
  const Adder add{&out};
  auto src = [&](std::vector<int64_t> sizes, Layout l = Layout::kContiguous) {
    out.back().args.push_back(Arg::tensor_of(make_input(rng, d, std::move(sizes), dom, l)));
    if (reduce != nullptr) {
      out.back().args.push_back(Arg::string_of(reduce));
      out.back().args.push_back(Arg::bool_of(true));
    }
  };
  add("[4,5] dim 0, index [3,5]", make_input(rng, d, {4, 5}, dom), 0, make_index(rng, {3, 5}, 0, 4, distinct));
  src({3, 5});
  add("[3,6] dim 1, index [2,4], src [3,5]", make_input(rng, d, {3, 6}, dom), 1,
      make_index(rng, {2, 4}, 1, 6, distinct));
  src({3, 5});
  add("[2,3,4] dim -1, int32 index", make_input(rng, d, {2, 3, 4}, dom), -1,
      make_index(rng, {2, 3, 3}, 2, 4, distinct, DType::kInt32));
  src({2, 3, 3});
  add("transposed self and src", make_input(rng, d, {4, 5}, dom, Layout::kTransposed), 0,
      make_index(rng, {4, 5}, 0, 4, distinct));
  src({4, 5}, Layout::kTransposed);
  add("empty index", make_input(rng, d, {4, 5}, dom), 0, make_index(rng, {0, 5}, 0, 4, distinct));
  src({0, 5});
  if (reduce != nullptr) {
    add("include_self=False, repeated indices", make_input(rng, d, {3, 4}, dom), 0,
        make_index(rng, {5, 4}, 0, 3, false));
    src({5, 4});
    out.back().args.back() = Arg::bool_of(false);
  }
  add("error: index 4 out of range for size 4", make_input(rng, d, {4, 2}, dom), 0,
      tensor_of_values(DType::kInt64, {1, 4}), true);
  out.back().args[2].tensor.t.sizes = {1, 2};
  src({1, 2});
  add("error: index larger than src", make_input(rng, d, {4, 3}, dom), 0, make_index(rng, {2, 3}, 0, 4, distinct),
      true);
  src({1, 3});
  add("error: index of rank 1 for a 2-D self", make_input(rng, d, {4, 2}, dom), 0, tensor_of_values(DType::kInt64, {0}),
      true);
  src({1});
  if (reduce != nullptr) {
    add("error: reduce 'mean'", make_input(rng, d, {4, 2}, dom), 0, make_index(rng, {1, 2}, 0, 4, false), true);
    src({1, 2});
    out.back().args[4] = Arg::string_of("mean");
  }
  return out;
}

std::vector<Sample> scatter_samples(const std::string&, DType d, uint64_t seed, bool) {
  return scatter_samples_for(d, seed, nullptr);
}

std::vector<Sample> scatter_reduce_samples(const std::string&, DType d, uint64_t seed, bool) {
  std::vector<Sample> all;
  for (const char* r : {"sum", "prod", "amax", "amin"}) {
    for (Sample& s : scatter_samples_for(d, hash_name(seed, r), r)) {
      s.desc = std::string(r) + ": " + s.desc;
      all.push_back(std::move(s));
    }
  }
  return all;
}

double combine(DType d, const std::string& r, double a, double b) {
  if ((r == "amax" || r == "amin") && (std::isnan(a) || std::isnan(b))) return NAN;
  if (!dtype_is_float(d)) {
    if (r == "sum") return wrap_to(d, as_u64(a) + as_u64(b));
    if (r == "prod") return wrap_to(d, as_u64(a) * as_u64(b));
  }
  if (r == "sum") return a + b;
  if (r == "prod") return a * b;
  if (r == "amax") return std::max(a, b);
  return std::min(a, b);
}

Expected scatter_reference(const std::string&, const Sample& s) {
  const HostTensor& self = tensor_arg(s, 0);
  const HostTensor& index = tensor_arg(s, 2);
  const HostTensor& src = tensor_arg(s, 3);
  const std::string reduce = s.args.size() > 4 ? s.args[4].s : "";
  const bool include_self = s.args.size() > 5 ? s.args[5].b : true;
  HostTensor r = self;
  std::vector<bool> landed(r.values.size(), false);
  std::vector<double> mag(r.values.size());  // sum of |terms| of each element, for the sums' tolerance
  std::vector<int64_t> terms(r.values.size(), include_self ? 1 : 0);
  for (size_t k = 0; k < mag.size(); ++k) mag[k] = include_self ? std::fabs(r.values[k]) : 0.0;
  for_each_index(index, self.sizes, norm_dim(s, self), [&](int64_t j, int64_t moved) {
    // src at j's coordinates (src may be larger than index).
    int64_t rem = j, so = 0, mul = 1;
    for (size_t k = index.sizes.size(); k-- > 0;) {
      so += (rem % index.sizes[k]) * mul;
      rem /= index.sizes[k];
      mul *= src.sizes[k];
    }
    const double v = src.values[static_cast<size_t>(so)];
    const size_t at = static_cast<size_t>(moved);
    double& o = r.values[at];
    if (reduce.empty() || (!include_self && !landed[at])) {
      o = v;
      mag[at] = std::fabs(v);
      terms[at] = 1;
    } else {
      o = combine(r.dtype, reduce, o, v);
      mag[at] += std::fabs(v);
      ++terms[at];
    }
    landed[at] = true;
  });
  const bool sum = reduce == "sum";
  Expected e = single_output(std::move(r));
  if (sum) {
    e.mag.push_back(std::move(mag));
    e.reduce_len = terms.empty() ? 0 : *std::max_element(terms.begin(), terms.end());
  }
  return e;
}

}  // namespace

void register_gather_scatter_ops(std::vector<OpDef>* defs) {
  defs->push_back({"gather", gather_samples, gather_reference, 0.0});
  defs->push_back({"scatter.src", scatter_samples, scatter_reference, 0.0});
  defs->push_back({"scatter_reduce.two", scatter_reduce_samples, scatter_reference, 0.0});
}

}  // namespace bpc
