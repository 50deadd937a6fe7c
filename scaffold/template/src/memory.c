/* Device memory of @NAME@. REPLACE each function body with your driver's
 * calls. As written: host memory (aligned_alloc) behind synchronous copies. */
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "memory.h"

bp_status_t @NAME@_allocate(void* bd, int32_t device, size_t nbytes, void** out_ptr) {
  (void)bd;
  if (@NAME@_check_device(device, "allocate") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  *out_ptr = NULL;
  if (nbytes == 0) return BP_STATUS_OK;
  *out_ptr = aligned_alloc(@NAME@_ALIGNMENT, (nbytes + @NAME@_ALIGNMENT - 1) / @NAME@_ALIGNMENT * @NAME@_ALIGNMENT);
  if (*out_ptr == NULL) return @NAME@_fail(BP_STATUS_OUT_OF_MEMORY, "allocate", "out of memory");
  return BP_STATUS_OK;
}

bp_status_t @NAME@_deallocate(void* bd, int32_t device, void* ptr) {
  (void)bd;
  if (@NAME@_check_device(device, "deallocate") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  free(ptr);
  return BP_STATUS_OK;
}

bp_status_t @NAME@_copy_host_to_device(void* bd, int32_t device, const void* src, void* dst, size_t dst_offset,
                                       size_t nbytes, bp_stream_t stream) {
  (void)bd;
  (void)stream;
  if (@NAME@_check_device(device, "copy_host_to_device") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  if (nbytes != 0) memcpy((char*)dst + dst_offset, src, nbytes);
  return BP_STATUS_OK;
}

bp_status_t @NAME@_copy_device_to_host(void* bd, int32_t device, const void* src, size_t src_offset, void* dst,
                                       size_t nbytes, bp_stream_t stream) {
  (void)bd;
  (void)stream;
  if (@NAME@_check_device(device, "copy_device_to_host") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  if (nbytes != 0) memcpy(dst, (const char*)src + src_offset, nbytes);
  return BP_STATUS_OK;
}

bp_status_t @NAME@_copy_device_to_device(void* bd, int32_t device, const void* src, size_t src_offset, void* dst,
                                         size_t dst_offset, size_t nbytes, bp_stream_t stream) {
  (void)bd;
  (void)stream;
  if (@NAME@_check_device(device, "copy_device_to_device") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  if (nbytes != 0) memmove((char*)dst + dst_offset, (const char*)src + src_offset, nbytes);
  return BP_STATUS_OK;
}
