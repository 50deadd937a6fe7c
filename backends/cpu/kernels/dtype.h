// Element types of the CPU backend and the switch that maps a DLDataType to
// a C++ type (PyTorch's AT_DISPATCH, reduced to the 9 dtypes Backplane has).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "backplane/plugin_kit/dtype.h"
#include "backplane/types.h"

namespace bp_cpu {

// IEEE binary16 and bfloat16 storage. Arithmetic happens in float: load,
// compute, round once on store (as PyTorch's opmath_type).
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

inline uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return BitsFloat(sign | 0x7f800000u | (mant << 13));  // inf, NaN
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24 is exact in float.
    const float v = static_cast<float>(mant) * 5.9604644775390625e-8f;
    return BitsFloat(sign | FloatBits(v));
  }
  return BitsFloat(sign | ((exp + 112u) << 23) | (mant << 13));
}

// Round to nearest, ties to even; overflow gives inf; NaN stays a quiet NaN.
inline uint16_t FloatToHalf(float f) {
  uint32_t x = FloatBits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) {
    return static_cast<uint16_t>(sign | (x > 0x7f800000u ? 0x7e00u | ((x >> 13) & 0x3ffu) : 0x7c00u));
  }
  if (x >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 rounds to inf
  if (x < 0x38800000u) {
    // Below 2^-14: the result is a subnormal half. Adding 0.5 aligns the
    // value to float's ulp at 0.5 (2^-24 = half's subnormal step) and lets
    // the FPU round to nearest even.
    const float a = BitsFloat(x) + 0.5f;
    return static_cast<uint16_t>(sign | (FloatBits(a) - 0x3f000000u));
  }
  const uint32_t odd = (x >> 13) & 1u;
  x += 0xc8000fffu + odd;  // rebias exponent (-112 << 23) and round
  return static_cast<uint16_t>(sign | (x >> 13));
}

inline float BFloat16ToFloat(uint16_t b) { return BitsFloat(static_cast<uint32_t>(b) << 16); }

inline uint16_t FloatToBFloat16(float f) {
  const uint32_t x = FloatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// double -> float rounding to odd: the truncated value with its last bit set
// when inexact. Rounding that float to float16/bfloat16 (>= 2 fewer bits)
// then equals rounding the double directly: no double-rounding error.
inline float DoubleToFloatRoundOdd(double v) {
  float f = static_cast<float>(v);
  if (!(f == f) || static_cast<double>(f) == v) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);  // truncate
  return BitsFloat(FloatBits(f) | 1u);
}

// The type arithmetic is done in.
template <typename T>
struct OpMath {
  using type = T;
};
template <>
struct OpMath<Half> {
  using type = float;
};
template <>
struct OpMath<BFloat16> {
  using type = float;
};
template <typename T>
using opmath_t = typename OpMath<T>::type;

template <typename T>
inline opmath_t<T> Load(T v) {
  return v;
}
inline float Load(Half v) { return HalfToFloat(v.bits); }
inline float Load(BFloat16 v) { return BFloat16ToFloat(v.bits); }

template <typename T>
constexpr bool kIsFloating = std::is_floating_point<T>::value || std::is_same<T, Half>::value ||
                             std::is_same<T, BFloat16>::value;
template <typename T>
constexpr bool kIsReduced = std::is_same<T, Half>::value || std::is_same<T, BFloat16>::value;
template <typename T>
constexpr bool kIsIntegral = std::is_integral<T>::value && !std::is_same<T, bool>::value;

// Converts any arithmetic value to T with PyTorch's rules: float -> integer
// truncates (through int64 so negative values wrap into unsigned types),
// anything -> bool is "!= 0" (NaN is true).
template <typename T, typename V>
inline T Cast(V v) {
  if constexpr (std::is_same<T, bool>::value) {
    return v != V(0);
  } else if constexpr (std::is_same<T, Half>::value) {
    if constexpr (std::is_same<V, float>::value || sizeof(V) < 4) {
      return Half{FloatToHalf(static_cast<float>(v))};
    } else {
      return Half{FloatToHalf(DoubleToFloatRoundOdd(static_cast<double>(v)))};
    }
  } else if constexpr (std::is_same<T, BFloat16>::value) {
    if constexpr (std::is_same<V, float>::value || sizeof(V) < 4) {
      return BFloat16{FloatToBFloat16(static_cast<float>(v))};
    } else {
      return BFloat16{FloatToBFloat16(DoubleToFloatRoundOdd(static_cast<double>(v)))};
    }
  } else if constexpr (kIsIntegral<T> && std::is_floating_point<V>::value) {
    if (!(v == v)) return T(0);
    if (v >= 9.2233720368547758e18 || v <= -9.2233720368547758e18) return T(0);
    return static_cast<T>(static_cast<int64_t>(v));
  } else {
    return static_cast<T>(v);
  }
}
// Stores an opmath value into T (rounds once for float16/bfloat16).
template <typename T, typename V>
inline T Store(V v) {
  return Cast<T>(v);
}

// Dtype ids and names: the plugin kit's (one table for every backend).
using bp_kit::DType;
using bp_kit::DtypeName;
using bp_kit::DtypeOf;
using bp_kit::IsFloating;

template <typename T>
struct Tag {
  using type = T;
};

// Calls f(Tag<T>{}) for the C++ type of `d`; returns `bad` for kInvalid.
template <typename F, typename R = decltype(std::declval<F>()(Tag<float>{}))>
inline R Dispatch(DType d, std::common_type_t<R> bad, F&& f) {
  switch (d) {
    case DType::kBool: return f(Tag<bool>{});
    case DType::kUInt8: return f(Tag<uint8_t>{});
    case DType::kInt8: return f(Tag<int8_t>{});
    case DType::kInt32: return f(Tag<int32_t>{});
    case DType::kInt64: return f(Tag<int64_t>{});
    case DType::kFloat16: return f(Tag<Half>{});
    case DType::kBFloat16: return f(Tag<BFloat16>{});
    case DType::kFloat32: return f(Tag<float>{});
    case DType::kFloat64: return f(Tag<double>{});
    default: return bad;
  }
}

}  // namespace bp_cpu
