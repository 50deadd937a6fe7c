/* @NAME@: the entry point, the ABI version negotiation, and init. */
#include <string.h>

#include "@NAME@.h"

const bp_host_api_t* @NAME@_host;

/* The host offers its newest ABI version; answer the highest both support. */
static bp_status_t negotiate(uint32_t* inout_version) { return bp_kit_negotiate(inout_version, BP_ABI_VERSION); }

static bp_status_t init(const bp_plugin_init_args_t* args) {
  if (args == NULL || args->host == NULL || args->backend == NULL) return BP_STATUS_INVALID_ARGUMENT;
  @NAME@_host = args->host;
  bp_backend_t b;
  memset(&b, 0, sizeof b);
  b.name = "@NAME@";
  b.version = "0.1.0";
  b.device_type = kDLExtDev; /* your device's DLPack type once it has one */
  @NAME@_fill_device(&b);
  /* Fill only the fields the host's struct has room for (an older host's is smaller). */
  const size_t size = args->backend->struct_size;
  b.struct_size = size;
  memcpy(args->backend, &b, size < sizeof b ? size : sizeof b);
  return @NAME@_register_kernels(args);
}

BP_PLUGIN_EXPORT const bp_plugin_entry_t* bp_plugin_entry(void) {
  static const bp_plugin_entry_t entry = {sizeof(bp_plugin_entry_t), BP_ABI_VERSION, 0, negotiate, init};
  return &entry;
}
