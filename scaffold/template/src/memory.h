/* Device memory of @NAME@: allocate, deallocate and the three copies (with
 * byte offsets), the memory slots of bp_backend_t. */
#ifndef BACKPLANE_PLUGIN_@NAME@_MEMORY_H_
#define BACKPLANE_PLUGIN_@NAME@_MEMORY_H_

#include "plugin.h"

bp_status_t @NAME@_allocate(void* backend_data, int32_t device, size_t nbytes, void** out_ptr);
bp_status_t @NAME@_deallocate(void* backend_data, int32_t device, void* ptr);
bp_status_t @NAME@_copy_host_to_device(void* backend_data, int32_t device, const void* src, void* dst,
                                       size_t dst_offset, size_t nbytes, bp_stream_t stream);
bp_status_t @NAME@_copy_device_to_host(void* backend_data, int32_t device, const void* src, size_t src_offset,
                                       void* dst, size_t nbytes, bp_stream_t stream);
bp_status_t @NAME@_copy_device_to_device(void* backend_data, int32_t device, const void* src, size_t src_offset,
                                         void* dst, size_t dst_offset, size_t nbytes, bp_stream_t stream);

#endif
