// Registers every CPU kernel family with the host (called from init).
#include <cstdio>

#include "kernels.h"

namespace bp_cpu {
namespace {

using FamilyFn = const KernelDef* (*)(size_t*);
const FamilyFn kFamilies[] = {BinaryKernels, UnaryKernels,  CompareWhereKernels, ReduceKernels,
                              MatmulKernels, ConvPoolKernels, SoftmaxNormKernels,  CopyFillCatKernels,
                              ResampleKernels, IndexKernels,  ConvTransposeKernels,
                              SortKernels, GatherScatterKernels};

}  // namespace

bp_status_t RegisterKernels(const bp_plugin_init_args_t* args, CpuState* state) {
  const bp_host_api_t* host = args->host;
  for (FamilyFn family : kFamilies) {
    size_t n = 0;
    const KernelDef* defs = family(&n);
    for (size_t i = 0; i < n; ++i) {
      const bp_status_t st = host->register_kernel(args->registrar, defs[i].op_name, defs[i].fn, state, 0);
      if (st == BP_STATUS_NOT_FOUND) {
        // A host without this operator: keep the rest of the backend usable.
        if (host->log != nullptr) {
          char msg[160];
          std::snprintf(msg, sizeof msg, "cpu: host has no operator '%s'; kernel not registered", defs[i].op_name);
          host->log(args->registrar, BP_LOG_DEBUG, msg);
        }
        continue;
      }
      if (st != BP_STATUS_OK) return st;  // the host's register_kernel has set the message
    }
  }
  return BP_STATUS_OK;
}

}  // namespace bp_cpu
