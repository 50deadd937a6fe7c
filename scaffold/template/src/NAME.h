/* What the files of the @NAME@ plugin share. A plugin includes only the ABI
 * headers: backend.h (the tables), op_args.h (operator names and argument
 * indices, generated from ops.yaml) and plugin_kit.h (negotiation, errors). */
#ifndef BACKPLANE_PLUGIN_@NAME@_H_
#define BACKPLANE_PLUGIN_@NAME@_H_

#include "backplane/backend.h"
#include "backplane/op_args.h"
#include "backplane/plugin_kit.h"

/* The host's function table, from init; valid until shutdown. */
extern const bp_host_api_t* @NAME@_host;

/* device.c: fills the device part of the backend table (device count and
 * properties, memory, copies, streams). */
void @NAME@_fill_device(bp_backend_t* backend);

/* kernels.c: registers the native kernels. Returns the first error. */
bp_status_t @NAME@_register_kernels(const bp_plugin_init_args_t* args);

#endif
