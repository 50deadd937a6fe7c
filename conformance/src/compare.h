// Numerics: does an actual output match the reference?
//
//   |actual - expected| <= atol + rtol * |expected|   (+ reduction term)
//
// with per-dtype defaults (float32 rtol 1.3e-6 atol 1e-5, float64 1e-7/1e-7,
// float16 1e-3/1e-5, bfloat16 1.6e-2/1e-5; integers and bool exact), NaN
// matching NaN, infinities matching exactly. Math functions carry a ULP
// bound instead for float32/float64 (OpenCL C's style: exp 3 ulp ...), measured
// against the unrounded double reference. Reductions and matmul add
// reduce_len * eps(accumulation dtype) * sum|terms| to the bound.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sample.h"

namespace bpc {

struct Tolerance {
  double rtol = 0.0;
  double atol = 0.0;
  double ulp = 0.0;        // > 0: ULP criterion (float32/float64 outputs only)
  double reduce_eps = 0.0; // per-element extra bound factor: reduce_len * eps_acc
};

// Default rtol/atol of a dtype (zero for integers and bool).
Tolerance default_tolerance(DType d);
// Machine epsilon of the dtype a conforming backend accumulates `d` in
// (float32 for float16/bfloat16, as PyTorch does).
double accumulation_epsilon(DType d);

struct CompareResult {
  bool ok = true;
  std::string message;     // why not, when !ok (shape, dtype, values)
  int64_t num_bad = 0;
  int64_t worst_index = -1;  // flat row-major index of the worst element
  double expected = 0.0;     // at worst_index (rounded to the dtype)
  double actual = 0.0;
  double max_abs = 0.0;      // over all elements with finite expected values
  double max_rel = 0.0;
  double max_ulp = 0.0;      // when a ULP bound applied
};

// Compares `actual` (decoded values, row-major) with `expected`. `mag` may be
// empty. Does not check sizes or dtype: the runner does.
CompareResult compare_values(const HostTensor& expected, const std::vector<double>& mag,
                             const std::vector<double>& actual, const Tolerance& tol);

// A value of dtype `d` as a failure block prints it: integers and bool as
// integers ("-1779135520"), floats with 9 significant digits.
std::string fmt_value(DType d, double v);

// The failure message of a comparison that is not ok: "3 of 8 elements
// outside tolerance; worst at [1, 0]: expected 7, got 9 (max abs 2, max rel
// 0.285714286)", with ", max ulp 4 > 3" only for float outputs compared by ULP.
std::string mismatch_message(const CompareResult& cmp, const HostTensor& expected, const Tolerance& tol);

}  // namespace bpc
