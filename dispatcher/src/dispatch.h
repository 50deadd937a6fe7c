// The operator call path (bp_op_call) and the core's own operations used by
// it: copy_ across devices, casts, composites.
#pragma once

#include "context.h"
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

// Runs the kernel of `op` for the prepared call on `dev`: the backend's
// kernel, else its fallback, else the CPU fallback (unless strict), else
// UNIMPLEMENTED.
Status RunKernel(bp_context_t* ctx, const bp_op_t* op, DeviceState* dev, bp_kernel_call_t* call);

}  // namespace bp::core
