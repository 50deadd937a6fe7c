#include "compare.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "gen.h"

namespace bpc {

Tolerance default_tolerance(DType d) {
  Tolerance t;
  switch (d) {
    case DType::kFloat32: t.rtol = 1.3e-6; t.atol = 1e-5; break;
    case DType::kFloat64: t.rtol = 1e-7; t.atol = 1e-7; break;
    case DType::kFloat16: t.rtol = 1e-3; t.atol = 1e-5; break;
    case DType::kBFloat16: t.rtol = 1.6e-2; t.atol = 1e-5; break;
    default: break;  // exact
  }
  return t;
}

double accumulation_epsilon(DType d) {
  if (d == DType::kFloat64) return dtype_epsilon(DType::kFloat64);
  return dtype_epsilon(DType::kFloat32);
}

namespace {

// How far outside its bound an element is: <= 1 passes.
struct ElementCheck {
  bool ok;
  double ratio;  // error / bound (inf when a special value mismatches)
  double ulp;    // ULP error when measured
};

ElementCheck check_element(DType d, double e_raw, double e, double a, double mag,
                           const Tolerance& tol) {
  if (std::isnan(e)) return {std::isnan(a), std::isnan(a) ? 0.0 : INFINITY, 0.0};
  if (std::isinf(e)) return {a == e, a == e ? 0.0 : INFINITY, 0.0};
  if (std::isnan(a) || std::isinf(a)) return {false, INFINITY, 0.0};
  const double abs_err = std::fabs(a - e);
  if (!dtype_is_float(d)) return {abs_err == 0.0, abs_err == 0.0 ? 0.0 : INFINITY, 0.0};
  const bool full_precision = d == DType::kFloat32 || d == DType::kFloat64;
  if (tol.ulp > 0.0 && full_precision) {
    const double err = std::fabs(a - e_raw);
    const double ulps = err / dtype_ulp(d, e_raw);
    // A result in the subnormal range may be flushed to zero (OpenCL's FTZ allowance).
    const bool ftz = std::fabs(e_raw) < dtype_min_normal(d) && err <= dtype_min_normal(d);
    const bool ok = ulps <= tol.ulp * (1.0 + 1e-9) || ftz;
    return {ok, ftz ? 0.0 : ulps / tol.ulp, ulps};
  }
  double bound = tol.atol + tol.rtol * std::fabs(e) + tol.reduce_eps * mag;
  if (!full_precision) {
    // float16/bfloat16: one unit of the output format around the exact value
    // always passes (a correctly rounded result after double rounding).
    const double one_ulp = dtype_ulp(d, e_raw);
    if (std::fabs(a - e_raw) <= one_ulp) return {true, 0.0, 0.0};
  }
  if (bound <= 0.0) return {abs_err == 0.0, abs_err == 0.0 ? 0.0 : INFINITY, 0.0};
  return {abs_err <= bound, abs_err / bound, 0.0};
}

}  // namespace

CompareResult compare_values(const HostTensor& expected, const std::vector<double>& mag,
                             const std::vector<double>& actual, const Tolerance& tol) {
  CompareResult r;
  const size_t n = expected.values.size();
  if (actual.size() != n) {
    r.ok = false;
    std::ostringstream os;
    os << "expected " << n << " elements, got " << actual.size();
    r.message = os.str();
    return r;
  }
  double worst_ratio = -1.0;
  bool worst_ok = true;
  for (size_t k = 0; k < n; ++k) {
    const double e_raw = expected.values[k];
    const double e = dtype_round(expected.dtype, e_raw);
    const double a = actual[k];
    const double m = mag.empty() ? 0.0 : mag[k];
    const ElementCheck c = check_element(expected.dtype, e_raw, e, a, m, tol);
    if (std::isfinite(e) && std::isfinite(a)) {
      const double abs_err = std::fabs(a - e);
      if (abs_err > r.max_abs) r.max_abs = abs_err;
      if (e != 0.0 && abs_err / std::fabs(e) > r.max_rel) r.max_rel = abs_err / std::fabs(e);
    }
    if (c.ulp > r.max_ulp) r.max_ulp = c.ulp;
    if (!c.ok) ++r.num_bad;
    // The worst element: failing elements beat passing ones, then the larger ratio.
    const bool worse = r.worst_index < 0 || (!c.ok && worst_ok) ||
                       (c.ok == worst_ok && c.ratio > worst_ratio);
    if (worse) {
      worst_ok = c.ok;
      worst_ratio = c.ratio;
      r.worst_index = static_cast<int64_t>(k);
      r.expected = e;
      r.actual = a;
    }
  }
  if (r.num_bad > 0) {
    r.ok = false;
    std::ostringstream os;
    os << r.num_bad << " of " << n << " elements outside tolerance";
    r.message = os.str();
  }
  return r;
}

std::string fmt_value(DType d, double v) {
  if (dtype_is_float(d) || !std::isfinite(v)) {
    std::ostringstream os;
    os.precision(9);
    os << v;
    return os.str();
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);  // integer dtypes hold whole numbers (int64 beyond 2^53: nearest)
  return buf;
}

std::string mismatch_message(const CompareResult& cmp, const HostTensor& expected, const Tolerance& tol) {
  const DType d = expected.dtype;
  std::ostringstream os;
  os << cmp.message;
  if (cmp.worst_index >= 0) {
    std::vector<int64_t> idx;
    unravel(cmp.worst_index, expected.sizes, &idx);
    os << "; worst at " << sizes_str(idx) << ": expected " << fmt_value(d, cmp.expected) << ", got "
       << fmt_value(d, cmp.actual);
  }
  os << " (max abs " << fmt_value(d, cmp.max_abs) << ", max rel " << fmt_value(DType::kFloat64, cmp.max_rel);
  // ULP bounds apply to float outputs only (an integer result is exact).
  if (tol.ulp > 0.0 && dtype_is_float(d))
    os << ", max ulp " << fmt_value(DType::kFloat64, cmp.max_ulp) << " > " << tol.ulp;
  os << ")";
  return os.str();
}

}  // namespace bpc
