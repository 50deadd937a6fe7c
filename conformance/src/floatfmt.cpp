#include "floatfmt.h"

#include <cmath>
#include <cstring>

namespace bpc {

double format_max(FloatFormat fmt) {
  // (2 - 2^(1-p)) * 2^emax
  return std::ldexp(2.0 - std::ldexp(1.0, 1 - fmt.precision), fmt.emax);
}

double round_to_format(double x, FloatFormat fmt) {
  if (std::isnan(x) || std::isinf(x) || x == 0.0) return x;
  int e = 0;
  std::frexp(x, &e);  // |x| = m * 2^e, m in [0.5, 1): the leading bit has exponent e-1
  int lead = e - 1;
  if (lead < fmt.emin) lead = fmt.emin;  // subnormals share the smallest quantum
  const int quantum_exp = lead - (fmt.precision - 1);
  // Scaling by a power of two is exact; nearbyint rounds ties to even in the
  // default rounding mode.
  double r = std::ldexp(std::nearbyint(std::ldexp(x, -quantum_exp)), quantum_exp);
  if (std::fabs(r) > format_max(fmt)) r = std::copysign(INFINITY, x);
  if (r == 0.0) r = std::copysign(0.0, x);
  return r;
}

uint16_t f16_bits_from_double(double x) {
  const double r = round_to_format(x, kFormatF16);
  const uint16_t sign = std::signbit(r) ? 0x8000u : 0u;
  if (std::isnan(r)) return 0x7e00u;
  const double a = std::fabs(r);
  if (std::isinf(a)) return static_cast<uint16_t>(sign | 0x7c00u);
  if (a == 0.0) return sign;
  int e = 0;
  std::frexp(a, &e);
  const int lead = e - 1;
  if (lead < kFormatF16.emin) {
    // subnormal: a = mant * 2^-24
    const uint16_t mant = static_cast<uint16_t>(std::ldexp(a, 24));
    return static_cast<uint16_t>(sign | mant);
  }
  const uint16_t exp_field = static_cast<uint16_t>(lead + 15);
  const uint16_t mant = static_cast<uint16_t>((std::ldexp(a, -lead) - 1.0) * 1024.0);
  return static_cast<uint16_t>(sign | (exp_field << 10) | mant);
}

double f16_bits_to_double(uint16_t bits) {
  const bool neg = (bits & 0x8000u) != 0;
  const int exp_field = (bits >> 10) & 0x1f;
  const int mant = bits & 0x3ff;
  double v;
  if (exp_field == 0x1f) {
    v = mant ? NAN : INFINITY;
  } else if (exp_field == 0) {
    v = std::ldexp(static_cast<double>(mant), -24);
  } else {
    v = std::ldexp(1.0 + mant / 1024.0, exp_field - 15);
  }
  return neg ? -v : v;
}

uint16_t bf16_bits_from_double(double x) {
  const double r = round_to_format(x, kFormatBF16);
  if (std::isnan(r)) return std::signbit(r) ? 0xffc0u : 0x7fc0u;
  // Every bfloat16 value is a float32 whose low 16 bits are zero.
  const float f = static_cast<float>(r);
  uint32_t u = 0;
  std::memcpy(&u, &f, sizeof u);
  return static_cast<uint16_t>(u >> 16);
}

double bf16_bits_to_double(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f = 0.0f;
  std::memcpy(&f, &u, sizeof f);
  return static_cast<double>(f);
}

}  // namespace bpc
