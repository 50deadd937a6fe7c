// index_select: samples and the naive reference (copies of slices).
#include "family.h"

namespace bpc {
namespace {

TensorInput indices(DType d, const std::vector<double>& v) { return tensor_of_values(d, v); }

std::vector<Sample> index_select_samples(const std::string&, DType d, uint64_t seed, bool) {
  Rng rng(seed);
  Domain dom;
  dom.full_int_range = true;
  std::vector<Sample> out;
  auto add = [&](const char* desc, TensorInput self, int64_t dim, TensorInput index, bool error = false,
                 bool quick = true) {
    Sample s;
    s.desc = desc;
    s.quick = quick;
    s.expect_error = error;
    s.args.push_back(Arg::tensor_of(std::move(self)));
    s.args.push_back(Arg::int_of(dim));
    s.args.push_back(Arg::tensor_of(std::move(index)));
    out.push_back(std::move(s));
  };
  add("[5,3] dim 0, repeated indices", make_input(rng, d, {5, 3}, dom), 0, indices(DType::kInt64, {4, 0, 4, 2}));
  add("[2,6,3] dim 1", make_input(rng, d, {2, 6, 3}, dom), 1, indices(DType::kInt64, {5, 1, 0}));
  add("[2,3,4] dim -1, int32 index", make_input(rng, d, {2, 3, 4}, dom), -1, indices(DType::kInt32, {3, 3, 0}));
  add("transposed view [4,5] dim 1", make_input(rng, d, {4, 5}, dom, Layout::kTransposed), 1,
      indices(DType::kInt64, {2, 4}));
  add("strided view [3,8] dim 0", make_input(rng, d, {3, 8}, dom, Layout::kStrided), 0, indices(DType::kInt64, {1, 2}));
  add("0-dim index", make_input(rng, d, {4, 2}, dom), 0, indices(DType::kInt64, {3}));
  out.back().args[2].tensor.t.sizes = {};
  add("no indices", make_input(rng, d, {4, 2}, dom), 1, indices(DType::kInt64, {}));
  add("zero-size self [0,3] dim 1", make_input(rng, d, {0, 3}, dom), 1, indices(DType::kInt64, {2, 0}));
  add("0-dim self", make_input(rng, d, {}, dom), 0, indices(DType::kInt64, {0}));
  {
    std::vector<double> many;
    for (int i = 0; i < 300; ++i) many.push_back(static_cast<double>((i * 37) % 257));
    add("embedding rows [257,33] x 300", make_input(rng, d, {257, 33}, dom), 0, indices(DType::kInt64, many), false,
        false);
  }
  add("error: index 5 out of range for size 5", make_input(rng, d, {5, 2}, dom), 0, indices(DType::kInt64, {1, 5}),
      true);
  add("error: negative index", make_input(rng, d, {5, 2}, dom), 0, indices(DType::kInt64, {-1}), true);
  add("error: dim 2 of a 2-D tensor", make_input(rng, d, {5, 2}, dom), 2, indices(DType::kInt64, {0}), true);
  return out;
}

Expected index_select_reference(const std::string&, const Sample& s) {
  const HostTensor& self = tensor_arg(s, 0);
  const HostTensor& index = tensor_arg(s, 2);
  HostTensor r;
  r.dtype = self.dtype;
  if (self.ndim() == 0) {
    r.values = self.values;
    return single_output(std::move(r));
  }
  const int64_t dim = s.args.at(1).i < 0 ? s.args[1].i + self.ndim() : s.args[1].i;
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < dim; ++k) outer *= self.sizes[static_cast<size_t>(k)];
  for (int64_t k = dim + 1; k < self.ndim(); ++k) inner *= self.sizes[static_cast<size_t>(k)];
  const int64_t size = self.sizes[static_cast<size_t>(dim)], count = index.numel();
  r.sizes = self.sizes;
  r.sizes[static_cast<size_t>(dim)] = count;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < count; ++j) {
      const int64_t i = static_cast<int64_t>(index.values[static_cast<size_t>(j)]);
      for (int64_t k = 0; k < inner; ++k)
        r.values.push_back(self.values[static_cast<size_t>((o * size + i) * inner + k)]);
    }
  }
  return single_output(std::move(r));
}

}  // namespace

void register_indexing_ops(std::vector<OpDef>* defs) {
  defs->push_back({"index_select", index_select_samples, index_select_reference, 0.0});
}

}  // namespace bpc
