// The memory and copy slots of bp_backend_t for OpenCL. Device pointers are
// cl_mem handles; offsets are bytes into the buffer.
#pragma once

#include "backplane/backend.h"

namespace bpcl {

bp_status_t Allocate(void* data, int32_t device, size_t nbytes, void** out_ptr);
bp_status_t Deallocate(void* data, int32_t device, void* ptr);
bp_status_t CopyHostToDevice(void* data, int32_t device, const void* src, void* dst, size_t dst_offset, size_t nbytes,
                             bp_stream_t stream);
bp_status_t CopyDeviceToHost(void* data, int32_t device, const void* src, size_t src_offset, void* dst, size_t nbytes,
                             bp_stream_t stream);
bp_status_t CopyDeviceToDevice(void* data, int32_t device, const void* src, size_t src_offset, void* dst,
                               size_t dst_offset, size_t nbytes, bp_stream_t stream);

// ABI 1.4. Pinned host memory: kHostAlignment-aligned host blocks (what PoCL
// and other CPU drivers read directly; a GPU driver would want
// CL_MEM_ALLOC_HOST_PTR and a map), tracked so host_deallocate refuses
// pointers it did not hand out.
constexpr size_t kHostAlignment = 4096;
bp_status_t HostAllocate(void* data, int32_t device, size_t nbytes, void** out_ptr);
bp_status_t HostDeallocate(void* data, int32_t device, void* ptr);
// clEnqueueReadBuffer with CL_FALSE, flushed: returns once the read is queued.
bp_status_t CopyDeviceToHostAsync(void* data, int32_t device, const void* src, size_t src_offset, void* dst,
                                  size_t nbytes, bp_stream_t stream);

struct Backend;
// Frees every host block still live (shutdown, after the queues finished).
void ReleaseHostBlocks(Backend* b);

}  // namespace bpcl
