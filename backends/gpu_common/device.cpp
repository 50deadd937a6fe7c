// Devices, raw memory, copies, streams and events for bp_backend_t, through
// the gpu* portability names (CUDA runtime or HIP).
//
// Memory is raw gpuMalloc/gpuFree on purpose: the core's caching allocator
// sits above every backend's allocate(), so there is one caching policy and
// one place for statistics (allocated, reserved, peak) for all backends,
// instead of a private cache per plugin the core cannot see or empty.
#include "device.h"

#include <cstdio>
#include <cstring>

#include "gpu_runtime.h"
#include "platform.h"
#include "plugin_state.h"

namespace bp_gpu {
namespace {

PluginState* S(void* p) { return static_cast<PluginState*>(p); }

bp_status_t Fail(PluginState* st, bp_status_t code, const char* what, gpuError_t e) {
  (void)gpuGetLastError();  // clear the sticky last error so the next call starts clean
  char msg[320];
  std::snprintf(msg, sizeof msg, "%s backend: %s: %s (%s)", platform::kBackendName, what,
                gpuGetErrorString(e), gpuGetErrorName(e));
  return st->host->set_error(code, msg);
}

bp_status_t CheckDevice(PluginState* st, int32_t device, const char* fn) {
  if (device >= 0 && device < st->device_count) return BP_STATUS_OK;
  char msg[256];
  if (st->device_count == 0) {
    std::snprintf(msg, sizeof msg,
                  "%s backend: %s: device %d requested but there are no devices (%s)",
                  platform::kBackendName, fn, device, st->no_device_reason.c_str());
  } else {
    std::snprintf(msg, sizeof msg, "%s backend: %s: device %d out of range [0, %d)",
                  platform::kBackendName, fn, device, st->device_count);
  }
  return st->host->set_error(BP_STATUS_OUT_OF_RANGE, msg);
}

bp_status_t SetDevice(PluginState* st, int32_t device, const char* fn) {
  if (bp_status_t s = CheckDevice(st, device, fn)) return s;
  const gpuError_t e = gpuSetDevice(device);
  if (e != gpuSuccess) return Fail(st, BP_STATUS_UNAVAILABLE, BP_GPU_PREFIX "SetDevice", e);
  return BP_STATUS_OK;
}

bp_status_t DeviceCount(void* data, int32_t* out_count) {
  if (!out_count)
    return S(data)->host->set_error(BP_STATUS_INVALID_ARGUMENT, "device_count: out_count is NULL");
  *out_count = S(data)->device_count;
  return BP_STATUS_OK;
}

void CopyString(char* dst, size_t cap, const char* src) {
  std::snprintf(dst, cap, "%s", src ? src : "");
}

bp_status_t DeviceProperties(void* data, int32_t device, bp_device_properties_t* out) {
  PluginState* st = S(data);
  if (!out)
    return st->host->set_error(BP_STATUS_INVALID_ARGUMENT,
                               "device_properties: out_properties is NULL");
  if (bp_status_t s = CheckDevice(st, device, "device_properties")) return s;
  gpuDeviceProp_t prop;
  std::memset(&prop, 0, sizeof prop);
  const gpuError_t e = gpuGetDeviceProperties(&prop, device);
  if (e != gpuSuccess)
    return Fail(st, BP_STATUS_UNAVAILABLE, BP_GPU_PREFIX "GetDeviceProperties", e);
  // Fill a full local copy, then hand over only what the caller's struct holds.
  bp_device_properties_t p;
  std::memset(&p, 0, sizeof p);
  p.struct_size = out->struct_size < sizeof p ? out->struct_size : sizeof p;
  CopyString(p.name, sizeof p.name, prop.name);
  CopyString(p.vendor, sizeof p.vendor, platform::kVendor);
  int driver = 0, runtime = 0;
  (void)gpuDriverGetVersion(&driver);
  (void)gpuRuntimeGetVersion(&runtime);
  std::snprintf(p.driver_version, sizeof p.driver_version, "driver %d, runtime %d", driver,
                runtime);
  p.total_memory_bytes = static_cast<uint64_t>(prop.totalGlobalMem);
  // The kernels compute float16/bfloat16 through float, so every device runs them.
  p.capabilities = BP_DEVICE_CAP_FP64 | BP_DEVICE_CAP_FP16 | BP_DEVICE_CAP_BF16;
  p.alignment_bytes = 256;  // gpuMalloc returns at least 256-byte aligned memory
  p.compute_units = prop.multiProcessorCount;
#if defined(BP_GPU_HIP)
  std::snprintf(p.extensions, sizeof p.extensions, "%s", prop.gcnArchName);
#else
  std::snprintf(p.extensions, sizeof p.extensions, "sm_%d%d", prop.major, prop.minor);
#endif
  std::memcpy(out, &p, p.struct_size);
  return BP_STATUS_OK;
}

bp_status_t Allocate(void* data, int32_t device, size_t nbytes, void** out_ptr) {
  PluginState* st = S(data);
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
  PluginState* st = S(data);
  if (!ptr) return BP_STATUS_OK;
  if (bp_status_t s = SetDevice(st, device, "deallocate")) return s;
  const gpuError_t e = gpuFree(ptr);
  if (e != gpuSuccess) return Fail(st, BP_STATUS_INTERNAL, BP_GPU_PREFIX "Free", e);
  return BP_STATUS_OK;
}

// Host-to-device from pageable memory: the runtime stages the bytes through
// its own pinned buffers before gpuMemcpyAsync returns, so the caller's
// buffer is free on return (stronger than the ABI asks).
bp_status_t CopyH2D(void* data, int32_t device, const void* src, void* dst, size_t dst_offset,
                    size_t nbytes, bp_stream_t stream) {
  PluginState* st = S(data);
  if (bp_status_t s = SetDevice(st, device, "copy_host_to_device")) return s;
  if (nbytes == 0) return BP_STATUS_OK;
  const gpuError_t e = gpuMemcpyAsync(static_cast<char*>(dst) + dst_offset, src, nbytes,
                                      gpuMemcpyHostToDevice, static_cast<gpuStream_t>(stream));
  if (e != gpuSuccess)
    return Fail(st, BP_STATUS_INTERNAL, BP_GPU_PREFIX "MemcpyAsync(host to device)", e);
  return BP_STATUS_OK;
}

// Device-to-host returns with the data in place: copy, then wait for the stream.
bp_status_t CopyD2H(void* data, int32_t device, const void* src, size_t src_offset, void* dst,
                    size_t nbytes, bp_stream_t stream) {
  PluginState* st = S(data);
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

bp_status_t CopyD2D(void* data, int32_t device, const void* src, size_t src_offset, void* dst,
                    size_t dst_offset, size_t nbytes, bp_stream_t stream) {
  PluginState* st = S(data);
  if (bp_status_t s = SetDevice(st, device, "copy_device_to_device")) return s;
  if (nbytes == 0) return BP_STATUS_OK;
  const gpuError_t e = gpuMemcpyAsync(static_cast<char*>(dst) + dst_offset,
                                      static_cast<const char*>(src) + src_offset, nbytes,
                                      gpuMemcpyDeviceToDevice, static_cast<gpuStream_t>(stream));
  if (e != gpuSuccess)
    return Fail(st, BP_STATUS_INTERNAL, BP_GPU_PREFIX "MemcpyAsync(device to device)", e);
  return BP_STATUS_OK;
}

// One non-blocking stream per device (it does not serialize with the legacy
// NULL stream other libraries in the process may use), created on first use
// because creating it initializes the device context (slow; not at load).
bp_status_t StreamGetDefault(void* data, int32_t device, bp_stream_t* out_stream) {
  PluginState* st = S(data);
  if (!out_stream)
    return st->host->set_error(BP_STATUS_INVALID_ARGUMENT,
                               "stream_get_default: out_stream is NULL");
  if (bp_status_t s = SetDevice(st, device, "stream_get_default")) return s;
  DeviceSlot& slot = st->devices[device];
  std::call_once(slot.stream_once, [&] {
    slot.stream_error = gpuStreamCreateWithFlags(&slot.stream, gpuStreamNonBlocking);
  });
  if (slot.stream_error != gpuSuccess) {
    return Fail(st, BP_STATUS_UNAVAILABLE, BP_GPU_PREFIX "StreamCreateWithFlags",
                slot.stream_error);
  }
  *out_stream = slot.stream;
  return BP_STATUS_OK;
}

bp_status_t StreamSynchronize(void* data, int32_t device, bp_stream_t stream) {
  PluginState* st = S(data);
  if (bp_status_t s = SetDevice(st, device, "stream_synchronize")) return s;
  const gpuError_t e = gpuStreamSynchronize(static_cast<gpuStream_t>(stream));
  // Asynchronous kernel faults surface here.
  if (e != gpuSuccess) return Fail(st, BP_STATUS_INTERNAL, BP_GPU_PREFIX "StreamSynchronize", e);
  return BP_STATUS_OK;
}

bp_status_t EventCreate(void* data, int32_t device, bp_event_t* out_event) {
  PluginState* st = S(data);
  if (!out_event)
    return st->host->set_error(BP_STATUS_INVALID_ARGUMENT, "event_create: out_event is NULL");
  if (bp_status_t s = SetDevice(st, device, "event_create")) return s;
  gpuEvent_t ev = nullptr;
  const gpuError_t e = gpuEventCreateWithFlags(&ev, gpuEventDisableTiming);
  if (e != gpuSuccess) return Fail(st, BP_STATUS_INTERNAL, BP_GPU_PREFIX "EventCreateWithFlags", e);
  *out_event = ev;
  return BP_STATUS_OK;
}

bp_status_t EventRecord(void* data, bp_event_t event, bp_stream_t stream) {
  const gpuError_t e =
      gpuEventRecord(static_cast<gpuEvent_t>(event), static_cast<gpuStream_t>(stream));
  if (e != gpuSuccess) return Fail(S(data), BP_STATUS_INTERNAL, BP_GPU_PREFIX "EventRecord", e);
  return BP_STATUS_OK;
}

bp_status_t EventWait(void* data, bp_event_t event, bp_stream_t stream) {
  const gpuError_t e =
      gpuStreamWaitEvent(static_cast<gpuStream_t>(stream), static_cast<gpuEvent_t>(event), 0);
  if (e != gpuSuccess) return Fail(S(data), BP_STATUS_INTERNAL, BP_GPU_PREFIX "StreamWaitEvent", e);
  return BP_STATUS_OK;
}

bp_status_t EventSynchronize(void* data, bp_event_t event) {
  const gpuError_t e = gpuEventSynchronize(static_cast<gpuEvent_t>(event));
  if (e != gpuSuccess)
    return Fail(S(data), BP_STATUS_INTERNAL, BP_GPU_PREFIX "EventSynchronize", e);
  return BP_STATUS_OK;
}

bp_status_t EventDestroy(void* data, bp_event_t event) {
  if (!event) return BP_STATUS_OK;
  const gpuError_t e = gpuEventDestroy(static_cast<gpuEvent_t>(event));
  if (e != gpuSuccess) return Fail(S(data), BP_STATUS_INTERNAL, BP_GPU_PREFIX "EventDestroy", e);
  return BP_STATUS_OK;
}

}  // namespace

void FillDeviceFunctions(bp_backend_t* b) {
  b->device_count = DeviceCount;
  b->device_properties = DeviceProperties;
  b->allocate = Allocate;
  b->deallocate = Deallocate;
  b->copy_host_to_device = CopyH2D;
  b->copy_device_to_host = CopyD2H;
  b->copy_device_to_device = CopyD2D;
  b->stream_get_default = StreamGetDefault;
  b->stream_synchronize = StreamSynchronize;
  b->event_create = EventCreate;
  b->event_record = EventRecord;
  b->event_wait = EventWait;
  b->event_synchronize = EventSynchronize;
  b->event_destroy = EventDestroy;
}

}  // namespace bp_gpu
