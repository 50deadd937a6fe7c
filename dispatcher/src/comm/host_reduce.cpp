#include "comm/host_reduce.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "copy.h"

namespace bp::core {
namespace {

float Bf16ToFloat(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

uint16_t FloatToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

// Storage type T; arithmetic in A; To/From convert (identity for plain types).
template <typename T, typename A, A (*To)(T), T (*From)(A), typename Op>
void Apply(void* out, const void* a, const void* b, size_t n, Op op) {
  auto* o = static_cast<T*>(out);
  const auto* x = static_cast<const T*>(a);
  const auto* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) o[i] = From(op(To(x[i]), To(y[i])));
}

template <typename T>
T Same(T v) {
  return v;
}
float HalfTo(uint16_t h) { return HalfToFloat(h); }
uint16_t HalfFrom(float f) { return FloatToHalf(f); }

template <typename T, typename A, A (*To)(T), T (*From)(A)>
HostReduceFn Typed(bp_reduce_op_t op) {
  switch (op) {
    case BP_REDUCE_SUM:
    case BP_REDUCE_AVG:
      return [](void* o, const void* a, const void* b, size_t n) {
        Apply<T, A, To, From>(o, a, b, n, [](A x, A y) { return static_cast<A>(x + y); });
      };
    case BP_REDUCE_PROD:
      return [](void* o, const void* a, const void* b, size_t n) {
        Apply<T, A, To, From>(o, a, b, n, [](A x, A y) { return static_cast<A>(x * y); });
      };
    case BP_REDUCE_MIN:
      return [](void* o, const void* a, const void* b, size_t n) {
        // NaN propagates, as torch's min.
        Apply<T, A, To, From>(o, a, b, n, [](A x, A y) { return (x != x || x < y) ? x : y; });
      };
    case BP_REDUCE_MAX:
      return [](void* o, const void* a, const void* b, size_t n) {
        Apply<T, A, To, From>(o, a, b, n, [](A x, A y) { return (x != x || x > y) ? x : y; });
      };
  }
  return {};
}

template <typename T>
HostReduceFn Plain(bp_reduce_op_t op) {
  return Typed<T, T, Same<T>, Same<T>>(op);
}

HostReduceFn Bool(bp_reduce_op_t op) {
  // One byte 0/1: sum and max are "or", prod and min are "and".
  if (op == BP_REDUCE_AVG) return {};
  const bool is_or = op == BP_REDUCE_SUM || op == BP_REDUCE_MAX;
  if (is_or) {
    return [](void* o, const void* a, const void* b, size_t n) {
      Apply<uint8_t, uint8_t, Same<uint8_t>, Same<uint8_t>>(
          o, a, b, n, [](uint8_t x, uint8_t y) -> uint8_t { return (x | y) != 0; });
    };
  }
  return [](void* o, const void* a, const void* b, size_t n) {
    Apply<uint8_t, uint8_t, Same<uint8_t>, Same<uint8_t>>(
        o, a, b, n, [](uint8_t x, uint8_t y) -> uint8_t { return x != 0 && y != 0; });
  };
}

template <typename T, typename A, A (*To)(T), T (*From)(A)>
void Divide(void* data, size_t n, int32_t d) {
  auto* p = static_cast<T*>(data);
  for (size_t i = 0; i < n; ++i) p[i] = From(static_cast<A>(To(p[i]) / static_cast<A>(d)));
}

}  // namespace

HostReduceFn HostReduce(DType dtype, bp_reduce_op_t op) {
  switch (dtype) {
    case DType::kBool:
      return Bool(op);
    case DType::kUInt8:
      return Plain<uint8_t>(op);
    case DType::kInt8:
      return Plain<int8_t>(op);
    case DType::kInt32:
      return Plain<int32_t>(op);
    case DType::kInt64:
      return Plain<int64_t>(op);
    case DType::kFloat16:
      return Typed<uint16_t, float, HalfTo, HalfFrom>(op);
    case DType::kBFloat16:
      return Typed<uint16_t, float, Bf16ToFloat, FloatToBf16>(op);
    case DType::kFloat32:
      return Plain<float>(op);
    case DType::kFloat64:
      return Plain<double>(op);
    default:
      return {};
  }
}

void DivideInPlace(DType dtype, void* data, size_t n, int32_t divisor) {
  switch (dtype) {
    case DType::kUInt8:
      return Divide<uint8_t, uint8_t, Same<uint8_t>, Same<uint8_t>>(data, n, divisor);
    case DType::kInt8:
      return Divide<int8_t, int8_t, Same<int8_t>, Same<int8_t>>(data, n, divisor);
    case DType::kInt32:
      return Divide<int32_t, int32_t, Same<int32_t>, Same<int32_t>>(data, n, divisor);
    case DType::kInt64:
      return Divide<int64_t, int64_t, Same<int64_t>, Same<int64_t>>(data, n, divisor);
    case DType::kFloat16:
      return Divide<uint16_t, float, HalfTo, HalfFrom>(data, n, divisor);
    case DType::kBFloat16:
      return Divide<uint16_t, float, Bf16ToFloat, FloatToBf16>(data, n, divisor);
    case DType::kFloat32:
      return Divide<float, float, Same<float>, Same<float>>(data, n, divisor);
    case DType::kFloat64:
      return Divide<double, double, Same<double>, Same<double>>(data, n, divisor);
    default:
      return;
  }
}

}  // namespace bp::core
