/*
 * Backplane plugin kit, argument access: a kernel's arguments read by index
 * (BP_ARG_* from backplane/op_args.h), with the conversions every backend
 * needs. Pure C99, header-only (static inline); included by
 * backplane/plugin_kit.h.
 *
 * An index at or past call->num_args reads as an absent argument
 * (BP_VALUE_NONE): a host built with fewer trailing arguments, or an omitted
 * optional. Every function returns the given default (or NULL, 0) for an
 * absent argument or one of another kind. `call` must not be NULL; the
 * returned pointers are borrowed from the call and live while the kernel runs.
 *
 * Thread-safety: every function here is reentrant; none keeps state.
 */
#ifndef BACKPLANE_PLUGIN_KIT_ARGS_H_
#define BACKPLANE_PLUGIN_KIT_ARGS_H_

#include <stddef.h>
#include <stdint.h>

#include "backplane/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Argument `i` of the call, or a static BP_VALUE_NONE cell when `i` is
 * negative or at least call->num_args. Never NULL. */
static inline const bp_kernel_arg_t* bp_kit_arg(const bp_kernel_call_t* call, int32_t i) {
  static const bp_kernel_arg_t none = {BP_VALUE_NONE, 0, {NULL}};
  return i >= 0 && i < call->num_args ? &call->args[i] : &none;
}

/* The tensor of argument `i`; NULL when it is not a BP_VALUE_TENSOR (an
 * absent optional Tensor?). */
static inline const DLTensor* bp_kit_tensor_arg(const bp_kernel_call_t* call, int32_t i) {
  const bp_kernel_arg_t* a = bp_kit_arg(call, i);
  return a->kind == BP_VALUE_TENSOR ? a->u.tensor : NULL;
}

/* The constant-storage id of tensor argument `i` (BP_KERNEL_ARG_CONSTANT,
 * ABI 1.5), or 0 when the argument is no tensor, is not constant, or the
 * host is older than 1.5 (its flags are always zero). A kernel may key what
 * it derives from the tensor's values on (id, byte_offset, shape, strides). */
static inline uint64_t bp_kit_constant_id(const bp_kernel_call_t* call, int32_t i) {
  const bp_kernel_arg_t* a = bp_kit_arg(call, i);
  return a->kind == BP_VALUE_TENSOR && (a->flags & BP_KERNEL_ARG_CONSTANT) != 0 ? a->u.constant.id : 0;
}

/* A scalar argument (INT, DOUBLE or BOOL) as a double; `dflt` otherwise. */
static inline double bp_kit_double_arg(const bp_kernel_call_t* call, int32_t i, double dflt) {
  const bp_kernel_arg_t* a = bp_kit_arg(call, i);
  switch (a->kind) {
    case BP_VALUE_INT:
      return (double)a->u.i;
    case BP_VALUE_DOUBLE:
      return a->u.d;
    case BP_VALUE_BOOL:
      return a->u.b ? 1.0 : 0.0;
    default:
      return dflt;
  }
}

/* A scalar argument (INT, DOUBLE truncated toward zero, or BOOL) as an
 * int64; `dflt` otherwise. A DOUBLE outside int64's range is undefined, as
 * the C conversion is: use bp_kit_double_arg for values that may be. */
static inline int64_t bp_kit_int_arg(const bp_kernel_call_t* call, int32_t i, int64_t dflt) {
  const bp_kernel_arg_t* a = bp_kit_arg(call, i);
  switch (a->kind) {
    case BP_VALUE_INT:
      return a->u.i;
    case BP_VALUE_DOUBLE:
      return (int64_t)a->u.d;
    case BP_VALUE_BOOL:
      return a->u.b ? 1 : 0;
    default:
      return dflt;
  }
}

/* A BOOL (or INT, nonzero is true) argument as 0 or 1; `dflt` otherwise. */
static inline int bp_kit_bool_arg(const bp_kernel_call_t* call, int32_t i, int dflt) {
  const bp_kernel_arg_t* a = bp_kit_arg(call, i);
  if (a->kind == BP_VALUE_BOOL) return a->u.b != 0;
  if (a->kind == BP_VALUE_INT) return a->u.i != 0;
  return dflt;
}

/* A BP_VALUE_STRING argument ("tanh", "floor"); NULL otherwise. */
static inline const char* bp_kit_string_arg(const bp_kernel_call_t* call, int32_t i) {
  const bp_kernel_arg_t* a = bp_kit_arg(call, i);
  return a->kind == BP_VALUE_STRING ? a->u.str : NULL;
}

/* An int list argument: *out points at its elements and its length is
 * returned. An INT reads as a list of one; anything else as an empty list
 * (*out = NULL, returns 0). `out` must not be NULL. */
static inline int64_t bp_kit_int_list_arg(const bp_kernel_call_t* call, int32_t i, const int64_t** out) {
  const bp_kernel_arg_t* a = bp_kit_arg(call, i);
  if (a->kind == BP_VALUE_INT_LIST) {
    *out = a->u.int_list.data;
    return a->u.int_list.size;
  }
  if (a->kind == BP_VALUE_INT) {
    *out = &a->u.i;
    return 1;
  }
  *out = NULL;
  return 0;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BACKPLANE_PLUGIN_KIT_ARGS_H_ */
