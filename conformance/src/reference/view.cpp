// View operators (view, reshape, permute, transpose, narrow, slice, select,
// expand, squeeze, unsqueeze): samples and reference. The reference maps
// each output element to the input element it must alias.
#include <algorithm>

#include "family.h"

namespace bpc {
namespace {

Sample view_sample(const std::string& desc, TensorInput in, std::vector<Arg> rest, bool error = false) {
  Sample s;
  s.desc = desc;
  s.expect_error = error;
  s.args.push_back(Arg::tensor_of(std::move(in)));
  for (Arg& a : rest) s.args.push_back(std::move(a));
  return s;
}

std::vector<Sample> view_samples(const std::string& op, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  Domain dom;
  dom.full_int_range = true;
  auto in = [&](std::vector<int64_t> sizes, Layout l = Layout::kContiguous) { return make_input(rng, d, sizes, dom, l); };
  using A = Arg;
  std::vector<Sample> out;
  if (op == "view" || op == "reshape") {
    out.push_back(view_sample("[2,3,4] -> [6,4]", in({2, 3, 4}), {A::ints_of({6, 4})}));
    out.push_back(view_sample("[2,3,4] -> [-1]", in({2, 3, 4}), {A::ints_of({-1})}));
    out.push_back(view_sample("[12] -> [3,-1,2]", in({12}), {A::ints_of({3, -1, 2})}));
    out.push_back(view_sample("0-dim -> [1]", in({}), {A::ints_of({1})}));
    out.push_back(view_sample("zero-size (1,0,3) -> [0,5]", in({1, 0, 3}), {A::ints_of({0, 5})}));
    out.push_back(view_sample("offset view [3,5] -> [15]", in({3, 5}, Layout::kOffset), {A::ints_of({15})}));
    if (op == "reshape") {
      out.push_back(view_sample("transposed [4,5] -> [20] (copies)", in({4, 5}, Layout::kTransposed), {A::ints_of({20})}));
    } else {
      out.push_back(view_sample("error: transposed [4,5] -> [20] (strides do not allow a view)",
                                in({4, 5}, Layout::kTransposed), {A::ints_of({20})}, true));
    }
    out.push_back(view_sample("error: [2,3] -> [4,2]", in({2, 3}), {A::ints_of({4, 2})}, true));
  } else if (op == "permute") {
    out.push_back(view_sample("[2,3,4] dims [2,0,1]", in({2, 3, 4}), {A::ints_of({2, 0, 1})}));
    out.push_back(view_sample("[2,3,4] dims [-1,0,1]", in({2, 3, 4}), {A::ints_of({-1, 0, 1})}));
    out.push_back(view_sample("transposed view [5,7] dims [1,0]", in({5, 7}, Layout::kTransposed), {A::ints_of({1, 0})}));
    out.push_back(view_sample("0-dim dims []", in({}), {A::ints_of({})}));
    out.push_back(view_sample("error: dims [0,0,1] repeat", in({2, 3, 4}), {A::ints_of({0, 0, 1})}, true));
  } else if (op == "transpose.int") {
    out.push_back(view_sample("[2,3,4] dims 0, 2", in({2, 3, 4}), {A::int_of(0), A::int_of(2)}));
    out.push_back(view_sample("[2,3,4] dims -1, -2", in({2, 3, 4}), {A::int_of(-1), A::int_of(-2)}));
    out.push_back(view_sample("strided view [4,9] dims 0, 1", in({4, 9}, Layout::kStrided), {A::int_of(0), A::int_of(1)}));
    out.push_back(view_sample("[7] dims 0, 0", in({7}), {A::int_of(0), A::int_of(0)}));
    out.push_back(view_sample("error: dim 3 out of range", in({2, 3}), {A::int_of(0), A::int_of(3)}, true));
  } else if (op == "narrow") {
    out.push_back(view_sample("[5,4] dim 0 start 1 length 3", in({5, 4}), {A::int_of(0), A::int_of(1), A::int_of(3)}));
    out.push_back(view_sample("[5,4] dim -1 start 2 length 2", in({5, 4}), {A::int_of(-1), A::int_of(2), A::int_of(2)}));
    out.push_back(view_sample("length 0", in({5, 4}), {A::int_of(1), A::int_of(4), A::int_of(0)}));
    out.push_back(view_sample("transposed view [6,3]", in({6, 3}, Layout::kTransposed), {A::int_of(0), A::int_of(2), A::int_of(3)}));
    out.push_back(view_sample("error: start 3 + length 3 > 5", in({5, 4}), {A::int_of(0), A::int_of(3), A::int_of(3)}, true));
  } else if (op == "slice.Tensor") {
    out.push_back(view_sample("[10] 1:8:3", in({10}), {A::int_of(0), A::int_of(1), A::int_of(8), A::int_of(3)}));
    out.push_back(view_sample("[10] -4:None", in({10}), {A::int_of(0), A::int_of(-4), A::none(), A::int_of(1)}));
    out.push_back(view_sample("[10] None:100 (end clamped)", in({10}), {A::int_of(0), A::none(), A::int_of(100), A::int_of(1)}));
    out.push_back(view_sample("[4,6] dim 1 step 2", in({4, 6}), {A::int_of(1), A::int_of(0), A::int_of(6), A::int_of(2)}));
    out.push_back(view_sample("[10] 7:3 (empty)", in({10}), {A::int_of(0), A::int_of(7), A::int_of(3), A::int_of(1)}));
    out.push_back(view_sample("error: step 0", in({10}), {A::int_of(0), A::int_of(0), A::int_of(5), A::int_of(0)}, true));
  } else if (op == "select.int") {
    out.push_back(view_sample("[3,4] dim 0 index 1", in({3, 4}), {A::int_of(0), A::int_of(1)}));
    out.push_back(view_sample("[3,4] dim 1 index -1", in({3, 4}), {A::int_of(1), A::int_of(-1)}));
    out.push_back(view_sample("[5] -> 0-dim", in({5}), {A::int_of(0), A::int_of(4)}));
    out.push_back(view_sample("transposed view [5,7] dim 1 index 3", in({5, 7}, Layout::kTransposed), {A::int_of(1), A::int_of(3)}));
    out.push_back(view_sample("error: index 4 out of range for size 3", in({3, 4}), {A::int_of(0), A::int_of(4)}, true));
  } else if (op == "expand") {
    out.push_back(view_sample("[3,1] -> [3,4]", in({3, 1}), {A::ints_of({3, 4})}));
    out.push_back(view_sample("[4] -> [2,3,4]", in({4}), {A::ints_of({2, 3, 4})}));
    out.push_back(view_sample("[3,1] -> [-1,5]", in({3, 1}), {A::ints_of({-1, 5})}));
    out.push_back(view_sample("0-dim -> [2,2]", in({}), {A::ints_of({2, 2})}));
    out.push_back(view_sample("[1] -> [0]", in({1}), {A::ints_of({0})}));
    out.push_back(view_sample("error: [3] -> [4]", in({3}), {A::ints_of({4})}, true));
  } else if (op == "squeeze.dim") {
    out.push_back(view_sample("[3,1,4] dim 1", in({3, 1, 4}), {A::int_of(1)}));
    out.push_back(view_sample("[3,1,4] dim 0 (size 3: unchanged)", in({3, 1, 4}), {A::int_of(0)}));
    out.push_back(view_sample("[3,1,4] dim -2", in({3, 1, 4}), {A::int_of(-2)}));
    out.push_back(view_sample("0-dim dim 0", in({}), {A::int_of(0)}));
    out.push_back(view_sample("error: dim 3 out of range", in({3, 1, 4}), {A::int_of(3)}, true));
  } else if (op == "unsqueeze") {
    out.push_back(view_sample("[3,4] dim 0", in({3, 4}), {A::int_of(0)}));
    out.push_back(view_sample("[3,4] dim 2", in({3, 4}), {A::int_of(2)}));
    out.push_back(view_sample("[3,4] dim -1", in({3, 4}), {A::int_of(-1)}));
    out.push_back(view_sample("0-dim dim 0", in({}), {A::int_of(0)}));
    out.push_back(view_sample("error: dim 3 out of range", in({3, 4}), {A::int_of(3)}, true));
  }
  return out;
}

int64_t wrap(int64_t dim, int64_t nd) { return dim < 0 ? dim + std::max<int64_t>(nd, 1) : dim; }

// Output sizes plus, per output element, the flat index of the input element.
Expected gather(const HostTensor& in, const std::vector<int64_t>& out_sizes,
                const std::function<std::vector<int64_t>(const std::vector<int64_t>&)>& src_index) {
  HostTensor r;
  r.dtype = in.dtype;
  r.sizes = out_sizes;
  const std::vector<int64_t> st = contiguous_strides(in.sizes);
  std::vector<int64_t> idx;
  for (int64_t k = 0; k < numel_of(out_sizes); ++k) {
    unravel(k, out_sizes, &idx);
    const std::vector<int64_t> si = src_index(idx);
    int64_t off = 0;
    for (size_t i = 0; i < si.size(); ++i) off += si[i] * st[i];
    r.values.push_back(in.values[static_cast<size_t>(off)]);
  }
  return single_output(std::move(r));
}

Expected view_reference(const std::string& op, const Sample& s) {
  const HostTensor& in = tensor_arg(s, 0);
  const int64_t nd = in.ndim();
  if (op == "view" || op == "reshape") {
    std::vector<int64_t> sz = s.args.at(1).ints;
    int64_t known = 1, infer = -1;
    for (size_t i = 0; i < sz.size(); ++i) {
      if (sz[i] == -1) infer = static_cast<int64_t>(i);
      else known *= sz[i];
    }
    if (infer >= 0) sz[static_cast<size_t>(infer)] = known == 0 ? 0 : in.numel() / known;
    HostTensor r = in;
    r.sizes = sz;
    return single_output(std::move(r));
  }
  if (op == "permute" || op == "transpose.int") {
    std::vector<int64_t> perm(static_cast<size_t>(nd));
    for (int64_t i = 0; i < nd; ++i) perm[static_cast<size_t>(i)] = i;
    if (op == "permute") {
      for (size_t i = 0; i < perm.size(); ++i) perm[i] = wrap(s.args.at(1).ints[i], nd);
    } else if (nd > 0) {
      std::swap(perm[static_cast<size_t>(wrap(s.args.at(1).i, nd))], perm[static_cast<size_t>(wrap(s.args.at(2).i, nd))]);
    }
    std::vector<int64_t> out_sizes;
    for (int64_t p : perm) out_sizes.push_back(in.sizes[static_cast<size_t>(p)]);
    return gather(in, out_sizes, [perm](const std::vector<int64_t>& o) {
      std::vector<int64_t> si(o.size());
      for (size_t i = 0; i < o.size(); ++i) si[static_cast<size_t>(perm[i])] = o[i];
      return si;
    });
  }
  if (op == "narrow" || op == "slice.Tensor") {
    const int64_t dim = wrap(s.args.at(1).i, nd);
    const int64_t size = in.sizes[static_cast<size_t>(dim)];
    int64_t start = 0, len = 0, step = 1;
    if (op == "narrow") {
      start = wrap(s.args.at(2).i, size + 1 > 1 ? size : 1);
      len = s.args.at(3).i;
    } else {
      const Arg& a = s.args.at(2);
      const Arg& b = s.args.at(3);
      step = s.args.at(4).i;
      int64_t st = a.kind == Arg::kInt ? a.i : 0;
      int64_t en = b.kind == Arg::kInt ? b.i : size;
      if (st < 0) st += size;
      if (en < 0) en += size;
      st = std::clamp<int64_t>(st, 0, size);
      en = std::clamp<int64_t>(en, st, size);
      start = st;
      len = (en - st + step - 1) / step;
    }
    std::vector<int64_t> out_sizes = in.sizes;
    out_sizes[static_cast<size_t>(dim)] = len;
    return gather(in, out_sizes, [dim, start, step](const std::vector<int64_t>& o) {
      std::vector<int64_t> si = o;
      si[static_cast<size_t>(dim)] = start + o[static_cast<size_t>(dim)] * step;
      return si;
    });
  }
  if (op == "select.int") {
    const int64_t dim = wrap(s.args.at(1).i, nd);
    int64_t index = s.args.at(2).i;
    if (index < 0) index += in.sizes[static_cast<size_t>(dim)];
    std::vector<int64_t> out_sizes = in.sizes;
    out_sizes.erase(out_sizes.begin() + dim);
    return gather(in, out_sizes, [dim, index](const std::vector<int64_t>& o) {
      std::vector<int64_t> si = o;
      si.insert(si.begin() + dim, index);
      return si;
    });
  }
  if (op == "expand") {
    std::vector<int64_t> sz = s.args.at(1).ints;
    const size_t lead = sz.size() - in.sizes.size();
    for (size_t i = 0; i < in.sizes.size(); ++i) {
      if (sz[lead + i] == -1) sz[lead + i] = in.sizes[i];
    }
    return single_output(broadcast_to(in, sz));
  }
  if (op == "squeeze.dim" || op == "unsqueeze") {
    HostTensor r = in;
    if (op == "squeeze.dim") {
      const int64_t dim = wrap(s.args.at(1).i, nd);
      if (nd > 0 && in.sizes[static_cast<size_t>(dim)] == 1) r.sizes.erase(r.sizes.begin() + dim);
    } else {
      int64_t dim = s.args.at(1).i;
      if (dim < 0) dim += nd + 1;
      r.sizes.insert(r.sizes.begin() + dim, 1);
    }
    return single_output(std::move(r));
  }
  return reference_error("no reference for " + op);
}

}  // namespace

void register_view_ops(std::vector<OpDef>* defs) {
  for (const char* op : {"view", "reshape", "permute", "transpose.int", "narrow", "slice.Tensor", "select.int", "expand",
                         "squeeze.dim", "unsqueeze"}) {
    defs->push_back({op, view_samples, view_reference, 0.0});
  }
}

}  // namespace bpc
