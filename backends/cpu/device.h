// The CPU backend's one device: the host processor, with host memory.
#pragma once

#include "backplane/backend.h"

namespace bp_cpu {

// Fills the bp_backend_t device and stream slots (memory slots stay NULL: the
// core uses host memory for kDLCPU backends).
void FillDeviceSlots(bp_backend_t* backend);

}  // namespace bp_cpu
