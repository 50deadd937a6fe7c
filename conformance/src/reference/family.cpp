#include "family.h"

#include <stdexcept>

namespace bpc {

std::vector<Arg> inputs_from_shape_case(const ShapeCase& c, const std::vector<DType>& dtypes,
                                        const std::vector<Domain>& domains, Rng& rng) {
  std::vector<Arg> args;
  for (size_t k = 0; k < c.sizes.size(); ++k) {
    TensorInput in;
    if (c.layouts[k] == Layout::kExpanded) {
      in = make_expanded(rng, dtypes[k], c.expand_from[k], c.sizes[k], domains[k]);
    } else {
      in = make_input(rng, dtypes[k], c.sizes[k], domains[k], c.layouts[k]);
    }
    in.cpu_scalar = c.cpu_scalar[k];
    args.push_back(Arg::tensor_of(std::move(in)));
  }
  return args;
}

void special_pairs(DType d, const std::vector<double>& sp, TensorInput* a, TensorInput* b) {
  const int64_t n = static_cast<int64_t>(sp.size());
  a->t.dtype = b->t.dtype = d;
  a->t.sizes = b->t.sizes = {n * n};
  a->t.values.clear();
  b->t.values.clear();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      a->t.values.push_back(sp[static_cast<size_t>(i)]);
      b->t.values.push_back(sp[static_cast<size_t>(j)]);
    }
  }
}

TensorInput tensor_of_values(DType d, const std::vector<double>& values) {
  TensorInput in;
  in.t.dtype = d;
  in.t.sizes = {static_cast<int64_t>(values.size())};
  in.t.values = values;
  return in;
}

const HostTensor& tensor_arg(const Sample& s, size_t i) {
  if (i >= s.args.size() || s.args[i].kind != Arg::kTensor) {
    throw std::logic_error("sample '" + s.desc + "': argument " + std::to_string(i) +
                           " is not a tensor");
  }
  return s.args[i].tensor.t;
}

HostTensor map_elementwise(const std::vector<const HostTensor*>& ins, DType out,
                           const std::function<double(const double*)>& fn) {
  std::vector<int64_t> shape;
  for (const HostTensor* t : ins) {
    std::vector<int64_t> next;
    if (!broadcast_shapes(shape, t->sizes, &next)) {
      throw std::logic_error("reference: inputs do not broadcast");
    }
    shape = next;
  }
  std::vector<HostTensor> b;
  for (const HostTensor* t : ins) b.push_back(broadcast_to(*t, shape));
  HostTensor r;
  r.dtype = out;
  r.sizes = shape;
  const int64_t n = numel_of(shape);
  r.values.resize(static_cast<size_t>(n));
  std::vector<double> xs(ins.size());
  for (int64_t k = 0; k < n; ++k) {
    for (size_t i = 0; i < b.size(); ++i) xs[i] = b[i].values[static_cast<size_t>(k)];
    r.values[static_cast<size_t>(k)] = fn(xs.data());
  }
  return r;
}

double wrap_to(DType d, uint64_t v) {
  switch (d) {
    case DType::kInt8: return static_cast<double>(static_cast<int8_t>(v & 0xffu));
    case DType::kUInt8: return static_cast<double>(static_cast<uint8_t>(v & 0xffu));
    case DType::kInt32: return static_cast<double>(static_cast<int32_t>(v & 0xffffffffu));
    case DType::kInt64: return static_cast<double>(static_cast<int64_t>(v));
    case DType::kBool: return v != 0 ? 1.0 : 0.0;
    default: return static_cast<double>(static_cast<int64_t>(v));
  }
}

Expected single_output(HostTensor t) {
  Expected e;
  e.outputs.push_back(std::move(t));
  return e;
}

Expected reference_error(const std::string& why) {
  Expected e;
  e.error = why;
  return e;
}

}  // namespace bpc
