/* The native kernels of @NAME@ (one file of this folder per operator
 * family) and the function that registers them (register.c). What a kernel
 * receives for each operator family is the kernel contract at the top of
 * <SDK prefix>/share/backplane/ops.yaml. */
#ifndef BACKPLANE_PLUGIN_@NAME@_KERNELS_H_
#define BACKPLANE_PLUGIN_@NAME@_KERNELS_H_

#include "plugin.h" /* src/, an include directory of the target */

/* pointwise.c: neg(Tensor self) -> Tensor, float32. */
bp_status_t @NAME@_neg(const bp_kernel_call_t* call);

/* register.c: registers every kernel above. An operator this host does not
 * know is skipped (the host warns, naming it); any other error fails init. */
bp_status_t @NAME@_register_kernels(const bp_plugin_init_args_t* args);

#endif
