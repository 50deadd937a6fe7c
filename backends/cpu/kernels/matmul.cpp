// matmul, addmm and linear on top of Gemm (oneDNN matmul for float32 and
// bfloat16). The core has applied torch.matmul's 1-D and broadcast rules.
#include "gemm.h"

namespace bp_cpu {
namespace {

bp_status_t Matmul(const bp_kernel_call_t* call) {
  const DLTensor* a = bp_kit_tensor_arg(call, BP_ARG_MATMUL_SELF);
  const DLTensor* b = bp_kit_tensor_arg(call, BP_ARG_MATMUL_OTHER);
  DLTensor* out = call->outputs[0];
  if (a == nullptr || b == nullptr) return Fail(call, BP_STATUS_INVALID_ARGUMENT, "expected two tensors");
  if (a->ndim < 2 || a->ndim != b->ndim || a->ndim != out->ndim)
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "expected operands of one rank >= 2, got %d, %d and %d", a->ndim,
                b->ndim, out->ndim);
  return Gemm(call, *a, *b, *out, 1.0, 0.0, bp_kit_constant_id(call, BP_ARG_MATMUL_OTHER));
}

bp_status_t Addmm(const bp_kernel_call_t* call) {
  const DLTensor* self = bp_kit_tensor_arg(call, BP_ARG_ADDMM_SELF);
  const DLTensor* m1 = bp_kit_tensor_arg(call, BP_ARG_ADDMM_MAT1);
  const DLTensor* m2 = bp_kit_tensor_arg(call, BP_ARG_ADDMM_MAT2);
  DLTensor* out = call->outputs[0];
  if (self == nullptr || m1 == nullptr || m2 == nullptr)
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "expected three tensors");
  if (m1->ndim != 2 || m2->ndim != 2 || out->ndim != 2 || self->ndim != 2)
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "expected 2-D operands (self broadcast to [M, N])");
  const double beta = bp_kit_double_arg(call, BP_ARG_ADDMM_BETA, 1.0);
  const double alpha = bp_kit_double_arg(call, BP_ARG_ADDMM_ALPHA, 1.0);
  if (beta != 0.0) {
    // out = self, then the product accumulates onto it (oneDNN's sum post-op).
    const bp_status_t st = CopyTensor(*out, *self);
    if (st != BP_STATUS_OK) return Fail(call, st, "cannot copy 'self' into the output");
  }
  return Gemm(call, *m1, *m2, *out, alpha, beta, bp_kit_constant_id(call, BP_ARG_ADDMM_MAT2));
}

bp_status_t Linear(const bp_kernel_call_t* call) {
  const DLTensor* input = bp_kit_tensor_arg(call, BP_ARG_LINEAR_INPUT);
  const DLTensor* weight = bp_kit_tensor_arg(call, BP_ARG_LINEAR_WEIGHT);
  const DLTensor* bias = bp_kit_tensor_arg(call, BP_ARG_LINEAR_BIAS);
  DLTensor* out = call->outputs[0];
  if (input == nullptr || weight == nullptr)
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "expected 'input' and 'weight' tensors");
  if (input->ndim < 1 || weight->ndim != 2 || out->ndim != input->ndim || input->ndim > BP_MAX_NDIM - 1)
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "expected input [..., K], weight [N, K], out [..., N]");
  // A 1-D input is a one-row matrix.
  const int r = input->ndim < 2 ? 2 : input->ndim;
  int64_t a_shape[BP_MAX_NDIM], a_strides[BP_MAX_NDIM], c_shape[BP_MAX_NDIM], c_strides[BP_MAX_NDIM];
  int64_t b_shape[BP_MAX_NDIM], b_strides[BP_MAX_NDIM];
  DLTensor A = *input, B = *weight, C = *out;
  if (input->ndim == 1) {
    a_shape[0] = 1;
    a_strides[0] = input->shape[0] * input->strides[0] + 1;
    a_shape[1] = input->shape[0];
    a_strides[1] = input->strides[0];
    c_shape[0] = 1;
    c_strides[0] = out->shape[0] * out->strides[0] + 1;
    c_shape[1] = out->shape[0];
    c_strides[1] = out->strides[0];
  } else {
    for (int d = 0; d < r; ++d) {
      a_shape[d] = input->shape[d];
      a_strides[d] = input->strides[d];
      c_shape[d] = out->shape[d];
      c_strides[d] = out->strides[d];
    }
  }
  // weight^T as [K, N], broadcast over the batch dims with stride 0.
  for (int d = 0; d < r - 2; ++d) {
    b_shape[d] = c_shape[d];
    b_strides[d] = 0;
  }
  b_shape[r - 2] = weight->shape[1];
  b_strides[r - 2] = weight->strides[1];
  b_shape[r - 1] = weight->shape[0];
  b_strides[r - 1] = weight->strides[0];
  A.ndim = B.ndim = C.ndim = r;
  A.shape = a_shape;
  A.strides = a_strides;
  B.shape = b_shape;
  B.strides = b_strides;
  C.shape = c_shape;
  C.strides = c_strides;
  double beta = 0.0;
  if (bias != nullptr) {
    // out = bias broadcast along rows, then accumulate the product onto it.
    int64_t z_strides[BP_MAX_NDIM] = {};
    z_strides[r - 1] = bias->strides[0];
    DLTensor bias_view = *bias;
    bias_view.ndim = r;
    bias_view.shape = c_shape;
    bias_view.strides = z_strides;
    const bp_status_t st = CopyTensor(C, bias_view);
    if (st != BP_STATUS_OK) return Fail(call, st, "cannot broadcast 'bias' into the output");
    beta = 1.0;
  }
  return Gemm(call, A, B, C, 1.0, beta, bp_kit_constant_id(call, BP_ARG_LINEAR_WEIGHT));
}

const KernelDef kKernels[] = {
    {BP_OP_MATMUL, Matmul, nullptr},
    {BP_OP_ADDMM, Addmm, nullptr},
    {BP_OP_LINEAR, Linear, nullptr},
};

}  // namespace

const KernelDef* MatmulKernels(size_t* count) {
  *count = sizeof(kKernels) / sizeof(kKernels[0]);
  return kKernels;
}

}  // namespace bp_cpu
