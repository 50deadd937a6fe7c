// Binary arithmetic: add, sub, mul, div (true / trunc / floor), maximum,
// minimum, pow. Semantics as torch; inputs arrive broadcast and promoted.
#include <cmath>
#include <cstring>

#include "common.h"
#include "simd.h"
#include "vec_rows.h"

namespace bp_cpu {
namespace {

// Integer arithmetic wraps (two's complement) as in PyTorch, without the
// undefined behaviour of signed overflow.
template <typename C>
inline C AddW(C a, C b) {
  if constexpr (kIsIntegral<C>) {
    return static_cast<C>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  } else {
    return a + b;
  }
}
template <typename C>
inline C SubW(C a, C b) {
  if constexpr (kIsIntegral<C>) {
    return static_cast<C>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
  } else {
    return a - b;
  }
}
template <typename C>
inline C MulW(C a, C b) {
  if constexpr (kIsIntegral<C>) {
    return static_cast<C>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  } else if constexpr (std::is_same<C, bool>::value) {
    return a && b;
  } else {
    return a * b;
  }
}

struct Operands {
  const DLTensor* a;
  const DLTensor* b;
  DLTensor* out;
  DType dt;
  int64_t numel;  // the output's
};

inline Operands Get(const bp_kernel_call_t* call) {
  Operands o{bp_kit_tensor_arg(call, BP_ARG_ADD_TENSOR_SELF), bp_kit_tensor_arg(call, BP_ARG_ADD_TENSOR_OTHER),
             call->outputs[0], DType::kInvalid, 0};
  o.dt = DtypeOf(o.out->dtype);
  o.numel = Numel(*o.out);
  return o;
}

bool VecF32Rows(const Operands& o, simd::BinOp op, float alpha);

// All-float32 operands run through the vector kernel (contiguous and
// broadcast rows); false leaves the call to the scalar loop. alpha scales b
// for add and sub (add with alpha, sub with -alpha). Inline: a small call
// (the common one-element case) leaves here without a call.
inline bool VecF32(const Operands& o, simd::BinOp op, float alpha = 1.0f) {
  return o.numel >= kVecMinElements && VecF32Rows(o, op, alpha);
}

bool VecF32Rows(const Operands& o, simd::BinOp op, float alpha) {
  if (o.dt != DType::kFloat32 || DtypeOf(o.a->dtype) != DType::kFloat32 || DtypeOf(o.b->dtype) != DType::kFloat32)
    return false;
  int64_t cols = 0;
  const bool b_row = alpha == 1.0f && RowBroadcast(*o.out, *o.a, *o.b, &cols);
  if (b_row || (alpha == 1.0f && RowBroadcast(*o.out, *o.b, *o.a, &cols))) {
    const float* dense = reinterpret_cast<const float*>(DataPtr(b_row ? *o.a : *o.b));
    const float* row = reinterpret_cast<const float*>(DataPtr(b_row ? *o.b : *o.a));
    float* y = reinterpret_cast<float*>(DataPtr(*o.out));
    ParallelFor(o.numel / cols, o.numel, [&](int64_t lo, int64_t hi) {
      simd::BinaryRowsF32(op, dense + lo * cols, row, !b_row, y + lo * cols, hi - lo, cols);
    });
    return true;
  }
  const DLTensor* ops[3] = {o.out, o.a, o.b};
  VecRows(ops, [op, alpha](char* const* p, const int64_t* s, int64_t n) {
    const float* a = reinterpret_cast<const float*>(p[1]);
    const float* b = reinterpret_cast<const float*>(p[2]);
    float* y = reinterpret_cast<float*>(p[0]);
    if (alpha == 1.0f) {
      simd::BinaryF32(op, a, s[1], b, s[2], y, n);
    } else {
      simd::AddScaledF32(a, s[1], b, s[2], op == simd::BinOp::kSub ? -alpha : alpha, y, n);
    }
  });
  return true;
}

bp_status_t AddSub(const bp_kernel_call_t* call, bool subtract) {
  const Operands o = Get(call);
  if (o.a == nullptr || o.b == nullptr) return Fail(call, BP_STATUS_INVALID_ARGUMENT, "expected two tensors");
  if (o.numel == 0) return BP_STATUS_OK;
  if (o.dt == DType::kInvalid) return FailDtype(call, *o.out);
  return Dispatch(o.dt, BP_STATUS_INTERNAL, [&](auto tag) -> bp_status_t {
    using T = typename decltype(tag)::type;
    using C = opmath_t<T>;
    if constexpr (std::is_same<T, bool>::value) {
      if (subtract) return Fail(call, BP_STATUS_INVALID_ARGUMENT, "subtraction of bool tensors is not supported");
      const bool alpha = ScalarArg<T>(call, BP_ARG_ADD_TENSOR_ALPHA, true);
      BinaryLoop<T, T, T>(*o.out, *o.a, *o.b, [alpha](bool x, bool y) { return x || (alpha && y); });
    } else {
      const C alpha = ScalarArg<T>(call, BP_ARG_ADD_TENSOR_ALPHA, C(1));
      if constexpr (std::is_same<C, float>::value) {
        if (VecF32(o, subtract ? simd::BinOp::kSub : simd::BinOp::kAdd, alpha)) return BP_STATUS_OK;
      }
      if (alpha == C(1)) {
        if (subtract) {
          BinaryLoop<T, T, T>(*o.out, *o.a, *o.b, [](C x, C y) { return SubW(x, y); });
        } else {
          BinaryLoop<T, T, T>(*o.out, *o.a, *o.b, [](C x, C y) { return AddW(x, y); });
        }
      } else if (subtract) {
        BinaryLoop<T, T, T>(*o.out, *o.a, *o.b, [alpha](C x, C y) { return SubW(x, MulW(alpha, y)); });
      } else {
        BinaryLoop<T, T, T>(*o.out, *o.a, *o.b, [alpha](C x, C y) { return AddW(x, MulW(alpha, y)); });
      }
    }
    return BP_STATUS_OK;
  });
}

bp_status_t Add(const bp_kernel_call_t* call) { return AddSub(call, false); }
bp_status_t Sub(const bp_kernel_call_t* call) { return AddSub(call, true); }

// Runs f over the operands with T the output dtype.
template <typename Body>
bp_status_t Simple(const bp_kernel_call_t* call, Body body) {
  const Operands o = Get(call);
  if (o.a == nullptr || o.b == nullptr) return Fail(call, BP_STATUS_INVALID_ARGUMENT, "expected two tensors");
  if (o.numel == 0) return BP_STATUS_OK;
  if (o.dt == DType::kInvalid) return FailDtype(call, *o.out);
  return Dispatch(o.dt, BP_STATUS_INTERNAL, [&](auto tag) -> bp_status_t { return body(tag, o); });
}

bp_status_t Mul(const bp_kernel_call_t* call) {
  return Simple(call, [&](auto tag, const Operands& o) -> bp_status_t {
    using T = typename decltype(tag)::type;
    using C = opmath_t<T>;
    if (VecF32(o, simd::BinOp::kMul)) return BP_STATUS_OK;
    BinaryLoop<T, T, T>(*o.out, *o.a, *o.b, [](C x, C y) { return MulW(x, y); });
    return BP_STATUS_OK;
  });
}

template <typename C>
inline auto TrueDiv(C x, C y) {
  if constexpr (std::is_floating_point<C>::value) {
    return x / y;
  } else {
    return static_cast<double>(x) / static_cast<double>(y);
  }
}

// Floor division of floating values, as torch's div_floor_floating: exact
// for the quotient's sign and for results near integers.
template <typename C>
inline C FloorDivF(C a, C b) {
  if (b == C(0)) return a / b;
  const C mod = std::fmod(a, b);
  C div = (a - mod) / b;
  if (mod != C(0) && ((b < C(0)) != (mod < C(0)))) div -= C(1);
  if (div != C(0)) {
    C fl = std::floor(div);
    if (div - fl > C(0.5)) fl += C(1);
    return fl;
  }
  return std::copysign(C(0), a / b);
}

template <typename C>
inline C TruncDivI(C a, C b) {
  if constexpr (std::is_signed<C>::value) {
    if (b == C(-1)) return SubW(C(0), a);  // INT_MIN / -1 wraps
  }
  return static_cast<C>(a / b);
}
template <typename C>
inline C FloorDivI(C a, C b) {
  if constexpr (std::is_signed<C>::value) {
    if (b == C(-1)) return SubW(C(0), a);
    C q = static_cast<C>(a / b);
    const C r = static_cast<C>(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) q = static_cast<C>(q - 1);
    return q;
  } else {
    return static_cast<C>(a / b);
  }
}

bp_status_t DivImpl(const bp_kernel_call_t* call, const char* mode) {
  int m = 0;  // 0 true, 1 trunc, 2 floor
  if (mode != nullptr) {
    if (std::strcmp(mode, "trunc") == 0) {
      m = 1;
    } else if (std::strcmp(mode, "floor") == 0) {
      m = 2;
    } else {
      return Fail(call, BP_STATUS_INVALID_ARGUMENT,
                  "argument 'rounding_mode' expected None, 'trunc' or 'floor' but got '%s'", mode);
    }
  }
  return Simple(call, [&](auto tag, const Operands& o) -> bp_status_t {
    using T = typename decltype(tag)::type;
    using C = opmath_t<T>;
    if constexpr (kIsFloating<T>) {
      if (m == 0) {
        if (VecF32(o, simd::BinOp::kDiv)) return BP_STATUS_OK;
        BinaryLoop<T, T, T>(*o.out, *o.a, *o.b, [](C x, C y) { return x / y; });
      } else if (m == 1) {
        BinaryLoop<T, T, T>(*o.out, *o.a, *o.b, [](C x, C y) { return std::trunc(x / y); });
      } else {
        BinaryLoop<T, T, T>(*o.out, *o.a, *o.b, [](C x, C y) { return FloorDivF(x, y); });
      }
    } else {
      if (m == 0) {
        BinaryLoop<T, T, T>(*o.out, *o.a, *o.b, [](C x, C y) { return TrueDiv(x, y); });
        return BP_STATUS_OK;
      }
      if constexpr (std::is_same<T, bool>::value) {
        return Fail(call, BP_STATUS_INVALID_ARGUMENT, "rounding division of bool tensors is not supported");
      } else {
        // torch raises ZeroDivisionError; check before writing anything.
        if (AnyOf<T>(*o.b, [](C v) { return v == C(0); })) {
          return Fail(call, BP_STATUS_INVALID_ARGUMENT,
                      "ZeroDivisionError: integer division by zero (argument 'other' holds a 0)");
        }
        if (m == 1) {
          BinaryLoop<T, T, T>(*o.out, *o.a, *o.b, [](C x, C y) { return TruncDivI(x, y); });
        } else {
          BinaryLoop<T, T, T>(*o.out, *o.a, *o.b, [](C x, C y) { return FloorDivI(x, y); });
        }
      }
    }
    return BP_STATUS_OK;
  });
}

bp_status_t Div(const bp_kernel_call_t* call) { return DivImpl(call, nullptr); }
bp_status_t DivMode(const bp_kernel_call_t* call) {
  return DivImpl(call, bp_kit_string_arg(call, BP_ARG_DIV_TENSOR_MODE_ROUNDING_MODE));
}

template <bool kMax>
bp_status_t MinMax(const bp_kernel_call_t* call) {
  return Simple(call, [&](auto tag, const Operands& o) -> bp_status_t {
    using T = typename decltype(tag)::type;
    using C = opmath_t<T>;
    BinaryLoop<T, T, T>(*o.out, *o.a, *o.b, [](C x, C y) -> C {
      if constexpr (kIsFloating<T>) {
        if (x != x) return x;  // NaN propagates
        if (y != y) return y;
      }
      if constexpr (kMax) {
        return x < y ? y : x;
      } else {
        return y < x ? y : x;
      }
    });
    return BP_STATUS_OK;
  });
}

template <typename C>
inline C IntPow(C base, C exp) {
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  uint64_t e = static_cast<uint64_t>(exp);
  while (e != 0) {
    if (e & 1u) result *= b;
    b *= b;
    e >>= 1;
  }
  return static_cast<C>(result);
}

bp_status_t Pow(const bp_kernel_call_t* call) {
  return Simple(call, [&](auto tag, const Operands& o) -> bp_status_t {
    using T = typename decltype(tag)::type;
    using C = opmath_t<T>;
    if constexpr (kIsFloating<T>) {
      BinaryLoop<T, T, T>(*o.out, *o.a, *o.b, [](C x, C y) -> C { return std::pow(x, y); });
    } else if constexpr (std::is_same<T, bool>::value) {
      return FailDtype(call, *o.out);
    } else {
      if constexpr (std::is_signed<C>::value) {
        if (AnyOf<T>(*o.b, [](C v) { return v < C(0); })) {
          return Fail(call, BP_STATUS_INVALID_ARGUMENT,
                      "Integers to negative integer powers are not allowed (argument 'exponent')");
        }
      }
      BinaryLoop<T, T, T>(*o.out, *o.a, *o.b, [](C x, C y) { return IntPow(x, y); });
    }
    return BP_STATUS_OK;
  });
}

const KernelDef kKernels[] = {
    {BP_OP_ADD_TENSOR, Add, nullptr},          {BP_OP_SUB_TENSOR, Sub, nullptr},
    {BP_OP_MUL_TENSOR, Mul, nullptr},          {BP_OP_DIV_TENSOR, Div, nullptr},
    {BP_OP_DIV_TENSOR_MODE, DivMode, nullptr}, {BP_OP_MAXIMUM, MinMax<true>, nullptr},
    {BP_OP_MINIMUM, MinMax<false>, nullptr},   {BP_OP_POW_TENSOR_TENSOR, Pow, nullptr},
};

}  // namespace

const KernelDef* BinaryKernels(size_t* count) {
  *count = sizeof(kKernels) / sizeof(kKernels[0]);
  return kKernels;
}

}  // namespace bp_cpu
