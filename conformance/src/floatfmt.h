// IEEE-754 binary formats as the suite sees them: rounding a double to a
// narrower format and the bit encodings of float16 and bfloat16. Written from
// the IEEE-754 definitions, independent of any backend's conversions.
#pragma once

#include <cstdint>

namespace bpc {

// A binary floating format: `precision` significand bits including the
// implicit one, smallest normal exponent `emin`, largest exponent `emax`.
struct FloatFormat {
  int precision;
  int emin;
  int emax;
};
constexpr FloatFormat kFormatF16{11, -14, 15};
constexpr FloatFormat kFormatBF16{8, -126, 127};
constexpr FloatFormat kFormatF32{24, -126, 127};

// Rounds x to the nearest value of `fmt` (ties to even), with gradual
// underflow and overflow to +-inf. Keeps NaN, inf and the sign of zero.
double round_to_format(double x, FloatFormat fmt);
// Largest finite value of `fmt`.
double format_max(FloatFormat fmt);

// Bit encodings. The *_from_double functions round first (round_to_format).
uint16_t f16_bits_from_double(double x);
double f16_bits_to_double(uint16_t bits);
uint16_t bf16_bits_from_double(double x);
double bf16_bits_to_double(uint16_t bits);

}  // namespace bpc
