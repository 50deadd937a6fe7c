// vendor_sim's device memory and copies: bp_backend_t.allocate, .deallocate
// and the three copies. Device pointers are arena handles (arena.h), never
// addresses the host could dereference.
#pragma once

#include "plugin.h"

namespace vendor_sim {

bp_status_t Allocate(void* backend_data, int32_t device, size_t nbytes, void** out_ptr);
bp_status_t Deallocate(void* backend_data, int32_t device, void* ptr);
bp_status_t CopyHostToDevice(void* backend_data, int32_t device, const void* src, void* dst, size_t dst_offset,
                             size_t nbytes, bp_stream_t stream);
bp_status_t CopyDeviceToHost(void* backend_data, int32_t device, const void* src, size_t src_offset, void* dst,
                             size_t nbytes, bp_stream_t stream);
bp_status_t CopyDeviceToDevice(void* backend_data, int32_t device, const void* src, size_t src_offset, void* dst,
                               size_t dst_offset, size_t nbytes, bp_stream_t stream);

}  // namespace vendor_sim
