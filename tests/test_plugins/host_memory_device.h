/* The device half that the host-memory test plugins share (bringup_plugin.c,
 * conformance/tests/crash_plugin.c): one device whose memory is host memory
 * (posix_memalign, 64-byte aligned, as their device_properties report),
 * synchronous copies, a NULL default stream; plus the strided element
 * address their kernels index with. Each includer defines its own
 * device_properties and kernels, sets g_host in init, and calls
 * host_memory_device_install. C99, header-only: every function is static
 * to the one plugin that includes it. */
#ifndef BP_TESTS_HOST_MEMORY_DEVICE_H_
#define BP_TESTS_HOST_MEMORY_DEVICE_H_

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backplane/backend.h"

static const bp_host_api_t* g_host; /* the host's callbacks, set by the plugin's init */

static bp_status_t host_memory_device_count(void* bd, int32_t* out) {
  (void)bd;
  *out = 1;
  return BP_STATUS_OK;
}

static bp_status_t host_memory_allocate(void* bd, int32_t device, size_t n, void** out) {
  (void)bd;
  (void)device;
  void* p = NULL;
  if (n && posix_memalign(&p, 64, n) != 0) p = NULL;
  *out = p;
  return (n && !*out) ? g_host->set_error(BP_STATUS_OUT_OF_MEMORY, "test plugin: out of host memory") : BP_STATUS_OK;
}

static bp_status_t host_memory_deallocate(void* bd, int32_t device, void* p) {
  (void)bd;
  (void)device;
  free(p);
  return BP_STATUS_OK;
}

static bp_status_t host_memory_h2d(void* bd, int32_t device, const void* src, void* dst, size_t off, size_t n,
                                   bp_stream_t s) {
  (void)bd;
  (void)device;
  (void)s;
  if (n) memcpy((char*)dst + off, src, n);
  return BP_STATUS_OK;
}

static bp_status_t host_memory_d2h(void* bd, int32_t device, const void* src, size_t off, void* dst, size_t n,
                                   bp_stream_t s) {
  (void)bd;
  (void)device;
  (void)s;
  if (n) memcpy(dst, (const char*)src + off, n);
  return BP_STATUS_OK;
}

static bp_status_t host_memory_d2d(void* bd, int32_t device, const void* src, size_t so, void* dst, size_t dof,
                                   size_t n, bp_stream_t s) {
  (void)bd;
  (void)device;
  (void)s;
  if (n) memmove((char*)dst + dof, (const char*)src + so, n);
  return BP_STATUS_OK;
}

static bp_status_t host_memory_stream_default(void* bd, int32_t device, bp_stream_t* out) {
  (void)bd;
  (void)device;
  *out = NULL;
  return BP_STATUS_OK;
}

static bp_status_t host_memory_stream_sync(void* bd, int32_t device, bp_stream_t s) {
  (void)bd;
  (void)device;
  (void)s;
  return BP_STATUS_OK;
}

/* Fills every bp_backend_t function but device_properties and the kernels. */
static void host_memory_device_install(bp_backend_t* b) {
  b->device_count = host_memory_device_count;
  b->allocate = host_memory_allocate;
  b->deallocate = host_memory_deallocate;
  b->copy_host_to_device = host_memory_h2d;
  b->copy_device_to_host = host_memory_d2h;
  b->copy_device_to_device = host_memory_d2d;
  b->stream_get_default = host_memory_stream_default;
  b->stream_synchronize = host_memory_stream_sync;
}

static int64_t numel(const DLTensor* t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; ++d) n *= t->shape[d];
  return n;
}

/* The address of element `linear` (row-major over sizes) of a strided view. */
static char* element_at(const DLTensor* t, int64_t linear) {
  int64_t offset = 0;
  for (int32_t d = t->ndim - 1; d >= 0; --d) {
    offset += (linear % t->shape[d]) * t->strides[d];
    linear /= t->shape[d];
  }
  return (char*)t->data + t->byte_offset + offset * (t->dtype.bits / 8);
}

#endif /* BP_TESTS_HOST_MEMORY_DEVICE_H_ */
