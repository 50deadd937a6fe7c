// Offset calculator: linear element index -> per-operand element offsets.
//
// The same idea as PyTorch's OffsetCalculator for CUDA TensorIterator: sizes
// and per-operand strides packed into a small struct passed to the kernel by
// value (kernel parameter memory, no device allocation), one integer division
// per dim. The host builder drops size-1 dims and merges dims that are
// contiguous for every operand, so a contiguous or simply broadcast tensor
// costs one or two divisions per element, and flags the all-contiguous case
// so kernels can skip the divisions entirely.
#pragma once

#include <cstdint>

#include "host_device.h"

namespace bp_gpu {

constexpr int kMaxDims = 16;  // BP_MAX_NDIM

template <int N>
struct OffsetCalculator {
  int32_t ndim = 0;        // after coalescing; 0 means one element at offset 0
  int32_t contiguous = 0;  // 1: offsets[k] == linear for every operand
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims][N] = {};  // elements; dim 0 is outermost

  BP_HOST_DEVICE void get(int64_t linear, int64_t (&offsets)[N]) const {
    for (int k = 0; k < N; ++k) offsets[k] = contiguous ? linear : 0;
    if (contiguous) return;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t size = sizes[d];
      const int64_t q = linear / size;
      const int64_t i = linear - q * size;
      linear = q;
      for (int k = 0; k < N; ++k) offsets[k] += i * strides[d][k];
    }
  }
};

// Builds a calculator over `ndim` dims of `sizes` for N operands whose element
// strides are strides[k][0..ndim). Size-1 dims are dropped (their stride never
// matters) and dim d is merged into d+1 when every operand has
// strides[d] == strides[d+1] * sizes[d+1]; row-major order of the linear index
// is preserved, which reductions rely on (argmax reports row-major indices).
template <int N>
inline OffsetCalculator<N> MakeOffsetCalculator(int32_t ndim, const int64_t* sizes,
                                                const int64_t* const (&strides)[N]) {
  OffsetCalculator<N> calc;
  int32_t out = 0;
  for (int32_t d = 0; d < ndim; ++d) {
    if (sizes[d] == 1) continue;
    if (out > 0) {
      bool mergeable = true;
      const int32_t prev = out - 1;
      for (int k = 0; k < N; ++k) {
        if (calc.strides[prev][k] != strides[k][d] * sizes[d]) mergeable = false;
      }
      if (mergeable) {
        calc.sizes[prev] *= sizes[d];
        for (int k = 0; k < N; ++k) calc.strides[prev][k] = strides[k][d];
        continue;
      }
    }
    calc.sizes[out] = sizes[d];
    for (int k = 0; k < N; ++k) calc.strides[out][k] = strides[k][d];
    ++out;
  }
  calc.ndim = out;
  bool contiguous = out <= 1;
  for (int k = 0; k < N && out == 1; ++k) contiguous = contiguous && calc.strides[0][k] == 1;
  calc.contiguous = contiguous ? 1 : 0;
  return calc;
}

// Product of sizes; 0 if any size is 0.
inline int64_t Numel(int32_t ndim, const int64_t* sizes) {
  int64_t n = 1;
  for (int32_t d = 0; d < ndim; ++d) n *= sizes[d];
  return n;
}

}  // namespace bp_gpu
