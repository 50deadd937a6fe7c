// The int32 panel product matmul_integer and conv_integer share: one row of
// an int8/uint8 operand a, minus its zero point, times an int32 [K, N] panel
// (the other operand minus its zero points, widened once by the caller).
// Each a_k adds a_k * panel[k, :] into a row of N sums, a loop the compiler
// vectorizes (the including files build at -O3). Every int8/uint8
// difference is at most 255 in magnitude, so a sum overflows int32 only past
// K = 2^31 / 255^2 (about 33000), where ONNX's int32 result wraps too: the
// sums are unsigned (wrapping, no UB) and the caller casts them to int32.
#pragma once

#include <cstdint>
#include <cstring>

#include "iter.h"

namespace bp_cpu {

// Reads element i of a zero point (NONE: 0; one element: that one).
template <typename T>
int32_t ZeroPointAt(const DLTensor* zp, int64_t i) {
  if (zp == nullptr) return 0;
  if (Numel(*zp) == 1) return *reinterpret_cast<const T*>(DataPtr(*zp));
  const int64_t st = zp->strides != nullptr ? zp->strides[0] : 1;
  return reinterpret_cast<const T*>(DataPtr(*zp))[i * st];
}

// acc[0..N) = sum over k of (a[k * as_k] - za) * panel[k * N + j].
template <typename Ta>
inline void IntegerPanelRow(const Ta* a, int64_t as_k, int32_t za, const int32_t* panel, int64_t K, int64_t N,
                            uint32_t* acc) {
  std::memset(acc, 0, static_cast<size_t>(N) * sizeof(uint32_t));
  for (int64_t k = 0; k < K; ++k) {
    const uint32_t av = static_cast<uint32_t>(static_cast<int32_t>(a[k * as_k]) - za);
    if (av == 0) continue;  // zero points often equal common values (padding, ReLU zeros)
    const int32_t* row = panel + k * N;
    for (int64_t j = 0; j < N; ++j) acc[j] += av * static_cast<uint32_t>(row[j]);
  }
}

}  // namespace bp_cpu
