/* The devices of @NAME@: how many, and their properties (the device_count
 * and device_properties slots of bp_backend_t). */
#ifndef BACKPLANE_PLUGIN_@NAME@_DEVICE_H_
#define BACKPLANE_PLUGIN_@NAME@_DEVICE_H_

#include "plugin.h"

/* The device's allocation alignment (device_properties, memory.c). */
#define @NAME@_ALIGNMENT 64

/* OK for a device index this backend has; otherwise OUT_OF_RANGE with a
 * message naming `fn` (the slot that was called). */
bp_status_t @NAME@_check_device(int32_t device, const char* fn);

bp_status_t @NAME@_device_count(void* backend_data, int32_t* out_count);
bp_status_t @NAME@_device_properties(void* backend_data, int32_t device, bp_device_properties_t* out);

#endif
