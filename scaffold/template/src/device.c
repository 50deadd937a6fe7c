/* The device of @NAME@. REPLACE each function body with your driver's calls.
 * As written: one device whose memory is host memory, reached by the host
 * only through the copy functions (as real device memory is: the device does
 * not claim BP_DEVICE_CAP_UNIFIED); copies are synchronous and the one stream
 * is NULL. With no device or driver present, report 0 devices and set
 * no_device_reason instead; allocate and the copies must still be filled. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "@NAME@.h"

enum { kAlignment = 64 };

static bp_status_t check_device(int32_t device, const char* fn) {
  if (device == 0) return BP_STATUS_OK;
  char msg[128];
  snprintf(msg, sizeof msg, "@NAME@: %s: device %d out of range (one device)", fn, (int)device);
  return @NAME@_host->set_error(BP_STATUS_OUT_OF_RANGE, msg);
}

static bp_status_t device_count(void* bd, int32_t* out_count) {
  (void)bd;
  *out_count = 1;
  return BP_STATUS_OK;
}

static bp_status_t device_properties(void* bd, int32_t device, bp_device_properties_t* out) {
  (void)bd;
  if (check_device(device, "device_properties") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  bp_device_properties_t p;
  memset(&p, 0, sizeof p);
  snprintf(p.name, sizeof p.name, "@NAME@ device");
  snprintf(p.vendor, sizeof p.vendor, "@NAME@");
  snprintf(p.driver_version, sizeof p.driver_version, "0.1.0");
  p.total_memory_bytes = (uint64_t)1 << 30;
  p.capabilities = BP_DEVICE_CAP_FP64 | BP_DEVICE_CAP_FP16 | BP_DEVICE_CAP_BF16; /* the dtypes it can hold */
  p.alignment_bytes = kAlignment;
  p.compute_units = 1;
  const size_t size = out->struct_size; /* fill only what the caller's struct holds */
  memcpy(out, &p, size < sizeof p ? size : sizeof p);
  out->struct_size = size;
  return BP_STATUS_OK;
}

static bp_status_t allocate(void* bd, int32_t device, size_t nbytes, void** out_ptr) {
  (void)bd;
  if (check_device(device, "allocate") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  *out_ptr = NULL;
  if (nbytes == 0) return BP_STATUS_OK;
  *out_ptr = aligned_alloc(kAlignment, (nbytes + kAlignment - 1) / kAlignment * kAlignment);
  if (*out_ptr == NULL) return @NAME@_host->set_error(BP_STATUS_OUT_OF_MEMORY, "@NAME@: allocate: out of memory");
  return BP_STATUS_OK;
}

static bp_status_t deallocate(void* bd, int32_t device, void* ptr) {
  (void)bd;
  if (check_device(device, "deallocate") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  free(ptr);
  return BP_STATUS_OK;
}

static bp_status_t copy_h2d(void* bd, int32_t device, const void* src, void* dst, size_t dst_offset,
                            size_t nbytes, bp_stream_t stream) {
  (void)bd;
  (void)stream;
  if (check_device(device, "copy_host_to_device") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  if (nbytes != 0) memcpy((char*)dst + dst_offset, src, nbytes);
  return BP_STATUS_OK;
}

static bp_status_t copy_d2h(void* bd, int32_t device, const void* src, size_t src_offset, void* dst,
                            size_t nbytes, bp_stream_t stream) {
  (void)bd;
  (void)stream;
  if (check_device(device, "copy_device_to_host") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  if (nbytes != 0) memcpy(dst, (const char*)src + src_offset, nbytes);
  return BP_STATUS_OK;
}

static bp_status_t copy_d2d(void* bd, int32_t device, const void* src, size_t src_offset, void* dst,
                            size_t dst_offset, size_t nbytes, bp_stream_t stream) {
  (void)bd;
  (void)stream;
  if (check_device(device, "copy_device_to_device") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  if (nbytes != 0) memmove((char*)dst + dst_offset, (const char*)src + src_offset, nbytes);
  return BP_STATUS_OK;
}

static bp_status_t stream_get_default(void* bd, int32_t device, bp_stream_t* out_stream) {
  (void)bd;
  (void)device;
  *out_stream = NULL; /* one implicit in-order queue */
  return BP_STATUS_OK;
}

static bp_status_t stream_synchronize(void* bd, int32_t device, bp_stream_t stream) {
  (void)bd;
  (void)device;
  (void)stream;
  return BP_STATUS_OK; /* everything above finished when it returned */
}

void @NAME@_fill_device(bp_backend_t* b) {
  b->device_count = device_count;
  b->device_properties = device_properties;
  b->allocate = allocate;
  b->deallocate = deallocate;
  b->copy_host_to_device = copy_h2d;
  b->copy_device_to_host = copy_d2h;
  b->copy_device_to_device = copy_d2d;
  b->stream_get_default = stream_get_default;
  b->stream_synchronize = stream_synchronize;
}
