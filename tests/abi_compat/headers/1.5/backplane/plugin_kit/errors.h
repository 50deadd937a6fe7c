/*
 * Backplane plugin kit, kernel errors with a formatted message: the
 * printf-style front of bp_kit_fail (backplane/plugin_kit.h), so every
 * backend reports "<backend>: <operator>: <what>" the same way. Pure C99,
 * header-only (static inline); included by backplane/plugin_kit.h.
 *
 *   return bp_kit_failf(call, host, "mychip", BP_STATUS_UNIMPLEMENTED,
 *                       "argument 'self' has dtype %s", bp_kit_dtype_name(id));
 *
 * Thread-safety: reentrant (the message is formatted on the stack); where the
 * message goes is bp_kit_fail's rule (the call's own slot on ABI >= 1.2).
 */
#ifndef BACKPLANE_PLUGIN_KIT_ERRORS_H_
#define BACKPLANE_PLUGIN_KIT_ERRORS_H_

#include <stdarg.h>
#include <stdio.h>

#include "backplane/plugin_kit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest message the kit formats, NUL included; longer ones are cut. */
#define BP_KIT_MESSAGE_MAX 512

#if defined(__GNUC__)
#define BP_KIT_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define BP_KIT_PRINTF(fmt_index, first_arg)
#endif

/* Formats "<backend>: <op>: <fmt...>" (without "<backend>: " when `backend`
 * is NULL; <op> is call->op_name, "kernel" when NULL) and reports it with
 * bp_kit_fail(call, host, code, message). `call` and `fmt` must not be NULL;
 * `host` as for bp_kit_fail. Returns `code`. */
static inline bp_status_t bp_kit_vfailf(const bp_kernel_call_t* call, const bp_host_api_t* host, const char* backend,
                                        bp_status_t code, const char* fmt, va_list ap) {
  char msg[BP_KIT_MESSAGE_MAX];
  const char* op = call->op_name != NULL ? call->op_name : "kernel";
  int n = backend != NULL ? snprintf(msg, sizeof msg, "%s: %s: ", backend, op) : snprintf(msg, sizeof msg, "%s: ", op);
  if (n < 0) n = 0;
  if ((size_t)n < sizeof msg) vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
  return bp_kit_fail(call, host, code, msg);
}

/* bp_kit_vfailf with its arguments inline. Returns `code`. */
static inline bp_status_t bp_kit_failf(const bp_kernel_call_t* call, const bp_host_api_t* host, const char* backend,
                                       bp_status_t code, const char* fmt, ...) BP_KIT_PRINTF(5, 6);
static inline bp_status_t bp_kit_failf(const bp_kernel_call_t* call, const bp_host_api_t* host, const char* backend,
                                       bp_status_t code, const char* fmt, ...) {
  bp_status_t rc;
  va_list ap;
  va_start(ap, fmt);
  rc = bp_kit_vfailf(call, host, backend, code, fmt, ap);
  va_end(ap);
  return rc;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BACKPLANE_PLUGIN_KIT_ERRORS_H_ */
