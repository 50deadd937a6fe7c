// Raw device memory and copies for bp_backend_t, through the gpu*
// portability names (CUDA runtime or HIP).
//
// Memory is raw gpuMalloc/gpuFree on purpose: the core's caching allocator
// sits above every backend's allocate(), so there is one caching policy and
// one place for statistics (allocated, reserved, peak) for all backends,
// instead of a private cache per plugin the core cannot see or empty.
#include "memory.h"

#include <cstdio>
#include <mutex>
#include <new>

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

// Device-to-host without the wait: the runtime enqueues the copy on the
// stream and returns; into page-locked memory (host_allocate) the DMA runs
// truly asynchronously, into pageable memory the runtime may stage it.
// What the plugin can check is checked first, so a bad call enqueues nothing.
bp_status_t CopyDeviceToHostAsync(void* data, int32_t device, const void* src, size_t src_offset, void* dst,
                                  size_t nbytes, bp_stream_t stream) {
  PluginState* st = StateOf(data);
  if (bp_status_t s = SetDevice(st, device, "copy_device_to_host_async")) return s;
  auto gs = static_cast<gpuStream_t>(stream);
  if (gs != nullptr && gs != st->devices[device].stream) {
    std::lock_guard<std::mutex> lock(st->streams_mutex);
    auto it = st->streams.find(gs);
    if (it == st->streams.end() || it->second != device) {
      char msg[160];
      std::snprintf(msg, sizeof msg,
                    "copy_device_to_host_async: the stream is not a stream of device %d (from "
                    "stream_get_default or stream_create, not destroyed)",
                    device);
      return st->host->set_error(BP_STATUS_INVALID_ARGUMENT, msg);
    }
  }
  if (nbytes == 0) return BP_STATUS_OK;
  if (!src || !dst)
    return st->host->set_error(BP_STATUS_INVALID_ARGUMENT, "copy_device_to_host_async: NULL src or dst");
  const gpuError_t e = gpuMemcpyAsync(dst, static_cast<const char*>(src) + src_offset, nbytes,
                                      gpuMemcpyDeviceToHost, gs);
  if (e != gpuSuccess)
    return Fail(st, BP_STATUS_INTERNAL, "copy_device_to_host_async: " BP_GPU_PREFIX "MemcpyAsync(device to host)", e);
  return BP_STATUS_OK;
}

bp_status_t HostAllocate(void* data, int32_t device, size_t nbytes, void** out_ptr) {
  PluginState* st = StateOf(data);
  if (!out_ptr) return st->host->set_error(BP_STATUS_INVALID_ARGUMENT, "host_allocate: out_ptr is NULL");
  if (bp_status_t s = SetDevice(st, device, "host_allocate")) return s;
  *out_ptr = nullptr;
  if (nbytes == 0) return BP_STATUS_OK;
  void* p = nullptr;
  const gpuError_t e = gpuHostAlloc(&p, nbytes);
  if (e != gpuSuccess) {
    char what[96];
    std::snprintf(what, sizeof what, "host_allocate: " BP_GPU_PREFIX "HostAlloc(%zu bytes)", nbytes);
    return Fail(st, e == gpuErrorMemoryAllocation ? BP_STATUS_OUT_OF_MEMORY : BP_STATUS_INTERNAL, what, e);
  }
  try {
    std::lock_guard<std::mutex> lock(st->host_mutex);
    st->host_blocks.emplace(p, device);
  } catch (const std::bad_alloc&) {
    (void)gpuFreeHost(p);
    return st->host->set_error(BP_STATUS_OUT_OF_MEMORY, "host_allocate: out of host memory");
  }
  *out_ptr = p;
  return BP_STATUS_OK;
}

// gpuFreeHost waits for the device work that may still use the block (the
// runtimes synchronize before freeing page-locked memory).
bp_status_t HostDeallocate(void* data, int32_t device, void* ptr) {
  PluginState* st = StateOf(data);
  if (!ptr) return BP_STATUS_OK;
  if (bp_status_t s = SetDevice(st, device, "host_deallocate")) return s;
  {
    std::lock_guard<std::mutex> lock(st->host_mutex);
    auto it = st->host_blocks.find(ptr);
    if (it == st->host_blocks.end()) {
      return st->host->set_error(BP_STATUS_INVALID_ARGUMENT,
                                 "host_deallocate: not a live block from host_allocate (or already freed)");
    }
    st->host_blocks.erase(it);
  }
  const gpuError_t e = gpuFreeHost(ptr);
  if (e != gpuSuccess) return Fail(st, BP_STATUS_INTERNAL, "host_deallocate: " BP_GPU_PREFIX "FreeHost", e);
  return BP_STATUS_OK;
}

void FreeLeakedHostBlocks(PluginState* st) {
  std::lock_guard<std::mutex> lock(st->host_mutex);
  for (const auto& kv : st->host_blocks) {
    (void)gpuSetDevice(kv.second);
    (void)gpuFreeHost(kv.first);
  }
  st->host_blocks.clear();
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
