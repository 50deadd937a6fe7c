// Streams and events for bp_backend_t, through the gpu* portability names
// (CUDA runtime or HIP).
#include "stream.h"

#include <mutex>

#include "device.h"
#include "gpu_runtime.h"
#include "plugin.h"

namespace bp_gpu {

// One non-blocking stream per device (it does not serialize with the legacy
// NULL stream other libraries in the process may use), created on first use
// because creating it initializes the device context (slow; not at load).
bp_status_t StreamGetDefault(void* data, int32_t device, bp_stream_t* out_stream) {
  PluginState* st = StateOf(data);
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
  PluginState* st = StateOf(data);
  if (bp_status_t s = SetDevice(st, device, "stream_synchronize")) return s;
  const gpuError_t e = gpuStreamSynchronize(static_cast<gpuStream_t>(stream));
  // Asynchronous kernel faults surface here.
  if (e != gpuSuccess) return Fail(st, BP_STATUS_INTERNAL, BP_GPU_PREFIX "StreamSynchronize", e);
  return BP_STATUS_OK;
}

bp_status_t EventCreate(void* data, int32_t device, bp_event_t* out_event) {
  PluginState* st = StateOf(data);
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
  if (e != gpuSuccess) return Fail(StateOf(data), BP_STATUS_INTERNAL, BP_GPU_PREFIX "EventRecord", e);
  return BP_STATUS_OK;
}

bp_status_t EventWait(void* data, bp_event_t event, bp_stream_t stream) {
  const gpuError_t e =
      gpuStreamWaitEvent(static_cast<gpuStream_t>(stream), static_cast<gpuEvent_t>(event), 0);
  if (e != gpuSuccess) return Fail(StateOf(data), BP_STATUS_INTERNAL, BP_GPU_PREFIX "StreamWaitEvent", e);
  return BP_STATUS_OK;
}

bp_status_t EventSynchronize(void* data, bp_event_t event) {
  const gpuError_t e = gpuEventSynchronize(static_cast<gpuEvent_t>(event));
  if (e != gpuSuccess)
    return Fail(StateOf(data), BP_STATUS_INTERNAL, BP_GPU_PREFIX "EventSynchronize", e);
  return BP_STATUS_OK;
}

bp_status_t EventDestroy(void* data, bp_event_t event) {
  if (!event) return BP_STATUS_OK;
  const gpuError_t e = gpuEventDestroy(static_cast<gpuEvent_t>(event));
  if (e != gpuSuccess) return Fail(StateOf(data), BP_STATUS_INTERNAL, BP_GPU_PREFIX "EventDestroy", e);
  return BP_STATUS_OK;
}

}  // namespace bp_gpu
