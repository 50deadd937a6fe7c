// vendor_sim's events: bp_backend_t.event_create, _record, _wait,
// _synchronize, _destroy and (ABI 1.4) _query and _elapsed_time, on the
// generation-counted events of event.h. BP_VENDOR_SIM_BROKEN (faults.h)
// breaks event_wait or event_record on purpose, for conformance tests only.
#pragma once

#include "plugin.h"

namespace vendor_sim {

bp_status_t EventCreate(void* backend_data, int32_t device, bp_event_t* out_event);
bp_status_t EventRecord(void* backend_data, bp_event_t event, bp_stream_t stream);
bp_status_t EventWait(void* backend_data, bp_event_t event, bp_stream_t stream);
bp_status_t EventSynchronize(void* backend_data, bp_event_t event);
bp_status_t EventDestroy(void* backend_data, bp_event_t event);
bp_status_t EventQuery(void* backend_data, bp_event_t event, int32_t* out_complete);
bp_status_t EventElapsedTime(void* backend_data, bp_event_t start, bp_event_t end, float* out_ms);

}  // namespace vendor_sim
