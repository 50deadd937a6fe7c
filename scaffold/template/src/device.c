/* The device of @NAME@. REPLACE each function body with your driver's calls.
 * As written: one device whose memory is host memory, reached by the host
 * only through the copy functions of memory.c (as real device memory is: the
 * device does not claim BP_DEVICE_CAP_UNIFIED). With no device or driver
 * present, report 0 devices and set no_device_reason instead; allocate and
 * the copies must still be filled. */
#include <stdio.h>
#include <string.h>

#include "device.h"

bp_status_t @NAME@_check_device(int32_t device, const char* fn) {
  if (device == 0) return BP_STATUS_OK;
  char what[64];
  snprintf(what, sizeof what, "device %d out of range (one device)", (int)device);
  return @NAME@_fail(BP_STATUS_OUT_OF_RANGE, fn, what);
}

bp_status_t @NAME@_device_count(void* bd, int32_t* out_count) {
  (void)bd;
  *out_count = 1;
  return BP_STATUS_OK;
}

bp_status_t @NAME@_device_properties(void* bd, int32_t device, bp_device_properties_t* out) {
  (void)bd;
  if (@NAME@_check_device(device, "device_properties") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  bp_device_properties_t p;
  memset(&p, 0, sizeof p);
  snprintf(p.name, sizeof p.name, "@NAME@ device");
  snprintf(p.vendor, sizeof p.vendor, "@NAME@");
  snprintf(p.driver_version, sizeof p.driver_version, "0.1.0");
  p.total_memory_bytes = (uint64_t)1 << 30;
  p.capabilities = BP_DEVICE_CAP_FP64 | BP_DEVICE_CAP_FP16 | BP_DEVICE_CAP_BF16; /* the dtypes it can hold */
  p.alignment_bytes = @NAME@_ALIGNMENT;
  p.compute_units = 1;
  const size_t size = out->struct_size; /* fill only what the caller's struct holds */
  memcpy(out, &p, size < sizeof p ? size : sizeof p);
  out->struct_size = size;
  return BP_STATUS_OK;
}
