// Streams and events for bp_backend_t, through the gpu* portability names
// (CUDA runtime or HIP).
#include "stream.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <new>

#include "device.h"
#include "gpu_runtime.h"
#include "plugin.h"

namespace bp_gpu {
namespace {

// What bp_event_t points at. `recorded` lets event_query and
// event_elapsed_time answer for a never-recorded event without asking the
// runtime (CUDA and HIP disagree on what they return then).
struct Event {
  gpuEvent_t ev = nullptr;
  int32_t device = 0;
  std::atomic<bool> recorded{false};
};

Event* AsEvent(bp_event_t e) { return static_cast<Event*>(e); }

// Asks the runtime whether `e` completed: OK with *complete set, or an error
// reported naming `fn`. Not ready is an answer, not an error: the runtime's
// last error is cleared so the next call does not see it.
bp_status_t QueryRecorded(PluginState* st, Event* e, const char* fn, bool* complete) {
  const gpuError_t r = gpuEventQuery(e->ev);
  if (r == gpuSuccess) {
    *complete = true;
  } else if (r == gpuErrorNotReady) {
    (void)gpuGetLastError();
    *complete = false;
  } else {
    char what[96];
    std::snprintf(what, sizeof what, "%s: " BP_GPU_PREFIX "EventQuery", fn);
    return Fail(st, BP_STATUS_INTERNAL, what, r);
  }
  return BP_STATUS_OK;
}

}  // namespace

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

// Non-blocking like the default stream, so the two order only through events.
bp_status_t StreamCreate(void* data, int32_t device, bp_stream_t* out_stream) {
  PluginState* st = StateOf(data);
  if (!out_stream)
    return st->host->set_error(BP_STATUS_INVALID_ARGUMENT, "stream_create: out_stream is NULL");
  if (bp_status_t s = SetDevice(st, device, "stream_create")) return s;
  gpuStream_t stream = nullptr;
  const gpuError_t e = gpuStreamCreateWithFlags(&stream, gpuStreamNonBlocking);
  if (e != gpuSuccess) {
    return Fail(st, e == gpuErrorMemoryAllocation ? BP_STATUS_OUT_OF_MEMORY : BP_STATUS_UNAVAILABLE,
                "stream_create: " BP_GPU_PREFIX "StreamCreateWithFlags", e);
  }
  try {
    std::lock_guard<std::mutex> lock(st->streams_mutex);
    st->streams.emplace(stream, device);
  } catch (const std::bad_alloc&) {
    (void)gpuStreamDestroy(stream);
    return st->host->set_error(BP_STATUS_OUT_OF_MEMORY, "stream_create: out of host memory");
  }
  *out_stream = stream;
  return BP_STATUS_OK;
}

bp_status_t StreamDestroy(void* data, int32_t device, bp_stream_t stream) {
  PluginState* st = StateOf(data);
  if (bp_status_t s = SetDevice(st, device, "stream_destroy")) return s;
  auto q = static_cast<gpuStream_t>(stream);
  {
    std::lock_guard<std::mutex> lock(st->streams_mutex);
    auto it = st->streams.find(q);
    if (it == st->streams.end() || it->second != device) {
      char msg[160];
      std::snprintf(msg, sizeof msg,
                    "stream_destroy: %s was not made by stream_create on device %d (or is already "
                    "destroyed)",
                    q ? "the stream" : "the NULL stream", device);
      return st->host->set_error(BP_STATUS_INVALID_ARGUMENT, msg);
    }
    st->streams.erase(it);
  }
  // The host synchronizes first, but a stream must never go away with work
  // still queued behind the plugin's back. It is destroyed even when the
  // drain reports a fault, since the host forgets it either way.
  const gpuError_t sync = gpuStreamSynchronize(q);
  const gpuError_t destroy = gpuStreamDestroy(q);
  if (sync != gpuSuccess)
    return Fail(st, BP_STATUS_INTERNAL, "stream_destroy: " BP_GPU_PREFIX "StreamSynchronize", sync);
  if (destroy != gpuSuccess)
    return Fail(st, BP_STATUS_INTERNAL, "stream_destroy: " BP_GPU_PREFIX "StreamDestroy", destroy);
  return BP_STATUS_OK;
}

void DestroyLeakedStreams(PluginState* st) {
  std::lock_guard<std::mutex> lock(st->streams_mutex);
  for (const auto& kv : st->streams) {
    (void)gpuSetDevice(kv.second);
    (void)gpuStreamSynchronize(kv.first);
    (void)gpuStreamDestroy(kv.first);
  }
  st->streams.clear();
}

// Events time themselves (no gpuEventDisableTiming): the ABI has one kind of
// event and event_elapsed_time must work on any of them. Recording one costs
// a timestamp write on the device.
bp_status_t EventCreate(void* data, int32_t device, bp_event_t* out_event) {
  PluginState* st = StateOf(data);
  if (!out_event)
    return st->host->set_error(BP_STATUS_INVALID_ARGUMENT, "event_create: out_event is NULL");
  if (bp_status_t s = SetDevice(st, device, "event_create")) return s;
  Event* ev = new (std::nothrow) Event();
  if (!ev) return st->host->set_error(BP_STATUS_OUT_OF_MEMORY, "event_create: out of host memory");
  ev->device = device;
  const gpuError_t e = gpuEventCreateWithFlags(&ev->ev, gpuEventDefault);
  if (e != gpuSuccess) {
    delete ev;
    return Fail(st, BP_STATUS_INTERNAL, BP_GPU_PREFIX "EventCreateWithFlags", e);
  }
  *out_event = ev;
  return BP_STATUS_OK;
}

bp_status_t EventRecord(void* data, bp_event_t event, bp_stream_t stream) {
  PluginState* st = StateOf(data);
  Event* ev = AsEvent(event);
  if (!ev) return st->host->set_error(BP_STATUS_INVALID_ARGUMENT, "event_record: event is NULL");
  const gpuError_t e = gpuEventRecord(ev->ev, static_cast<gpuStream_t>(stream));
  if (e != gpuSuccess) return Fail(st, BP_STATUS_INTERNAL, BP_GPU_PREFIX "EventRecord", e);
  ev->recorded.store(true, std::memory_order_release);
  return BP_STATUS_OK;
}

// gpuStreamWaitEvent: the device waits, the host returns at once.
bp_status_t EventWait(void* data, bp_event_t event, bp_stream_t stream) {
  PluginState* st = StateOf(data);
  Event* ev = AsEvent(event);
  if (!ev) return st->host->set_error(BP_STATUS_INVALID_ARGUMENT, "event_wait: event is NULL");
  const gpuError_t e = gpuStreamWaitEvent(static_cast<gpuStream_t>(stream), ev->ev, 0);
  if (e != gpuSuccess) return Fail(st, BP_STATUS_INTERNAL, BP_GPU_PREFIX "StreamWaitEvent", e);
  return BP_STATUS_OK;
}

bp_status_t EventSynchronize(void* data, bp_event_t event) {
  PluginState* st = StateOf(data);
  Event* ev = AsEvent(event);
  if (!ev) return st->host->set_error(BP_STATUS_INVALID_ARGUMENT, "event_synchronize: event is NULL");
  const gpuError_t e = gpuEventSynchronize(ev->ev);
  if (e != gpuSuccess) return Fail(st, BP_STATUS_INTERNAL, BP_GPU_PREFIX "EventSynchronize", e);
  return BP_STATUS_OK;
}

bp_status_t EventQuery(void* data, bp_event_t event, int32_t* out_complete) {
  PluginState* st = StateOf(data);
  Event* ev = AsEvent(event);
  if (!ev || !out_complete) {
    return st->host->set_error(BP_STATUS_INVALID_ARGUMENT,
                               ev ? "event_query: out_complete is NULL" : "event_query: event is NULL");
  }
  bool complete = true;  // never recorded counts as complete
  if (ev->recorded.load(std::memory_order_acquire)) {
    if (bp_status_t s = QueryRecorded(st, ev, "event_query", &complete)) return s;
  }
  *out_complete = complete ? 1 : 0;
  return BP_STATUS_OK;
}

bp_status_t EventElapsedTime(void* data, bp_event_t start, bp_event_t end, float* out_ms) {
  PluginState* st = StateOf(data);
  Event* ev[2] = {AsEvent(start), AsEvent(end)};
  const char* names[2] = {"start", "end"};
  char msg[160];
  if (!ev[0] || !ev[1] || !out_ms) {
    std::snprintf(msg, sizeof msg, "event_elapsed_time: %s is NULL",
                  !ev[0] ? "start" : !ev[1] ? "end" : "out_ms");
    return st->host->set_error(BP_STATUS_INVALID_ARGUMENT, msg);
  }
  if (ev[0]->device != ev[1]->device) {
    std::snprintf(msg, sizeof msg,
                  "event_elapsed_time: start was created on device %d, end on device %d",
                  ev[0]->device, ev[1]->device);
    return st->host->set_error(BP_STATUS_INVALID_ARGUMENT, msg);
  }
  // Checked one by one so the message says which event is not ready.
  for (int i = 0; i < 2; ++i) {
    bool complete = false;
    if (ev[i]->recorded.load(std::memory_order_acquire)) {
      if (bp_status_t s = QueryRecorded(st, ev[i], "event_elapsed_time", &complete)) return s;
    }
    if (!complete) {
      std::snprintf(msg, sizeof msg, "event_elapsed_time: the %s event %s", names[i],
                    ev[i]->recorded.load() ? "has not completed" : "was never recorded");
      return st->host->set_error(BP_STATUS_FAILED_PRECONDITION, msg);
    }
  }
  float ms = 0.0f;
  const gpuError_t e = gpuEventElapsedTime(&ms, ev[0]->ev, ev[1]->ev);
  // Not ready here means a concurrent re-record: still a precondition.
  if (e == gpuErrorNotReady)
    return Fail(st, BP_STATUS_FAILED_PRECONDITION, "event_elapsed_time: " BP_GPU_PREFIX "EventElapsedTime", e);
  if (e != gpuSuccess)
    return Fail(st, BP_STATUS_INTERNAL, "event_elapsed_time: " BP_GPU_PREFIX "EventElapsedTime", e);
  *out_ms = ms;
  return BP_STATUS_OK;
}

bp_status_t EventDestroy(void* data, bp_event_t event) {
  Event* ev = AsEvent(event);
  if (!ev) return BP_STATUS_OK;
  const gpuError_t e = gpuEventDestroy(ev->ev);
  delete ev;
  if (e != gpuSuccess) return Fail(StateOf(data), BP_STATUS_INTERNAL, BP_GPU_PREFIX "EventDestroy", e);
  return BP_STATUS_OK;
}

}  // namespace bp_gpu
