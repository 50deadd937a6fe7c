// The stream and event slots of bp_backend_t for OpenCL. Streams are
// cl_command_queue (NULL means the device's default queue; stream_create makes
// more, all in-order with profiling); an event holds the cl_event marker it
// last recorded, whose status answers event_query and whose profiling end
// time answers event_elapsed_time.
#pragma once

#include <CL/cl.h>

#include "backplane/backend.h"
#include "device.h"

namespace bpcl {

// The queue `stream` names on device d: the stream itself, or d's default
// queue when NULL.
inline cl_command_queue Queue(Device* d, bp_stream_t stream) {
  return stream != nullptr ? static_cast<cl_command_queue>(stream) : d->queue;
}

bp_status_t StreamGetDefault(void* data, int32_t device, bp_stream_t* out_stream);
bp_status_t StreamSynchronize(void* data, int32_t device, bp_stream_t stream);
bp_status_t EventCreate(void* data, int32_t device, bp_event_t* out_event);
bp_status_t EventRecord(void* data, bp_event_t event, bp_stream_t stream);
bp_status_t EventWait(void* data, bp_event_t event, bp_stream_t stream);
bp_status_t EventSynchronize(void* data, bp_event_t event);
bp_status_t EventDestroy(void* data, bp_event_t event);
// ABI 1.4.
bp_status_t StreamCreate(void* data, int32_t device, bp_stream_t* out_stream);
bp_status_t StreamDestroy(void* data, int32_t device, bp_stream_t stream);
bp_status_t EventQuery(void* data, bp_event_t event, int32_t* out_complete);
bp_status_t EventElapsedTime(void* data, bp_event_t start, bp_event_t end, float* out_ms);

}  // namespace bpcl
