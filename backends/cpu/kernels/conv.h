// The CPU convolution shared by conv2d and conv2d_fused: the call's operands
// and fused epilogue (conv_pool.cpp reads them from the call) and the oneDNN
// path (conv_dnnl.cpp).
#pragma once

#include <cstdint>

#include "common.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace bp_cpu {

struct Conv {
  const DLTensor* x;
  const DLTensor* w;
  const DLTensor* bias;  // may be null
  const DLTensor* y;
  int64_t stride[2], pad[2], dil[2], groups;
  uint64_t weight_id = 0;  // the weight's constant-storage id (bp_kit_constant_id); 0: not constant
};

// conv2d_fused's activations, in ops.yaml's order (the meta checked the name).
enum class Act { kNone, kRelu, kClip, kHardswish, kHardsigmoid, kSigmoid, kSilu, kGelu, kLeakyRelu };
inline const char* const kActNames[] = {"none",    "relu", "clip", "hardswish", "hardsigmoid",
                                        "sigmoid", "silu", "gelu", "leaky_relu"};

// What conv2d_fused does after the convolution: y = act(y + residual).
struct Fused {
  const DLTensor* residual;  // may be null; the output's sizes
  Act act;
  double alpha, beta;
};

// oneDNN convolution of `c` (float32 or bfloat16 as `dt`) with plain strided
// user memory, reordering to and from the primitive's layouts; `fused` (may
// be null) adds conv2d_fused's residual and activation as post-ops.
// Primitives are cached by everything that shapes them. Throws dnnl::error
// when oneDNN has no implementation, std::bad_alloc when out of memory.
void DnnlConv(const Conv& c, dnnl::memory::data_type dt, const Fused* fused = nullptr);

}  // namespace bp_cpu
