// The state of one OpenCL plugin instance (bp_backend_t.backend_data): every
// device (device.h) and the program cache settings. One Backend lives from
// init() to shutdown(). Also the plugin's entry table, which plugin.cpp
// exports as bp_plugin_entry.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backplane/backend.h"
#include "cl_status.h"
#include "device.h"

namespace bpcl {

struct Backend {
  const bp_host_api_t* host = nullptr;
  bp_registrar_t* registrar = nullptr;
  std::vector<std::unique_ptr<Device>> devices;
  std::string no_device_reason;  // empty when there are devices

  // Disk cache of program binaries; empty dir disables it.
  std::string cache_dir;
  bool verbose = false;  // BACKPLANE_OPENCL_VERBOSE=1

  // How many programs were compiled from source / loaded from the disk cache
  // by this instance (a second process with a warm cache builds none).
  std::atomic<uint64_t> program_builds{0};
  std::atomic<uint64_t> program_cache_loads{0};

  // matmul/addmm/linear through CLBlast (kernels/gemm_clblast.h): when to
  // try it (BACKPLANE_OPENCL_CLBLAST: unset = kAuto, 0 = kNever, 1 =
  // kAlways; ignored in builds without CLBlast) and how many calls it ran,
  // so tests and benchmarks can tell which path a call took. kAuto leaves
  // CPU drivers (local memory in global memory, e.g. PoCL) to matmul.cl's
  // register-blocked kernel, measured 4-5x faster there than CLBlast.
  enum class ClblastUse { kAuto, kNever, kAlways };
  ClblastUse use_clblast = ClblastUse::kAuto;
  std::atomic<uint64_t> clblast_gemms{0};

  // host_allocate's blocks (memory.h): address -> the device it was asked
  // for, so host_deallocate refuses anything else and shutdown frees leaks.
  std::mutex host_mutex;
  std::map<void*, int32_t> host_blocks;

  // Reports `st` through the host's set_error and returns its code.
  bp_status_t Report(const Status& st) const;
  // Device `index` or nullptr.
  Device* device(int32_t index) const;
};

// The Backend behind a bp_backend_t function's backend_data.
inline Backend* B(void* data) { return static_cast<Backend*>(data); }

// Runs f (a callable returning Status) at the ABI edge: a failure is reported
// through the host and its code returned; an exception becomes INTERNAL.
template <typename F>
bp_status_t Guard(void* data, F&& f) {
  try {
    Status st = f();
    return st.ok() ? BP_STATUS_OK : B(data)->Report(st);
  } catch (...) {
    return B(data)->Report(Status(BP_STATUS_INTERNAL, "opencl: unexpected exception"));
  }
}

// The static entry table (negotiate + init); never NULL.
const bp_plugin_entry_t* PluginEntry();

}  // namespace bpcl
