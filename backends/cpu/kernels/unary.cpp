// Unary pointwise ops: neg, abs, relu (all numeric dtypes) and the floating
// math functions (inputs of integer dtype were promoted by the core). float16
// and bfloat16 compute in float and round once. float32 exp, relu and gelu
// run through the Highway kernels of simd.h (their error bounds are there).
#include <cmath>
#include <cstring>

#include "common.h"
#include "simd.h"

namespace bp_cpu {
namespace {

using VecFn = void (*)(const float*, float*, int64_t);

// float32 in and out: unit-stride rows go straight through the vector kernel
// `vec`; strided or broadcast rows are staged through a small buffer so every
// element gets the same arithmetic. Anything else: `scalar(call)`.
template <typename Scalar>
bp_status_t VecF32(const bp_kernel_call_t* call, VecFn vec, Scalar scalar) {
  const DLTensor* a = bp_kit_tensor_arg(call, BP_ARG_NEG_SELF);
  DLTensor* out = call->outputs[0];
  if (a == nullptr || DtypeOf(out->dtype) != DType::kFloat32 || DtypeOf(a->dtype) != DType::kFloat32)
    return scalar(call);
  const DLTensor* ops[2] = {out, a};
  RunOps(ops, [vec](char* const* p, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(float) && s[1] == sizeof(float)) {
      vec(reinterpret_cast<const float*>(p[1]), reinterpret_cast<float*>(p[0]), n);
      return;
    }
    constexpr int64_t kChunk = 256;
    float buf[kChunk];
    for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
      const int64_t m = n - i0 < kChunk ? n - i0 : kChunk;
      for (int64_t i = 0; i < m; ++i) buf[i] = *reinterpret_cast<const float*>(p[1] + (i0 + i) * s[1]);
      vec(buf, buf, m);
      for (int64_t i = 0; i < m; ++i) *reinterpret_cast<float*>(p[0] + (i0 + i) * s[0]) = buf[i];
    }
  });
  return BP_STATUS_OK;
}

// Runs out = f(self) for every dtype `Allowed<T>` accepts.
template <template <typename> class Allowed, typename Make>
bp_status_t Unary(const bp_kernel_call_t* call, Make make) {
  const DLTensor* a = bp_kit_tensor_arg(call, BP_ARG_NEG_SELF);
  DLTensor* out = call->outputs[0];
  if (a == nullptr) return Fail(call, BP_STATUS_INVALID_ARGUMENT, "argument 'self' expected a tensor");
  if (Numel(*out) == 0) return BP_STATUS_OK;
  const DType dt = DtypeOf(out->dtype);
  if (dt == DType::kInvalid) return FailDtype(call, *out);
  return Dispatch(dt, BP_STATUS_INTERNAL, [&](auto tag) -> bp_status_t {
    using T = typename decltype(tag)::type;
    if constexpr (Allowed<T>::value) {
      UnaryLoop<T, T>(*out, *a, make(tag));
      return BP_STATUS_OK;
    } else {
      return FailDtype(call, *out);
    }
  });
}

template <typename T>
struct NoBool : std::integral_constant<bool, !std::is_same<T, bool>::value> {};
template <typename T>
struct FloatOnly : std::integral_constant<bool, kIsFloating<T>> {};

template <typename C>
inline C WrapNeg(C x) {
  if constexpr (kIsIntegral<C>) {
    return static_cast<C>(0u - static_cast<uint64_t>(x));
  } else {
    return -x;
  }
}

bp_status_t Neg(const bp_kernel_call_t* call) {
  return Unary<NoBool>(call, [](auto tag) {
    using C = opmath_t<typename decltype(tag)::type>;
    return [](C x) { return WrapNeg(x); };
  });
}

bp_status_t Abs(const bp_kernel_call_t* call) {
  return Unary<NoBool>(call, [](auto tag) {
    using C = opmath_t<typename decltype(tag)::type>;
    return [](C x) -> C {
      if constexpr (std::is_floating_point<C>::value) {
        return std::fabs(x);
      } else if constexpr (std::is_unsigned<C>::value) {
        return x;
      } else {
        return x < 0 ? WrapNeg(x) : x;
      }
    };
  });
}

// Halves to even: nearbyint in the default rounding mode, as torch.round.
bp_status_t Round(const bp_kernel_call_t* call) {
  return Unary<NoBool>(call, [](auto tag) {
    using C = opmath_t<typename decltype(tag)::type>;
    return [](C x) -> C {
      if constexpr (std::is_floating_point<C>::value) {
        return std::nearbyint(x);
      } else {
        return x;
      }
    };
  });
}

bp_status_t ReluScalar(const bp_kernel_call_t* call) {
  return Unary<NoBool>(call, [](auto tag) {
    using C = opmath_t<typename decltype(tag)::type>;
    // NaN stays NaN (x > 0 is false, x != x picks x), as torch.relu.
    return [](C x) -> C { return (x > C(0) || x != x) ? x : C(0); };
  });
}

