// The memory, copy, stream and event slots of bp_backend_t for OpenCL.
// Device pointers are cl_mem handles; offsets are bytes into the buffer.
// Streams are cl_command_queue (NULL means the device's default queue).
#pragma once

#include "backend_state.h"

namespace bpcl {

bp_status_t Allocate(void* data, int32_t device, size_t nbytes, void** out_ptr);
bp_status_t Deallocate(void* data, int32_t device, void* ptr);
bp_status_t CopyHostToDevice(void* data, int32_t device, const void* src, void* dst, size_t dst_offset, size_t nbytes,
                             bp_stream_t stream);
bp_status_t CopyDeviceToHost(void* data, int32_t device, const void* src, size_t src_offset, void* dst, size_t nbytes,
                             bp_stream_t stream);
bp_status_t CopyDeviceToDevice(void* data, int32_t device, const void* src, size_t src_offset, void* dst,
                               size_t dst_offset, size_t nbytes, bp_stream_t stream);
bp_status_t StreamGetDefault(void* data, int32_t device, bp_stream_t* out_stream);
bp_status_t StreamSynchronize(void* data, int32_t device, bp_stream_t stream);
bp_status_t EventCreate(void* data, int32_t device, bp_event_t* out_event);
bp_status_t EventRecord(void* data, bp_event_t event, bp_stream_t stream);
bp_status_t EventWait(void* data, bp_event_t event, bp_stream_t stream);
bp_status_t EventSynchronize(void* data, bp_event_t event);
bp_status_t EventDestroy(void* data, bp_event_t event);

}  // namespace bpcl
