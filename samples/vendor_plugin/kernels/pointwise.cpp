// The three operators vendor_sim runs natively: add.Tensor and relu, for the
// plain C dtypes (float32, float64, int8, uint8, int32, int64, bool); relu
// also for float16/bfloat16 (a sign-bit test needs no arithmetic); exp for
// float32 only. register.cpp declares these dtypes (ABI 1.3 dtype masks), so
// the host routes every other dtype to the CPU fallback before it allocates
// anything, and casts an int32 exp to float32 for the kernel (the cast
// route). On an older host the kernels still decline what they lack
// (UNIMPLEMENTED before touching memory), as every kernel may.
#include <cmath>
//
// A kernel receives DLTensors whose `data` is an arena handle from
// allocate(); it resolves the handle to an address inside the arena. Inputs
// arrive broadcast to the output's sizes (stride 0) and promoted to one
// dtype; the output may be any strided view (see the KERNEL CONTRACT in
// abi/ops.yaml).
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels.h"

namespace vendor_sim {
namespace {

// Address of element 0 of a view, after checking that every element the
// view can reach lies inside its allocation. nullptr if not.
template <typename T>
T* Base(State* s, const DLTensor& t) {
  int64_t numel = 1, last = 0;
  for (int d = 0; d < t.ndim; ++d) {
    numel *= t.shape[d];
    if (t.shape[d] > 0) last += (t.shape[d] - 1) * t.strides[d];
  }
  if (numel == 0) return nullptr;
  const size_t span = static_cast<size_t>(last + 1) * sizeof(T);
  return reinterpret_cast<T*>(s->arena.Resolve(t.data, static_cast<size_t>(t.byte_offset), span));
}

// Walks every index of `out`'s sizes; f(out_offset, in_offsets...) in elements.
template <int N, typename F>
void ForEachIndex(const DLTensor& out, const DLTensor* const (&in)[N], F f) {
  int64_t idx[BP_MAX_NDIM] = {};
  int64_t numel = 1;
  for (int d = 0; d < out.ndim; ++d) numel *= out.shape[d];
  for (int64_t i = 0; i < numel; ++i) {
    int64_t o = 0, x[N > 0 ? N : 1] = {};
    for (int d = 0; d < out.ndim; ++d) {
      o += idx[d] * out.strides[d];
      for (int k = 0; k < N; ++k) x[k] += idx[d] * in[k]->strides[d];
    }
    f(o, x);
    for (int d = out.ndim - 1; d >= 0; --d) {
      if (++idx[d] < out.shape[d]) break;
      idx[d] = 0;
    }
  }
}

// Calls f(T{}) with the C type of `t`'s dtype; false for float16/bfloat16.
template <typename F>
bool WithPlainType(const DLTensor& t, F f) {
  switch (t.dtype.code) {
    case kDLFloat:
      if (t.dtype.bits == 32) return f(float{}), true;
      if (t.dtype.bits == 64) return f(double{}), true;
      return false;
    case kDLInt:
      if (t.dtype.bits == 8) return f(int8_t{}), true;
      if (t.dtype.bits == 32) return f(int32_t{}), true;
      if (t.dtype.bits == 64) return f(int64_t{}), true;
      return false;
    case kDLUInt: return f(uint8_t{}), true;
    case BP_DTYPE_CODE_BOOL: return f(bool{}), true;
    default: return false;
  }
}

// self + alpha * other, wrapping for integers and "or" for bool, as torch.add.
template <typename T>
T AddOne(T x, T y, double alpha_d, int64_t alpha_i) {
  if constexpr (std::is_same<T, bool>::value) {
    return x || (alpha_i != 0 && y);
  } else if constexpr (std::is_integral<T>::value) {
    return static_cast<T>(static_cast<uint64_t>(x) + static_cast<uint64_t>(alpha_i) * static_cast<uint64_t>(y));
  } else {
    return alpha_d == 1.0 ? x + y : static_cast<T>(x + static_cast<T>(alpha_d) * y);
  }
}

}  // namespace

bp_status_t Add(const bp_kernel_call_t* call) {
  State* s = static_cast<State*>(call->kernel_data);
  const DLTensor* a = call->args[BP_ARG_ADD_TENSOR_SELF].u.tensor;
  const DLTensor* b = call->args[BP_ARG_ADD_TENSOR_OTHER].u.tensor;
  const DLTensor* out = call->outputs[0];
  double alpha_d = 1.0;
  int64_t alpha_i = 1;
  if (call->num_args > BP_ARG_ADD_TENSOR_ALPHA) {
    const bp_kernel_arg_t& al = call->args[BP_ARG_ADD_TENSOR_ALPHA];
    if (al.kind == BP_VALUE_INT) alpha_d = static_cast<double>(alpha_i = al.u.i);
    if (al.kind == BP_VALUE_DOUBLE) alpha_i = static_cast<int64_t>(alpha_d = al.u.d);
    if (al.kind == BP_VALUE_BOOL) alpha_d = static_cast<double>(alpha_i = al.u.b);
  }
  bp_status_t status = BP_STATUS_OK;
  const bool handled = WithPlainType(*out, [&](auto tag) {
    using T = decltype(tag);
    T* po = Base<T>(s, *out);
    const T* pa = Base<T>(s, *a);
    const T* pb = Base<T>(s, *b);
    if (po == nullptr) return;  // zero-size
    if (pa == nullptr || pb == nullptr) {
      status = KernelFail(call, BP_STATUS_INVALID_ARGUMENT, "a tensor handle is not a live vendor_sim allocation");
      return;
    }
    const DLTensor* in[2] = {a, b};
    ForEachIndex<2>(*out, in, [&](int64_t o, const int64_t* x) { po[o] = AddOne<T>(pa[x[0]], pb[x[1]], alpha_d, alpha_i); });
  });
  if (!handled) {
    // No float16/bfloat16 arithmetic here: hand the call to the CPU fallback.
    return KernelFail(call, BP_STATUS_UNIMPLEMENTED, "float16/bfloat16 are not native; they fall back");
  }
  return status;
}

bp_status_t Relu(const bp_kernel_call_t* call) {
  State* s = static_cast<State*>(call->kernel_data);
  const DLTensor* a = call->args[BP_ARG_RELU_SELF].u.tensor;
  const DLTensor* out = call->outputs[0];
  const DLTensor* in[1] = {a};
  bp_status_t status = BP_STATUS_OK;
  auto bad = [&] {
    status = KernelFail(call, BP_STATUS_INVALID_ARGUMENT, "'self' is not a live vendor_sim allocation");
  };
  const bool handled = WithPlainType(*out, [&](auto tag) {
    using T = decltype(tag);
    T* po = Base<T>(s, *out);
    const T* pa = Base<T>(s, *a);
    if (po == nullptr) return;
    if (pa == nullptr) return bad();
    ForEachIndex<1>(*out, in, [&](int64_t o, const int64_t* x) {
      const T v = pa[x[0]];
      po[o] = (v > T(0) || v != v) ? v : T(0);  // NaN stays NaN, as torch.relu
    });
  });
  if (!handled) {
    // float16/bfloat16: zero when the sign bit is set, unless NaN.
    const uint16_t exp_mask = out->dtype.code == kDLBfloat ? 0x7f80 : 0x7c00;
    const uint16_t man_mask = out->dtype.code == kDLBfloat ? 0x007f : 0x03ff;
    uint16_t* po = Base<uint16_t>(s, *out);
    const uint16_t* pa = Base<uint16_t>(s, *a);
    if (po == nullptr) return BP_STATUS_OK;
    if (pa == nullptr) return bad(), status;
    ForEachIndex<1>(*out, in, [&](int64_t o, const int64_t* x) {
      const uint16_t v = pa[x[0]];
      const bool nan = (v & exp_mask) == exp_mask && (v & man_mask) != 0;
      po[o] = ((v & 0x8000u) != 0 && !nan) ? uint16_t{0} : v;
    });
  }
  return status;
}

bp_status_t Exp(const bp_kernel_call_t* call) {
  State* s = static_cast<State*>(call->kernel_data);
  const DLTensor* a = call->args[BP_ARG_EXP_SELF].u.tensor;
  const DLTensor* out = call->outputs[0];
  if (out->dtype.code != kDLFloat || out->dtype.bits != 32) {
    return KernelFail(call, BP_STATUS_UNIMPLEMENTED, "only float32 is native; other dtypes fall back");
  }
  float* po = Base<float>(s, *out);
  const float* pa = Base<float>(s, *a);
  if (po == nullptr) return BP_STATUS_OK;
  if (pa == nullptr) return KernelFail(call, BP_STATUS_INVALID_ARGUMENT, "'self' is not a live vendor_sim allocation");
  const DLTensor* in[1] = {a};
  ForEachIndex<1>(*out, in, [&](int64_t o, const int64_t* x) { po[o] = std::exp(pa[x[0]]); });
  return BP_STATUS_OK;
}

}  // namespace vendor_sim
