// Helpers shared by the reference/*.cpp op families.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "../gen.h"
#include "../opdb.h"

namespace bpc {

// Builds a sample's tensor inputs from a standard shape case: input k gets
// dtype dtypes[k] and values from domains[k].
std::vector<Arg> inputs_from_shape_case(const ShapeCase& c, const std::vector<DType>& dtypes,
                                        const std::vector<Domain>& domains, Rng& rng);

// Every (a, b) pair of `specials` as two [n*n] tensors (a repeats, b tiles).
void special_pairs(DType d, const std::vector<double>& specials, TensorInput* a, TensorInput* b);
// One [n] tensor of the values.
TensorInput tensor_of_values(DType d, const std::vector<double>& values);

const HostTensor& tensor_arg(const Sample& s, size_t i);

// Elementwise map with broadcasting over the inputs; fn sees one value per input.
HostTensor map_elementwise(const std::vector<const HostTensor*>& ins, DType out,
                           const std::function<double(const double*)>& fn);

// Wraps an integer result (computed modulo 2^64) to dtype d, as a double.
double wrap_to(DType d, uint64_t v);
inline uint64_t as_u64(double x) { return static_cast<uint64_t>(static_cast<int64_t>(x)); }

// The float dtype integer and bool inputs promote to (PyTorch's default float32).
inline DType float_result(DType d) { return dtype_is_float(d) ? d : DType::kFloat32; }

Expected single_output(HostTensor t);
Expected reference_error(const std::string& why);

}  // namespace bpc
