// Raw device memory and copies of the GPU plugin: the allocate, deallocate
// and copy slots of bp_backend_t. Offsets are bytes.
#pragma once

#include "backplane/backend.h"

namespace bp_gpu {

bp_status_t Allocate(void* data, int32_t device, size_t nbytes, void** out_ptr);
bp_status_t Deallocate(void* data, int32_t device, void* ptr);
bp_status_t CopyHostToDevice(void* data, int32_t device, const void* src, void* dst, size_t dst_offset,
                             size_t nbytes, bp_stream_t stream);
bp_status_t CopyDeviceToHost(void* data, int32_t device, const void* src, size_t src_offset, void* dst,
                             size_t nbytes, bp_stream_t stream);
bp_status_t CopyDeviceToDevice(void* data, int32_t device, const void* src, size_t src_offset, void* dst,
                               size_t dst_offset, size_t nbytes, bp_stream_t stream);

// ABI 1.4: page-locked host memory (gpuHostAlloc = cudaHostAlloc /
// hipHostMalloc, freed with gpuFreeHost = cudaFreeHost / hipHostFree),
// tracked so host_deallocate refuses pointers it did not hand out; and the
// device-to-host copy that only enqueues (gpuMemcpyAsync, no wait).
bp_status_t HostAllocate(void* data, int32_t device, size_t nbytes, void** out_ptr);
bp_status_t HostDeallocate(void* data, int32_t device, void* ptr);
bp_status_t CopyDeviceToHostAsync(void* data, int32_t device, const void* src, size_t src_offset, void* dst,
                                  size_t nbytes, bp_stream_t stream);

struct PluginState;
// Frees the pinned blocks the host never freed (shutdown).
void FreeLeakedHostBlocks(PluginState* st);

}  // namespace bp_gpu
