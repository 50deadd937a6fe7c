// The C API of streams and events (backplane/streams.h): handles over the
// backend's bp_stream_t / bp_event_t, the calling thread's current stream,
// and record_stream for the caching allocator.
#include <algorithm>
#include <mutex>
#include <string>

#include "api.h"
#include "context.h"
#include "graph.h"
#include "rcu.h"
#include "stream_release.h"
#include "struct_size.h"
#include "tensor.h"

namespace bp::core {
namespace {

std::string DeviceName(const DeviceState* dev) { return dev->slot->name + ":" + std::to_string(dev->index); }

// Resolves the caller's stream handle value `in` to its object (*out)
// without dereferencing it: INVALID_ARGUMENT naming `arg` as NULL, stale (its
// stream was destroyed, even if a new one took its place) or foreign.
Status CheckStream(const bp_stream_handle_t* in, const char* fn, const char* arg, bp_stream_handle_t** out) {
  if (in == nullptr) return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": " + arg + " is NULL");
  HandleTable<bp_stream_handle_t>::Found found;
  bp_stream_handle_t* s = StreamTable().Find(in, &found);
  if (s == nullptr || s->magic != kStreamMagic) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 std::string(fn) + ": " + arg + " " + HandleTable<bp_stream_handle_t>::Describe(in, found, "stream"));
  }
  *out = s;
  return CheckNotForked(s->ctx, fn);
}

Status CheckEvent(const bp_event_handle_t* in, const char* fn, const char* arg, bp_event_handle_t** out) {
  if (in == nullptr) return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": " + arg + " is NULL");
  HandleTable<bp_event_handle_t>::Found found;
  bp_event_handle_t* e = EventTable().Find(in, &found);
  if (e == nullptr || e->magic != kEventMagic) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 std::string(fn) + ": " + arg + " " + HandleTable<bp_event_handle_t>::Describe(in, found, "event"));
  }
  *out = e;
  return CheckNotForked(e->ctx, fn);
}

// INVALID_ARGUMENT unless the event and the stream are of one device.
Status SameDevice(const bp_event_handle_t* e, const bp_stream_handle_t* s, const char* fn) {
  if (e->dev == s->dev) return Status::Ok();
  return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": the event is of device " + DeviceName(e->dev) +
                                               ", the stream of device " + DeviceName(s->dev) +
                                               "; events order work within one device only");
}

// FAILED_PRECONDITION (and the capture invalidated) when `s` is being
// captured: an event recorded or waited for inside a graph would not be
// replayed with it (graph.h records kernel calls only).
Status RefuseCapturing(const bp_stream_handle_t* s, const char* fn) {
  Capture* c = s->capture.load(std::memory_order_acquire);
  if (c == nullptr) return Status::Ok();
  const std::string why = std::string(fn) + " on a stream being captured (events are not captured into graphs)";
  {
    std::lock_guard<std::mutex> lock(c->mu);
    if (c->error.empty()) c->error = why;
  }
  return Error(BP_STATUS_FAILED_PRECONDITION, why + "; the capture is invalidated");
}

// A backend call's failure as a status naming `fn`, the slot and the device.
Status Backend(bp_status_t rc, uint64_t serial, const char* fn, const char* slot, const DeviceState* dev) {
  if (rc == BP_STATUS_OK) return Status::Ok();
  return PluginFailure(std::string(fn) + ": backend '" + dev->slot->name + "' " + slot + " on device " +
                           DeviceName(dev),
                       rc, serial);
}

Status SynchronizeStream(const bp_stream_handle_t* s, const char* fn) {
  if (Capture* c = s->capture.load(std::memory_order_acquire)) {
    const std::string why = std::string(fn) + " on a stream being captured";
    {
      std::lock_guard<std::mutex> lock(c->mu);
      if (c->error.empty()) c->error = why;
    }
    return Error(BP_STATUS_FAILED_PRECONDITION, why + "; the capture is invalidated");
  }
  const bp_backend_t& t = s->dev->slot->table;
  if (t.stream_synchronize == nullptr) return Status::Ok();
  const uint64_t serial = g_last_error_serial;
  return Backend(t.stream_synchronize(t.backend_data, s->dev->index, s->raw), serial, fn, "stream_synchronize",
                 s->dev);
}

// Undoes this thread's current-stream entries when it exits, so their
// streams can be destroyed.
struct CurrentStreamsAtExit {
  ~CurrentStreamsAtExit() {
    for (int i = 0; i < t_num_current_streams; ++i) {
      t_current_streams[i].stream->current_on.fetch_sub(1, std::memory_order_acq_rel);
    }
    t_num_current_streams = 0;
  }
};

