// Block-wide reductions over shared memory (device code; .cu files only).
// blockDim.x must be a power of two (launch_config.h guarantees it).
#pragma once

#include <cmath>
#include <cstdint>

#include "host_device.h"

namespace bp_gpu {

template <typename A>
__device__ inline A LowestOf();
template <>
__device__ inline float LowestOf<float>() {
  return -INFINITY;
}
template <>
__device__ inline double LowestOf<double>() {
  return -static_cast<double>(INFINITY);
}
template <>
__device__ inline int64_t LowestOf<int64_t>() {
  return INT64_MIN;
}
template <typename A>
__device__ inline A HighestOf();
template <>
__device__ inline float HighestOf<float>() {
  return INFINITY;
}
template <>
__device__ inline double HighestOf<double>() {
  return static_cast<double>(INFINITY);
}
template <>
__device__ inline int64_t HighestOf<int64_t>() {
  return INT64_MAX;
}

// Shared scratch for one value per thread, typed by the caller. 16-byte
// aligned so any accumulator type fits.
__device__ inline void* SharedScratch() {
#if defined(BP_GPU_EMULATE)
  return bp_gpu_emu::DynamicShared();
#else
  extern __shared__ __align__(16) unsigned char bp_gpu_smem[];
  return bp_gpu_smem;
#endif
}

// Sum of `v` over the block; every thread gets the total. Uses
// blockDim.x * sizeof(A) bytes of dynamic shared memory.
template <typename A>
__device__ inline A BlockSum(A v) {
  A* s = static_cast<A*>(SharedScratch());
  s[threadIdx.x] = v;
  __syncthreads();
  for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
    __syncthreads();
  }
  const A total = s[0];
  __syncthreads();  // the scratch may be reused right after
  return total;
}

// Maximum of `v` over the block (NaN propagates); every thread gets it.
template <typename A>
__device__ inline A BlockMax(A v) {
  A* s = static_cast<A*>(SharedScratch());
  s[threadIdx.x] = v;
  __syncthreads();
  for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) {
      const A a = s[threadIdx.x];
      const A b = s[threadIdx.x + stride];
      s[threadIdx.x] = (a != a || a > b) ? a : b;
    }
    __syncthreads();
  }
  const A total = s[0];
  __syncthreads();
  return total;
}

}  // namespace bp_gpu
