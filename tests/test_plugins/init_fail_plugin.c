/* A plugin whose init fails after registering a kernel: the host must undo
 * the registration, unload it and report the plugin's message. */
#include "backplane/backend.h"
#include "backplane/plugin_kit.h"

static bp_status_t negotiate(uint32_t* v) { return bp_kit_negotiate(v, BP_ABI_VERSION); }
static bp_status_t kernel(const bp_kernel_call_t* call) {
  (void)call;
  return BP_STATUS_OK;
}
static bp_status_t init(const bp_plugin_init_args_t* args) {
  args->host->register_kernel(args->registrar, "mul.Tensor", kernel, 0, 0);
  return args->host->set_error(BP_STATUS_UNAVAILABLE, "initfail: simulated driver failure");
}
static const bp_plugin_entry_t kEntry = {sizeof(bp_plugin_entry_t), BP_ABI_VERSION, 0, negotiate, init};

BP_PLUGIN_EXPORT const bp_plugin_entry_t* bp_plugin_entry(void) { return &kEntry; }
