// vendor_sim's streams: bp_backend_t.stream_get_default and
// .stream_synchronize. The simulated device has one implicit in-order queue
// (queue.h); it has no events (the event slots stay NULL).
#pragma once

#include "plugin.h"

namespace vendor_sim {

bp_status_t StreamGetDefault(void* backend_data, int32_t device, bp_stream_t* out_stream);
bp_status_t StreamSynchronize(void* backend_data, int32_t device, bp_stream_t stream);

}  // namespace vendor_sim
