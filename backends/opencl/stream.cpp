// Streams (in-order cl_command_queues; a NULL stream is the device's default
// queue) and events (cl_event markers).
#include "stream.h"

#include <mutex>
#include <string>

#include "plugin.h"

namespace bpcl {
namespace {

// The marker is swapped under `mu` and read through Snapshot, so one thread
// may record while another queries or waits.
struct Event {
  std::mutex mu;
  cl_event ev = nullptr;  // last recorded marker; nullptr before the first record
  Device* dev = nullptr;  // its device: a NULL stream means this device's default queue
};

// The event's marker, retained (release it), or nullptr if never recorded.
cl_event Snapshot(Event* e) {
  std::lock_guard<std::mutex> lock(e->mu);
  if (e->ev != nullptr) clRetainEvent(e->ev);
  return e->ev;
}

struct Retained {
  cl_event ev;
  ~Retained() {
    if (ev != nullptr) clReleaseEvent(ev);
  }
};

// CL_EVENT_COMMAND_EXECUTION_STATUS of `ev` into *complete (1: CL_COMPLETE);
// a negative status (the recorded work failed) is an error.
Status MarkerComplete(cl_event ev, const char* which, bool* complete) {
  cl_int status = CL_COMPLETE;
  BPCL_CL(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr),
          "clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS)");
  if (status < 0) {
    return Status(BP_STATUS_INTERNAL,
                  std::string(which) + ": the work before the recorded marker failed: " + ClErrorName(status));
  }
  *complete = status == CL_COMPLETE;
  return Ok();
}

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

bp_status_t StreamCreate(void* data, int32_t device, bp_stream_t* out_stream) {
  return Guard(data, [&]() -> Status {
    Device* d = nullptr;
    BPCL_RETURN_IF_ERROR(GetDevice(B(data), device, &d));
    if (out_stream == nullptr) return Status(BP_STATUS_INVALID_ARGUMENT, "opencl stream_create: NULL out_stream");
    cl_command_queue q = nullptr;
    Status st = CreateQueue(d, &q);
    // The ABI promises OUT_OF_MEMORY or UNAVAILABLE from stream_create.
    if (!st.ok() && st.code() != BP_STATUS_OUT_OF_MEMORY) st = Status(BP_STATUS_UNAVAILABLE, st.message());
    BPCL_RETURN_IF_ERROR(Prefixed("stream_create", st));
    std::lock_guard<std::mutex> lock(d->streams_mutex);
    d->streams.insert(q);
    *out_stream = q;
    return Ok();
  });
}

bp_status_t StreamDestroy(void* data, int32_t device, bp_stream_t stream) {
  return Guard(data, [&]() -> Status {
    Device* d = nullptr;
    BPCL_RETURN_IF_ERROR(GetDevice(B(data), device, &d));
    auto q = static_cast<cl_command_queue>(stream);
    {
      std::lock_guard<std::mutex> lock(d->streams_mutex);
      if (d->streams.erase(q) == 0) {
        return Status(BP_STATUS_INVALID_ARGUMENT, "opencl stream_destroy: stream " +
                                                      std::string(stream == nullptr ? "NULL" : "handle") +
                                                      " was not made by stream_create on device " +
                                                      std::to_string(device) + " (or is already destroyed)");
      }
    }
    // Drain first: clReleaseCommandQueue alone would not wait for it. The
    // queue is released even if the drain failed, since the host forgets it.
    Status st = ClCheck(clFinish(q), "clFinish");
    const Status rel = ClCheck(clReleaseCommandQueue(q), "clReleaseCommandQueue");
    return Prefixed("stream_destroy", st.ok() ? rel : st);
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
    cl_command_queue q = Queue(e->dev, stream);
    cl_event ev = nullptr;
    BPCL_RETURN_IF_ERROR(Prefixed(
        "event_record", ClCheck(clEnqueueMarkerWithWaitList(q, 0, nullptr, &ev), "clEnqueueMarkerWithWaitList")));
    // Submit the marker now: a barrier on another queue may wait on it only
    // once it is flushed (OpenCL 1.2, 5.13), and event_query must see it run
    // without anyone calling clFinish.
    const Status flushed = ClCheck(clFlush(q), "clFlush");
    if (!flushed.ok()) {
      clReleaseEvent(ev);
      return Prefixed("event_record", flushed);
    }
    std::lock_guard<std::mutex> lock(e->mu);
    if (e->ev != nullptr) clReleaseEvent(e->ev);
    e->ev = ev;
    return Ok();
  });
}

bp_status_t EventWait(void* data, bp_event_t event, bp_stream_t stream) {
  return Guard(data, [&]() -> Status {
    auto* e = static_cast<Event*>(event);
    if (e == nullptr) return Status(BP_STATUS_INVALID_ARGUMENT, "opencl event_wait: NULL event");
    const Retained marker{Snapshot(e)};
    if (marker.ev == nullptr) return Ok();  // never recorded: nothing to wait for
    // A barrier, not clWaitForEvents: the device waits, the host does not.
    return Prefixed("event_wait", ClCheck(clEnqueueBarrierWithWaitList(Queue(e->dev, stream), 1, &marker.ev, nullptr),
                                          "clEnqueueBarrierWithWaitList"));
  });
}

bp_status_t EventSynchronize(void* data, bp_event_t event) {
  return Guard(data, [&]() -> Status {
    auto* e = static_cast<Event*>(event);
    if (e == nullptr) return Status(BP_STATUS_INVALID_ARGUMENT, "opencl event_synchronize: NULL event");
    const Retained marker{Snapshot(e)};
    if (marker.ev == nullptr) return Ok();
    return Prefixed("event_synchronize", ClCheck(clWaitForEvents(1, &marker.ev), "clWaitForEvents"));
  });
}

bp_status_t EventQuery(void* data, bp_event_t event, int32_t* out_complete) {
  return Guard(data, [&]() -> Status {
    auto* e = static_cast<Event*>(event);
    if (e == nullptr) return Status(BP_STATUS_INVALID_ARGUMENT, "opencl event_query: NULL event");
    if (out_complete == nullptr) return Status(BP_STATUS_INVALID_ARGUMENT, "opencl event_query: NULL out_complete");
    const Retained marker{Snapshot(e)};
    bool complete = true;  // never recorded counts as complete
    if (marker.ev != nullptr)
      BPCL_RETURN_IF_ERROR(Prefixed("event_query", MarkerComplete(marker.ev, "event", &complete)));
    *out_complete = complete ? 1 : 0;
    return Ok();
  });
}

bp_status_t EventElapsedTime(void* data, bp_event_t start, bp_event_t end, float* out_ms) {
  return Guard(data, [&]() -> Status {
    auto* s = static_cast<Event*>(start);
    auto* e = static_cast<Event*>(end);
    if (s == nullptr || e == nullptr) {
      return Status(BP_STATUS_INVALID_ARGUMENT,
                    std::string("opencl event_elapsed_time: NULL ") + (s == nullptr ? "start" : "end") + " event");
    }
    if (out_ms == nullptr) return Status(BP_STATUS_INVALID_ARGUMENT, "opencl event_elapsed_time: NULL out_ms");
    if (s->dev != e->dev) {
      return Status(BP_STATUS_INVALID_ARGUMENT,
                    "opencl event_elapsed_time: start and end were created on different devices");
    }
    const Retained markers[2] = {{Snapshot(s)}, {Snapshot(e)}};
    const char* names[2] = {"start", "end"};
    cl_ulong ns[2] = {0, 0};
    for (int i = 0; i < 2; ++i) {
      if (markers[i].ev == nullptr) {
        return Status(BP_STATUS_FAILED_PRECONDITION,
                      std::string("opencl event_elapsed_time: the ") + names[i] + " event was never recorded");
      }
      bool complete = false;
      BPCL_RETURN_IF_ERROR(Prefixed("event_elapsed_time", MarkerComplete(markers[i].ev, names[i], &complete)));
      if (!complete) {
        return Status(BP_STATUS_FAILED_PRECONDITION,
                      std::string("opencl event_elapsed_time: the ") + names[i] + " event has not completed");
      }
      BPCL_RETURN_IF_ERROR(Prefixed(
          "event_elapsed_time",
          ClCheck(clGetEventProfilingInfo(markers[i].ev, CL_PROFILING_COMMAND_END, sizeof ns[i], &ns[i], nullptr),
                  "clGetEventProfilingInfo(CL_PROFILING_COMMAND_END)")));
    }
    // Signed: end may have completed before start (another stream).
    const double diff_ns = static_cast<double>(static_cast<int64_t>(ns[1] - ns[0]));
    *out_ms = static_cast<float>(diff_ns / 1e6);
    return Ok();
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
