/*
 * Backplane plugin kit, kernel tables: a plugin lists its kernels in one
 * table and registers them in one call, with the policy every backend
 * follows for an operator the host does not know. Pure C99, header-only
 * (static inline); included by backplane/plugin_kit.h.
 *
 *   static const bp_kit_kernel_t kKernels[] = {
 *       {BP_OP_ADD_TENSOR, add_kernel, NULL},
 *       {BP_OP_RELU, relu_kernel, NULL},
 *   };
 *   return bp_kit_register_kernels(args->host, args->registrar, kKernels,
 *                                  sizeof kKernels / sizeof kKernels[0], state);
 *
 * Thread-safety: as register_kernel: only during the plugin's init, on the
 * thread that runs it.
 */
#ifndef BACKPLANE_PLUGIN_KIT_KERNEL_TABLE_H_
#define BACKPLANE_PLUGIN_KIT_KERNEL_TABLE_H_

#include <stddef.h>
#include <stdint.h>

#include "backplane/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One row of a kernel table. */
typedef struct bp_kit_kernel_t {
  const char* op;  /* functional operator name: BP_OP_* ("add.Tensor") */
  bp_kernel_fn fn; /* the kernel */
  void* data;      /* its kernel_data; NULL: the `data` of bp_kit_register_kernels */
} bp_kit_kernel_t;

/* Registers every row of `table` (`count` rows) through
 * host->register_kernel(registrar, row.op, row.fn, row.data or `data`, 0).
 * Policy for an operator the host does not know (NOT_FOUND: a host older or
 * smaller than the operator list the plugin was built with): the kernel is
 * skipped and the others are registered; the host logs the warning naming
 * the operator and the plugin (bp_host_api_t.register_kernel), so the plugin
 * still loads. Any other error stops at that row and is returned (the host
 * holds its message; init should return it). Returns BP_STATUS_OK otherwise,
 * BP_STATUS_INVALID_ARGUMENT when host, registrar or (with count > 0) table is
 * NULL. */
static inline bp_status_t bp_kit_register_kernels(const bp_host_api_t* host, bp_registrar_t* registrar,
                                                  const bp_kit_kernel_t* table, size_t count, void* data) {
  size_t i;
  if (host == NULL || host->register_kernel == NULL || registrar == NULL || (table == NULL && count > 0)) {
    return BP_STATUS_INVALID_ARGUMENT;
  }
  for (i = 0; i < count; ++i) {
    const bp_status_t st =
        host->register_kernel(registrar, table[i].op, table[i].fn, table[i].data != NULL ? table[i].data : data, 0);
    if (st != BP_STATUS_OK && st != BP_STATUS_NOT_FOUND) return st;
  }
  return BP_STATUS_OK;
}

/* One row of a kernel table that also names the compute dtypes its kernel
 * runs (ABI 1.3): the host routes calls of other dtypes to a fallback at
 * prepare time, before it allocates or casts anything. */
typedef struct bp_kit_kernel_dtypes_t {
  const char* op;  /* functional operator name: BP_OP_* ("add.Tensor") */
  bp_kernel_fn fn; /* the kernel */
  void* data;      /* its kernel_data; NULL: the `data` of bp_kit_register_kernels_dtypes */
  uint64_t dtypes; /* an OR of BP_DTYPE_MASK_*; BP_DTYPE_MASK_ALL: every dtype */
} bp_kit_kernel_dtypes_t;

/* bp_kit_register_kernels for a table with dtype masks: registers each row
 * through bp_kit_register_kernel_dtypes (plugin_kit.h), so an older host
 * (ABI < 1.3) offers the kernel every dtype and the kernel still declines
 * the others at run time. Same policy and return values as
 * bp_kit_register_kernels (an operator the host does not know is skipped). */
static inline bp_status_t bp_kit_register_kernels_dtypes(const bp_host_api_t* host, bp_registrar_t* registrar,
                                                         const bp_kit_kernel_dtypes_t* table, size_t count,
                                                         void* data) {
  size_t i;
  if (host == NULL || host->register_kernel == NULL || registrar == NULL || (table == NULL && count > 0)) {
    return BP_STATUS_INVALID_ARGUMENT;
  }
  for (i = 0; i < count; ++i) {
    const bp_status_t st = bp_kit_register_kernel_dtypes(
        host, registrar, table[i].op, table[i].fn, table[i].data != NULL ? table[i].data : data, 0, table[i].dtypes);
    if (st != BP_STATUS_OK && st != BP_STATUS_NOT_FOUND) return st;
  }
  return BP_STATUS_OK;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BACKPLANE_PLUGIN_KIT_KERNEL_TABLE_H_ */
