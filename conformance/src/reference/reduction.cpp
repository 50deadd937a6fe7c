// Reductions (sum, mean, amax, amin, argmax, prod): samples and reference.
// Float results get a tolerance that grows with the reduced length:
// reduce_len * eps(float32 or float64) * sum|x| on top of rtol/atol.
#include <algorithm>
#include <cmath>

#include "family.h"

namespace bpc {
namespace {

Arg dims_arg(const std::string& op, std::vector<int64_t> dims, bool none) {
  if (op == "argmax") return none ? Arg::none() : Arg::int_of(dims.at(0));
  if (none) return op == "amax" || op == "amin" ? Arg::ints_of({}) : Arg::none();
  return Arg::ints_of(std::move(dims));
}

Sample reduction_sample(const std::string& op, const std::string& desc, TensorInput in,
                        std::vector<int64_t> dims, bool none, bool keepdim, bool quick = true) {
  Sample s;
  s.desc = desc + (keepdim ? ", keepdim" : "");
  s.quick = quick;
  s.args.push_back(Arg::tensor_of(std::move(in)));
  s.args.push_back(dims_arg(op, std::move(dims), none));
  s.args.push_back(Arg::bool_of(keepdim));
  if (op == "sum.dim_IntList" || op == "mean.dim") s.args.push_back(Arg::none());
  return s;
}

std::vector<Sample> reduction_samples(const std::string& op, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  Domain dom;
  dom.ilo = op == "argmax" || op == "amax" || op == "amin" ? -5.0 : -1000.0;  // ties for argmax
  dom.ihi = -dom.ilo;
  const bool argmax = op == "argmax";
  std::vector<Sample> out;
  out.push_back(reduction_sample(op, "all dims [7]", make_input(rng, d, {7}, dom), {}, true, false));
  out.push_back(reduction_sample(op, "[3,5] dim 1", make_input(rng, d, {3, 5}, dom), {1}, false, false));
  out.push_back(reduction_sample(op, "[3,5] dim 0", make_input(rng, d, {3, 5}, dom), {0}, false, true));
  out.push_back(reduction_sample(op, "[2,3,4] dim -1", make_input(rng, d, {2, 3, 4}, dom), {-1}, false, false));
  if (!argmax) {
    out.push_back(reduction_sample(op, "[2,3,4] dims [0,2]", make_input(rng, d, {2, 3, 4}, dom), {0, 2}, false, true));
    out.push_back(reduction_sample(op, "[2,3,4] all dims", make_input(rng, d, {2, 3, 4}, dom), {}, true, false));
  }
  out.push_back(reduction_sample(op, "transposed view [5,7] dim 1",
                                 make_input(rng, d, {5, 7}, dom, Layout::kTransposed), {1}, false, false));
  out.push_back(reduction_sample(op, "strided view [4,9] dim 1",
                                 make_input(rng, d, {4, 9}, dom, Layout::kStrided), {1}, false, false));
  out.push_back(reduction_sample(op, "long [1023] all dims", make_input(rng, d, {1023}, dom), {0}, argmax, false, false));
  out.push_back(reduction_sample(op, "[33,17] dim 0", make_input(rng, d, {33, 17}, dom), {0}, false, false, false));
  out.push_back(reduction_sample(op, "0-dim", make_input(rng, d, {}, dom), {}, true, false));
  if (op == "sum.dim_IntList" || op == "mean.dim") {
    out.push_back(reduction_sample(op, "zero-size (0,) all dims", make_input(rng, d, {0}, dom), {}, true, false));
    out.push_back(reduction_sample(op, "zero-size (1,0,3) dim 1", make_input(rng, d, {1, 0, 3}, dom), {1}, false, false));
  } else {
    out.push_back(reduction_sample(op, "zero-size (1,0,3) dim 2 (non-empty reduction)",
                                   make_input(rng, d, {1, 0, 3}, dom), {2}, false, false));
    Sample e = reduction_sample(op, "error: reduction over an empty dim (0,)", make_input(rng, d, {0}, dom), {0},
                                argmax, false);
    e.expect_error = true;
    out.push_back(e);
  }
  out.push_back(reduction_sample(op, "special values", tensor_of_values(d, special_values(d)), {0}, argmax, false));
  {
    Sample e = reduction_sample(op, "error: dim 2 out of range for [3,5]", make_input(rng, d, {3, 5}, dom), {2},
                                false, false);
    e.expect_error = true;
    out.push_back(e);
  }
  if (op == "mean.dim" && d == DType::kFloat32) {
    Sample e = reduction_sample(op, "error: int32 input (floating dtypes only)",
                                make_input(rng, DType::kInt32, {3, 5}, dom), {1}, false, false);
    e.expect_error = true;
    out.push_back(e);
    // Promotion: with dtype= an integral input is cast first (torch: 1.5 for {1, 2}).
    Sample p = reduction_sample(op, "promotion: int32 input, dtype=float32",
                                make_input(rng, DType::kInt32, {3, 5}, dom), {1}, false, false);
    p.args[3] = Arg::dtype_of(DType::kFloat32);
    out.push_back(p);
  }
  return out;
}

Expected reduction_reference(const std::string& op, const Sample& s) {
  const HostTensor& in = tensor_arg(s, 0);
  const int32_t nd = in.ndim();
  std::vector<bool> reduced(static_cast<size_t>(std::max(nd, 0)), false);
  const Arg& da = s.args.at(1);
  const bool all = da.kind == Arg::kNone || (da.kind == Arg::kIntList && da.ints.empty());
  std::vector<int64_t> dims = da.kind == Arg::kInt ? std::vector<int64_t>{da.i} : da.ints;
  for (int64_t dim : dims) {
    const int64_t w = dim < 0 ? dim + std::max(nd, 1) : dim;
    if (nd > 0) reduced[static_cast<size_t>(w)] = true;
  }
  if (all) std::fill(reduced.begin(), reduced.end(), true);
  const bool keepdim = s.args.at(2).b;
  const bool argmax = op == "argmax";
  DType out_dtype = in.dtype;
  if (op == "sum.dim_IntList" && !dtype_is_float(in.dtype)) out_dtype = DType::kInt64;
  // dtype= (sum, mean): the input is cast to it and the result has it.
  DType compute = in.dtype;
  if (s.args.size() > 3 && s.args[3].kind == Arg::kDType) compute = out_dtype = s.args[3].dtype;
  if (argmax) out_dtype = DType::kInt64;

  std::vector<int64_t> kept_sizes, out_sizes;  // kept_sizes: keepdim shape
  for (int32_t i = 0; i < nd; ++i) {
    kept_sizes.push_back(reduced[static_cast<size_t>(i)] ? 1 : in.sizes[static_cast<size_t>(i)]);
    if (!reduced[static_cast<size_t>(i)]) out_sizes.push_back(in.sizes[static_cast<size_t>(i)]);
    else if (keepdim && !(argmax && all)) out_sizes.push_back(1);
  }
  if (argmax && all && keepdim) out_sizes = kept_sizes;
  const int64_t n_out = numel_of(kept_sizes);
  const int64_t n_in = in.numel();
  const int64_t len = n_out == 0 ? 0 : n_in / n_out;
  std::vector<std::vector<double>> groups(static_cast<size_t>(n_out));
  std::vector<int64_t> idx;
  const std::vector<int64_t> ks = contiguous_strides(kept_sizes);
  for (int64_t k = 0; k < n_in; ++k) {
    unravel(k, in.sizes, &idx);
    int64_t o = 0;
    for (int32_t i = 0; i < nd; ++i) {
      if (!reduced[static_cast<size_t>(i)]) o += idx[static_cast<size_t>(i)] * ks[static_cast<size_t>(i)];
    }
    groups[static_cast<size_t>(o)].push_back(in.values[static_cast<size_t>(k)]);  // row-major within the group
  }
  HostTensor r;
  r.dtype = out_dtype;
  r.sizes = out_sizes;
  std::vector<double> mag;
  for (const std::vector<double>& g : groups) {
    double v = 0.0, m = 0.0;
    if (op == "sum.dim_IntList" || op == "mean.dim") {
      if (dtype_is_float(compute)) {
        for (double x : g) { v += x; m += std::fabs(x); }
        if (op == "mean.dim") { v = g.empty() ? NAN : v / static_cast<double>(g.size()); m /= std::max<size_t>(g.size(), 1); }
      } else {
        uint64_t acc = 0;
        for (double x : g) acc += as_u64(x);
        v = wrap_to(DType::kInt64, acc);
      }
    } else if (op == "amax" || op == "amin") {
      if (g.empty()) return reference_error("empty reduction");
      v = g[0];
      for (double x : g) {
        if (std::isnan(x) || std::isnan(v)) { v = NAN; continue; }
        v = op == "amax" ? std::max(v, x) : std::min(v, x);
      }
    } else {  // argmax: first occurrence, NaN is the maximum
      if (g.empty()) return reference_error("empty reduction");
      size_t best = 0;
      for (size_t i = 1; i < g.size(); ++i) {
        if (std::isnan(g[best])) break;
        if (std::isnan(g[i]) || g[i] > g[best]) best = i;
      }
      v = static_cast<double>(best);
    }
    r.values.push_back(v);
    mag.push_back(m);
  }
  Expected e = single_output(std::move(r));
  if (dtype_is_float(out_dtype)) {
    e.mag.push_back(std::move(mag));
    e.reduce_len = len;
  }
  return e;
}

// prod.dim_int(self, dim, keepdim, dtype): one dim. Values stay small so
// float products stay finite and integer products exact in a double.
std::vector<Sample> prod_samples(const std::string&, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  Domain dom;
  dom.lo = -2.0;
  dom.hi = 2.0;
  dom.ilo = -3.0;
  dom.ihi = 3.0;
  std::vector<Sample> out;
  auto add = [&](const std::string& desc, TensorInput in, int64_t dim, bool keepdim, bool quick = true,
                 bool error = false) {
    Sample s;
    s.desc = desc + (keepdim ? ", keepdim" : "");
    s.quick = quick;
    s.expect_error = error;
    s.args.push_back(Arg::tensor_of(std::move(in)));
    s.args.push_back(Arg::int_of(dim));
    s.args.push_back(Arg::bool_of(keepdim));
    s.args.push_back(Arg::none());
    out.push_back(std::move(s));
  };
  add("[7] dim 0", make_input(rng, d, {7}, dom), 0, false);
  add("[3,5] dim 1", make_input(rng, d, {3, 5}, dom), 1, false);
  add("[3,5] dim 0", make_input(rng, d, {3, 5}, dom), 0, true);
  add("[2,3,4] dim -2", make_input(rng, d, {2, 3, 4}, dom), -2, false);
  add("transposed view [5,7] dim 1", make_input(rng, d, {5, 7}, dom, Layout::kTransposed), 1, false);
  add("strided view [4,9] dim 1", make_input(rng, d, {4, 9}, dom, Layout::kStrided), 1, false);
  add("[33,17] dim 0", make_input(rng, d, {33, 17}, dom), 0, false, false);
  add("0-dim", make_input(rng, d, {}, dom), 0, false);
  add("zero-size (1,0,3) dim 1 (empty product is 1)", make_input(rng, d, {1, 0, 3}, dom), 1, false);
  add("special values", tensor_of_values(d, special_values(d)), 0, false);
  add("error: dim 2 out of range for [3,5]", make_input(rng, d, {3, 5}, dom), 2, false, true, true);
  return out;
}

Expected prod_reference(const std::string&, const Sample& s) {
  const HostTensor& in = tensor_arg(s, 0);
  const int32_t nd = in.ndim();
  const int64_t dim = nd == 0 ? 0 : (s.args.at(1).i < 0 ? s.args[1].i + nd : s.args[1].i);
  const bool keepdim = s.args.at(2).b;
  const bool is_float = dtype_is_float(in.dtype);
  int64_t outer = 1, len = 1, inner = 1;
  HostTensor r;
  r.dtype = is_float ? in.dtype : DType::kInt64;
  for (int32_t i = 0; i < nd; ++i) {
    const int64_t size = in.sizes[static_cast<size_t>(i)];
    (i < dim ? outer : i == dim ? len : inner) *= size;
    if (i != dim) r.sizes.push_back(size);
    else if (keepdim) r.sizes.push_back(1);
  }
  std::vector<double> mag;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < inner; ++k) {
      double v = 1.0;
      uint64_t acc = 1;
      for (int64_t j = 0; j < len; ++j) {
        const double x = in.values[static_cast<size_t>((o * len + j) * inner + k)];
        v *= x;
        acc *= as_u64(x);
      }
      r.values.push_back(is_float ? v : wrap_to(DType::kInt64, acc));
      mag.push_back(std::fabs(v));
    }
  }
  Expected e = single_output(std::move(r));
  if (is_float) {
    // Each multiply may round once in the compute type: len * eps * |product|.
    e.mag.push_back(std::move(mag));
    e.reduce_len = len;
  }
  return e;
}

}  // namespace

void register_reduction_ops(std::vector<OpDef>* defs) {
  for (const char* op : {"sum.dim_IntList", "mean.dim", "amax", "amin", "argmax"}) {
    defs->push_back({op, reduction_samples, reduction_reference, 0.0});
  }
  defs->push_back({"prod.dim_int", prod_samples, prod_reference, 0.0});
}

}  // namespace bpc
