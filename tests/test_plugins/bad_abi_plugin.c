/* A plugin built for ABI major 2: the host must refuse it. */
#include "backplane/backend.h"

static bp_status_t negotiate(uint32_t* v) {
  *v = BP_MAKE_ABI_VERSION(2, 0);
  return BP_STATUS_INCOMPATIBLE_VERSION;
}
static bp_status_t init(const bp_plugin_init_args_t* args) {
  (void)args;
  return BP_STATUS_INTERNAL; /* never called */
}
static const bp_plugin_entry_t kEntry = {sizeof(bp_plugin_entry_t), BP_MAKE_ABI_VERSION(2, 0), 0, negotiate, init};

BP_PLUGIN_EXPORT const bp_plugin_entry_t* bp_plugin_entry(void) { return &kEntry; }
