// The CPU kernels by family (one table of operator -> kernel per file of this
// folder) and RegisterKernels, which registers them all (register.cpp).
#pragma once

#include <cstddef>

#include "backplane/backend.h"
#include "backplane/op_args.h"
#include "backplane/plugin_kit.h"
#include "plugin.h"

namespace bp_cpu {

// ---- kernel tables ----------------------------------------------------------

// A row of a family's table (plugin kit): BP_OP_* name, kernel, NULL data
// (RegisterKernels gives every kernel the CpuState).
using KernelDef = bp_kit_kernel_t;

const KernelDef* BinaryKernels(size_t* count);
const KernelDef* UnaryKernels(size_t* count);
const KernelDef* CompareWhereKernels(size_t* count);
const KernelDef* ReduceKernels(size_t* count);
const KernelDef* MatmulKernels(size_t* count);
const KernelDef* ConvPoolKernels(size_t* count);
const KernelDef* ResampleKernels(size_t* count);
const KernelDef* IndexKernels(size_t* count);
const KernelDef* GatherScatterKernels(size_t* count);
const KernelDef* ConvTransposeKernels(size_t* count);
const KernelDef* SortKernels(size_t* count);
const KernelDef* RecurrentKernels(size_t* count);
const KernelDef* QuantizeKernels(size_t* count);
const KernelDef* MatmulIntegerKernels(size_t* count);
const KernelDef* ConvIntegerKernels(size_t* count);
const KernelDef* SoftmaxNormKernels(size_t* count);
const KernelDef* AttentionKernels(size_t* count);
const KernelDef* CopyFillCatKernels(size_t* count);

// Registers every family's kernels with `state` as kernel_data
// (bp_kit_register_kernels): an operator the host does not know is skipped
// (the host warns, naming it); any other failure is returned (the host's
// register_kernel has set the message).
bp_status_t RegisterKernels(const bp_plugin_init_args_t* args, CpuState* state);

}  // namespace bp_cpu