Status SetCurrent(bp_stream_handle_t* s, const char* fn) {
  static thread_local CurrentStreamsAtExit at_exit;
  (void)at_exit;
  int i = 0;
  while (i < t_num_current_streams && t_current_streams[i].dev != s->dev) ++i;
  const bool found = i < t_num_current_streams;
  if (s->is_default) {
    if (!found) return Status::Ok();
    t_current_streams[i].stream->current_on.fetch_sub(1, std::memory_order_acq_rel);
    t_current_streams[i] = t_current_streams[--t_num_current_streams];
    return Status::Ok();
  }
  if (!found && t_num_current_streams == kMaxCurrentStreams) {
    return Error(BP_STATUS_OUT_OF_RANGE, std::string(fn) + ": this thread already has non-default current streams on " +
                                             std::to_string(kMaxCurrentStreams) + " devices (the most it may)");
  }
  s->current_on.fetch_add(1, std::memory_order_acq_rel);
  if (found) {
    t_current_streams[i].stream->current_on.fetch_sub(1, std::memory_order_acq_rel);
  } else {
    ++t_num_current_streams;
  }
  t_current_streams[i] = CurrentStreamEntry{s->dev, s};
  return Status::Ok();
}

}  // namespace

HandleTable<bp_stream_handle_t>& StreamTable() {
  static auto* table = new HandleTable<bp_stream_handle_t>(0x3);  // never destroyed: usable at exit
  return *table;
}
HandleTable<bp_event_handle_t>& EventTable() {
  static auto* table = new HandleTable<bp_event_handle_t>(0x5);
  return *table;
}

}  // namespace bp::core

bp_stream_handle_t::~bp_stream_handle_t() {
  if (id == 0) return;
  bp::core::HandleTable<bp_stream_handle_t>::Found found;
  bp::core::StreamTable().Remove(reinterpret_cast<const void*>(id), &found);
}

using namespace bp::core;

extern "C" {

BP_API bp_status_t bp_stream_create(bp_context_t* context, bp_device_t device, bp_stream_handle_t** out_stream) {
  const char* fn = "bp_stream_create";
  return ApiCall(fn, [&]() -> Status {
    BP_CHECK_ARG(context != nullptr && out_stream != nullptr, fn, "context and out_stream must not be NULL");
    ReadSection rs;
    DeviceState* dev = nullptr;
    BP_RETURN_IF_ERROR(ResolveDevice(context, device, fn, &dev));
    const bp_backend_t& t = dev->slot->table;
    if (t.stream_create == nullptr || t.stream_destroy == nullptr) {
      return Error(BP_STATUS_UNIMPLEMENTED, std::string(fn) + ": backend '" + dev->slot->name +
                                                "' has only its default stream (its plugin leaves stream_create "
                                                "NULL: ABI < 1.4 or no support)");
    }
    auto handle = std::make_unique<bp_stream_handle_t>();
    handle->ctx = context;
    handle->dev = dev;
    const uint64_t serial = g_last_error_serial;
    BP_RETURN_IF_ERROR(
        Backend(t.stream_create(t.backend_data, dev->index, &handle->raw), serial, fn, "stream_create", dev));
    dev->allocator->AddStream(handle->raw);
    {
      std::lock_guard<std::mutex> lock(dev->streams_mu);
      dev->streams.push_back(handle.get());
    }
    handle->id = StreamTable().Add(handle.get());
    *out_stream = PublicHandle(handle.release());
    return Status::Ok();
  });
}

BP_API bp_status_t bp_stream_destroy(bp_stream_handle_t* stream_in) {
  const char* fn = "bp_stream_destroy";
  if (stream_in == nullptr) return BP_STATUS_OK;
  return ApiCall(fn, [&]() -> Status {
    bp_stream_handle_t* stream = nullptr;
    BP_RETURN_IF_ERROR(CheckStream(stream_in, fn, "stream", &stream));
    if (stream->is_default) {
      return Error(BP_STATUS_FAILED_PRECONDITION, std::string(fn) + ": stream is the default stream of device " +
                                                      DeviceName(stream->dev) + "; the context owns it");
    }
    if (!DiscardAbandonedCapture(stream)) {
      return Error(BP_STATUS_FAILED_PRECONDITION, std::string(fn) + ": stream of device " + DeviceName(stream->dev) +
                                                      " is being captured; bp_graph_end_capture first");
    }
    const int32_t users = stream->current_on.load(std::memory_order_acquire);
    if (users > 0) {
      return Error(BP_STATUS_FAILED_PRECONDITION,
                   std::string(fn) + ": stream is the current stream of " + std::to_string(users) +
                       " thread(s) on device " + DeviceName(stream->dev) +
                       "; bp_set_current_stream another stream on them first");
    }
    // Nothing enqueued is lost: its work finishes before the stream goes. A
    // sticky fault of that work never keeps the stream alive (logged instead).
    if (Status drained = SynchronizeStream(stream, fn); !drained.ok()) LogReleasedDespite(stream, fn, drained);
    // Out of the table first: from here its value is stale, and of two
    // threads destroying it one wins and the other is told so.
    HandleTable<bp_stream_handle_t>::Found found;
    if (StreamTable().Remove(stream_in, &found) != stream) {
      const std::string why = HandleTable<bp_stream_handle_t>::Describe(stream_in, found, "stream");
      return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": stream " + why);
    }
    stream->id = 0;
    DeviceState* dev = stream->dev;
    {
      std::lock_guard<std::mutex> lock(dev->streams_mu);
      auto& v = dev->streams;
      v.erase(std::remove(v.begin(), v.end(), stream), v.end());
    }
    // What still names the stream forgets it (its work is done): graphs
    // launched on it, and blocks record_stream marked as used on it.
    ForgetStreamInGraphs(dev, stream->raw);
    dev->allocator->ForgetStream(stream->raw);
    if (dev->pinned != nullptr) dev->pinned->ForgetStream(stream->raw);
    const bp_backend_t& t = dev->slot->table;
    const uint64_t serial = g_last_error_serial;
    const bp_status_t rc = t.stream_destroy(t.backend_data, dev->index, stream->raw);
    stream->magic = 0;
    delete stream;
    return Backend(rc, serial, fn, "stream_destroy", dev);
  });
}

