/* The native kernels of @NAME@: one, neg on float32. Every other operator
 * and dtype runs through the core's CPU fallback until a kernel for it is
 * registered here. What a kernel receives for each operator family is the
 * kernel contract at the top of <SDK prefix>/share/backplane/ops.yaml. */
#include "@NAME@.h"

/* Element `linear` (row-major over the shape) of a strided float32 view; on
 * a real device a kernel launch gets data + byte_offset, sizes and strides. */
static float* f32_at(const DLTensor* t, int64_t linear) {
  int64_t offset = 0;
  for (int32_t d = t->ndim - 1; d >= 0; --d) {
    offset += (linear % t->shape[d]) * t->strides[d];
    linear /= t->shape[d];
  }
  return (float*)((char*)t->data + t->byte_offset) + offset;
}

/* neg(Tensor self) -> Tensor. The core already checked the arguments and
 * allocated the output; self has the output's sizes and dtype. A dtype this
 * kernel does not run is declined with UNIMPLEMENTED before anything is
 * written, and the dispatcher runs the CPU fallback for that call. */
static bp_status_t neg_kernel(const bp_kernel_call_t* call) {
  const DLTensor* self = call->args[BP_ARG_NEG_SELF].u.tensor;
  const DLTensor* out = call->outputs[0];
  if (out->dtype.code != kDLFloat || out->dtype.bits != 32) {
    return bp_kit_fail(call, @NAME@_host, BP_STATUS_UNIMPLEMENTED, "@NAME@: neg: only float32 is native");
  }
  int64_t n = 1;
  for (int32_t d = 0; d < out->ndim; ++d) n *= out->shape[d];
  for (int64_t i = 0; i < n; ++i) *f32_at(out, i) = -*f32_at(self, i);
  return BP_STATUS_OK;
}

/* An operator this host does not know (NOT_FOUND; the host logs a warning)
 * is skipped: it runs through the fallback. Any other error fails init. */
bp_status_t @NAME@_register_kernels(const bp_plugin_init_args_t* args) {
  bp_status_t st = args->host->register_kernel(args->registrar, BP_OP_NEG, neg_kernel, NULL, 0);
  return st == BP_STATUS_NOT_FOUND ? BP_STATUS_OK : st;
}
