// Element types the kernels store, and the types they compute in.
//
// float16 and bfloat16 are stored as 16-bit patterns (Half, BFloat16) so one
// definition serves nvcc, hipcc and plain C++ (the host side converts fill
// values and the unit test checks these conversions). Device passes use the
// hardware conversion intrinsics; elsewhere a bit-exact software version
// (round to nearest even, NaN kept quiet) runs.
#pragma once

#include <cstdint>
#include <cstring>

#include "host_device.h"

#if defined(BP_GPU_COMPILER)
#if defined(BP_GPU_HIP)
#include <hip/hip_fp16.h>
#else
#include <cuda_fp16.h>
#endif
#endif

namespace bp_gpu {

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

BP_HOST_DEVICE inline uint32_t FloatBits(float f) {
#if defined(BP_DEVICE_PASS)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}
BP_HOST_DEVICE inline float BitsFloat(uint32_t u) {
#if defined(BP_DEVICE_PASS)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

BP_HOST_DEVICE inline float HalfBitsToFloat(uint16_t h) {
#if defined(BP_DEVICE_PASS)
  return __half2float(__ushort_as_half(h));
#else
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  if (exp == 0x1f) return BitsFloat(sign | 0x7f800000u | (man << 13));  // inf/NaN
  if (exp == 0) {
    if (man == 0) return BitsFloat(sign);
    // Subnormal: normalize.
    int e = -1;
    do {
      man <<= 1;
      ++e;
    } while ((man & 0x400u) == 0);
    man &= 0x3ffu;
    return BitsFloat(sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (man << 13));
  }
  return BitsFloat(sign | ((exp + 112u) << 23) | (man << 13));
#endif
}

BP_HOST_DEVICE inline uint16_t FloatToHalfBits(float f) {
#if defined(BP_DEVICE_PASS)
  return __half_as_ushort(__float2half_rn(f));
#else
  const uint32_t u = FloatBits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN (NaN stays a quiet NaN)
    return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (abs < 0x38800000u) {                      // result is subnormal or zero
    if (abs < 0x33000000u) return sign;         // below half the smallest subnormal
    const uint32_t shift = 126u - (abs >> 23);  // 14..24
    const uint32_t man = (abs & 0x7fffffu) | 0x800000u;
    uint32_t half_man = man >> shift;
    const uint32_t rem = man & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (half_man & 1u))) ++half_man;
    return static_cast<uint16_t>(sign | half_man);
  }
  uint32_t r = abs - 0x38000000u;  // rebias exponent 127 -> 15
  const uint32_t rem = r & 0x1fffu;
  r >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return static_cast<uint16_t>(sign | r);
#endif
}

BP_HOST_DEVICE inline float BFloat16BitsToFloat(uint16_t b) {
  return BitsFloat(static_cast<uint32_t>(b) << 16);
}
BP_HOST_DEVICE inline uint16_t FloatToBFloat16Bits(float f) {
  const uint32_t u = FloatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((u >> 16) | 0x40u);  // quiet NaN
  const uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>((u + rounding) >> 16);
}

// OpMath<T>: the type arithmetic on T happens in (PyTorch's opmath_type):
// 16-bit floats compute in float, integers and bool in int64.
template <typename T>
struct OpMathT {
  using type = T;
};
template <>
struct OpMathT<Half> {
  using type = float;
};
template <>
struct OpMathT<BFloat16> {
  using type = float;
};
template <>
struct OpMathT<bool> {
  using type = int64_t;
};
template <>
struct OpMathT<int8_t> {
  using type = int64_t;
};
template <>
struct OpMathT<uint8_t> {
  using type = int64_t;
};
template <>
struct OpMathT<int32_t> {
  using type = int64_t;
};
template <typename T>
using OpMath = typename OpMathT<T>::type;

// Load/Store convert between the storage type and its OpMath type.
template <typename T>
BP_HOST_DEVICE inline OpMath<T> Load(const T* p) {
  return static_cast<OpMath<T>>(*p);
}
template <>
BP_HOST_DEVICE inline float Load<Half>(const Half* p) {
  return HalfBitsToFloat(p->bits);
}
template <>
BP_HOST_DEVICE inline float Load<BFloat16>(const BFloat16* p) {
  return BFloat16BitsToFloat(p->bits);
}

template <typename T, typename V>
BP_HOST_DEVICE inline void Store(T* p, V v) {
  *p = static_cast<T>(v);
}
template <typename V>
BP_HOST_DEVICE inline void Store(bool* p, V v) {
  *p = (v != V(0));
}
template <typename V>
BP_HOST_DEVICE inline void Store(Half* p, V v) {
  p->bits = FloatToHalfBits(static_cast<float>(v));
}
template <typename V>
BP_HOST_DEVICE inline void Store(BFloat16* p, V v) {
  p->bits = FloatToBFloat16Bits(static_cast<float>(v));
}

template <typename T>
struct IsFloating {
  static constexpr bool value = false;
};
template <>
struct IsFloating<float> {
  static constexpr bool value = true;
};
template <>
struct IsFloating<double> {
  static constexpr bool value = true;
};
template <>
struct IsFloating<Half> {
  static constexpr bool value = true;
};
template <>
struct IsFloating<BFloat16> {
  static constexpr bool value = true;
};

}  // namespace bp_gpu
