// Sample generation helpers shared by the op families: a deterministic RNG,
// value ranges per dtype, special values, and the standard shape/layout cases
// (contiguous, broadcast, transposed, strided, offset, expanded, 0-dim,
// zero-size, odd sizes around vector widths).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sample.h"

namespace bpc {

// splitmix64: small, portable, the same sequence on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next();
  double uniform(double lo, double hi);  // [lo, hi)
  int64_t integer(int64_t lo, int64_t hi);  // [lo, hi]

 private:
  uint64_t state_;
};

// A stable 64-bit hash (FNV-1a) for deriving per-case seeds from names.
uint64_t hash_name(uint64_t seed, const std::string& s);

// Where random values come from, for float and integer dtypes.
struct Domain {
  double lo = -4.0, hi = 4.0;        // floats
  double ilo = -100.0, ihi = 100.0;  // integers (clamped to the dtype's range)
  bool full_int_range = false;       // integers: the dtype's whole range
};

// `n` random values of dtype `d` in `dom`, rounded to the dtype.
std::vector<double> random_values(Rng& rng, DType d, int64_t n, const Domain& dom);
// Special values of a dtype: floats +-0, +-inf, NaN, +-1, largest finite,
// a large magnitude, the smallest normal, subnormals; integers 0, +-1, min,
// max; bool 0 and 1.
std::vector<double> special_values(DType d);

int64_t numel_of(const std::vector<int64_t>& sizes);
std::string sizes_str(const std::vector<int64_t>& sizes);

// A tensor input of dtype d with the given sizes and layout, random values.
TensorInput make_input(Rng& rng, DType d, std::vector<int64_t> sizes, const Domain& dom,
                       Layout layout = Layout::kContiguous);
// An expanded input: values of `base` sizes broadcast to `sizes` (the
// logical values are the broadcast ones).
TensorInput make_expanded(Rng& rng, DType d, std::vector<int64_t> base, std::vector<int64_t> sizes,
                          const Domain& dom);
// Broadcasts a row-major tensor to `sizes` (PyTorch rules; caller checks).
HostTensor broadcast_to(const HostTensor& t, const std::vector<int64_t>& sizes);
// Broadcast shape of a and b; false if they do not broadcast.
bool broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                      std::vector<int64_t>* out);

// The standard elementwise shape cases for an `arity`-input operator: each
// case gives per-input sizes and layout. `full` adds the large odd sizes.
struct ShapeCase {
  std::string desc;
  std::vector<std::vector<int64_t>> sizes;  // per input
  std::vector<Layout> layouts;              // per input
  std::vector<std::vector<int64_t>> expand_from;  // per input; empty unless kExpanded
  std::vector<bool> cpu_scalar;             // per input
  bool quick = true;
};
std::vector<ShapeCase> pointwise_shape_cases(int arity, bool full);

// Row-major strides and index helpers.
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes);
// Converts a flat row-major index into a multi-index.
void unravel(int64_t flat, const std::vector<int64_t>& sizes, std::vector<int64_t>* idx);

}  // namespace bpc
