/* "onefile": the smallest complete backend plugin, one C file built against an
 * installed SDK with pkg-config alone:
 *
 *   cc -std=c99 -O2 -shared -fPIC -fvisibility=hidden -o libbackplane_onefile.so \
 *      one_file_plugin.c $(pkg-config --cflags --libs backplane-plugin)
 *
 * The plugin guide (docs/plugin-guide.md) builds it that way and runs
 * bp-info and bp-conformance on it. It negotiates the ABI version, has one device whose
 * memory is host memory (posix_memalign; BP_DEVICE_CAP_UNIFIED), and one
 * native kernel: float32 `neg`. Every other operator and dtype runs through
 * the CPU fallback. */
#define _POSIX_C_SOURCE 200112L /* posix_memalign under -std=c99 */
#include <stdlib.h>
#include <string.h>

#include "backplane/backend.h"

static const bp_host_api_t* g_host; /* borrowed from init until shutdown */

#define ONEFILE_ALIGN 64

static bp_status_t device_count(void* bd, int32_t* out_count) {
  (void)bd;
  *out_count = 1;
  return BP_STATUS_OK;
}

static bp_status_t device_properties(void* bd, int32_t device, bp_device_properties_t* p) {
  (void)bd;
  (void)device;
  strcpy(p->name, "onefile host-memory device");
  strcpy(p->vendor, "Backplane install test");
  strcpy(p->driver_version, "1.0.0");
  p->total_memory_bytes = (uint64_t)1 << 30;
  p->capabilities = BP_DEVICE_CAP_FP64 | BP_DEVICE_CAP_FP16 | BP_DEVICE_CAP_BF16 | BP_DEVICE_CAP_UNIFIED;
  p->alignment_bytes = ONEFILE_ALIGN;
  p->compute_units = 1;
  return BP_STATUS_OK;
}

static bp_status_t allocate(void* bd, int32_t device, size_t nbytes, void** out_ptr) {
  (void)bd;
  (void)device;
  void* p = NULL;
  if (nbytes != 0 && posix_memalign(&p, ONEFILE_ALIGN, nbytes) != 0) {
    *out_ptr = NULL;
    return g_host->set_error(BP_STATUS_OUT_OF_MEMORY, "onefile: allocate: out of host memory");
  }
  *out_ptr = p;
  return BP_STATUS_OK;
}

static bp_status_t deallocate(void* bd, int32_t device, void* ptr) {
  (void)bd;
  (void)device;
  free(ptr);
  return BP_STATUS_OK;
}

static bp_status_t copy_h2d(void* bd, int32_t device, const void* src, void* dst, size_t dst_offset, size_t n,
                            bp_stream_t s) {
  (void)bd;
  (void)device;
  (void)s;
  if (n != 0) memcpy((char*)dst + dst_offset, src, n);
  return BP_STATUS_OK;
}

static bp_status_t copy_d2h(void* bd, int32_t device, const void* src, size_t src_offset, void* dst, size_t n,
                            bp_stream_t s) {
  (void)bd;
  (void)device;
  (void)s;
  if (n != 0) memcpy(dst, (const char*)src + src_offset, n);
  return BP_STATUS_OK;
}

static bp_status_t copy_d2d(void* bd, int32_t device, const void* src, size_t src_offset, void* dst,
                            size_t dst_offset, size_t n, bp_stream_t s) {
  (void)bd;
  (void)device;
  (void)s;
  if (n != 0) memmove((char*)dst + dst_offset, (const char*)src + src_offset, n);
  return BP_STATUS_OK;
}

static bp_status_t stream_get_default(void* bd, int32_t device, bp_stream_t* out_stream) {
  (void)bd;
  (void)device;
  *out_stream = NULL; /* synchronous device: NULL is its one stream */
  return BP_STATUS_OK;
}

static bp_status_t stream_synchronize(void* bd, int32_t device, bp_stream_t s) {
  (void)bd;
  (void)device;
  (void)s;
  return BP_STATUS_OK;
}

/* Element `linear` (row-major over the shape) of a strided float32 view. */
static float* f32_at(const DLTensor* t, int64_t linear) {
  int64_t offset = 0;
  for (int32_t d = t->ndim - 1; d >= 0; --d) {
    offset += (linear % t->shape[d]) * t->strides[d];
    linear /= t->shape[d];
  }
  return (float*)((char*)t->data + t->byte_offset) + offset;
}

/* neg(Tensor self) -> Tensor, float32 only: the input has the output's shape
 * and dtype (the kernel contract in ops.yaml); other dtypes are declined
 * before anything is written, so the CPU fallback runs them. */
static bp_status_t neg_kernel(const bp_kernel_call_t* call) {
  const DLTensor* in = call->args[0].u.tensor;
  const DLTensor* out = call->outputs[0];
  if (out->dtype.code != kDLFloat || out->dtype.bits != 32) return BP_STATUS_UNIMPLEMENTED;
  int64_t n = 1;
  for (int32_t d = 0; d < out->ndim; ++d) n *= out->shape[d];
  for (int64_t i = 0; i < n; ++i) *f32_at(out, i) = -*f32_at(in, i);
  return BP_STATUS_OK;
}

static bp_status_t negotiate(uint32_t* inout_version) {
  if (BP_ABI_VERSION_GET_MAJOR(*inout_version) != BP_ABI_VERSION_MAJOR) return BP_STATUS_INCOMPATIBLE_VERSION;
  if (*inout_version > BP_ABI_VERSION) *inout_version = BP_ABI_VERSION; /* the highest both support */
  return BP_STATUS_OK;
}

static bp_status_t init(const bp_plugin_init_args_t* args) {
  bp_backend_t* b = args->backend;
  g_host = args->host;
  b->name = "onefile";
  b->version = "1.0.0";
  b->device_type = kDLExtDev;
  b->device_count = device_count;
  b->device_properties = device_properties;
  b->allocate = allocate;
  b->deallocate = deallocate;
  b->copy_host_to_device = copy_h2d;
  b->copy_device_to_host = copy_d2h;
  b->copy_device_to_device = copy_d2d;
  b->stream_get_default = stream_get_default;
  b->stream_synchronize = stream_synchronize;
  {
    /* An operator this host does not know (NOT_FOUND; the host warns) is
     * skipped, as in every backend: the plugin still loads. */
    const bp_status_t st = args->host->register_kernel(args->registrar, "neg", neg_kernel, NULL, 0);
    return st == BP_STATUS_NOT_FOUND ? BP_STATUS_OK : st;
  }
}

BP_PLUGIN_EXPORT const bp_plugin_entry_t* bp_plugin_entry(void) {
  static const bp_plugin_entry_t entry = {sizeof(bp_plugin_entry_t), BP_ABI_VERSION, 0, negotiate, init};
  return &entry;
}
