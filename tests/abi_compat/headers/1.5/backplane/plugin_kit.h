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
 * and includes the kit's pieces, each usable on its own:
 *   - plugin_kit/dtype.h: dtype ids of a DLPack dtype, names, sizes;
 *   - plugin_kit/args.h: a kernel's arguments by BP_ARG_* index;
 *   - plugin_kit/errors.h: bp_kit_failf(), "<backend>: <op>: <what>" messages;
 *   - plugin_kit/kernel_table.h: a table of kernels registered in one call,
 *     skipping operators the host does not know.
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

/* Registers `kernel` for `op_name` with the compute dtypes it runs
 * (`dtype_mask`, an OR of BP_DTYPE_MASK_*): through register_kernel_dtypes on
 * a host that has it (ABI >= 1.3); on an older host through register_kernel,
 * where the kernel is offered every dtype and declines the others at run time
 * (BP_STATUS_UNIMPLEMENTED), so keep that check in the kernel while the plugin
 * still loads on 1.0-1.2 hosts. Returns what the host's function returned. */
static inline bp_status_t bp_kit_register_kernel_dtypes(const bp_host_api_t* host, bp_registrar_t* registrar,
                                                        const char* op_name, bp_kernel_fn kernel, void* kernel_data,
                                                        uint32_t flags, uint64_t dtype_mask) {
  if (BP_KIT_HAS_FIELD_OF(bp_host_api_t, host, register_kernel_dtypes) && host->register_kernel_dtypes != NULL) {
    return host->register_kernel_dtypes(registrar, op_name, kernel, kernel_data, flags, dtype_mask);
  }
  return host->register_kernel(registrar, op_name, kernel, kernel_data, flags);
}

#ifdef __cplusplus
} /* extern "C" */
#endif

/* The kit's pieces (after the definitions above, which errors.h uses). */
#include "backplane/plugin_kit/args.h"
#include "backplane/plugin_kit/dtype.h"
#include "backplane/plugin_kit/errors.h"
#include "backplane/plugin_kit/kernel_table.h"

#endif /* BACKPLANE_PLUGIN_KIT_H_ */
