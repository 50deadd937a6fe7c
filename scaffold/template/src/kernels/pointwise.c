/* The pointwise kernels of @NAME@: one, neg on float32. Every other
 * operator and dtype runs through the core's CPU fallback until a kernel for
 * it is registered (register.c). What a kernel receives for each operator
 * family is the kernel contract at the top of
 * <SDK prefix>/share/backplane/ops.yaml. */
#include "kernels.h"

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
bp_status_t @NAME@_neg(const bp_kernel_call_t* call) {
  const DLTensor* self = bp_kit_tensor_arg(call, BP_ARG_NEG_SELF);
  const DLTensor* out = call->outputs[0];
  if (bp_kit_dtype_of(out->dtype) != BP_KIT_DTYPE_FLOAT32) {
    return bp_kit_failf(call, @NAME@_host, @NAME@_BACKEND, BP_STATUS_UNIMPLEMENTED, "%s is not native, only float32",
                        bp_kit_dtype_name(bp_kit_dtype_of(out->dtype)));
  }
  int64_t n = 1;
  for (int32_t d = 0; d < out->ndim; ++d) n *= out->shape[d];
  for (int64_t i = 0; i < n; ++i) *f32_at(out, i) = -*f32_at(self, i);
  return BP_STATUS_OK;
}
