// vendor_sim's devices: one simulated accelerator, device 0.
#pragma once

#include "plugin.h"

namespace vendor_sim {

// OK for device 0; otherwise OUT_OF_RANGE, reported as "<fn>: device index
// out of range".
bp_status_t CheckDevice(State* s, int32_t device, const char* fn);

// bp_backend_t.device_count and .device_properties.
bp_status_t DeviceCount(void* backend_data, int32_t* out_count);
bp_status_t DeviceProperties(void* backend_data, int32_t device, bp_device_properties_t* out);

}  // namespace vendor_sim
