// State of one loaded GPU plugin (bp_backend_t.backend_data), shared by the
// plugin files (plugin, device, memory, stream) and the kernel entry points.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backplane/backend.h"
#include "gpu_runtime.h"

namespace bp_gpu {

struct DeviceSlot {
  std::once_flag stream_once;
  gpuStream_t stream = nullptr;  // created on first use (creating it initializes the context)
  gpuError_t stream_error = gpuSuccess;
  int32_t sm_count = 1;  // multiprocessors, for grid sizing
};

struct PlatformState;  // per-backend extras (cuBLAS handles); see platform.h

struct PluginState {
  const bp_host_api_t* host = nullptr;
  bp_registrar_t* registrar = nullptr;
  int32_t device_count = 0;
  std::string no_device_reason;  // empty when device_count > 0
  std::unique_ptr<DeviceSlot[]> devices;
  // Streams made by stream_create and not yet destroyed, with their device:
  // stream_destroy refuses anything else (the default stream, a stale
  // handle), and shutdown destroys what a host leaked.
  std::mutex streams_mutex;
  std::map<gpuStream_t, int32_t> streams;
  // Pinned host blocks from host_allocate, with their device: host_deallocate
  // refuses anything else, and shutdown frees what a host leaked.
  std::mutex host_mutex;
  std::map<void*, int32_t> host_blocks;
  PlatformState* platform = nullptr;
};

// The PluginState behind a bp_backend_t function's backend_data.
inline PluginState* StateOf(void* backend_data) { return static_cast<PluginState*>(backend_data); }
// ... and behind a kernel call.
inline PluginState* StateOf(const bp_kernel_call_t* call) {
  return static_cast<PluginState*>(call->backend_data);
}

}  // namespace bp_gpu
