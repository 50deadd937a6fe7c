// Streams (one in-order cl_command_queue per device; a NULL stream is the
// device's default queue) and events (cl_event markers).
#include "stream.h"

#include "plugin.h"

namespace bpcl {
namespace {

struct Event {
  cl_event ev = nullptr;   // last recorded marker; nullptr before the first record
  Device* dev = nullptr;   // its device: a NULL stream means this device's default queue
};

}  // namespace

bp_status_t StreamGetDefault(void* data, int32_t device, bp_stream_t* out_stream) {
  return Guard(data, [&]() -> Status {
    Device* d = nullptr;
    BPCL_RETURN_IF_ERROR(GetDevice(B(data), device, &d));
    if (out_stream == nullptr) return Status(BP_STATUS_INVALID_ARGUMENT, "opencl stream_get_default: NULL out_stream");
    *out_stream = d->queue;
    return Ok();
  });
}

bp_status_t StreamSynchronize(void* data, int32_t device, bp_stream_t stream) {
  return Guard(data, [&]() -> Status {
    Device* d = nullptr;
    BPCL_RETURN_IF_ERROR(GetDevice(B(data), device, &d));
    return Prefixed("stream_synchronize", ClCheck(clFinish(Queue(d, stream)), "clFinish"));
  });
}

bp_status_t EventCreate(void* data, int32_t device, bp_event_t* out_event) {
  return Guard(data, [&]() -> Status {
    Device* d = nullptr;
    BPCL_RETURN_IF_ERROR(GetDevice(B(data), device, &d));
    if (out_event == nullptr) return Status(BP_STATUS_INVALID_ARGUMENT, "opencl event_create: NULL out_event");
    auto* e = new Event();
    e->dev = d;
    *out_event = e;
    return Ok();
  });
}

bp_status_t EventRecord(void* data, bp_event_t event, bp_stream_t stream) {
  return Guard(data, [&]() -> Status {
    auto* e = static_cast<Event*>(event);
    if (e == nullptr) return Status(BP_STATUS_INVALID_ARGUMENT, "opencl event_record: NULL event");
    cl_event ev = nullptr;
    BPCL_RETURN_IF_ERROR(Prefixed("event_record", ClCheck(clEnqueueMarkerWithWaitList(Queue(e->dev, stream), 0, nullptr, &ev),
                                                          "clEnqueueMarkerWithWaitList")));
    if (e->ev != nullptr) clReleaseEvent(e->ev);
    e->ev = ev;
    return Ok();
  });
}

bp_status_t EventWait(void* data, bp_event_t event, bp_stream_t stream) {
  return Guard(data, [&]() -> Status {
    auto* e = static_cast<Event*>(event);
    if (e == nullptr) return Status(BP_STATUS_INVALID_ARGUMENT, "opencl event_wait: NULL event");
    if (e->ev == nullptr) return Ok();  // never recorded: nothing to wait for
    return Prefixed("event_wait", ClCheck(clEnqueueBarrierWithWaitList(Queue(e->dev, stream), 1, &e->ev, nullptr),
                                          "clEnqueueBarrierWithWaitList"));
  });
}

bp_status_t EventSynchronize(void* data, bp_event_t event) {
  return Guard(data, [&]() -> Status {
    auto* e = static_cast<Event*>(event);
    if (e == nullptr) return Status(BP_STATUS_INVALID_ARGUMENT, "opencl event_synchronize: NULL event");
    if (e->ev == nullptr) return Ok();
    return Prefixed("event_synchronize", ClCheck(clWaitForEvents(1, &e->ev), "clWaitForEvents"));
  });
}

bp_status_t EventDestroy(void* data, bp_event_t event) {
  return Guard(data, [&]() -> Status {
    auto* e = static_cast<Event*>(event);
    if (e == nullptr) return Ok();
    if (e->ev != nullptr) clReleaseEvent(e->ev);
    delete e;
    return Ok();
  });
}

}  // namespace bpcl
