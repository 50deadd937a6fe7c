// Streams and events of the GPU plugin: the stream_* and event_* slots of
// bp_backend_t. A stream is a gpuStream_t, an event a gpuEvent_t.
#pragma once

#include "backplane/backend.h"

namespace bp_gpu {

bp_status_t StreamGetDefault(void* data, int32_t device, bp_stream_t* out_stream);
bp_status_t StreamSynchronize(void* data, int32_t device, bp_stream_t stream);
bp_status_t EventCreate(void* data, int32_t device, bp_event_t* out_event);
bp_status_t EventRecord(void* data, bp_event_t event, bp_stream_t stream);
bp_status_t EventWait(void* data, bp_event_t event, bp_stream_t stream);
bp_status_t EventSynchronize(void* data, bp_event_t event);
bp_status_t EventDestroy(void* data, bp_event_t event);

}  // namespace bp_gpu
