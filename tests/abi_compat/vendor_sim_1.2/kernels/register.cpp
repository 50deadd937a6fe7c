// Which operator each native kernel serves. Register a kernel under the
// functional name (BP_OP_*; a variant name is refused); the same kernel
// serves the in-place and out= variants.
#include "kernels.h"

namespace vendor_sim {

bp_status_t RegisterKernels(const bp_plugin_init_args_t* args, State* state) {
  const struct {
    const char* op;
    bp_kernel_fn fn;
  } kernels[] = {{BP_OP_ADD_TENSOR, Add}, {BP_OP_RELU, Relu}};
  for (const auto& k : kernels) {
    const bp_status_t st = args->host->register_kernel(args->registrar, k.op, k.fn, state, 0);
    // NOT_FOUND: an operator this host does not know; the host warned, skip it.
    if (st != BP_STATUS_OK && st != BP_STATUS_NOT_FOUND) return st;
  }
  return BP_STATUS_OK;
}

}  // namespace vendor_sim