bp_status_t Relu(const bp_kernel_call_t* call) { return VecF32(call, simd::ReluF32, ReluScalar); }

// Floating math: one line per op, computed in opmath_t (float or double).
#define BP_CPU_FLOAT_UNARY(NAME, EXPR)                  \
  bp_status_t NAME(const bp_kernel_call_t* call) {      \
    return Unary<FloatOnly>(call, [](auto tag) {        \
      using C = opmath_t<typename decltype(tag)::type>; \
      return [](C x) -> C { return EXPR; };             \
    });                                                 \
  }

BP_CPU_FLOAT_UNARY(ExpScalar, std::exp(x))
BP_CPU_FLOAT_UNARY(Log, std::log(x))
BP_CPU_FLOAT_UNARY(Sqrt, std::sqrt(x))
BP_CPU_FLOAT_UNARY(Rsqrt, C(1) / std::sqrt(x))
BP_CPU_FLOAT_UNARY(Sin, std::sin(x))
BP_CPU_FLOAT_UNARY(Cos, std::cos(x))
BP_CPU_FLOAT_UNARY(Acos, std::acos(x))
BP_CPU_FLOAT_UNARY(Asin, std::asin(x))
BP_CPU_FLOAT_UNARY(Atan, std::atan(x))
BP_CPU_FLOAT_UNARY(TanhScalar, std::tanh(x))
BP_CPU_FLOAT_UNARY(SigmoidScalar, C(1) / (C(1) + std::exp(-x)))
BP_CPU_FLOAT_UNARY(Erf, std::erf(x))
BP_CPU_FLOAT_UNARY(SiluScalar, x / (C(1) + std::exp(-x)))
#undef BP_CPU_FLOAT_UNARY

bp_status_t Exp(const bp_kernel_call_t* call) { return VecF32(call, simd::ExpF32, ExpScalar); }
bp_status_t Tanh(const bp_kernel_call_t* call) { return VecF32(call, simd::TanhF32, TanhScalar); }
bp_status_t Sigmoid(const bp_kernel_call_t* call) { return VecF32(call, simd::SigmoidF32, SigmoidScalar); }
bp_status_t Silu(const bp_kernel_call_t* call) { return VecF32(call, simd::SiluF32, SiluScalar); }

bp_status_t Gelu(const bp_kernel_call_t* call) {
  const char* approximate = bp_kit_string_arg(call, BP_ARG_GELU_APPROXIMATE);
  bool tanh_form = false;
  if (approximate != nullptr && std::strcmp(approximate, "none") != 0) {
    if (std::strcmp(approximate, "tanh") != 0) {
      return Fail(call, BP_STATUS_INVALID_ARGUMENT, "argument 'approximate' expected 'none' or 'tanh' but got '%s'",
                  approximate);
    }
    tanh_form = true;
  }
  if (tanh_form) {
    return VecF32(call, simd::GeluTanhF32, [](const bp_kernel_call_t* c) {
      return Unary<FloatOnly>(c, [](auto tag) {
        using C = opmath_t<typename decltype(tag)::type>;
        return [](C x) -> C {
          const C kBeta = C(0.7978845608028654);  // sqrt(2 / pi)
          const C inner = kBeta * (x + C(0.044715) * x * x * x);
          return C(0.5) * x * (C(1) + std::tanh(inner));
        };
      });
    });
  }
  return VecF32(call, simd::GeluErfF32, [](const bp_kernel_call_t* c) {
    return Unary<FloatOnly>(c, [](auto tag) {
      using C = opmath_t<typename decltype(tag)::type>;
      return [](C x) -> C { return x * C(0.5) * (C(1) + std::erf(x * C(0.7071067811865476))); };
    });
  });
}

const KernelDef kKernels[] = {
    {BP_OP_NEG, Neg, nullptr},     {BP_OP_ABS, Abs, nullptr},         {BP_OP_ROUND, Round, nullptr},
    {BP_OP_EXP, Exp, nullptr},     {BP_OP_LOG, Log, nullptr},         {BP_OP_SQRT, Sqrt, nullptr},
    {BP_OP_RSQRT, Rsqrt, nullptr}, {BP_OP_SIN, Sin, nullptr},         {BP_OP_COS, Cos, nullptr},
    {BP_OP_TANH, Tanh, nullptr},   {BP_OP_SIGMOID, Sigmoid, nullptr}, {BP_OP_ERF, Erf, nullptr},
    {BP_OP_RELU, Relu, nullptr},   {BP_OP_GELU, Gelu, nullptr},       {BP_OP_SILU, Silu, nullptr},
    {BP_OP_ACOS, Acos, nullptr},   {BP_OP_ASIN, Asin, nullptr},       {BP_OP_ATAN, Atan, nullptr},
};

}  // namespace

const KernelDef* UnaryKernels(size_t* count) {
  *count = sizeof(kKernels) / sizeof(kKernels[0]);
  return kKernels;
}

}  // namespace bp_cpu
