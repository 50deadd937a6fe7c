// Device enumeration and properties for bp_backend_t, through the gpu*
// portability names (CUDA runtime or HIP), and the device checks memory.cpp
// and stream.cpp share.
#include "device.h"

#include <cstdio>
#include <cstring>

#include "gpu_runtime.h"
#include "platform.h"
#include "plugin.h"

namespace bp_gpu {
namespace {

void CopyString(char* dst, size_t cap, const char* src) {
  std::snprintf(dst, cap, "%s", src ? src : "");
}

}  // namespace

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

// Counts devices; a runtime error (no driver, no device) means zero devices
// and becomes the reason.
void EnumerateDevices(PluginState* st) {
  int count = 0;
  const gpuError_t e = gpuGetDeviceCount(&count);
  if (e != gpuSuccess) {
    (void)gpuGetLastError();  // clear the runtime's sticky last error
    char reason[256];
    std::snprintf(reason, sizeof reason, BP_GPU_PREFIX "GetDeviceCount: %s (%s)",
                  gpuGetErrorString(e), gpuGetErrorName(e));
    st->no_device_reason = reason;
    st->device_count = 0;
    return;
  }
  if (count <= 0) {
    st->no_device_reason = BP_GPU_PREFIX "GetDeviceCount: the runtime reports no device";
    st->device_count = 0;
    return;
  }
  st->device_count = count;
  st->devices.reset(new DeviceSlot[count]);
  for (int d = 0; d < count; ++d) {
    int sms = 0;
    if (gpuDeviceGetAttribute(&sms, gpuDevAttrMultiProcessorCount, d) == gpuSuccess && sms > 0) {
      st->devices[d].sm_count = sms;
    }
  }
}

bp_status_t DeviceCount(void* data, int32_t* out_count) {
  if (!out_count)
    return StateOf(data)->host->set_error(BP_STATUS_INVALID_ARGUMENT, "device_count: out_count is NULL");
  *out_count = StateOf(data)->device_count;
  return BP_STATUS_OK;
}

bp_status_t DeviceProperties(void* data, int32_t device, bp_device_properties_t* out) {
  PluginState* st = StateOf(data);
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

}  // namespace bp_gpu
