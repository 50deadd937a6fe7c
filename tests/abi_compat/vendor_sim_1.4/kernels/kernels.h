// The kernels vendor_sim runs natively (kernels/pointwise.cpp) and the
// function that registers them with the host (kernels/register.cpp).
#pragma once

#include "plugin.h"

namespace vendor_sim {

// add.Tensor: self + alpha * other.
bp_status_t Add(const bp_kernel_call_t* call);
// relu: max(self, 0); NaN stays NaN.
bp_status_t Relu(const bp_kernel_call_t* call);
// exp: e^self, float32 only.
bp_status_t Exp(const bp_kernel_call_t* call);

// Registers every kernel above under its operator name, with `state` as
// kernel_data. Returns the first error (the host has set its message).
bp_status_t RegisterKernels(const bp_plugin_init_args_t* args, State* state);

}  // namespace vendor_sim