BP_API bp_status_t bp_stream_get_default(bp_context_t* context, bp_device_t device, bp_stream_handle_t** out_stream) {
  const char* fn = "bp_stream_get_default";
  return ApiCall(fn, [&]() -> Status {
    BP_CHECK_ARG(context != nullptr && out_stream != nullptr, fn, "context and out_stream must not be NULL");
    ReadSection rs;
    DeviceState* dev = nullptr;
    BP_RETURN_IF_ERROR(ResolveDevice(context, device, fn, &dev));
    *out_stream = PublicHandle(&dev->default_stream);
    return Status::Ok();
  });
}

BP_API bp_status_t bp_stream_device(const bp_stream_handle_t* stream_in, bp_device_t* out_device) {
  const char* fn = "bp_stream_device";
  return ApiCall(fn, [&]() -> Status {
    bp_stream_handle_t* stream = nullptr;
    BP_RETURN_IF_ERROR(CheckStream(stream_in, fn, "stream", &stream));
    BP_CHECK_ARG(out_device != nullptr, fn, "out_device is NULL");
    *out_device = bp_device_t{stream->dev->slot->id, stream->dev->index};
    return Status::Ok();
  });
}

BP_API bp_status_t bp_stream_synchronize(bp_stream_handle_t* stream_in) {
  const char* fn = "bp_stream_synchronize";
  return ApiCall(fn, [&]() -> Status {
    bp_stream_handle_t* stream = nullptr;
    BP_RETURN_IF_ERROR(CheckStream(stream_in, fn, "stream", &stream));
    return SynchronizeStream(stream, fn);
  });
}

BP_API bp_status_t bp_set_current_stream(bp_stream_handle_t* stream_in) {
  const char* fn = "bp_set_current_stream";
  return ApiCall(fn, [&]() -> Status {
    bp_stream_handle_t* stream = nullptr;
    BP_RETURN_IF_ERROR(CheckStream(stream_in, fn, "stream", &stream));
    return SetCurrent(stream, fn);
  });
}

BP_API bp_status_t bp_get_current_stream(bp_context_t* context, bp_device_t device, bp_stream_handle_t** out_stream) {
  const char* fn = "bp_get_current_stream";
  return ApiCall(fn, [&]() -> Status {
    BP_CHECK_ARG(context != nullptr && out_stream != nullptr, fn, "context and out_stream must not be NULL");
    ReadSection rs;
    DeviceState* dev = nullptr;
    BP_RETURN_IF_ERROR(ResolveDevice(context, device, fn, &dev));
    bp_stream_handle_t* h = CurrentStreamHandle(dev);
    *out_stream = PublicHandle(h != nullptr ? h : &dev->default_stream);
    return Status::Ok();
  });
}

