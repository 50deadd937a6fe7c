#include "reduce.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace vendor_sim {

Elem ElemOf(DLDataType t) {
  if (t.lanes != 1) return Elem::kInvalid;
  switch (t.code) {
    case BP_DTYPE_CODE_BOOL:
      return t.bits == 8 ? Elem::kBool : Elem::kInvalid;
    case kDLInt:
      return t.bits == 8    ? Elem::kInt8
             : t.bits == 16 ? Elem::kInt16
             : t.bits == 32 ? Elem::kInt32
             : t.bits == 64 ? Elem::kInt64
                            : Elem::kInvalid;
    case kDLUInt:
      return t.bits == 8 ? Elem::kUInt8 : Elem::kInvalid;
    case kDLFloat:
      return t.bits == 16   ? Elem::kFloat16
             : t.bits == 32 ? Elem::kFloat32
             : t.bits == 64 ? Elem::kFloat64
                            : Elem::kInvalid;
    case kDLBfloat:
      return t.bits == 16 ? Elem::kBFloat16 : Elem::kInvalid;
    default:
      return Elem::kInvalid;
  }
}

const char* ElemName(Elem e) {
  static const char* const names[] = {"bool",  "int8",    "uint8",    "int16",   "int32",
                                      "int64", "float16", "bfloat16", "float32", "float64"};
  const int i = static_cast<int>(e);
  return i >= 0 && i < 10 ? names[i] : "invalid";
}

size_t ElemSize(Elem e) {
  static const unsigned char sizes[] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
  const int i = static_cast<int>(e);
  return i >= 0 && i < 10 ? sizes[i] : 0;
}

const char* ReduceOpName(int32_t op) {
  switch (op) {
    case BP_REDUCE_SUM:
      return "sum";
    case BP_REDUCE_PROD:
      return "prod";
    case BP_REDUCE_MIN:
      return "min";
    case BP_REDUCE_MAX:
      return "max";
    case BP_REDUCE_AVG:
      return "avg";
    default:
      return "invalid";
  }
}

bool ReduceSupported(Elem e, int32_t op) {
  if (e == Elem::kInvalid || op < BP_REDUCE_SUM || op > BP_REDUCE_AVG) return false;
  return !(e == Elem::kBool && op == BP_REDUCE_AVG);
}

namespace {

// float16 and bfloat16 <-> float, by bits (no F16C dependency: the simulator
// runs on any host). Both round to nearest even, as a device's converter does.
float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);  // inf, NaN
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else {  // subnormal: normalize
    exp = 113;
    while ((man & 0x400u) == 0) {
      man <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((man & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0));
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504: inf
  if (ax < 0x38800000u) {
    // Subnormal half (or zero): scale into the integer mantissa, rounding even.
    float a;
    std::memcpy(&a, &ax, 4);
    const float scaled = a * 16777216.0f;  // 2^24: one unit is the smallest subnormal
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(scaled)));
  }
  const uint32_t rounded = ax + 0xfffu + ((ax >> 13) & 1u);  // nearest even at bit 13
  return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

float BFloat16ToFloat(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToBFloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// How a storage type T is computed in: floats and integers as themselves,
// the 16-bit floats in float.
struct Half {
  static float Load(uint16_t v) { return HalfToFloat(v); }
  static uint16_t Store(float v) { return FloatToHalf(v); }
};
struct BHalf {
  static float Load(uint16_t v) { return BFloat16ToFloat(v); }
  static uint16_t Store(float v) { return FloatToBFloat16(v); }
};
template <typename T>
struct Plain {
  static T Load(T v) { return v; }
  static T Store(T v) { return v; }
};

template <typename A>
bool IsNan(A a) {
  if constexpr (std::is_floating_point_v<A>) return a != a;
  return false;
}

// One step of the accumulation, acc = acc op x. Integers go through uint64
// so overflow wraps instead of being undefined.
template <typename A>
A Step(int32_t op, A acc, A x) {
  if constexpr (std::is_floating_point_v<A>) {
    switch (op) {
      case BP_REDUCE_PROD:
        return acc * x;
      case BP_REDUCE_MIN:
        return IsNan(acc) ? acc : (IsNan(x) || x < acc) ? x : acc;
      case BP_REDUCE_MAX:
        return IsNan(acc) ? acc : (IsNan(x) || x > acc) ? x : acc;
      default:  // SUM, AVG
        return acc + x;
    }
  } else {
    switch (op) {
      case BP_REDUCE_PROD:
        return static_cast<A>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(x));
      case BP_REDUCE_MIN:
        return x < acc ? x : acc;
      case BP_REDUCE_MAX:
        return x > acc ? x : acc;
      default:
        return static_cast<A>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(x));
    }
  }
}

