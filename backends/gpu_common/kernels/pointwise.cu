// Pointwise kernels: binary arithmetic, comparisons, where, unary math.
//
// One kernel per family and dtype; the op is a run-time id (uniform across
// the grid, so the switch costs a predictable branch, not divergence).
// Broadcasting and arbitrary strides come from the offset calculator; the
// meta functions already broadcast every operand to the output's sizes.
#include <cstdint>
#include <cstring>

#include "device_math.h"
#include "kernel_util.h"
#include "kernels.h"

namespace bp_gpu {
namespace {

template <typename T>
__global__ void BinaryKernel(int64_t n, OffsetCalculator<3> calc, T* out, const T* a, const T* b, int32_t op,
                             OpMath<T> alpha) {
  BP_GRID_STRIDE_LOOP(i, n) {
    int64_t off[3];
    calc.get(i, off);
    Store(out + off[0], ApplyBinary<OpMath<T>>(op, Load(a + off[1]), Load(b + off[2]), alpha));
  }
}

// Four consecutive elements, loaded and stored as one vector access.
template <typename T>
struct alignas(4 * sizeof(T)) Pack4 {
  T v[4];
};

// Operands contiguous in one layout and aligned for Pack4: four elements per
// thread and step, which is what lets a binary op approach copy bandwidth (the
// strided kernel moves one element per access); the last n % 4 follow one by one.
template <typename T>
__global__ void BinaryPackedKernel(int64_t n, T* out, const T* a, const T* b, int32_t op, OpMath<T> alpha) {
  const int64_t packs = n / 4;
  const Pack4<T>* a4 = reinterpret_cast<const Pack4<T>*>(a);
  const Pack4<T>* b4 = reinterpret_cast<const Pack4<T>*>(b);
  Pack4<T>* o4 = reinterpret_cast<Pack4<T>*>(out);
  BP_GRID_STRIDE_LOOP(i, packs) {
    const Pack4<T> x = a4[i], y = b4[i];
    Pack4<T> r;
#pragma unroll
    for (int k = 0; k < 4; ++k) Store(&r.v[k], ApplyBinary<OpMath<T>>(op, Load(&x.v[k]), Load(&y.v[k]), alpha));
    o4[i] = r;
  }
  BP_GRID_STRIDE_LOOP(j, n - packs * 4) {
    const int64_t i = packs * 4 + j;
    Store(out + i, ApplyBinary<OpMath<T>>(op, Load(a + i), Load(b + i), alpha));
  }
}

template <typename T>
bool PackAligned(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % alignof(Pack4<T>) == 0;
}

template <typename T>
__global__ void CompareKernel(int64_t n, OffsetCalculator<3> calc, bool* out, const T* a, const T* b, int32_t op) {
  BP_GRID_STRIDE_LOOP(i, n) {
    int64_t off[3];
    calc.get(i, off);
    out[off[0]] = ApplyCompare<OpMath<T>>(op, Load(a + off[1]), Load(b + off[2]));
  }
}

// Moves raw elements: the dtype only matters through its width.
template <typename U>
__global__ void WhereKernel(int64_t n, OffsetCalculator<4> calc, U* out, const bool* cond, const U* a, const U* b) {
  BP_GRID_STRIDE_LOOP(i, n) {
    int64_t off[4];
    calc.get(i, off);
    out[off[0]] = cond[off[1]] ? a[off[2]] : b[off[3]];
  }
}

template <typename T>
__global__ void UnaryKernel(int64_t n, OffsetCalculator<2> calc, T* out, const T* in, int32_t op) {
  BP_GRID_STRIDE_LOOP(i, n) {
    int64_t off[2];
    calc.get(i, off);
    Store(out + off[0], ApplyUnary<OpMath<T>>(op, Load(in + off[1])));
  }
}

template <int N>
OffsetCalculator<N> CalcFor(const DLTensor* out, const DLTensor* const (&ts)[N]) {
  const int64_t* strides[N];
  for (int k = 0; k < N; ++k) strides[k] = ts[k]->strides;
  return MakeOffsetCalculator<N>(out->ndim, out->shape, strides);
}

bp_status_t RunBinary(const bp_kernel_call_t* call, int32_t op) {
  const DLTensor* a = bp_kit_tensor_arg(call, arg::kSelf);
  const DLTensor* b = bp_kit_tensor_arg(call, arg::kOther);
  if (!a || !b || call->num_outputs < 1) {
    return KernelError(call, BP_STATUS_INVALID_ARGUMENT, "expected tensors self, other and an output");
  }
  const DLTensor* out = call->outputs[0];
  DType st = DType::kInvalid;
  if (bp_status_t s = CheckDtype(call, "out", out, true, true, &st)) return s;
  if (bp_status_t s = RequireSameDtype(call, out, "out", a, "self")) return s;
  if (bp_status_t s = RequireSameDtype(call, out, "out", b, "other")) return s;
  if (!bp_kit::IsFloating(st) && (op == kDiv || op == kDivTrunc || op == kDivFloor || op == kPow)) {
    // Integer division by zero and integers to negative powers are errors
    // that depend on the data; checking them here would need a device-wide
    // scan and a synchronization per call. The CPU fallback validates them
    // before writing (kernel contract), so these calls go there.
    return KernelError(call, BP_STATUS_UNIMPLEMENTED,
                       "integer %s runs on the CPU fallback (it validates the divisor/exponent)",
                       op == kPow ? "pow" : "division");
  }
  const int64_t n = TensorNumel(out);
  const LaunchConfig cfg = PointwiseLaunch(n, SmCount(call));
  if (cfg.grid == 0) return BP_STATUS_OK;
  if (bp_status_t s = EnterDevice(call)) return s;
  const DLTensor* const ts[3] = {out, a, b};
  const OffsetCalculator<3> calc = CalcFor<3>(out, ts);
  const ScalarValue alpha = ScalarArg(call, arg::kAlpha, 1.0);
  const bp_status_t s = DispatchAll(st, [&](auto tag) -> bp_status_t {
    using T = typename decltype(tag)::type;
    if (calc.contiguous && PackAligned<T>(DataPtr<T>(out)) && PackAligned<T>(DataPtr<const T>(a)) &&
        PackAligned<T>(DataPtr<const T>(b))) {
      const LaunchConfig packed = PointwiseLaunch((n + 3) / 4, SmCount(call));
      BP_GPU_LAUNCH(BinaryPackedKernel<T>, packed.grid, packed.block, 0, StreamOf(call))
      (n, DataPtr<T>(out), DataPtr<const T>(a), DataPtr<const T>(b), op, alpha.As<OpMath<T>>());
      return BP_STATUS_OK;
    }
    BP_GPU_LAUNCH(BinaryKernel<T>, cfg.grid, cfg.block, 0, StreamOf(call))
    (n, calc, DataPtr<T>(out), DataPtr<const T>(a), DataPtr<const T>(b), op, alpha.As<OpMath<T>>());
    return BP_STATUS_OK;
  });
  if (s != BP_STATUS_OK) return KernelError(call, s, "internal dtype dispatch failure");
  return CheckLaunch(call, "BinaryKernel");
}

}  // namespace

bp_status_t BinaryEntry(const bp_kernel_call_t* call) { return RunBinary(call, OpOf(call)); }

bp_status_t DivModeEntry(const bp_kernel_call_t* call) {
  const char* mode = bp_kit_string_arg(call, BP_ARG_DIV_TENSOR_MODE_ROUNDING_MODE);
  int32_t op = kDiv;
  if (mode && std::strcmp(mode, "trunc") == 0) {
    op = kDivTrunc;
  } else if (mode && std::strcmp(mode, "floor") == 0) {
    op = kDivFloor;
  } else if (mode) {
    return KernelError(call, BP_STATUS_INVALID_ARGUMENT,
                       "argument 'rounding_mode' must be None, 'trunc' or 'floor', got '%s'", mode);
  }
  return RunBinary(call, op);
}

bp_status_t CompareEntry(const bp_kernel_call_t* call) {
  const DLTensor* a = bp_kit_tensor_arg(call, arg::kSelf);
  const DLTensor* b = bp_kit_tensor_arg(call, arg::kOther);
  if (!a || !b || call->num_outputs < 1) {
    return KernelError(call, BP_STATUS_INVALID_ARGUMENT, "expected tensors self, other and an output");
  }
  const DLTensor* out = call->outputs[0];
  DType st = DType::kInvalid;
  if (bp_status_t s = CheckDtype(call, "self", a, true, true, &st)) return s;
  if (bp_status_t s = RequireSameDtype(call, a, "self", b, "other")) return s;
  if (bp_status_t s = RequireDtype(call, out, "out", DType::kBool)) return s;
  const int64_t n = TensorNumel(out);
  const LaunchConfig cfg = PointwiseLaunch(n, SmCount(call));
  if (cfg.grid == 0) return BP_STATUS_OK;
  if (bp_status_t s = EnterDevice(call)) return s;
  const DLTensor* const ts[3] = {out, a, b};
  const OffsetCalculator<3> calc = CalcFor<3>(out, ts);
  const int32_t op = OpOf(call);
  const bp_status_t s = DispatchAll(st, [&](auto tag) -> bp_status_t {
    using T = typename decltype(tag)::type;
    BP_GPU_LAUNCH(CompareKernel<T>, cfg.grid, cfg.block, 0, StreamOf(call))
    (n, calc, DataPtr<bool>(out), DataPtr<const T>(a), DataPtr<const T>(b), op);
    return BP_STATUS_OK;
  });
  if (s != BP_STATUS_OK) return KernelError(call, s, "internal dtype dispatch failure");
  return CheckLaunch(call, "CompareKernel");
}

bp_status_t WhereEntry(const bp_kernel_call_t* call) {
  const DLTensor* cond = bp_kit_tensor_arg(call, BP_ARG_WHERE_SELF_CONDITION);
  const DLTensor* a = bp_kit_tensor_arg(call, BP_ARG_WHERE_SELF_SELF);
  const DLTensor* b = bp_kit_tensor_arg(call, BP_ARG_WHERE_SELF_OTHER);
  if (!cond || !a || !b || call->num_outputs < 1) {
    return KernelError(call, BP_STATUS_INVALID_ARGUMENT, "expected tensors condition, self, other and an output");
  }
  const DLTensor* out = call->outputs[0];
  DType st = DType::kInvalid;
  if (bp_status_t s = CheckDtype(call, "out", out, true, true, &st)) return s;
  if (bp_status_t s = RequireSameDtype(call, out, "out", a, "self")) return s;
  if (bp_status_t s = RequireSameDtype(call, out, "out", b, "other")) return s;
  if (bp_status_t s = RequireDtype(call, cond, "condition", DType::kBool)) return s;
  const int64_t n = TensorNumel(out);
  const LaunchConfig cfg = PointwiseLaunch(n, SmCount(call));
  if (cfg.grid == 0) return BP_STATUS_OK;
  if (bp_status_t s = EnterDevice(call)) return s;
  const DLTensor* const ts[4] = {out, cond, a, b};
  const OffsetCalculator<4> calc = CalcFor<4>(out, ts);
  const bp_status_t s = DispatchBySize(static_cast<int>(DtypeSize(st)), [&](auto tag) -> bp_status_t {
    using U = typename decltype(tag)::type;
    BP_GPU_LAUNCH(WhereKernel<U>, cfg.grid, cfg.block, 0, StreamOf(call))
    (n, calc, DataPtr<U>(out), DataPtr<const bool>(cond), DataPtr<const U>(a), DataPtr<const U>(b));
    return BP_STATUS_OK;
  });
  if (s != BP_STATUS_OK) return KernelError(call, s, "internal dtype dispatch failure");
  return CheckLaunch(call, "WhereKernel");
}

bp_status_t UnaryEntry(const bp_kernel_call_t* call) {
  const DLTensor* in = bp_kit_tensor_arg(call, arg::kSelf);
  if (!in || call->num_outputs < 1) {
    return KernelError(call, BP_STATUS_INVALID_ARGUMENT, "expected tensor self and an output");
  }
  const DLTensor* out = call->outputs[0];
  int32_t op = OpOf(call);
  if (op == kGelu) {
    const char* approximate = bp_kit_string_arg(call, BP_ARG_GELU_APPROXIMATE);
    if (approximate && std::strcmp(approximate, "tanh") == 0) {
      op = kGeluTanh;
    } else if (approximate && std::strcmp(approximate, "none") != 0) {
      return KernelError(call, BP_STATUS_INVALID_ARGUMENT, "argument 'approximate' must be 'none' or 'tanh', got '%s'",
                         approximate);
    }
  }
  const bool int_ok = op == kNeg || op == kAbs || op == kRelu || op == kRound;
  DType st = DType::kInvalid;
  if (bp_status_t s = CheckDtype(call, "self", out, false, int_ok, &st)) return s;
  if (bp_status_t s = RequireSameDtype(call, out, "out", in, "self")) return s;
  const int64_t n = TensorNumel(out);
  const LaunchConfig cfg = PointwiseLaunch(n, SmCount(call));
  if (cfg.grid == 0) return BP_STATUS_OK;
  if (bp_status_t s = EnterDevice(call)) return s;
  const DLTensor* const ts[2] = {out, in};
  const OffsetCalculator<2> calc = CalcFor<2>(out, ts);
  const bp_status_t s = DispatchNoBool(st, [&](auto tag) -> bp_status_t {
    using T = typename decltype(tag)::type;
    BP_GPU_LAUNCH(UnaryKernel<T>, cfg.grid, cfg.block, 0, StreamOf(call))
    (n, calc, DataPtr<T>(out), DataPtr<const T>(in), op);
    return BP_STATUS_OK;
  });
  if (s != BP_STATUS_OK) return KernelError(call, s, "internal dtype dispatch failure");
  return CheckLaunch(call, "UnaryKernel");
}

}  // namespace bp_gpu
