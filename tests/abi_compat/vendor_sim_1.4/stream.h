// vendor_sim's streams: bp_backend_t.stream_get_default, .stream_synchronize
// and (ABI 1.4) .stream_create and .stream_destroy. Each stream is its own
// in-order queue (stream_table.h); the default stream is NULL.
#pragma once

#include "plugin.h"

namespace vendor_sim {

// The queue that work given `stream` by bp_backend_t function `fn` runs on,
// or nullptr after reporting INVALID_ARGUMENT ("<fn>: 'stream' is not a
// stream of this device").
Queue* QueueOf(State* s, bp_stream_t stream, const char* fn);
// What a kernel or a copy says of a stream value that is not one of ours.
extern const char kNotAStream[];

bp_status_t StreamGetDefault(void* backend_data, int32_t device, bp_stream_t* out_stream);
bp_status_t StreamSynchronize(void* backend_data, int32_t device, bp_stream_t stream);
bp_status_t StreamCreate(void* backend_data, int32_t device, bp_stream_t* out_stream);
bp_status_t StreamDestroy(void* backend_data, int32_t device, bp_stream_t stream);

}  // namespace vendor_sim
