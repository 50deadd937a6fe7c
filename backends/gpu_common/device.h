// Devices of the GPU plugin: enumeration, the device_count and
// device_properties slots of bp_backend_t, and the checks every slot taking
// a device index shares.
#pragma once

#include "backplane/backend.h"
#include "gpu_runtime.h"
#include "plugin.h"

namespace bp_gpu {

// Counts devices into st (device_count, devices, sm_count); a runtime error
// (no driver, no device) means zero devices and becomes no_device_reason.
void EnumerateDevices(PluginState* st);

bp_status_t DeviceCount(void* data, int32_t* out_count);
bp_status_t DeviceProperties(void* data, int32_t device, bp_device_properties_t* out);

// Reports "<backend> backend: <what>: <runtime message> (<error name>)" with
// `code` through the host, after clearing the runtime's sticky last error.
bp_status_t Fail(PluginState* st, bp_status_t code, const char* what, gpuError_t e);
// OUT_OF_RANGE (reported, naming `fn`) unless 0 <= device < device_count.
bp_status_t CheckDevice(PluginState* st, int32_t device, const char* fn);
// CheckDevice, then makes `device` current (UNAVAILABLE if the runtime refuses).
bp_status_t SetDevice(PluginState* st, int32_t device, const char* fn);

}  // namespace bp_gpu
