// The state of one CPU plugin instance, shared by plugin.cpp, device.cpp and
// every kernel (kernels/common.h).
#pragma once

#include "backplane/backend.h"

namespace bp_cpu {

// Plugin state: handed to the host as backend_data and to every kernel as
// kernel_data. Lives from init to shutdown.
struct CpuState {
  const bp_host_api_t* host = nullptr;
  bp_registrar_t* registrar = nullptr;
};

// The state of the last init, for kernels called without kernel_data.
extern CpuState* g_state;

}  // namespace bp_cpu
