// Shared by every CPU kernel family: error reporting, argument access, and
// pointwise row loops built on StridedLoop (the plugin state is in plugin.h,
// the kernel table type in kernels.h).
#pragma once

#include <cstdarg>
#include <cstddef>
#include <cstdio>

#include "backplane/backend.h"
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

// Reports an error through the host: "<op>: <message>". Never throws.
inline bp_status_t Fail(const bp_kernel_call_t* call, bp_status_t code, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
inline bp_status_t Fail(const bp_kernel_call_t* call, bp_status_t code, const char* fmt, ...) {
  char msg[512];
  int n = std::snprintf(msg, sizeof msg, "%s: ", call->op_name ? call->op_name : "cpu kernel");
  if (n < 0) n = 0;
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg + n, sizeof msg - static_cast<size_t>(n), fmt, ap);
  va_end(ap);
  const bp_host_api_t* host = HostOf(call);
  if (host != nullptr && host->set_error != nullptr) return host->set_error(code, msg);
  return code;
}

inline bp_status_t FailDtype(const bp_kernel_call_t* call, const DLTensor& t) {
  return Fail(call, BP_STATUS_UNIMPLEMENTED, "the CPU backend has no kernel for dtype %s",
              DtName(DtOf(t.dtype)));
}

// ---- argument access (missing trailing arguments read as NONE) -------------

inline const bp_kernel_arg_t* Arg(const bp_kernel_call_t* call, int i) {
  static const bp_kernel_arg_t kNone = {BP_VALUE_NONE, 0, {nullptr}};
  return i < call->num_args ? &call->args[i] : &kNone;
}
inline const DLTensor* TensorArg(const bp_kernel_call_t* call, int i) {
  const bp_kernel_arg_t* a = Arg(call, i);
  return a->kind == BP_VALUE_TENSOR ? a->u.tensor : nullptr;
}
inline double DoubleArg(const bp_kernel_call_t* call, int i, double dflt) {
  const bp_kernel_arg_t* a = Arg(call, i);
  switch (a->kind) {
    case BP_VALUE_INT: return static_cast<double>(a->u.i);
    case BP_VALUE_DOUBLE: return a->u.d;
    case BP_VALUE_BOOL: return a->u.b ? 1.0 : 0.0;
    default: return dflt;
  }
}
inline int64_t IntArg(const bp_kernel_call_t* call, int i, int64_t dflt) {
  const bp_kernel_arg_t* a = Arg(call, i);
  switch (a->kind) {
    case BP_VALUE_INT: return a->u.i;
    case BP_VALUE_DOUBLE: return static_cast<int64_t>(a->u.d);
    case BP_VALUE_BOOL: return a->u.b ? 1 : 0;
    default: return dflt;
  }
}
inline bool BoolArg(const bp_kernel_call_t* call, int i, bool dflt) {
  const bp_kernel_arg_t* a = Arg(call, i);
  if (a->kind == BP_VALUE_BOOL) return a->u.b != 0;
  if (a->kind == BP_VALUE_INT) return a->u.i != 0;
  return dflt;
}
inline const char* StringArg(const bp_kernel_call_t* call, int i) {
  const bp_kernel_arg_t* a = Arg(call, i);
  return a->kind == BP_VALUE_STRING ? a->u.str : nullptr;
}
// An int list (an INT gives a list of one); returns its length, 0 if absent.
inline int64_t IntListArg(const bp_kernel_call_t* call, int i, const int64_t** out) {
  const bp_kernel_arg_t* a = Arg(call, i);
  if (a->kind == BP_VALUE_INT_LIST) {
    *out = a->u.int_list.data;
    return a->u.int_list.size;
  }
  if (a->kind == BP_VALUE_INT) {
    *out = &a->u.i;
    return 1;
  }
  *out = nullptr;
  return 0;
}

// A scalar argument converted to opmath_t<T> (integers stay exact).
template <typename T>
inline opmath_t<T> ScalarArg(const bp_kernel_call_t* call, int i, opmath_t<T> dflt) {
  const bp_kernel_arg_t* a = Arg(call, i);
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
  const bp_kernel_arg_t* a = Arg(call, i);
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
