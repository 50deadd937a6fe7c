// Host mirrors of the geometry structs that reduce.cl, softmax.cl and
// matmul.cl take by value. Layouts must match the OpenCL C definitions.
#pragma once

#include <cstdint>

#include "launch.h"

namespace bpcl {

struct ReduceGeo {  // bp_rgeo
  int64_t out_numel;
  int64_t red_numel;
  int32_t kdim;
  int32_t rdim;
  int64_t k_sizes[kMaxDims];
  int64_t k_out_strides[kMaxDims];
  int64_t k_in_strides[kMaxDims];
  int64_t r_sizes[kMaxDims];
  int64_t r_in_strides[kMaxDims];
  int64_t in_off;
  int64_t out_off;
};
static_assert(sizeof(ReduceGeo) == 24 + 5 * 8 * kMaxDims + 16, "ReduceGeo must match bp_rgeo");

struct SoftmaxGeo {  // bp_sgeo
  int64_t rows;
  int64_t n;
  int32_t kdim;
  int32_t pad;
  int64_t k_sizes[kMaxDims];
  int64_t k_in_strides[kMaxDims];
  int64_t k_out_strides[kMaxDims];
  int64_t in_stride;
  int64_t out_stride;
  int64_t in_off;
  int64_t out_off;
};
static_assert(sizeof(SoftmaxGeo) == 24 + 3 * 8 * kMaxDims + 32, "SoftmaxGeo must match bp_sgeo");

constexpr int kMaxBatchDims = 14;
struct MatmulGeo {  // bp_mgeo
  int64_t M, N, K;
  int64_t batch;
  int32_t nb;
  int32_t has_c;
  int64_t b_sizes[kMaxBatchDims];
  int64_t b_strides[4][kMaxBatchDims];
  int64_t o_sm, o_sn, a_sm, a_sk, b_sk, b_sn, c_sm, c_sn;
  int64_t offs[4];
};
static_assert(sizeof(MatmulGeo) == 40 + 5 * 8 * kMaxBatchDims + 64 + 32, "MatmulGeo must match bp_mgeo");

// Largest power of two <= min(cap, device limit), at least 1.
size_t GroupSize(const Device* d, size_t cap);

}  // namespace bpcl
