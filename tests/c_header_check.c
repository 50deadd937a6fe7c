/* Compiled as C99 with -Wall -Wextra -Werror -pedantic: proves the public
 * headers are C. abi_layout_test calls bp_c_header_check(). */
#include <stddef.h>

#include "backplane/backend.h"
#include "backplane/backplane.h"
#include "backplane/types.h"

int bp_c_header_check(void);

int bp_c_header_check(void) {
  bp_value_t v;
  bp_kernel_arg_t k;
  bp_context_options_t o = {sizeof(bp_context_options_t), 0, 0, NULL, NULL, BP_LOG_WARNING};
  v.kind = BP_VALUE_INT;
  v.reserved0 = 0;
  v.u.i = 7;
  k.kind = BP_VALUE_DOUBLE;
  k.reserved0 = 0;
  k.u.d = 1.5;
  return (int)(sizeof(v) + sizeof(k)) + (int)o.struct_size * 0 + (int)v.u.i - 7 + (k.u.d > 1.0 ? 0 : 1);
}
