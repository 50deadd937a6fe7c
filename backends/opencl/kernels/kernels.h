// Kernel registration lists of each operator family (one file of this folder
// each) and RegisterKernels, which registers them all (register.cpp). Every
// kernel follows the KERNEL CONTRACT at the top of abi/ops.yaml.
#pragma once

#include <vector>

#include "backplane/backend.h"
#include "backplane/op_args.h"

namespace bpcl {

struct KernelReg {
  const char* op_name;  // functional schema name: "add.Tensor"
  bp_kernel_fn fn;
  void* data;           // kernel_data
};

void AddPointwiseKernels(std::vector<KernelReg>* out);  // pointwise.cpp: binary, unary, comparison, where
void AddCopyKernels(std::vector<KernelReg>* out);       // copy.cpp: copy_, fill_, cat
void AddReduceKernels(std::vector<KernelReg>* out);     // reduce.cpp: sum, mean, amax, amin, argmax
void AddSoftmaxKernels(std::vector<KernelReg>* out);    // softmax.cpp: softmax, log_softmax
void AddLinalgKernels(std::vector<KernelReg>* out);     // linalg.cpp: matmul, addmm, linear

// Registers every family's kernels with the host. An operator the host does
// not know (NOT_FOUND: an older host) is skipped; any other failure is
// returned (the host's set_error holds the message).
bp_status_t RegisterKernels(const bp_host_api_t* host, bp_registrar_t* registrar);

}  // namespace bpcl
