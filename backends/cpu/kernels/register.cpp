// Registers every CPU kernel family with the host (called from init).
#include "kernels.h"

namespace bp_cpu {
namespace {

using FamilyFn = const KernelDef* (*)(size_t*);
const FamilyFn kFamilies[] = {BinaryKernels, UnaryKernels,  CompareWhereKernels, ReduceKernels,
                              MatmulKernels, ConvPoolKernels, SoftmaxNormKernels,  CopyFillCatKernels,
                              ResampleKernels, IndexKernels,  ConvTransposeKernels,
                              SortKernels, GatherScatterKernels, AttentionKernels,
                              RecurrentKernels, QuantizeKernels, MatmulIntegerKernels,
                              ConvIntegerKernels};

}  // namespace

bp_status_t RegisterKernels(const bp_plugin_init_args_t* args, CpuState* state) {
  for (FamilyFn family : kFamilies) {
    size_t n = 0;
    const KernelDef* defs = family(&n);
    const bp_status_t st = bp_kit_register_kernels(args->host, args->registrar, defs, n, state);
    if (st != BP_STATUS_OK) return st;
  }
  return BP_STATUS_OK;
}

}  // namespace bp_cpu
