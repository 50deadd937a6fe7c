/* Compiled as C99 with -Wall -Wextra -Werror -pedantic: proves the public
 * headers are C. abi_layout_test calls bp_c_header_check(). */
#include <stddef.h>

#include "backplane/backend.h"
#include "backplane/backplane.h"
#include "backplane/dlpack_versioned.h"
#include "backplane/op_args.h"
#include "backplane/plugin_kit.h"
#include "backplane/types.h"

int bp_c_header_check(void);

int bp_c_header_check(void) {
  bp_value_t v;
  bp_kernel_arg_t k;
  bp_context_options_t o = {sizeof(bp_context_options_t), 0, 0, NULL, NULL, BP_LOG_WARNING};
  bp_kernel_call_t call = {0};
  uint32_t version = BP_ABI_VERSION;
  call.struct_size = offsetof(bp_kernel_call_t, fail); /* a 1.1 host's call */
  if (BP_KIT_HAS_FIELD_OF(bp_kernel_call_t, &call, fail) || BP_KIT_HAS_FIELD(&call, error_state)) return 1;
  if (bp_kit_negotiate(&version, BP_MAKE_ABI_VERSION(1, 0)) != BP_STATUS_OK || version != BP_MAKE_ABI_VERSION(1, 0)) {
    return 1;
  }
  if (bp_kit_fail(&call, NULL, BP_STATUS_INTERNAL, "dropped") != BP_STATUS_INTERNAL) return 1;
  {
    /* The kit's pieces, used from C. */
    const DLDataType f32 = {kDLFloat, 32, 1};
    const int64_t* list = NULL;
    call.num_args = 0;
    if (bp_kit_dtype_of(f32) != BP_KIT_DTYPE_FLOAT32 || bp_kit_dtype_size(BP_KIT_DTYPE_INT64) != 8) return 1;
    if (bp_kit_tensor_arg(&call, 0) != NULL || bp_kit_int_list_arg(&call, 0, &list) != 0) return 1;
    if (bp_kit_constant_id(&call, 0) != 0) return 1;
    if (bp_kit_failf(&call, NULL, "c", BP_STATUS_INTERNAL, "%d", 1) != BP_STATUS_INTERNAL) return 1;
    if (bp_kit_register_kernels(NULL, NULL, NULL, 0, NULL) != BP_STATUS_INVALID_ARGUMENT) return 1;
  }
  {
    /* DLPack 1.x's versioned struct and flags (backplane/dlpack_versioned.h). */
    DLManagedTensorVersioned dv;
    dv.version.major = 1;
    dv.version.minor = 0;
    dv.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    if (dv.version.major != BP_DLPACK_VERSION_MAJOR || (dv.flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0) return 1;
    if (offsetof(DLManagedTensorVersioned, dl_tensor) != 32 || bp_tensor_is_read_only(NULL) != 0) return 1;
  }
  if (BP_ARG_ADD_TENSOR_ALPHA != 2 || BP_NARGS_ADD_TENSOR != 3 || BP_OP_ADD_TENSOR[0] != 'a') return 1;
  v.kind = BP_VALUE_INT;
  v.reserved0 = 0;
  v.u.i = 7;
  k.kind = BP_VALUE_DOUBLE;
  k.flags = 0;
  k.u.d = 1.5;
  return (int)(sizeof(v) + sizeof(k)) + (int)o.struct_size * 0 + (int)v.u.i - 7 + (k.u.d > 1.0 ? 0 : 1);
}
