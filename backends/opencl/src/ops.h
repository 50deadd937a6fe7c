// Kernel registration lists of each operator family. Every kernel follows
// the KERNEL CONTRACT at the top of dispatcher/ops.yaml.
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

void AddPointwiseKernels(std::vector<KernelReg>* out);  // binary, unary, comparison, where
void AddCopyKernels(std::vector<KernelReg>* out);       // copy_, fill_, cat
void AddReduceKernels(std::vector<KernelReg>* out);     // sum, mean, amax, amin, argmax
void AddSoftmaxKernels(std::vector<KernelReg>* out);    // softmax, log_softmax
void AddLinalgKernels(std::vector<KernelReg>* out);     // matmul, addmm, linear

}  // namespace bpcl
