// Raw device memory and copies for bp_backend_t, through the gpu*
// portability names (CUDA runtime or HIP).
//
// Memory is raw gpuMalloc/gpuFree on purpose: the core's caching allocator
// sits above every backend's allocate(), so there is one caching policy and
// one place for statistics (allocated, reserved, peak) for all backends,
// instead of a private cache per plugin the core cannot see or empty.
#include "memory.h"

#include <cstdio>

#include "device.h"
#include "gpu_runtime.h"
#include "plugin.h"

namespace bp_gpu {

bp_status_t Allocate(void* data, int32_t device, size_t nbytes, void** out_ptr) {
  PluginState* st = StateOf(data);
  if (!out_ptr) return st->host->set_error(BP_STATUS_INVALID_ARGUMENT, "allocate: out_ptr is NULL");
  if (bp_status_t s = SetDevice(st, device, "allocate")) return s;
  *out_ptr = nullptr;
  if (nbytes == 0) return BP_STATUS_OK;
  void* p = nullptr;
  const gpuError_t e = gpuMalloc(&p, nbytes);
  if (e != gpuSuccess) {
    char what[96];
    std::snprintf(what, sizeof what, BP_GPU_PREFIX "Malloc(%zu bytes)", nbytes);
    return Fail(st, e == gpuErrorMemoryAllocation ? BP_STATUS_OUT_OF_MEMORY : BP_STATUS_INTERNAL,
                what, e);
  }
  *out_ptr = p;
  return BP_STATUS_OK;
}

bp_status_t Deallocate(void* data, int32_t device, void* ptr) {
  PluginState* st = StateOf(data);
  if (!ptr) return BP_STATUS_OK;
  if (bp_status_t s = SetDevice(st, device, "deallocate")) return s;
  const gpuError_t e = gpuFree(ptr);
  if (e != gpuSuccess) return Fail(st, BP_STATUS_INTERNAL, BP_GPU_PREFIX "Free", e);
  return BP_STATUS_OK;
}

// Host-to-device from pageable memory: the runtime stages the bytes through
// its own pinned buffers before gpuMemcpyAsync returns, so the caller's
// buffer is free on return (stronger than the ABI asks).
bp_status_t CopyHostToDevice(void* data, int32_t device, const void* src, void* dst, size_t dst_offset,
                             size_t nbytes, bp_stream_t stream) {
  PluginState* st = StateOf(data);
  if (bp_status_t s = SetDevice(st, device, "copy_host_to_device")) return s;
  if (nbytes == 0) return BP_STATUS_OK;
  const gpuError_t e = gpuMemcpyAsync(static_cast<char*>(dst) + dst_offset, src, nbytes,
                                      gpuMemcpyHostToDevice, static_cast<gpuStream_t>(stream));
  if (e != gpuSuccess)
    return Fail(st, BP_STATUS_INTERNAL, BP_GPU_PREFIX "MemcpyAsync(host to device)", e);
  return BP_STATUS_OK;
}

// Device-to-host returns with the data in place: copy, then wait for the stream.
bp_status_t CopyDeviceToHost(void* data, int32_t device, const void* src, size_t src_offset, void* dst,
                             size_t nbytes, bp_stream_t stream) {
  PluginState* st = StateOf(data);
  if (bp_status_t s = SetDevice(st, device, "copy_device_to_host")) return s;
  if (nbytes == 0) return BP_STATUS_OK;
  gpuStream_t gs = static_cast<gpuStream_t>(stream);
  gpuError_t e = gpuMemcpyAsync(dst, static_cast<const char*>(src) + src_offset, nbytes,
                                gpuMemcpyDeviceToHost, gs);
  if (e != gpuSuccess)
    return Fail(st, BP_STATUS_INTERNAL, BP_GPU_PREFIX "MemcpyAsync(device to host)", e);
  e = gpuStreamSynchronize(gs);
  if (e != gpuSuccess) return Fail(st, BP_STATUS_INTERNAL, BP_GPU_PREFIX "StreamSynchronize", e);
  return BP_STATUS_OK;
}

bp_status_t CopyDeviceToDevice(void* data, int32_t device, const void* src, size_t src_offset, void* dst,
                               size_t dst_offset, size_t nbytes, bp_stream_t stream) {
  PluginState* st = StateOf(data);
  if (bp_status_t s = SetDevice(st, device, "copy_device_to_device")) return s;
  if (nbytes == 0) return BP_STATUS_OK;
  const gpuError_t e = gpuMemcpyAsync(static_cast<char*>(dst) + dst_offset,
                                      static_cast<const char*>(src) + src_offset, nbytes,
                                      gpuMemcpyDeviceToDevice, static_cast<gpuStream_t>(stream));
  if (e != gpuSuccess)
    return Fail(st, BP_STATUS_INTERNAL, BP_GPU_PREFIX "MemcpyAsync(device to device)", e);
  return BP_STATUS_OK;
}

}  // namespace bp_gpu
