// Shared by every CPU kernel family: error reporting, argument access, and
// pointwise row loops built on StridedLoop (the plugin state is in plugin.h,
// the kernel table type in kernels.h).
#pragma once

#include <cstdarg>
#include <cstddef>

#include "backplane/backend.h"
#include "backplane/op_args.h"
#include "backplane/plugin_kit.h"
#include "dtype.h"
#include "iter.h"
#include "kernels.h"
#include "plugin.h"  // CpuState

namespace bp_cpu {

inline const bp_host_api_t* HostOf(const bp_kernel_call_t* call) {
  const CpuState* s = static_cast<const CpuState*>(call->kernel_data);
  if (s == nullptr) s = static_cast<const CpuState*>(call->backend_data);
  if (s == nullptr) s = g_state;
  return s != nullptr ? s->host : nullptr;
}

// Reports an error on the call (ABI >= 1.2; the host's set_error on an older
// host) as "<op>: <message>" (plugin kit), and returns `code`. Never throws.
inline bp_status_t Fail(const bp_kernel_call_t* call, bp_status_t code, const char* fmt, ...) BP_KIT_PRINTF(3, 4);
inline bp_status_t Fail(const bp_kernel_call_t* call, bp_status_t code, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const bp_status_t rc = bp_kit_vfailf(call, HostOf(call), nullptr, code, fmt, ap);
  va_end(ap);
  return rc;
}

inline bp_status_t FailDtype(const bp_kernel_call_t* call, const DLTensor& t) {
  return Fail(call, BP_STATUS_UNIMPLEMENTED, "the CPU backend has no kernel for dtype %s", DtypeName(DtypeOf(t.dtype)));
}

// Arguments are read with the plugin kit's accessors (bp_kit_tensor_arg,
// bp_kit_int_arg, ...: missing trailing arguments read as NONE) at BP_ARG_*
// indices. A kernel serving a family reads them under one operator's names;
// these prove the family agrees.
static_assert(BP_ARG_ADD_TENSOR_SELF == BP_ARG_MUL_TENSOR_SELF && BP_ARG_ADD_TENSOR_OTHER == BP_ARG_MUL_TENSOR_OTHER &&
                  BP_ARG_ADD_TENSOR_ALPHA == BP_ARG_SUB_TENSOR_ALPHA &&
                  BP_ARG_ADD_TENSOR_OTHER == BP_ARG_DIV_TENSOR_MODE_OTHER &&
                  BP_ARG_EQ_TENSOR_OTHER == BP_ARG_LT_TENSOR_OTHER && BP_ARG_NEG_SELF == BP_ARG_GELU_SELF &&
                  BP_ARG_SUM_DIM_INTLIST_DIM == BP_ARG_AMAX_DIM && BP_ARG_SUM_DIM_INTLIST_DIM == BP_ARG_MEAN_DIM_DIM,
              "binary, comparison, unary and reduction kernels read their arguments at the same indices");
static_assert(BP_ARG_MAX_POOL2D_KERNEL_SIZE == BP_ARG_AVG_POOL2D_KERNEL_SIZE &&
                  BP_ARG_MAX_POOL2D_STRIDE == BP_ARG_AVG_POOL2D_STRIDE &&
                  BP_ARG_MAX_POOL2D_PADDING == BP_ARG_AVG_POOL2D_PADDING &&
                  BP_ARG_SOFTMAX_INT_DIM == BP_ARG_LOG_SOFTMAX_INT_DIM,
              "max and avg pooling, softmax and log_softmax read their arguments alike");

// An int[2] argument into out (an INT, or a one-element list, is used for
// both dims; NONE or an empty list gives dflt). False when the argument is
// of another kind.
inline bool IntPairArg(const bp_kernel_call_t* call, int i, int64_t dflt, int64_t out[2]) {
  const int64_t* v = nullptr;
  const int64_t n = bp_kit_int_list_arg(call, i, &v);
  if (n == 0) {
    out[0] = out[1] = dflt;
    return bp_kit_arg(call, i)->kind == BP_VALUE_NONE || bp_kit_arg(call, i)->kind == BP_VALUE_INT_LIST;
  }
  out[0] = v[0];
  out[1] = n > 1 ? v[1] : v[0];
  return true;
}

// A scalar argument converted to opmath_t<T> (integers stay exact).
template <typename T>
inline opmath_t<T> ScalarArg(const bp_kernel_call_t* call, int i, opmath_t<T> dflt) {
  const bp_kernel_arg_t* a = bp_kit_arg(call, i);
  using C = opmath_t<T>;
  switch (a->kind) {
    case BP_VALUE_INT: return Cast<C>(a->u.i);
    case BP_VALUE_DOUBLE: return Cast<C>(a->u.d);
    case BP_VALUE_BOOL: return Cast<C>(a->u.b != 0);
    default: return dflt;
  }
}

// A scalar argument converted straight to storage type T (rounded once).
template <typename T>
inline T ScalarToStorage(const bp_kernel_call_t* call, int i) {
  const bp_kernel_arg_t* a = bp_kit_arg(call, i);
  switch (a->kind) {
    case BP_VALUE_INT: return Cast<T>(a->u.i);
    case BP_VALUE_DOUBLE: return Cast<T>(a->u.d);
    case BP_VALUE_BOOL: return Cast<T>(a->u.b != 0);
    default: return Cast<T>(0);
  }
}

// Copies src into dst (same sizes; any dtypes and strides). Used by copy_,
// cat and the kernels that stage data for oneDNN.
bp_status_t CopyTensor(const DLTensor& dst, const DLTensor& src);

// ---- pointwise loops ----------------------------------------------------------

// out[i] = f(Load(a[i])) with output type To and input type Ta.
template <typename To, typename Ta, typename F>
inline void UnaryLoop(const DLTensor& out, const DLTensor& a, F f) {
  const DLTensor* ops[2] = {&out, &a};
  RunOps(ops, [&](char* const* p, const int64_t* s, int64_t n) {
    To* o = reinterpret_cast<To*>(p[0]);
    const Ta* x = reinterpret_cast<const Ta*>(p[1]);
    if (s[0] == sizeof(To) && s[1] == sizeof(Ta)) {
      for (int64_t i = 0; i < n; ++i) o[i] = Store<To>(f(Load(x[i])));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<To*>(p[0] + i * s[0]) = Store<To>(f(Load(*reinterpret_cast<const Ta*>(p[1] + i * s[1]))));
    }
  });
}

// out[i] = f(Load(a[i]), Load(b[i])). Fast paths: all contiguous, and one
// input broadcast (stride 0) within the row.
template <typename To, typename Ta, typename Tb, typename F>
inline void BinaryLoop(const DLTensor& out, const DLTensor& a, const DLTensor& b, F f) {
  if (Numel(out) == 1) {  // a scalar-like call: the inputs arrive broadcast, so one element each
    *reinterpret_cast<To*>(DataPtr(out)) = Store<To>(
        f(Load(*reinterpret_cast<const Ta*>(DataPtr(a))), Load(*reinterpret_cast<const Tb*>(DataPtr(b)))));
    return;
  }
  const DLTensor* ops[3] = {&out, &a, &b};
  RunOps(ops, [&](char* const* p, const int64_t* s, int64_t n) {
    To* o = reinterpret_cast<To*>(p[0]);
    const Ta* x = reinterpret_cast<const Ta*>(p[1]);
    const Tb* y = reinterpret_cast<const Tb*>(p[2]);
    if (s[0] == sizeof(To)) {
      if (s[1] == sizeof(Ta) && s[2] == sizeof(Tb)) {
        for (int64_t i = 0; i < n; ++i) o[i] = Store<To>(f(Load(x[i]), Load(y[i])));
        return;
      }
      if (s[1] == sizeof(Ta) && s[2] == 0) {
        const auto yv = Load(*y);
        for (int64_t i = 0; i < n; ++i) o[i] = Store<To>(f(Load(x[i]), yv));
        return;
      }
      if (s[1] == 0 && s[2] == sizeof(Tb)) {
        const auto xv = Load(*x);
        for (int64_t i = 0; i < n; ++i) o[i] = Store<To>(f(xv, Load(y[i])));
        return;
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      *reinterpret_cast<To*>(p[0] + i * s[0]) =
          Store<To>(f(Load(*reinterpret_cast<const Ta*>(p[1] + i * s[1])),
                      Load(*reinterpret_cast<const Tb*>(p[2] + i * s[2]))));
    }
  });
}

// out[i] = f(Load(a[i]), Load(b[i]), Load(c[i])), strided.
template <typename To, typename Ta, typename Tb, typename Tc, typename F>
inline void TernaryLoop(const DLTensor& out, const DLTensor& a, const DLTensor& b, const DLTensor& c,
                        F f) {
  const DLTensor* ops[4] = {&out, &a, &b, &c};
  RunOps(ops, [&](char* const* p, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      *reinterpret_cast<To*>(p[0] + i * s[0]) =
          Store<To>(f(Load(*reinterpret_cast<const Ta*>(p[1] + i * s[1])),
                      Load(*reinterpret_cast<const Tb*>(p[2] + i * s[2])),
                      Load(*reinterpret_cast<const Tc*>(p[3] + i * s[3]))));
    }
  });
}

// True if any element of `t` satisfies pred(Load(x)). Used to validate
// runtime values (integer division by zero) before writing anything.
template <typename T, typename P>
inline bool AnyOf(const DLTensor& t, P pred) {
  const DLTensor* ops[1] = {&t};
  StridedLoop<1> loop = MakeLoop(ops);
  bool found = false;
  loop.ForRange(0, loop.numel, [&](char* const* p, const int64_t* s, int64_t n) {
    if (found) return;
    for (int64_t i = 0; i < n; ++i)
      if (pred(Load(*reinterpret_cast<const T*>(p[0] + i * s[0])))) {
        found = true;
        return;
      }
  });
  return found;
}

}  // namespace bp_cpu
