// The CPU backend's one device: the host processor, with host memory.
#pragma once

#include "backplane/backend.h"

namespace bp_cpu {

// bp_backend_t.device_count: always 1.
bp_status_t DeviceCount(void* backend_data, int32_t* out_count);
// bp_backend_t.device_properties of device 0 (model name, vendor and SIMD
// flags from /proc/cpuinfo, physical memory, online processors).
bp_status_t DeviceProperties(void* backend_data, int32_t device, bp_device_properties_t* out);

}  // namespace bp_cpu
