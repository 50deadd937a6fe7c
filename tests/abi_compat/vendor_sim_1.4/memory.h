// vendor_sim's device memory and copies: bp_backend_t.allocate, .deallocate,
// the three copies, and (ABI 1.4) host_allocate, host_deallocate and
// copy_device_to_host_async. Device pointers are arena handles (arena.h), never
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

// Pinned host memory: host blocks aligned to kHostAlignment, tracked so that
// host_deallocate refuses a pointer it did not hand out.
constexpr size_t kHostAlignment = 4096;
bp_status_t HostAllocate(void* backend_data, int32_t device, size_t nbytes, void** out_ptr);
bp_status_t HostDeallocate(void* backend_data, int32_t device, void* ptr);
// Frees every block still live (shutdown).
void ReleaseHostBlocks(State* s);
// copy_device_to_host without the wait: checked now, enqueued on the stream.
bp_status_t CopyDeviceToHostAsync(void* backend_data, int32_t device, const void* src, size_t src_offset, void* dst,
                                  size_t nbytes, bp_stream_t stream);

}  // namespace vendor_sim
