/*
 * Backplane plugin kit: the few lines every plugin needs around the ABI,
 * written once. Pure C99, header-only (static inline), includes only abi/
 * headers; a plugin may use any part of it or none.
 *
 *   - bp_kit_negotiate(): the whole version negotiation of a plugin;
 *   - BP_KIT_HAS_FIELD(): does a struct received from the host have a field?
 *   - bp_kit_fail(): report a kernel's error on its own call (ABI >= 1.2),
 *     or through the host's thread-local set_error on an older host.
 *
 * A typical entry (see samples/vendor_plugin/plugin.cpp):
 *
 *   static bp_status_t negotiate(uint32_t* v) { return bp_kit_negotiate(v, BP_ABI_VERSION); }
 *
 * Thread-safety: every function here is reentrant; none keeps state.
 */
#ifndef BACKPLANE_PLUGIN_KIT_H_
#define BACKPLANE_PLUGIN_KIT_H_

#include <stddef.h>

#include "backplane/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Version negotiation, for bp_plugin_entry_t.negotiate.
 * In: *inout_version is the host's newest version. `newest` is the newest
 * version the plugin supports (BP_ABI_VERSION for a plugin built against these
 * headers, or an older BP_MAKE_ABI_VERSION(1, m) to pin a minor).
 * Out: *inout_version = the highest version both support (the smaller of the
 * two; a minor only adds, so the older side's minor is what both know).
 * Returns BP_STATUS_OK; BP_STATUS_INCOMPATIBLE_VERSION when the majors differ
 * (*inout_version unchanged; the host refuses the plugin and the plugin has
 * nothing to undo); BP_STATUS_INVALID_ARGUMENT when inout_version is NULL. */
static inline bp_status_t bp_kit_negotiate(uint32_t* inout_version, uint32_t newest) {
  if (inout_version == NULL) return BP_STATUS_INVALID_ARGUMENT;
  if (BP_ABI_VERSION_GET_MAJOR(*inout_version) != BP_ABI_VERSION_GET_MAJOR(newest)) {
    return BP_STATUS_INCOMPATIBLE_VERSION;
  }
  if (*inout_version > newest) *inout_version = newest;
  return BP_STATUS_OK;
}

/* Nonzero when the struct at `ptr` (any Backplane struct that starts with
 * struct_size, received from the host) is large enough to hold `field`, i.e.
 * the host was built against a version that has it. Reading a field for which
 * this is 0 reads past the host's struct. `ptr` must not be NULL; it is
 * evaluated twice. Example: BP_KIT_HAS_FIELD(call, fail). */
#define BP_KIT_HAS_FIELD(ptr, field) \
  ((ptr)->struct_size >= offsetof(__typeof__(*(ptr)), field) + sizeof((ptr)->field))

/* Same check for compilers without __typeof__ (strict C99): the struct type
 * is named. Example: BP_KIT_HAS_FIELD_OF(bp_kernel_call_t, call, fail). */
#define BP_KIT_HAS_FIELD_OF(type, ptr, field) \
  ((ptr)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

/* Nonzero when `call` carries the ABI 1.2 per-call error slot (fail and
 * error_state) and the host filled it. `call` must not be NULL. */
static inline int bp_kit_call_can_fail(const bp_kernel_call_t* call) {
  return BP_KIT_HAS_FIELD_OF(bp_kernel_call_t, call, error_state) && call->fail != NULL;
}

/* Reports a kernel's failure and returns `code`, so a kernel writes
 * `return bp_kit_fail(call, host, BP_STATUS_INVALID_ARGUMENT, "myop: ...");`.
 * Uses the call's own `fail` when the host's struct has it (ABI >= 1.2): the
 * message travels with the call, whatever thread the kernel reports from.
 * Otherwise (a 1.0/1.1 host) it calls host->set_error, which records the
 * message for the calling thread: report from the thread the kernel was
 * called on. `call` is the struct the kernel received; `host` the table from
 * init (bp_plugin_init_args_t.host; may be NULL when the plugin only runs on
 * >= 1.2 hosts); `message` is copied (NULL: none). With neither route
 * available the message is dropped and `code` still returned. Returns `code`. */
static inline bp_status_t bp_kit_fail(const bp_kernel_call_t* call, const bp_host_api_t* host,
                                      bp_status_t code, const char* message) {
  if (call != NULL && bp_kit_call_can_fail(call)) return call->fail(call, code, message);
  if (host != NULL && host->set_error != NULL) return host->set_error(code, message);
  return code;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BACKPLANE_PLUGIN_KIT_H_ */
