// The devices of the OpenCL plugin: every device of every platform, with its
// context, its default in-order queue and its caches of built programs and
// kernels; their enumeration and properties.
#pragma once

#include <CL/cl.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "backplane/backend.h"
#include "cl_status.h"

namespace bpcl {

struct Device {
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;  // the default stream: in-order, with profiling

  // Queues made by stream_create and not yet destroyed, so stream_destroy
  // can refuse anything else (the default queue, a stale handle) and
  // shutdown can release what a host leaked.
  std::mutex streams_mutex;
  std::set<cl_command_queue> streams;

  std::string name, vendor, driver_version, platform_name, extensions;
  uint64_t global_mem_bytes = 0;
  uint64_t max_alloc_bytes = 0;
  cl_uint compute_units = 0;
  cl_uint mem_base_align_bytes = 0;
  size_t max_work_group_size = 1;
  size_t max_parameter_size = 1024;
  bool fp64 = false;
  bool fp16 = false;
  bool local_mem_is_global = false;  // CL_DEVICE_LOCAL_MEM_TYPE == CL_GLOBAL (CPU drivers)
  bool fma32 = false;                // CL_FP_FMA in CL_DEVICE_SINGLE_FP_CONFIG (hardware fused multiply-add)
  size_t native_vector_bytes = 16;   // CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT * 4 (64 on AVX-512)

  // Built programs by "<name>|<options>"; guarded by program_mutex (builds
  // happen under it, so two threads never build the same program twice).
  std::mutex program_mutex;
  std::map<std::string, cl_program> programs;

  // cl_kernel objects are not thread-safe between clSetKernelArg and the
  // enqueue: launches of one device serialize on launch_mutex (enqueueing is
  // cheap and does not wait for the device).
  std::mutex launch_mutex;
  std::map<std::pair<cl_program, std::string>, cl_kernel> kernels;
};

struct Backend;  // plugin.h

// The device `index` of `backend`, or OUT_OF_RANGE "opencl: device <i> out of
// range (<n> devices)".
Status GetDevice(Backend* backend, int32_t index, Device** out);

// bp_backend_t.device_count and .device_properties.
bp_status_t DeviceCount(void* data, int32_t* out_count);
bp_status_t DeviceProperties(void* data, int32_t device, bp_device_properties_t* out);

// Enumerates platforms and devices and creates a context and queue for each
// device. No platform is not an error: devices stays empty and
// no_device_reason says why.
Status EnumerateDevices(Backend* backend);

// Creates an in-order queue on d's context and device with profiling enabled
// (event_elapsed_time reads the markers' CL_PROFILING_COMMAND_END). Cost on
// PoCL, back-to-back kernels, median of interleaved rounds: 1M-element adds
// within 1.5%; 1K-element adds (~2 us each) +0-20%, i.e. ~0.2-0.4 us a launch.
Status CreateQueue(Device* d, cl_command_queue* out);

// Releases kernels, programs, queues and contexts. Safe on partial state.
void ReleaseDevices(Backend* backend);

}  // namespace bpcl
