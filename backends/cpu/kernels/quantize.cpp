// quantize_linear and dequantize_linear (ONNX QuantizeLinear-13 /
// DequantizeLinear-13), one pass over x each. A per-axis scale and zero
// point are handed to the row loop as views broadcast over x's sizes
// (stride 0 except along axis), so per tensor and per axis share one loop,
// any strides, threaded by RunOps like the other pointwise kernels. The
// inner loops are plain float arithmetic the compiler vectorizes (this file
// builds at -O3).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "backplane/op_args.h"
#include "common.h"

namespace bp_cpu {
namespace {

static_assert(BP_ARG_QUANTIZE_LINEAR_X == BP_ARG_DEQUANTIZE_LINEAR_X &&
                  BP_ARG_QUANTIZE_LINEAR_SCALE == BP_ARG_DEQUANTIZE_LINEAR_SCALE &&
                  BP_ARG_QUANTIZE_LINEAR_ZERO_POINT == BP_ARG_DEQUANTIZE_LINEAR_ZERO_POINT &&
                  BP_ARG_QUANTIZE_LINEAR_AXIS == BP_ARG_DEQUANTIZE_LINEAR_AXIS,
              "quantize_linear and dequantize_linear read their arguments alike");

// A scale or zero point seen with out's sizes: its one stride on `axis`,
// 0 elsewhere (axis -1: stride 0 everywhere, one value for all).
struct ParamView {
  DLTensor t;
  int64_t shape[BP_MAX_NDIM];
  int64_t strides[BP_MAX_NDIM];
};
void AlongAxis(const DLTensor& p, const DLTensor& out, int64_t axis, ParamView* v) {
  v->t = p;
  v->t.ndim = out.ndim;
  v->t.shape = v->shape;
  v->t.strides = v->strides;
  for (int d = 0; d < out.ndim; ++d) {
    v->shape[d] = out.shape[d];
    v->strides[d] = 0;
  }
  if (axis >= 0) v->strides[axis] = p.ndim == 0 ? 0 : (p.strides != nullptr ? p.strides[0] : 1);
}

// Checks every scale is positive and finite before anything is written: a
// zero, negative or NaN scale would make every quotient meaningless.
bp_status_t CheckScales(const bp_kernel_call_t* call, const DLTensor& scale) {
  const int64_t n = Numel(scale), st = scale.ndim == 0 || scale.strides == nullptr ? 1 : scale.strides[0];
  const float* s = reinterpret_cast<const float*>(DataPtr(scale));
  for (int64_t i = 0; i < n; ++i) {
    const float v = s[i * st];
    if (!(v > 0.0f) || !std::isfinite(v)) {
      return Fail(call, BP_STATUS_INVALID_ARGUMENT,
                  "argument 'scale' must hold positive finite scales but holds %g at position %lld", v,
                  static_cast<long long>(i));
    }
  }
  return BP_STATUS_OK;
}

// saturate(round_half_even(x / scale) + zero_point) in [lo, hi]. The
// quotient is first clamped to +-2^22 (beyond any quantized range, so the
// result is unchanged); there, adding and subtracting 1.5 * 2^23 rounds to
// an integer half to even in the default rounding mode, which vectorizes
// where std::nearbyint becomes a call. A NaN quotient stays NaN until
// std::max(lo, v), which gives lo: NaN saturates to lo. (The min/max
// selects vectorize with -fno-trapping-math, set for this file.)
inline float QuantizeOne(float x, float scale, float zp, float lo, float hi) {
  constexpr float kLimit = 4194304.0f, kMagic = 12582912.0f;
  float v = x / scale;
  v = std::max(std::min(v, kLimit), -kLimit);
  v = (v + kMagic) - kMagic;
  return std::min(std::max(lo, v + zp), hi);
}

template <typename Q>
void QuantizeRows(const DLTensor& out, const DLTensor& x, const DLTensor& scale, const DLTensor& zp) {
  const float lo = std::is_signed<Q>::value ? -128.0f : 0.0f, hi = std::is_signed<Q>::value ? 127.0f : 255.0f;
  const DLTensor* ops[4] = {&out, &x, &scale, &zp};
  RunOps(ops, [&](char* const* p, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(Q) && s[1] == sizeof(float) && s[2] == 0 && s[3] == 0) {
      Q* o = reinterpret_cast<Q*>(p[0]);
      const float* xs = reinterpret_cast<const float*>(p[1]);
      const float sc = *reinterpret_cast<const float*>(p[2]), z = static_cast<float>(*reinterpret_cast<const Q*>(p[3]));
      // Locals, not the captured bounds: stores through a byte pointer may
      // alias a captured variable, which would keep the loop scalar.
      const float l = lo, h = hi;
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<Q>(static_cast<int32_t>(QuantizeOne(xs[i], sc, z, l, h)));
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      const float v = QuantizeOne(*reinterpret_cast<const float*>(p[1] + i * s[1]),
                                  *reinterpret_cast<const float*>(p[2] + i * s[2]),
                                  static_cast<float>(*reinterpret_cast<const Q*>(p[3] + i * s[3])), lo, hi);
      *reinterpret_cast<Q*>(p[0] + i * s[0]) = static_cast<Q>(static_cast<int32_t>(v));
    }
  });
}

// (x - zero_point) * scale in float32, as ONNX's reference computes it.
template <typename X>
void DequantizeRows(const DLTensor& out, const DLTensor& x, const DLTensor& scale, const DLTensor& zp) {
  const DLTensor* ops[4] = {&out, &x, &scale, &zp};
  RunOps(ops, [&](char* const* p, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(float) && s[1] == sizeof(X) && s[2] == 0 && s[3] == 0) {
      float* o = reinterpret_cast<float*>(p[0]);
      const X* xs = reinterpret_cast<const X*>(p[1]);
      const float sc = *reinterpret_cast<const float*>(p[2]), z = static_cast<float>(*reinterpret_cast<const X*>(p[3]));
      for (int64_t i = 0; i < n; ++i) o[i] = (static_cast<float>(xs[i]) - z) * sc;
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      const float xv = static_cast<float>(*reinterpret_cast<const X*>(p[1] + i * s[1]));
      const float z = static_cast<float>(*reinterpret_cast<const X*>(p[3] + i * s[3]));
      *reinterpret_cast<float*>(p[0] + i * s[0]) = (xv - z) * *reinterpret_cast<const float*>(p[2] + i * s[2]);
    }
  });
}