template <typename T, typename Conv>
void ReduceAs(int32_t op, const char* const* srcs, int world, size_t count, char* out) {
  using A = decltype(Conv::Load(T{}));
  for (size_t i = 0; i < count; ++i) {
    T v;
    std::memcpy(&v, srcs[0] + i * sizeof(T), sizeof(T));
    A acc = Conv::Load(v);
    for (int r = 1; r < world; ++r) {
      std::memcpy(&v, srcs[r] + i * sizeof(T), sizeof(T));
      acc = Step<A>(op, acc, Conv::Load(v));
    }
    if (op == BP_REDUCE_AVG) acc = static_cast<A>(acc / static_cast<A>(world));  // integers: toward zero
    const T result = Conv::Store(acc);
    std::memcpy(out + i * sizeof(T), &result, sizeof(T));
  }
}

void ReduceBool(int32_t op, const char* const* srcs, int world, size_t count, char* out) {
  const bool all = op == BP_REDUCE_PROD || op == BP_REDUCE_MIN;  // and; SUM and MAX are or
  for (size_t i = 0; i < count; ++i) {
    bool acc = srcs[0][i] != 0;
    for (int r = 1; r < world; ++r) acc = all ? (acc && srcs[r][i] != 0) : (acc || srcs[r][i] != 0);
    out[i] = acc ? 1 : 0;
  }
}

}  // namespace

void Reduce(Elem e, int32_t op, const char* const* srcs, int world, size_t count, char* out) {
  switch (e) {
    case Elem::kBool:
      return ReduceBool(op, srcs, world, count, out);
    case Elem::kInt8:
      return ReduceAs<int8_t, Plain<int8_t>>(op, srcs, world, count, out);
    case Elem::kUInt8:
      return ReduceAs<uint8_t, Plain<uint8_t>>(op, srcs, world, count, out);
    case Elem::kInt16:
      return ReduceAs<int16_t, Plain<int16_t>>(op, srcs, world, count, out);
    case Elem::kInt32:
      return ReduceAs<int32_t, Plain<int32_t>>(op, srcs, world, count, out);
    case Elem::kInt64:
      return ReduceAs<int64_t, Plain<int64_t>>(op, srcs, world, count, out);
    case Elem::kFloat16:
      return ReduceAs<uint16_t, Half>(op, srcs, world, count, out);
    case Elem::kBFloat16:
      return ReduceAs<uint16_t, BHalf>(op, srcs, world, count, out);
    case Elem::kFloat32:
      return ReduceAs<float, Plain<float>>(op, srcs, world, count, out);
    case Elem::kFloat64:
      return ReduceAs<double, Plain<double>>(op, srcs, world, count, out);
    case Elem::kInvalid:
      return;
  }
}

namespace {
template <typename T, typename Conv>
void AddOneAs(char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  using A = decltype(Conv::Load(T{}));
  v = Conv::Store(static_cast<A>(Conv::Load(v) + 1));
  std::memcpy(p, &v, sizeof(T));
}
}  // namespace

void AddOne(Elem e, char* p) {
  switch (e) {
    case Elem::kBool:
      *p = 1;
      return;
    case Elem::kInt8:
      return AddOneAs<int8_t, Plain<int8_t>>(p);
    case Elem::kUInt8:
      return AddOneAs<uint8_t, Plain<uint8_t>>(p);
    case Elem::kInt16:
      return AddOneAs<int16_t, Plain<int16_t>>(p);
    case Elem::kInt32:
      return AddOneAs<int32_t, Plain<int32_t>>(p);
    case Elem::kInt64:
      return AddOneAs<int64_t, Plain<int64_t>>(p);
    case Elem::kFloat16:
      return AddOneAs<uint16_t, Half>(p);
    case Elem::kBFloat16:
      return AddOneAs<uint16_t, BHalf>(p);
    case Elem::kFloat32:
      return AddOneAs<float, Plain<float>>(p);
    case Elem::kFloat64:
      return AddOneAs<double, Plain<double>>(p);
    case Elem::kInvalid:
      return;
  }
}

}  // namespace vendor_sim