BP_API bp_status_t bp_event_create(bp_context_t* context, bp_device_t device, bp_event_handle_t** out_event) {
  const char* fn = "bp_event_create";
  return ApiCall(fn, [&]() -> Status {
    BP_CHECK_ARG(context != nullptr && out_event != nullptr, fn, "context and out_event must not be NULL");
    ReadSection rs;
    DeviceState* dev = nullptr;
    BP_RETURN_IF_ERROR(ResolveDevice(context, device, fn, &dev));
    const bp_backend_t& t = dev->slot->table;
    if (t.event_create == nullptr || t.event_record == nullptr || t.event_wait == nullptr ||
        t.event_synchronize == nullptr || t.event_destroy == nullptr) {
      return Error(BP_STATUS_UNIMPLEMENTED, std::string(fn) + ": backend '" + dev->slot->name +
                                                "' has no events (its plugin leaves the event slots NULL)");
    }
    auto handle = std::make_unique<bp_event_handle_t>();
    handle->ctx = context;
    handle->dev = dev;
    const uint64_t serial = g_last_error_serial;
    BP_RETURN_IF_ERROR(
        Backend(t.event_create(t.backend_data, dev->index, &handle->raw), serial, fn, "event_create", dev));
    dev->live_events.fetch_add(1, std::memory_order_acq_rel);
    handle->id = EventTable().Add(handle.get());
    *out_event = reinterpret_cast<bp_event_handle_t*>(handle.release()->id);
    return Status::Ok();
  });
}

BP_API bp_status_t bp_event_destroy(bp_event_handle_t* event_in) {
  const char* fn = "bp_event_destroy";
  if (event_in == nullptr) return BP_STATUS_OK;
  return ApiCall(fn, [&]() -> Status {
    HandleTable<bp_event_handle_t>::Found found;
    bp_event_handle_t* event = EventTable().Remove(event_in, &found);
    if (event == nullptr) {
      return Error(BP_STATUS_INVALID_ARGUMENT,
                   std::string(fn) + ": event " + HandleTable<bp_event_handle_t>::Describe(event_in, found, "event"));
    }
    const bp_backend_t& t = event->dev->slot->table;
    const uint64_t serial = g_last_error_serial;
    const bp_status_t rc = t.event_destroy(t.backend_data, event->raw);
    DeviceState* dev = event->dev;
    dev->live_events.fetch_sub(1, std::memory_order_acq_rel);
    event->magic = 0;
    delete event;
    return Backend(rc, serial, fn, "event_destroy", dev);
  });
}

BP_API bp_status_t bp_event_record(bp_event_handle_t* event_in, bp_stream_handle_t* stream_in) {
  const char* fn = "bp_event_record";
  return ApiCall(fn, [&]() -> Status {
    bp_event_handle_t* event = nullptr;
    BP_RETURN_IF_ERROR(CheckEvent(event_in, fn, "event", &event));
    bp_stream_handle_t* stream = nullptr;
    BP_RETURN_IF_ERROR(CheckStream(stream_in, fn, "stream", &stream));
    BP_RETURN_IF_ERROR(SameDevice(event, stream, fn));
    BP_RETURN_IF_ERROR(RefuseCapturing(stream, fn));
    const bp_backend_t& t = event->dev->slot->table;
    const uint64_t serial = g_last_error_serial;
    return Backend(t.event_record(t.backend_data, event->raw, stream->raw), serial, fn, "event_record", event->dev);
  });
}

BP_API bp_status_t bp_stream_wait_event(bp_stream_handle_t* stream_in, bp_event_handle_t* event_in) {
  const char* fn = "bp_stream_wait_event";
  return ApiCall(fn, [&]() -> Status {
    bp_stream_handle_t* stream = nullptr;
    BP_RETURN_IF_ERROR(CheckStream(stream_in, fn, "stream", &stream));
    bp_event_handle_t* event = nullptr;
    BP_RETURN_IF_ERROR(CheckEvent(event_in, fn, "event", &event));
    BP_RETURN_IF_ERROR(SameDevice(event, stream, fn));
    BP_RETURN_IF_ERROR(RefuseCapturing(stream, fn));
    const bp_backend_t& t = event->dev->slot->table;
    const uint64_t serial = g_last_error_serial;
    return Backend(t.event_wait(t.backend_data, event->raw, stream->raw), serial, fn, "event_wait", event->dev);
  });
}

BP_API bp_status_t bp_event_synchronize(bp_event_handle_t* event_in) {
  const char* fn = "bp_event_synchronize";
  return ApiCall(fn, [&]() -> Status {
    bp_event_handle_t* event = nullptr;
    BP_RETURN_IF_ERROR(CheckEvent(event_in, fn, "event", &event));
    BP_RETURN_IF_ERROR(RefuseWhileThisThreadCaptures(event->dev, fn));
    const bp_backend_t& t = event->dev->slot->table;
    const uint64_t serial = g_last_error_serial;
    return Backend(t.event_synchronize(t.backend_data, event->raw), serial, fn, "event_synchronize", event->dev);
  });
}

