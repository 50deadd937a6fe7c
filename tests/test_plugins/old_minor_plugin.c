/* A plugin built against ABI 1.0 (before bp_op_set_kernel_masked): it answers
 * negotiation with 1.0 whatever newer minor the host offers, and the host must
 * accept it (a minor version only adds). OLDMINOR_ANSWER=newer makes it answer
 * a minor newer than offered, which the host must refuse. One device-less
 * backend, "oldminor"; its memory functions are never reached. It defines
 * oldminor::fail(Tensor self) -> Tensor, whose CPU kernel fails the 1.0 way:
 * host->set_error (thread-local), never the 1.2 bp_kernel_call_t.fail; the
 * message must still reach the caller. Its negotiation is written out by
 * hand (not plugin_kit.h) so that the "newer" answer can break the contract. */
#include <stdlib.h>
#include <string.h>

#include "backplane/backend.h"

#define OLD_ABI BP_MAKE_ABI_VERSION(1, 0)

static const bp_host_api_t* g_host;

static bp_status_t negotiate(uint32_t* v) {
  const char* answer = getenv("OLDMINOR_ANSWER");
  if (BP_ABI_VERSION_GET_MAJOR(*v) != BP_ABI_VERSION_GET_MAJOR(OLD_ABI)) return BP_STATUS_INCOMPATIBLE_VERSION;
  if (answer != NULL && strcmp(answer, "newer") == 0) {
    *v = BP_MAKE_ABI_VERSION(BP_ABI_VERSION_GET_MAJOR(*v), BP_ABI_VERSION_GET_MINOR(*v) + 1);
    return BP_STATUS_OK;
  }
  if (*v > OLD_ABI) *v = OLD_ABI;
  return BP_STATUS_OK;
}
static bp_status_t device_count(void* data, int32_t* out) {
  (void)data;
  *out = 0;
  return BP_STATUS_OK;
}
static bp_status_t device_properties(void* data, int32_t device, bp_device_properties_t* out) {
  (void)data;
  (void)device;
  (void)out;
  return BP_STATUS_OUT_OF_RANGE;
}
static bp_status_t allocate(void* data, int32_t device, size_t nbytes, void** out) {
  (void)data;
  (void)device;
  (void)nbytes;
  (void)out;
  return BP_STATUS_OUT_OF_MEMORY;
}
static bp_status_t deallocate(void* data, int32_t device, void* ptr) {
  (void)data;
  (void)device;
  (void)ptr;
  return BP_STATUS_OK;
}
static bp_status_t h2d(void* data, int32_t device, const void* src, void* dst, size_t off, size_t n, bp_stream_t s) {
  (void)data, (void)device, (void)src, (void)dst, (void)off, (void)n, (void)s;
  return BP_STATUS_UNIMPLEMENTED;
}
static bp_status_t d2h(void* data, int32_t device, const void* src, size_t off, void* dst, size_t n, bp_stream_t s) {
  (void)data, (void)device, (void)src, (void)dst, (void)off, (void)n, (void)s;
  return BP_STATUS_UNIMPLEMENTED;
}
/* Reads only the 1.0 fields of the call. */
static bp_status_t fail_kernel(const bp_kernel_call_t* call) {
  (void)call;
  return g_host->set_error(BP_STATUS_INVALID_ARGUMENT, "oldminor::fail: argument 'self': refused by a 1.0 plugin");
}
static bp_status_t same_shape_meta(const bp_meta_call_t* call) {
  const DLTensor* x = call->args[0].u.tensor;
  int32_t i;
  call->out_specs[0].dtype = x->dtype;
  call->out_specs[0].ndim = x->ndim;
  for (i = 0; i < x->ndim; ++i) call->out_specs[0].sizes[i] = x->shape[i];
  return BP_STATUS_OK;
}
static bp_status_t init(const bp_plugin_init_args_t* args) {
  bp_backend_t* b = args->backend;
  if (args->abi_version != OLD_ABI) return args->host->set_error(BP_STATUS_INTERNAL, "oldminor: not given ABI 1.0");
  g_host = args->host;
  b->name = "oldminor";
  b->version = "0.0.1";
  b->device_type = kDLExtDev;
  b->no_device_reason = "oldminor: a loader test plugin with no device";
  b->device_count = device_count;
  b->device_properties = device_properties;
  b->allocate = allocate;
  b->deallocate = deallocate;
  b->copy_host_to_device = h2d;
  b->copy_device_to_host = d2h;
  return args->host->define_op(args->registrar, "oldminor::fail(Tensor self) -> Tensor", fail_kernel, NULL,
                               same_shape_meta, NULL);
}
static const bp_plugin_entry_t kEntry = {sizeof(bp_plugin_entry_t), OLD_ABI, 0, negotiate, init};

BP_PLUGIN_EXPORT const bp_plugin_entry_t* bp_plugin_entry(void) { return &kEntry; }
