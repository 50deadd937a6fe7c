/* What the files of the @NAME@ plugin share. The layout is every Backplane
 * backend's: plugin.* (entry point, negotiation, init), device.* (devices and
 * their properties), memory.* (allocation and copies), stream.* (streams),
 * kernels/ (one file per kernel family, and the kernel table). A plugin
 * includes only the ABI headers: backend.h (the tables), op_args.h (operator
 * names and argument indices, generated from ops.yaml) and plugin_kit.h
 * (negotiation, dtypes, arguments, errors, kernel tables). */
#ifndef BACKPLANE_PLUGIN_@NAME@_PLUGIN_H_
#define BACKPLANE_PLUGIN_@NAME@_PLUGIN_H_

#include "backplane/backend.h"
#include "backplane/op_args.h"
#include "backplane/plugin_kit.h"

/* The backend's name, in every message and in b.name. */
#define @NAME@_BACKEND "@NAME@"

/* The host's function table, from init; valid until shutdown. */
extern const bp_host_api_t* @NAME@_host;

/* Reports a device-side error through the host ("@NAME@: <fn>: <what>") and
 * returns `code`. */
bp_status_t @NAME@_fail(bp_status_t code, const char* fn, const char* what);

#endif
