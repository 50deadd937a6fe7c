// The boxed CPU fallback (PyTorch's cpu_fallback, as a library for every
// backend): runs an operator's CPU kernel for a device that has no kernel.
#pragma once

#include "context.h"
#include "registry.h"
#include "status.h"

namespace bp::core {

// Copies each tensor argument's kernel view from `dev` to a contiguous CPU
// tensor, runs the CPU kernel of `op` with the same scalar arguments, and
// writes the CPU outputs back into the device outputs' views (for in-place
// operators that is the mutated argument). Counts the call and warns once per
// (backend, op). The caller has checked strict mode and that a CPU kernel
// exists. Works for backends whose memory the host cannot address.
Status CpuFallback(bp_context_t* ctx, const bp_op_t* op, DeviceState* dev, const bp_kernel_call_t& call);

}  // namespace bp::core
