// The CPU backend's streams: trivial, because the CPU runs every kernel
// synchronously on the calling thread. No events (their slots stay NULL).
#pragma once

#include "backplane/backend.h"

namespace bp_cpu {

// bp_backend_t.stream_get_default: NULL, the one implicit stream.
bp_status_t StreamGetDefault(void* backend_data, int32_t device, bp_stream_t* out_stream);
// bp_backend_t.stream_synchronize: nothing to wait for.
bp_status_t StreamSynchronize(void* backend_data, int32_t device, bp_stream_t stream);

}  // namespace bp_cpu
