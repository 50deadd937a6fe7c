// Scalar math used inside kernels (device code only; included by .cu files).
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels.h"
#include "numeric.h"

namespace bp_gpu {

template <typename A>
__device__ inline A NanMax(A a, A b) {
  if constexpr (std::is_floating_point<A>::value) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a > b ? a : b;
}
template <typename A>
__device__ inline A NanMin(A a, A b) {
  if constexpr (std::is_floating_point<A>::value) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a < b ? a : b;
}

// Integer power by squaring; negative exponents give 0 except for bases 1
// and -1 (what PyTorch's CUDA kernels compute; its CPU raises instead, which
// a kernel cannot do per element).
__device__ inline int64_t IntPow(int64_t base, int64_t exp) {
  if (exp < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exp & 1) ? -1 : 1;
    return 0;
  }
  int64_t result = 1;
  while (exp) {
    if (exp & 1) result *= base;
    base *= base;
    exp >>= 1;
  }
  return result;
}

// Floor division of floating values as torch.div(rounding_mode='floor').
template <typename A>
__device__ inline A FloorDiv(A a, A b) {
  if (b == A(0)) return a / b;
  A mod = fmod(a, b);
  A div = (a - mod) / b;
  if (mod != A(0) && ((b < A(0)) != (mod < A(0)))) div -= A(1);
  if (div == A(0)) return copysign(A(0), a / b);
  A floordiv = floor(div);
  if (div - floordiv > A(0.5)) floordiv += A(1);
  return floordiv;
}

template <typename A>
__device__ inline A ApplyBinary(int32_t op, A a, A b, A alpha) {
  if constexpr (std::is_floating_point<A>::value) {
    switch (op) {
      case kAdd:
        return a + alpha * b;
      case kSub:
        return a - alpha * b;
      case kMul:
        return a * b;
      case kDiv:
        return a / b;
      case kDivTrunc:
        return trunc(a / b);
      case kDivFloor:
        return FloorDiv(a, b);
      case kMaximum:
        return NanMax(a, b);
      case kMinimum:
        return NanMin(a, b);
      case kPow:
        return pow(a, b);
      default:
        return A(0);
    }
  } else {
    switch (op) {
      case kAdd:
        return a + alpha * b;
      case kSub:
        return a - alpha * b;
      case kMul:
        return a * b;
      // Integer division by zero yields 0 rather than undefined behaviour.
      case kDiv:
      case kDivTrunc:
        return b == 0 ? A(0) : a / b;
      case kDivFloor: {
        if (b == 0) return A(0);
        A q = a / b;
        if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
        return q;
      }
      case kMaximum:
        return a > b ? a : b;
      case kMinimum:
        return a < b ? a : b;
      case kPow:
        return IntPow(a, b);
      default:
        return A(0);
    }
  }
}

template <typename A>
__device__ inline bool ApplyCompare(int32_t op, A a, A b) {
  switch (op) {
    case kEq:
      return a == b;
    case kNe:
      return a != b;
    case kLt:
      return a < b;
    case kLe:
      return a <= b;
    case kGt:
      return a > b;
    case kGe:
      return a >= b;
    default:
      return false;
  }
}

template <typename A>
__device__ inline A ApplyUnary(int32_t op, A x) {
  if constexpr (std::is_floating_point<A>::value) {
    switch (op) {
      case kNeg:
        return -x;
      case kAbs:
        return fabs(x);
      case kExp:
        return exp(x);
      case kLog:
        return log(x);
      case kSqrt:
        return sqrt(x);
      case kRsqrt:
        return A(1) / sqrt(x);
      case kSin:
        return sin(x);
      case kCos:
        return cos(x);
      case kAcos:
        return acos(x);
      case kAsin:
        return asin(x);
      case kAtan:
        return atan(x);
      case kTanh:
        return tanh(x);
      case kSigmoid:
        return A(1) / (A(1) + exp(-x));
      case kErf:
        return erf(x);
      case kRelu:
        return x > A(0) ? x : (x != x ? x : A(0));
      case kGelu:
        return A(0.5) * x * (A(1) + erf(x * A(0.70710678118654752440)));
      case kGeluTanh: {
        const A inner = A(0.79788456080286535588) * (x + A(0.044715) * x * x * x);
        return A(0.5) * x * (A(1) + tanh(inner));
      }
      case kSilu:
        return x / (A(1) + exp(-x));
      case kRound:
        return rint(x);  // halves to even, as torch.round
      default:
        return x;
    }
  } else {
    // Integer tensors reach only neg, abs, relu and round (the meta
    // functions promote integer inputs of the float functions); round
    // leaves an integer as it is.
    switch (op) {
      case kNeg:
        return -x;
      case kAbs:
        return x < 0 ? -x : x;
      case kRelu:
        return x > 0 ? x : A(0);
      default:
        return x;
    }
  }
}

}  // namespace bp_gpu
