// copy_, fill_.Scalar, cat, to.dtype, clone, contiguous: samples and reference.
#include <cmath>

#include "family.h"

namespace bpc {
namespace {

// Values every dtype converts to without undefined behaviour: small
// non-negative integers (uint8 and bool too), halves for floats.
Domain conv_domain(DType from) {
  Domain d;
  d.lo = 0.0; d.hi = 100.0;
  d.ilo = 0.0; d.ihi = 100.0;
  (void)from;
  return d;
}

double convert(DType to, double v) { return dtype_round(to, v); }

TensorInput make_self(Rng& rng, DType d, std::vector<int64_t> sizes, Layout layout) {
  Domain dom;
  return make_input(rng, d, std::move(sizes), dom, layout);
}

std::vector<Sample> copy_samples(const std::string&, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  Domain dom;
  dom.full_int_range = true;
  std::vector<Sample> out;
  auto add = [&](const std::string& desc, TensorInput self, TensorInput src, bool error = false) {
    Sample s;
    s.desc = desc;
    s.expect_error = error;
    s.written_arg = 0;
    s.args.push_back(Arg::tensor_of(std::move(self)));
    s.args.push_back(Arg::tensor_of(std::move(src)));
    s.args.push_back(Arg::bool_of(false));
    out.push_back(std::move(s));
  };
  add("same dtype [3,4]", make_self(rng, d, {3, 4}, Layout::kContiguous), make_input(rng, d, {3, 4}, dom));
  add("src transposed view [5,7]", make_self(rng, d, {5, 7}, Layout::kContiguous),
      make_input(rng, d, {5, 7}, dom, Layout::kTransposed));
  add("into a transposed view of self [5,7]", make_self(rng, d, {5, 7}, Layout::kTransposed),
      make_input(rng, d, {5, 7}, dom));
  add("into a strided view of self [4,9]", make_self(rng, d, {4, 9}, Layout::kStrided),
      make_input(rng, d, {4, 9}, dom, Layout::kOffset));
  add("src broadcast [4] -> [3,4]", make_self(rng, d, {3, 4}, Layout::kContiguous), make_input(rng, d, {4}, dom));
  add("[1023]", make_self(rng, d, {1023}, Layout::kContiguous), make_input(rng, d, {1023}, dom));
  add("0-dim", make_self(rng, d, {}, Layout::kContiguous), make_input(rng, d, {}, dom));
  add("zero-size (1,0,3)", make_self(rng, d, {1, 0, 3}, Layout::kContiguous), make_input(rng, d, {1, 0, 3}, dom));
  add("special values", make_self(rng, d, {static_cast<int64_t>(special_values(d).size())}, Layout::kContiguous),
      tensor_of_values(d, special_values(d)));
  const DType other = d == DType::kFloat32 ? DType::kInt32 : DType::kFloat32;
  add(std::string("convert ") + dtype_name(other) + " -> " + dtype_name(d), make_self(rng, d, {3, 5}, Layout::kContiguous),
      make_input(rng, other, {3, 5}, conv_domain(other)));
  add(std::string("convert ") + dtype_name(d) + " -> " + dtype_name(other), make_self(rng, other, {3, 5}, Layout::kContiguous),
      make_input(rng, d, {3, 5}, conv_domain(d)));
  add("error: src [2,3] does not broadcast to self [3,4]", make_self(rng, d, {3, 4}, Layout::kContiguous),
      make_input(rng, d, {2, 3}, dom), true);
  return out;
}

Expected copy_reference(const std::string&, const Sample& s) {
  const HostTensor& self = tensor_arg(s, 0);
  HostTensor r = broadcast_to(tensor_arg(s, 1), self.sizes);
  r.dtype = self.dtype;
  for (double& v : r.values) v = convert(self.dtype, v);
  return single_output(std::move(r));
}

std::vector<Sample> fill_samples(const std::string&, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  std::vector<Sample> out;
  auto add = [&](const std::string& desc, TensorInput self, Arg value) {
    Sample s;
    s.desc = desc;
    s.written_arg = 0;
    s.args.push_back(Arg::tensor_of(std::move(self)));
    s.args.push_back(std::move(value));
    out.push_back(std::move(s));
  };
  const Arg v = d == DType::kBool ? Arg::bool_of(true) : dtype_is_float(d) ? Arg::double_of(2.5) : Arg::int_of(7);
  add("[3,4]", make_self(rng, d, {3, 4}, Layout::kContiguous), v);
  add("transposed view [5,7]", make_self(rng, d, {5, 7}, Layout::kTransposed), v);
  add("strided view [4,9]", make_self(rng, d, {4, 9}, Layout::kStrided), v);
  add("[1023]", make_self(rng, d, {1023}, Layout::kContiguous), v);
  add("0-dim", make_self(rng, d, {}, Layout::kContiguous), v);
  add("zero-size (1,0,3)", make_self(rng, d, {1, 0, 3}, Layout::kContiguous), v);
  add("integer value 3", make_self(rng, d, {2, 3}, Layout::kContiguous), d == DType::kBool ? Arg::bool_of(false) : Arg::int_of(3));
  if (dtype_is_float(d)) {
    add("NaN", make_self(rng, d, {2, 3}, Layout::kContiguous), Arg::double_of(NAN));
    add("-inf", make_self(rng, d, {2, 3}, Layout::kContiguous), Arg::double_of(-INFINITY));
    add("1/3 (rounded to the dtype)", make_self(rng, d, {2, 3}, Layout::kContiguous), Arg::double_of(1.0 / 3.0));
  }
  return out;
}

Expected fill_reference(const std::string&, const Sample& s) {
  HostTensor r = tensor_arg(s, 0);
  const Arg& v = s.args.at(1);
  const double x = v.kind == Arg::kDouble ? v.d : v.kind == Arg::kBool ? (v.b ? 1.0 : 0.0) : static_cast<double>(v.i);
  for (double& e : r.values) e = convert(r.dtype, x);
  return single_output(std::move(r));
}

std::vector<Sample> cat_samples(const std::string&, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  Domain dom;
  dom.full_int_range = true;
  std::vector<Sample> out;
  auto add = [&](const std::string& desc, std::vector<TensorInput> ins, int64_t dim, bool error = false) {
    Sample s;
    s.desc = desc;
    s.expect_error = error;
    Arg list;
    list.kind = Arg::kTensorList;
    list.list = std::move(ins);
    s.args.push_back(std::move(list));
    s.args.push_back(Arg::int_of(dim));
    out.push_back(std::move(s));
  };
  add("[2,3] + [4,3] dim 0", {make_input(rng, d, {2, 3}, dom), make_input(rng, d, {4, 3}, dom)}, 0);
  add("[2,3] + [2,5] dim 1", {make_input(rng, d, {2, 3}, dom), make_input(rng, d, {2, 5}, dom)}, 1);
  add("three inputs dim -1, one transposed", {make_input(rng, d, {3, 2}, dom), make_input(rng, d, {3, 4}, dom, Layout::kTransposed),
                                          make_input(rng, d, {3, 1}, dom)}, -1);
  add("with a zero-size [0,3]", {make_input(rng, d, {2, 3}, dom), make_input(rng, d, {0, 3}, dom)}, 0);
  add("legacy empty 1-D (0,) is skipped", {make_input(rng, d, {2, 3}, dom), make_input(rng, d, {0}, dom)}, 0);
  add("single input [17]", {make_input(rng, d, {17}, dom)}, 0);
  add("error: [2,3] + [2,4] dim 0", {make_input(rng, d, {2, 3}, dom), make_input(rng, d, {2, 4}, dom)}, 0, true);
  return out;
}

Expected cat_reference(const std::string&, const Sample& s) {
  std::vector<const HostTensor*> ins;
  for (const TensorInput& t : s.args.at(0).list) {
    if (t.t.ndim() == 1 && t.t.sizes[0] == 0) continue;  // legacy empty
    ins.push_back(&t.t);
  }
  if (ins.empty()) return reference_error("cat of nothing");
  const int32_t nd = ins[0]->ndim();
  int64_t dim = s.args.at(1).i;
  if (dim < 0) dim += nd;
  HostTensor r;
  r.dtype = ins[0]->dtype;
  r.sizes = ins[0]->sizes;
  r.sizes[static_cast<size_t>(dim)] = 0;
  for (const HostTensor* t : ins) r.sizes[static_cast<size_t>(dim)] += t->sizes[static_cast<size_t>(dim)];
  int64_t outer = 1;
  for (int64_t i = 0; i < dim; ++i) outer *= r.sizes[static_cast<size_t>(i)];
  for (int64_t o = 0; o < outer; ++o) {
    for (const HostTensor* t : ins) {
      const int64_t chunk = outer == 0 ? 0 : t->numel() / outer;
      for (int64_t k = 0; k < chunk; ++k) r.values.push_back(t->values[static_cast<size_t>(o * chunk + k)]);
    }
  }
  return single_output(std::move(r));
}

std::vector<Sample> to_samples(const std::string&, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  std::vector<Sample> out;
  auto add = [&](const std::string& desc, TensorInput in, DType to, bool copy) {
    Sample s;
    s.desc = desc;
    s.args.push_back(Arg::tensor_of(std::move(in)));
    s.args.push_back(Arg::dtype_of(to));
    s.args.push_back(Arg::bool_of(false));
    s.args.push_back(Arg::bool_of(copy));
    out.push_back(std::move(s));
  };
  const Domain dom = conv_domain(d);
  for (DType to : {DType::kFloat32, DType::kInt32, DType::kBool, DType::kFloat16, d}) {
    add(std::string("[3,5] to ") + dtype_name(to), make_input(rng, d, {3, 5}, dom), to, false);
  }
  add("transposed view to float32, copy=True", make_input(rng, d, {4, 6}, dom, Layout::kTransposed), DType::kFloat32, true);
  add("zero-size (1,0,3) to int64", make_input(rng, d, {1, 0, 3}, dom), DType::kInt64, false);
  add("special values to float64", tensor_of_values(d, special_values(d)), DType::kFloat64, false);
  return out;
}

Expected to_reference(const std::string&, const Sample& s) {
  HostTensor r = tensor_arg(s, 0);
  r.dtype = s.args.at(1).dtype;
  for (double& v : r.values) v = convert(r.dtype, v);
  return single_output(std::move(r));
}

std::vector<Sample> clone_samples(const std::string&, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  Domain dom;
  dom.full_int_range = true;
  std::vector<Sample> out;
  auto add = [&](const std::string& desc, TensorInput in) {
    Sample s;
    s.desc = desc;
    s.args.push_back(Arg::tensor_of(std::move(in)));
    out.push_back(std::move(s));
  };
  add("contiguous [3,4]", make_input(rng, d, {3, 4}, dom));
  add("transposed view [5,7]", make_input(rng, d, {5, 7}, dom, Layout::kTransposed));
  add("strided view [4,9]", make_input(rng, d, {4, 9}, dom, Layout::kStrided));
  add("expanded view [1,6] -> [4,6]", make_expanded(rng, d, {1, 6}, {4, 6}, dom));
  add("0-dim", make_input(rng, d, {}, dom));
  add("zero-size (1,0,3)", make_input(rng, d, {1, 0, 3}, dom));
  add("special values", tensor_of_values(d, special_values(d)));
  return out;
}

Expected clone_reference(const std::string&, const Sample& s) { return single_output(tensor_arg(s, 0)); }

}  // namespace

void register_copy_ops(std::vector<OpDef>* defs) {
  defs->push_back({"copy_", copy_samples, copy_reference, 0.0});
  defs->push_back({"fill_.Scalar", fill_samples, fill_reference, 0.0});
  defs->push_back({"cat", cat_samples, cat_reference, 0.0});
  defs->push_back({"to.dtype", to_samples, to_reference, 0.0});
  defs->push_back({"clone", clone_samples, clone_reference, 0.0});
  defs->push_back({"contiguous", clone_samples, clone_reference, 0.0});
}

}  // namespace bpc
