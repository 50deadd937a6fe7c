/* Which operator each native kernel serves: one row per kernel, under the
 * functional operator name (BP_OP_*; the same kernel serves the in-place and
 * out= variants). Add a row for each kernel you write. */
#include "kernels.h"

static const bp_kit_kernel_t kernels[] = {
    {BP_OP_NEG, @NAME@_neg, NULL},
};

bp_status_t @NAME@_register_kernels(const bp_plugin_init_args_t* args) {
  return bp_kit_register_kernels(args->host, args->registrar, kernels, sizeof kernels / sizeof kernels[0], NULL);
}
