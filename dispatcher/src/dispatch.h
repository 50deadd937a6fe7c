// The operator call path (bp_op_call) and the core's own operations used by
// it: copy_ across devices, casts, composites.
#pragma once

#include "context.h"
#include "kernel_error.h"
#include "registry.h"
#include "tensor.h"

namespace bp::core {

// Runs `op` with boxed arguments. Caller is inside a ReadSection.
Status CallOp(bp_context_t* ctx, const bp_op_t* op, const bp_value_t* args, int32_t num_args,
              bp_tensor_t** out_results, int32_t num_results);

// dst.copy_(src): any device to any device, with dtype conversion and
// broadcasting of src to dst's sizes.
Status CopyInto(bp_context_t* ctx, bp_tensor_t* dst, bp_tensor_t* src);

// A DLTensor describing `geo` over `storage` (shape/strides point into geo).
void FillDLTensor(const Storage* storage, const Geometry& geo, DLTensor* out);

// RunKernel's work after the backend's kernel was missing (had_kernel false)
// or returned native_rc != OK: a kernel error, or the backend fallback, the
// CPU fallback (unless strict), UNIMPLEMENTED.
Status RunKernelWithoutNative(bp_context_t* ctx, const bp_op_t* op, DeviceState* dev, bp_kernel_call_t* call,
                              bool had_kernel, bp_status_t native_rc);

// Runs the kernel of `op` for the prepared call on `dev`: the backend's
// kernel, else its fallback, else the CPU fallback (unless strict), else
// UNIMPLEMENTED. Inline: the common case (the kernel runs) is on the path of
// every operator call, and builds no string.
inline Status RunKernel(bp_context_t* ctx, const bp_op_t* op, DeviceState* dev, bp_kernel_call_t* call) {
  const int32_t backend = dev->slot->id;
  const KernelEntry& k = KernelFor(op, backend);
  call->backend_data = dev->slot->props_table.backend_data;
  CallError error;  // the kernel's message, if it fails (kernel_error.h)
  AttachCallError(call, &error);
  // A kernel (or backend fallback) that cannot run this call returns
  // UNIMPLEMENTED before writing anything; the next level then runs it.
  if (k.fn == nullptr) return RunKernelWithoutNative(ctx, op, dev, call, false, BP_STATUS_OK);
  call->kernel_data = k.data;
  bp_status_t rc = k.fn(call);
  if (rc != BP_STATUS_OK) return RunKernelWithoutNative(ctx, op, dev, call, true, rc);
  const_cast<bp_op_t*>(op)->native_count[backend].fetch_add(1, std::memory_order_relaxed);
  return Status::Ok();
}

}  // namespace bp::core