BP_API bp_status_t bp_event_query(bp_event_handle_t* event_in, int32_t* out_complete) {
  const char* fn = "bp_event_query";
  return ApiCall(fn, [&]() -> Status {
    bp_event_handle_t* event = nullptr;
    BP_RETURN_IF_ERROR(CheckEvent(event_in, fn, "event", &event));
    BP_CHECK_ARG(out_complete != nullptr, fn, "out_complete is NULL");
    const bp_backend_t& t = event->dev->slot->table;
    const uint64_t serial = g_last_error_serial;
    if (t.event_query == nullptr) {  // a plugin before ABI 1.4: only a wait can tell
      BP_RETURN_IF_ERROR(
          Backend(t.event_synchronize(t.backend_data, event->raw), serial, fn, "event_synchronize", event->dev));
      *out_complete = 1;
      return Status::Ok();
    }
    int32_t complete = 0;
    BP_RETURN_IF_ERROR(Backend(t.event_query(t.backend_data, event->raw, &complete), serial, fn, "event_query",
                               event->dev));
    *out_complete = complete != 0 ? 1 : 0;
    return Status::Ok();
  });
}

BP_API bp_status_t bp_event_elapsed_time(bp_event_handle_t* start_in, bp_event_handle_t* end_in, float* out_ms) {
  const char* fn = "bp_event_elapsed_time";
  return ApiCall(fn, [&]() -> Status {
    bp_event_handle_t* start = nullptr;
    BP_RETURN_IF_ERROR(CheckEvent(start_in, fn, "start", &start));
    bp_event_handle_t* end = nullptr;
    BP_RETURN_IF_ERROR(CheckEvent(end_in, fn, "end", &end));
    BP_CHECK_ARG(out_ms != nullptr, fn, "out_ms is NULL");
    if (start->dev != end->dev) {
      return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": start is of device " + DeviceName(start->dev) +
                                                   ", end of device " + DeviceName(end->dev) +
                                                   "; both must be of one device");
    }
    const bp_backend_t& t = start->dev->slot->table;
    if (t.event_elapsed_time == nullptr) {
      return Error(BP_STATUS_UNIMPLEMENTED, std::string(fn) + ": backend '" + start->dev->slot->name +
                                                "' has no event timing (event_elapsed_time is NULL)");
    }
    float ms = 0;
    const uint64_t serial = g_last_error_serial;
    BP_RETURN_IF_ERROR(Backend(t.event_elapsed_time(t.backend_data, start->raw, end->raw, &ms), serial, fn,
                               "event_elapsed_time", start->dev));
    *out_ms = ms;
    return Status::Ok();
  });
}

BP_API bp_status_t bp_tensor_record_stream(bp_tensor_t* tensor, bp_stream_handle_t* stream_in) {
  const char* fn = "bp_tensor_record_stream";
  return ApiCall(fn, [&]() -> Status {
    BP_CHECK_ARG(tensor != nullptr, fn, "tensor is NULL");
    if (!CheckLiveTensor(tensor, fn)) return Status(BP_STATUS_INVALID_ARGUMENT, bp_last_error_message());
    bp_stream_handle_t* stream = nullptr;
    BP_RETURN_IF_ERROR(CheckStream(stream_in, fn, "stream", &stream));
    Storage* s = tensor->storage;
    if (s->dev != stream->dev) {
      return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": tensor is on device " + DeviceName(s->dev) +
                                                   ", stream of device " + DeviceName(stream->dev));
    }
    if (s->block != nullptr) s->dev->allocator->RecordStream(s->block, stream->raw);
    return Status::Ok();
  });
}

BP_API bp_status_t bp_stream_allocator_stats(bp_stream_handle_t* stream_in, bp_allocator_stats_t* out_stats) {
  const char* fn = "bp_stream_allocator_stats";
  return ApiCall(fn, [&]() -> Status {
    bp_stream_handle_t* stream = nullptr;
    BP_RETURN_IF_ERROR(CheckStream(stream_in, fn, "stream", &stream));
    BP_CHECK_ARG(out_stats != nullptr, fn, "out_stats is NULL");
    BP_RETURN_IF_ERROR(CheckStructSize(out_stats, fn, "out_stats"));
    CopyOutFitting(stream->dev->allocator->StreamStats(stream->raw), out_stats);
    return Status::Ok();
  });
}

}  // extern "C"
