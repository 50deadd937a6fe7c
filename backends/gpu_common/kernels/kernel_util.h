// Helpers for kernel entry points (host side): argument access, errors with
// the operator's name, launch checks. Included by the .cu kernel files.
#pragma once

#include <cstdarg>
#include <cstdint>

#include "backplane/backend.h"
#include "backplane/op_args.h"
#include "backplane/plugin_kit.h"
#include "dtype_dispatch.h"
#include "gpu_runtime.h"
#include "launch_config.h"
#include "offset_calc.h"
#include "plugin.h"

namespace bp_gpu {

// Reports an error on the call (ABI >= 1.2; the host's set_error on an older
// host) as "cuda: add.Tensor: <what>" (plugin kit), and returns `code`.
inline bp_status_t KernelError(const bp_kernel_call_t* call, bp_status_t code, const char* fmt, ...)
    BP_KIT_PRINTF(3, 4);
inline bp_status_t KernelError(const bp_kernel_call_t* call, bp_status_t code, const char* fmt, ...) {
  PluginState* st = StateOf(call);
  va_list ap;
  va_start(ap, fmt);
  const bp_status_t rc = bp_kit_vfailf(call, st != nullptr ? st->host : nullptr, BP_GPU_PREFIX, code, fmt, ap);
  va_end(ap);
  return rc;
}

// Makes the call's device current on this thread.
inline bp_status_t EnterDevice(const bp_kernel_call_t* call) {
  gpuError_t e = gpuSetDevice(call->device_index);
  if (e != gpuSuccess) {
    return KernelError(call, BP_STATUS_UNAVAILABLE, BP_GPU_PREFIX "SetDevice(%d): %s",
                       call->device_index, gpuGetErrorString(e));
  }
  return BP_STATUS_OK;
}

// After a launch: reports a launch failure (bad configuration, no kernel
// image for this architecture) as INTERNAL naming the kernel.
inline bp_status_t CheckLaunch(const bp_kernel_call_t* call, const char* kernel) {
  gpuError_t e = gpuGetLastError();
  if (e != gpuSuccess) {
    return KernelError(call, BP_STATUS_INTERNAL, "launching %s failed: %s (%s)", kernel,
                       gpuGetErrorString(e), gpuGetErrorName(e));
  }
  return BP_STATUS_OK;
}

inline gpuStream_t StreamOf(const bp_kernel_call_t* call) {
  return static_cast<gpuStream_t>(call->stream);
}

inline int32_t SmCount(const bp_kernel_call_t* call) {
  PluginState* st = StateOf(call);
  if (!st || call->device_index < 0 || call->device_index >= st->device_count) return 1;
  return st->devices[call->device_index].sm_count;
}

// The grid-stride loop every pointwise-shaped kernel runs: linear index i
// over [0, n), whatever the grid size.
#define BP_GRID_STRIDE_LOOP(i, n)                                                        \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

// Typed address of a tensor's first element (data + byte_offset).
template <typename T>
inline T* DataPtr(const DLTensor* t) {
  return reinterpret_cast<T*>(static_cast<char*>(t->data) + t->byte_offset);
}

inline int64_t TensorNumel(const DLTensor* t) { return Numel(t->ndim, t->shape); }

// Argument indices of kernel families that serve several operators
// (backplane/op_args.h names them per operator; the asserts prove the family
// agrees, so one kernel body may read them by one name).
namespace arg {
constexpr int kSelf = BP_ARG_ADD_TENSOR_SELF;    // binary, comparison, unary, reductions
constexpr int kOther = BP_ARG_ADD_TENSOR_OTHER;  // binary, comparison
constexpr int kAlpha = BP_ARG_ADD_TENSOR_ALPHA;  // add, sub
constexpr int kDim = BP_ARG_SUM_DIM_INTLIST_DIM;  // reductions
static_assert(kSelf == BP_ARG_MUL_TENSOR_SELF && kOther == BP_ARG_MUL_TENSOR_OTHER && kSelf == BP_ARG_EQ_TENSOR_SELF &&
                  kOther == BP_ARG_EQ_TENSOR_OTHER && kSelf == BP_ARG_POW_TENSOR_TENSOR_SELF &&
                  kOther == BP_ARG_POW_TENSOR_TENSOR_EXPONENT && kSelf == BP_ARG_NEG_SELF &&
                  kSelf == BP_ARG_GELU_SELF && kSelf == BP_ARG_DIV_TENSOR_MODE_SELF,
              "binary, comparison and unary kernels read self and other at the same indices");
static_assert(kAlpha == BP_ARG_SUB_TENSOR_ALPHA, "add and sub read alpha at the same index");
static_assert(kSelf == BP_ARG_SUM_DIM_INTLIST_SELF && kSelf == BP_ARG_MEAN_DIM_SELF && kDim == BP_ARG_MEAN_DIM_DIM &&
                  kDim == BP_ARG_AMAX_DIM && kDim == BP_ARG_AMIN_DIM && kDim == BP_ARG_ARGMAX_DIM,
              "reductions read self and dim at the same indices");
static_assert(BP_ARG_SOFTMAX_INT_DIM == BP_ARG_LOG_SOFTMAX_INT_DIM, "softmax and log_softmax read dim alike");
}  // namespace arg

// A Scalar argument as the caller gave it (INT, DOUBLE or BOOL); `fallback`
// when absent (NONE) or out of range.
struct ScalarValue {
  bool is_floating = false;
  double d = 0.0;
  int64_t i = 0;
  template <typename A>
  A As() const {
    if (is_floating) return static_cast<A>(d);
    return static_cast<A>(i);
  }
};

inline ScalarValue ScalarArg(const bp_kernel_call_t* call, int i, double fallback) {
  ScalarValue v;
  v.is_floating = true;
  v.d = fallback;
  v.i = static_cast<int64_t>(fallback);
  const bp_kernel_arg_t& a = *bp_kit_arg(call, i);  // NONE past num_args
  if (a.kind == BP_VALUE_INT) {
    v.is_floating = false;
    v.i = a.u.i;
    v.d = static_cast<double>(a.u.i);
  } else if (a.kind == BP_VALUE_BOOL) {
    v.is_floating = false;
    v.i = a.u.b ? 1 : 0;
    v.d = static_cast<double>(v.i);
  } else if (a.kind == BP_VALUE_DOUBLE) {
    v.d = a.u.d;
    v.i = static_cast<int64_t>(a.u.d);
  }
  return v;
}

inline bool SameDtype(const DLTensor* a, const DLTensor* b) {
  return a->dtype.code == b->dtype.code && a->dtype.bits == b->dtype.bits &&
         a->dtype.lanes == b->dtype.lanes;
}

// A tensor's dtype, checked against the family's allowed set.
inline bp_status_t CheckDtype(const bp_kernel_call_t* call, const char* what, const DLTensor* t,
                              bool allow_bool, bool allow_int, DType* out) {
  const DType s = DtypeOf(t->dtype);
  bool ok = s != DType::kInvalid;
  if (s == DType::kBool && !allow_bool) ok = false;
  if (!bp_kit::IsFloating(s) && s != DType::kBool && !allow_int) ok = false;
  if (!ok) {
    // UNIMPLEMENTED before writing anything: the dispatcher then runs the
    // CPU fallback for this call (backend.h kernel contract).
    return KernelError(call, BP_STATUS_UNIMPLEMENTED,
                       "argument '%s' has dtype %s (code %d, bits %d), which this kernel does not take", what,
                       DtypeName(s), t->dtype.code, t->dtype.bits);
  }
  *out = s;
  return BP_STATUS_OK;
}

// The kernels read `t` as `ref`'s element type. The contract (ops.yaml) has
// the core cast inputs first; should a call arrive without that cast, it
// goes to the CPU fallback (UNIMPLEMENTED, nothing written) rather than being
// misread. `t` may be NULL (an absent optional tensor).
inline bp_status_t RequireSameDtype(const bp_kernel_call_t* call, const DLTensor* ref,
                                    const char* ref_name, const DLTensor* t, const char* name) {
  if (!t || SameDtype(ref, t)) return BP_STATUS_OK;
  return KernelError(call, BP_STATUS_UNIMPLEMENTED,
                     "argument '%s' has dtype %s but '%s' has %s; this kernel needs them equal", name,
                     DtypeName(DtypeOf(t->dtype)), ref_name, DtypeName(DtypeOf(ref->dtype)));
}

inline bp_status_t RequireDtype(const bp_kernel_call_t* call, const DLTensor* t, const char* name,
                                DType want) {
  if (DtypeOf(t->dtype) == want) return BP_STATUS_OK;
  return KernelError(call, BP_STATUS_UNIMPLEMENTED, "argument '%s' has dtype %s, expected %s", name,
                     DtypeName(DtypeOf(t->dtype)), DtypeName(want));
}

}  // namespace bp_gpu
