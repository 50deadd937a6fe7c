// Streams and events of the GPU plugin: the stream_* and event_* slots of
// bp_backend_t. A stream is a gpuStream_t (the device's default one, or one
// from stream_create); an event wraps a timing-enabled gpuEvent_t with its
// device and whether it was ever recorded.
#pragma once

#include "backplane/backend.h"
#include "plugin.h"

namespace bp_gpu {

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
// Synchronizes and destroys the streams the host never destroyed (shutdown).
void DestroyLeakedStreams(PluginState* st);

}  // namespace bp_gpu
