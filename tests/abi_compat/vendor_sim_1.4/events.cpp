// Events of the simulated device (event.h). A record is a marker item on
// its stream's queue; a wait is an item that holds the waiting stream's
// device thread until the event reaches the generation captured at the call,
// so the host never blocks in event_wait. On the synchronous device every
// item runs at once, so every recorded event is already complete. A real
// plugin calls cudaEventRecord / cudaStreamWaitEvent (or enqueues a marker
// and a barrier) here.
#include "events.h"

#include <chrono>
#include <cstdio>
#include <memory>

#include "device.h"
#include "stream.h"

namespace vendor_sim {
namespace {

constexpr char kNotAnEvent[] = "is not a live vendor_sim event (from event_create, not destroyed)";

// The event behind `e`, or nullptr after reporting INVALID_ARGUMENT naming
// function `fn` and argument `arg`.
std::shared_ptr<Event> EventOf(State* s, bp_event_t e, const char* fn, const char* arg) {
  std::shared_ptr<Event> ev = s->events.Find(e);
  if (ev == nullptr) {
    char what[160];
    std::snprintf(what, sizeof what, "'%s' %s", arg, kNotAnEvent);
    Fail(s, BP_STATUS_INVALID_ARGUMENT, fn, what);
  }
  return ev;
}

}  // namespace

bp_status_t EventCreate(void* bd, int32_t device, bp_event_t* out_event) {
  State* s = StateOf(bd);
  if (CheckDevice(s, device, "event_create") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  if (out_event == nullptr) return Fail(s, BP_STATUS_INVALID_ARGUMENT, "event_create", "'out_event' is NULL");
  if (s->events.Create(out_event) != BP_STATUS_OK)
    return Fail(s, BP_STATUS_OUT_OF_MEMORY, "event_create", "out of host memory for a new event");
  return BP_STATUS_OK;
}

bp_status_t EventRecord(void* bd, bp_event_t event, bp_stream_t stream) {
  State* s = StateOf(bd);
  std::shared_ptr<Event> ev = EventOf(s, event, "event_record", "event");
  if (ev == nullptr) return BP_STATUS_INVALID_ARGUMENT;
  Queue* q = QueueOf(s, stream, "event_record");
  if (q == nullptr) return BP_STATUS_INVALID_ARGUMENT;
  const uint64_t gen = ev->BeginRecord();
  if (gen == 0) return Fail(s, BP_STATUS_OUT_OF_MEMORY, "event_record", "out of host memory recording the event");
  if (s->faults.broken == Faults::Broken::kEarlyEvent) {
    ev->Complete(gen);  // deliberately wrong (test only): the captured work may not have run
    return BP_STATUS_OK;
  }
  if (!q->TrySubmit([ev, gen] { ev->Complete(gen); }, ItemKind::kMarker)) {
    // Nothing will complete this generation: complete it now so no waiter
    // hangs; the caller learns that the record failed.
    ev->Complete(gen);
    return Fail(s, BP_STATUS_OUT_OF_MEMORY, "event_record", "cannot queue the event's marker");
  }
  return BP_STATUS_OK;
}

bp_status_t EventWait(void* bd, bp_event_t event, bp_stream_t stream) {
  State* s = StateOf(bd);
  std::shared_ptr<Event> ev = EventOf(s, event, "event_wait", "event");
  if (ev == nullptr) return BP_STATUS_INVALID_ARGUMENT;
  Queue* q = QueueOf(s, stream, "event_wait");
  if (q == nullptr) return BP_STATUS_INVALID_ARGUMENT;
  if (s->faults.broken == Faults::Broken::kIgnoreEventWait) return BP_STATUS_OK;  // deliberately wrong (test only)
  // The generation to wait for is fixed now: a later re-record does not move it.
  const uint64_t target = ev->recorded();
  if (ev->IsDone(target)) return BP_STATUS_OK;  // nothing to wait for (never recorded, or done)
  // Only async queues get here (a synchronous record completes at once), so
  // the wait blocks that stream's device thread, never the host.
  if (!q->TrySubmit([ev, target] { ev->WaitFor(target); }, ItemKind::kMarker))
    return Fail(s, BP_STATUS_OUT_OF_MEMORY, "event_wait", "cannot queue the wait");
  return BP_STATUS_OK;
}

bp_status_t EventSynchronize(void* bd, bp_event_t event) {
  std::shared_ptr<Event> ev = EventOf(StateOf(bd), event, "event_synchronize", "event");
  if (ev == nullptr) return BP_STATUS_INVALID_ARGUMENT;
  ev->WaitFor(ev->recorded());
  return BP_STATUS_OK;
}

bp_status_t EventDestroy(void* bd, bp_event_t event) {
  if (event == nullptr) return BP_STATUS_OK;  // destroy functions accept NULL
  if (!StateOf(bd)->events.Destroy(event)) {
    EventOf(StateOf(bd), event, "event_destroy", "event");  // reports the error
    return BP_STATUS_INVALID_ARGUMENT;
  }
  return BP_STATUS_OK;
}

bp_status_t EventQuery(void* bd, bp_event_t event, int32_t* out_complete) {
  State* s = StateOf(bd);
  std::shared_ptr<Event> ev = EventOf(s, event, "event_query", "event");
  if (ev == nullptr) return BP_STATUS_INVALID_ARGUMENT;
  if (out_complete == nullptr) return Fail(s, BP_STATUS_INVALID_ARGUMENT, "event_query", "'out_complete' is NULL");
  *out_complete = ev->IsComplete() ? 1 : 0;
  return BP_STATUS_OK;
}

bp_status_t EventElapsedTime(void* bd, bp_event_t start, bp_event_t end, float* out_ms) {
  State* s = StateOf(bd);
  std::shared_ptr<Event> a = EventOf(s, start, "event_elapsed_time", "start");
  if (a == nullptr) return BP_STATUS_INVALID_ARGUMENT;
  std::shared_ptr<Event> b = EventOf(s, end, "event_elapsed_time", "end");
  if (b == nullptr) return BP_STATUS_INVALID_ARGUMENT;
  if (out_ms == nullptr) return Fail(s, BP_STATUS_INVALID_ARGUMENT, "event_elapsed_time", "'out_ms' is NULL");
  Event::Clock::time_point ta, tb;
  if (!a->CompletionTime(&ta))
    return Fail(s, BP_STATUS_FAILED_PRECONDITION, "event_elapsed_time",
                "'start' was never recorded or its work has not completed (event_synchronize it first)");
  if (!b->CompletionTime(&tb))
    return Fail(s, BP_STATUS_FAILED_PRECONDITION, "event_elapsed_time",
                "'end' was never recorded or its work has not completed (event_synchronize it first)");
  *out_ms = std::chrono::duration<float, std::milli>(tb - ta).count();
  return BP_STATUS_OK;
}

}  // namespace vendor_sim
