// Kernel registration lists of each operator family (one file of this folder
// each) and RegisterKernels, which registers them all (register.cpp). Every
// kernel follows the KERNEL CONTRACT at the top of abi/ops.yaml.
#pragma once

#include <vector>

#include "backplane/backend.h"
#include "backplane/op_args.h"
#include "backplane/plugin_kit.h"

namespace bpcl {

// {functional schema name ("add.Tensor"), kernel, kernel_data, dtype mask}:
// a plugin kit kernel table row. The mask lists the compute dtypes the
// kernel runs, so the host routes the others at prepare time; each family
// declares it next to its rows, matching the dtype checks its kernel keeps
// for older hosts.
using KernelReg = bp_kit_kernel_dtypes_t;

void AddPointwiseKernels(std::vector<KernelReg>* out);  // pointwise.cpp: binary, unary, comparison, where
void AddCopyKernels(std::vector<KernelReg>* out);       // copy.cpp: copy_, fill_, cat
void AddReduceKernels(std::vector<KernelReg>* out);     // reduce.cpp: sum, mean, amax, amin, argmax
void AddSoftmaxKernels(std::vector<KernelReg>* out);    // softmax.cpp: softmax, log_softmax
void AddLinalgKernels(std::vector<KernelReg>* out);     // linalg.cpp: matmul, addmm, linear
void AddQuantizeKernels(std::vector<KernelReg>* out);   // quantize.cpp: quantize_linear, dequantize_linear

// Registers every family's kernels with their dtype masks
// (bp_kit_register_kernels_dtypes): an operator the host does not know is
// skipped (the host warns, naming it); any other failure is returned (the
// host's set_error holds the message). `fp64`: whether any device has
// cl_khr_fp64; without one no kernel declares float64.
bp_status_t RegisterKernels(const bp_host_api_t* host, bp_registrar_t* registrar, bool fp64);

}  // namespace bpcl
