/* @NAME@: the entry point, the ABI version negotiation, and init (fills the
 * backend table from device.h, memory.h and stream.h, registers the kernels
 * of kernels/). */
#include <stdio.h>
#include <string.h>

#include "plugin.h"
#include "device.h"
#include "kernels/kernels.h"
#include "memory.h"
#include "stream.h"

const bp_host_api_t* @NAME@_host;

bp_status_t @NAME@_fail(bp_status_t code, const char* fn, const char* what) {
  char msg[256];
  snprintf(msg, sizeof msg, @NAME@_BACKEND ": %s: %s", fn, what);
  return @NAME@_host->set_error(code, msg);
}

/* The host offers its newest ABI version; answer the highest both support. */
static bp_status_t negotiate(uint32_t* inout_version) { return bp_kit_negotiate(inout_version, BP_ABI_VERSION); }

static bp_status_t init(const bp_plugin_init_args_t* args) {
  if (args == NULL || args->host == NULL || args->backend == NULL) return BP_STATUS_INVALID_ARGUMENT;
  @NAME@_host = args->host;
  bp_backend_t b;
  memset(&b, 0, sizeof b);
  b.name = @NAME@_BACKEND;
  b.version = "0.1.0";
  b.device_type = kDLExtDev; /* your device's DLPack type once it has one */
  b.device_count = @NAME@_device_count; /* device.h */
  b.device_properties = @NAME@_device_properties;
  b.allocate = @NAME@_allocate; /* memory.h */
  b.deallocate = @NAME@_deallocate;
  b.copy_host_to_device = @NAME@_copy_host_to_device;
  b.copy_device_to_host = @NAME@_copy_device_to_host;
  b.copy_device_to_device = @NAME@_copy_device_to_device;
  b.stream_get_default = @NAME@_stream_get_default; /* stream.h; no events: NULL slots */
  b.stream_synchronize = @NAME@_stream_synchronize;
  /* Fill only the fields the host's struct has room for (an older host's is smaller). */
  const size_t size = args->backend->struct_size;
  b.struct_size = size;
  memcpy(args->backend, &b, size < sizeof b ? size : sizeof b);
  return @NAME@_register_kernels(args); /* kernels/register.c */
}

BP_PLUGIN_EXPORT const bp_plugin_entry_t* bp_plugin_entry(void) {
  static const bp_plugin_entry_t entry = {sizeof(bp_plugin_entry_t), BP_ABI_VERSION, 0, negotiate, init};
  return &entry;
}
