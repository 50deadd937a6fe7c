// Unary pointwise ops: neg, abs, relu (all numeric dtypes) and the floating
// math functions (inputs of integer dtype were promoted by the core). float16
// and bfloat16 compute in float and round once.
#include <cmath>
#include <cstring>

#include "common.h"

namespace bp_cpu {
namespace {

// Runs out = f(self) for every dtype `Allowed<T>` accepts.
template <template <typename> class Allowed, typename Make>
bp_status_t Unary(const bp_kernel_call_t* call, Make make) {
  const DLTensor* a = TensorArg(call, 0);
  DLTensor* out = call->outputs[0];
  if (a == nullptr) return Fail(call, BP_STATUS_INVALID_ARGUMENT, "argument 'self' expected a tensor");
  const Dt dt = DtOf(out->dtype);
  if (dt == Dt::kInvalid) return FailDtype(call, *out);
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

bp_status_t Relu(const bp_kernel_call_t* call) {
  return Unary<NoBool>(call, [](auto tag) {
    using C = opmath_t<typename decltype(tag)::type>;
    // NaN stays NaN (x > 0 is false, x != x picks x), as torch.relu.
    return [](C x) -> C { return (x > C(0) || x != x) ? x : C(0); };
  });
}

// Floating math: one line per op, computed in opmath_t (float or double).
#define BP_CPU_FLOAT_UNARY(NAME, EXPR)                          \
  bp_status_t NAME(const bp_kernel_call_t* call) {              \
    return Unary<FloatOnly>(call, [](auto tag) {                \
      using C = opmath_t<typename decltype(tag)::type>;         \
      return [](C x) -> C { return EXPR; };                     \
    });                                                         \
  }

BP_CPU_FLOAT_UNARY(Exp, std::exp(x))
BP_CPU_FLOAT_UNARY(Log, std::log(x))
BP_CPU_FLOAT_UNARY(Sqrt, std::sqrt(x))
BP_CPU_FLOAT_UNARY(Rsqrt, C(1) / std::sqrt(x))
BP_CPU_FLOAT_UNARY(Sin, std::sin(x))
BP_CPU_FLOAT_UNARY(Cos, std::cos(x))
BP_CPU_FLOAT_UNARY(Tanh, std::tanh(x))
BP_CPU_FLOAT_UNARY(Sigmoid, C(1) / (C(1) + std::exp(-x)))
BP_CPU_FLOAT_UNARY(Erf, std::erf(x))
BP_CPU_FLOAT_UNARY(Silu, x / (C(1) + std::exp(-x)))
#undef BP_CPU_FLOAT_UNARY

bp_status_t Gelu(const bp_kernel_call_t* call) {
  const char* approximate = StringArg(call, 1);
  bool tanh_form = false;
  if (approximate != nullptr && std::strcmp(approximate, "none") != 0) {
    if (std::strcmp(approximate, "tanh") != 0) {
      return Fail(call, BP_STATUS_INVALID_ARGUMENT,
                  "argument 'approximate' expected 'none' or 'tanh' but got '%s'", approximate);
    }
    tanh_form = true;
  }
  if (tanh_form) {
    return Unary<FloatOnly>(call, [](auto tag) {
      using C = opmath_t<typename decltype(tag)::type>;
      return [](C x) -> C {
        const C kBeta = C(0.7978845608028654);  // sqrt(2 / pi)
        const C inner = kBeta * (x + C(0.044715) * x * x * x);
        return C(0.5) * x * (C(1) + std::tanh(inner));
      };
    });
  }
  return Unary<FloatOnly>(call, [](auto tag) {
    using C = opmath_t<typename decltype(tag)::type>;
    return [](C x) -> C { return x * C(0.5) * (C(1) + std::erf(x * C(0.7071067811865476))); };
  });
}

const KernelDef kKernels[] = {
    {"neg", Neg},     {"abs", Abs},       {"exp", Exp},         {"log", Log},   {"sqrt", Sqrt},
    {"rsqrt", Rsqrt}, {"sin", Sin},       {"cos", Cos},         {"tanh", Tanh}, {"sigmoid", Sigmoid},
    {"erf", Erf},     {"relu", Relu},     {"gelu", Gelu},       {"silu", Silu},
};

}  // namespace

const KernelDef* UnaryKernels(size_t* count) {
  *count = sizeof(kKernels) / sizeof(kKernels[0]);
  return kKernels;
}

}  // namespace bp_cpu
