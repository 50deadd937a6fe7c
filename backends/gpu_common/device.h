// Device, memory, stream and event functions of bp_backend_t (device.cpp).
#pragma once

#include "backplane/backend.h"

namespace bp_gpu {

// Sets device_count ... event_destroy in `b` (shutdown is set by plugin.cpp).
void FillDeviceFunctions(bp_backend_t* b);

}  // namespace bp_gpu
