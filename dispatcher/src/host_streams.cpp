// Streams and events of the built-in host memory backend (backend 0, "cpu").
// Host kernels finish before their call returns, so every stream is already
// in order with every other: a created stream is only a distinct name, an
// event is complete when recorded and remembers when that was (for
// bp_event_elapsed_time).
#include <chrono>
#include <new>

#include "host_streams.h"
#include "status.h"

namespace bp::core {
namespace {

struct HostEvent {
  bool recorded = false;
  std::chrono::steady_clock::time_point at{};
};

bp_status_t HostStreamCreate(void*, int32_t, bp_stream_t* out) {
  // A distinct non-NULL value (NULL is the default stream).
  char* token = new (std::nothrow) char(0);
  if (token == nullptr) return SetLastError(BP_STATUS_OUT_OF_MEMORY, "cpu: stream_create: out of host memory");
  *out = token;
  return BP_STATUS_OK;
}
bp_status_t HostStreamDestroy(void*, int32_t, bp_stream_t stream) {
  delete static_cast<char*>(stream);
  return BP_STATUS_OK;
}
bp_status_t HostEventCreate(void*, int32_t, bp_event_t* out) {
  auto* e = new (std::nothrow) HostEvent();
  if (e == nullptr) return SetLastError(BP_STATUS_OUT_OF_MEMORY, "cpu: event_create: out of host memory");
  *out = e;
  return BP_STATUS_OK;
}
bp_status_t HostEventRecord(void*, bp_event_t event, bp_stream_t) {
  auto* e = static_cast<HostEvent*>(event);
  e->recorded = true;
  e->at = std::chrono::steady_clock::now();
  return BP_STATUS_OK;
}
bp_status_t HostEventNoWait(void*, bp_event_t, bp_stream_t) { return BP_STATUS_OK; }
bp_status_t HostEventSynchronize(void*, bp_event_t) { return BP_STATUS_OK; }
bp_status_t HostEventDestroy(void*, bp_event_t event) {
  delete static_cast<HostEvent*>(event);
  return BP_STATUS_OK;
}
bp_status_t HostEventQuery(void*, bp_event_t, int32_t* out_complete) {
  *out_complete = 1;
  return BP_STATUS_OK;
}
bp_status_t HostEventElapsed(void*, bp_event_t start, bp_event_t end, float* out_ms) {
  const auto* a = static_cast<const HostEvent*>(start);
  const auto* b = static_cast<const HostEvent*>(end);
  if (!a->recorded || !b->recorded) {
    return SetLastError(BP_STATUS_FAILED_PRECONDITION,
                        "cpu: event_elapsed_time: both events must have been recorded");
  }
  *out_ms = std::chrono::duration<float, std::milli>(b->at - a->at).count();
  return BP_STATUS_OK;
}

}  // namespace

void FillHostStreams(bp_backend_t* t) {
  t->stream_create = HostStreamCreate;
  t->stream_destroy = HostStreamDestroy;
  t->event_create = HostEventCreate;
  t->event_record = HostEventRecord;
  t->event_wait = HostEventNoWait;
  t->event_synchronize = HostEventSynchronize;
  t->event_destroy = HostEventDestroy;
  t->event_query = HostEventQuery;
  t->event_elapsed_time = HostEventElapsed;
}

}  // namespace bp::core
