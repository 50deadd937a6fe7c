// Which operator each native kernel serves, and the compute dtypes it runs.
// Register a kernel under the functional name (BP_OP_*; a variant name is
// refused); the same kernel serves the in-place and out= variants. The dtype
// mask (ABI 1.3) lets the host route other dtypes to the fallback before it
// allocates or casts anything; bp_kit_register_kernel_dtypes drops it on an
// older host, where the kernels decline those dtypes themselves.
#include "kernels.h"

namespace vendor_sim {

bp_status_t RegisterKernels(const bp_plugin_init_args_t* args, State* state) {
  const uint64_t plain = BP_DTYPE_MASK_ALL & ~(BP_DTYPE_MASK_FLOAT16 | BP_DTYPE_MASK_BFLOAT16);
  const struct {
    const char* op;
    bp_kernel_fn fn;
    uint64_t dtypes;
  } kernels[] = {
      {BP_OP_ADD_TENSOR, Add, plain}, {BP_OP_RELU, Relu, BP_DTYPE_MASK_ALL}, {BP_OP_EXP, Exp, BP_DTYPE_MASK_FLOAT32}};
  for (const auto& k : kernels) {
    const bp_status_t st = bp_kit_register_kernel_dtypes(args->host, args->registrar, k.op, k.fn, state, 0, k.dtypes);
    // NOT_FOUND: an operator this host does not know; the host warned, skip it.
    if (st != BP_STATUS_OK && st != BP_STATUS_NOT_FOUND) return st;
  }
  return BP_STATUS_OK;
}

}  // namespace vendor_sim