// The common prologue: arguments, the scale check, and the scale and zero
// point views. Without a zero point, zeros of `zp_dtype` stand in (one per
// scale), so one loop serves both.
struct Prepared {
  const DLTensor* x = nullptr;
  ParamView scale, zp;
  std::vector<int32_t> zeros;  // backs zp when the call has none (int32 covers every zero point dtype)
};
bp_status_t Prepare(const bp_kernel_call_t* call, DLDataType zp_dtype, Prepared* pr) {
  pr->x = bp_kit_tensor_arg(call, BP_ARG_QUANTIZE_LINEAR_X);
  const DLTensor* scale = bp_kit_tensor_arg(call, BP_ARG_QUANTIZE_LINEAR_SCALE);
  const DLTensor* zp = bp_kit_tensor_arg(call, BP_ARG_QUANTIZE_LINEAR_ZERO_POINT);
  const int64_t axis = bp_kit_int_arg(call, BP_ARG_QUANTIZE_LINEAR_AXIS, -1);
  const DLTensor& out = *call->outputs[0];
  if (pr->x == nullptr || scale == nullptr || DtypeOf(scale->dtype) != DType::kFloat32 || axis < -1 || axis >= out.ndim)
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "expected x, a float32 scale and a normalized axis");
  const bp_status_t st = CheckScales(call, *scale);
  if (st != BP_STATUS_OK) return st;
  AlongAxis(*scale, out, axis, &pr->scale);
  if (zp != nullptr) {
    AlongAxis(*zp, out, axis, &pr->zp);
  } else {
    pr->zeros.assign(static_cast<size_t>(Numel(*scale)), 0);
    DLTensor z = *scale;
    z.data = pr->zeros.data();
    z.byte_offset = 0;
    z.dtype = zp_dtype;
    // A zero of any dtype is all zero bytes: the int32 buffer read as
    // zp_dtype, one element apart, holds enough bytes for either width.
    int64_t one = 1;  // read by AlongAxis only
    z.strides = &one;
    AlongAxis(z, out, axis, &pr->zp);
  }
  return BP_STATUS_OK;
}

bp_status_t QuantizeLinear(const bp_kernel_call_t* call) {
  const DLTensor& out = *call->outputs[0];
  Prepared pr;
  const bp_status_t st = Prepare(call, out.dtype, &pr);
  if (st != BP_STATUS_OK) return st;
  if (DtypeOf(pr.x->dtype) != DType::kFloat32) return FailDtype(call, *pr.x);
  switch (DtypeOf(out.dtype)) {
    case DType::kInt8:
      QuantizeRows<int8_t>(out, *pr.x, pr.scale.t, pr.zp.t);
      return BP_STATUS_OK;
    case DType::kUInt8:
      QuantizeRows<uint8_t>(out, *pr.x, pr.scale.t, pr.zp.t);
      return BP_STATUS_OK;
    default:
      return FailDtype(call, out);
  }
}

bp_status_t DequantizeLinear(const bp_kernel_call_t* call) {
  const DLTensor& out = *call->outputs[0];
  const DLTensor* x = bp_kit_tensor_arg(call, BP_ARG_DEQUANTIZE_LINEAR_X);
  if (x == nullptr) return Fail(call, BP_STATUS_INVALID_ARGUMENT, "expected x");
  Prepared pr;
  const bp_status_t st = Prepare(call, x->dtype, &pr);
  if (st != BP_STATUS_OK) return st;
  if (DtypeOf(out.dtype) != DType::kFloat32) return FailDtype(call, out);
  switch (DtypeOf(x->dtype)) {
    case DType::kInt8:
      DequantizeRows<int8_t>(out, *x, pr.scale.t, pr.zp.t);
      return BP_STATUS_OK;
    case DType::kUInt8:
      DequantizeRows<uint8_t>(out, *x, pr.scale.t, pr.zp.t);
      return BP_STATUS_OK;
    case DType::kInt32:
      DequantizeRows<int32_t>(out, *x, pr.scale.t, pr.zp.t);
      return BP_STATUS_OK;
    default:
      return FailDtype(call, *x);
  }
}

const KernelDef kKernels[] = {
    {BP_OP_QUANTIZE_LINEAR, QuantizeLinear, nullptr},
    {BP_OP_DEQUANTIZE_LINEAR, DequantizeLinear, nullptr},
};

}  // namespace

const KernelDef* QuantizeKernels(size_t* count) {
  *count = sizeof(kKernels) / sizeof(kKernels[0]);
  return kKernels;
}

}  // namespace bp_cpu
