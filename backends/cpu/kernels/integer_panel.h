// The integer panel product matmul_integer and conv_integer share: rows of
// an int8/uint8 operand a, minus their zero points, times an int16 [K, N]
// panel (the other operand minus its zero points, widened once by the
// caller; every difference of two int8/uint8 values fits int16). Each a_mk
// adds a_mk * panel[k, :] into a row of int32 sums, a loop the compiler
// vectorizes (the including files build at -O3; int16 x int16 products
// vectorize on plain SSE2, where int32 x int32 ones do not). Four rows of a
// share each load of the panel, and columns go in tiles small enough that
// a tile of the panel stays in cache across all rows: before, every row
// streamed the whole panel (a 3x3 conv with 128 channels on 28 x 28 has a
// 1152 x 784 panel). Every difference is at most 255 in magnitude, so a sum
// overflows int32 only past K = 2^31 / 255^2 (about 33000), where ONNX's
// int32 result wraps too: the sums are unsigned (wrapping, no UB) and the
// caller casts them to int32.
#pragma once

#include <algorithm>
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

// The widest column tile; the sums of four rows of it live on the stack.
constexpr int64_t kPanelTile = 256;

// acc[r][0..nb) = sum over k of (a[r * as_m + k * as_k] - za[r]) *
// panel[k * N + j] for R rows r (R = 1 or 4); panel points at the tile's
// first column.
template <int R, typename Ta>
inline void IntegerPanelBlock(const Ta* a, int64_t as_m, int64_t as_k, const int32_t* za, const int16_t* panel,
                              int64_t K, int64_t N, int64_t nb, uint32_t (*acc)[kPanelTile]) {
  uint32_t* __restrict c[R];
  for (int r = 0; r < R; ++r) {
    c[r] = acc[r];
    std::memset(c[r], 0, static_cast<size_t>(nb) * sizeof(uint32_t));
  }
  for (int64_t k = 0; k < K; ++k) {
    int16_t av[R];
    bool all_zero = true;
    for (int r = 0; r < R; ++r) {
      av[r] = static_cast<int16_t>(static_cast<int32_t>(a[r * as_m + k * as_k]) - za[r]);
      all_zero = all_zero && av[r] == 0;
    }
    if (all_zero) continue;  // zero points often equal common values (padding, ReLU zeros)
    const int16_t* __restrict row = panel + k * N;
    if constexpr (R == 4) {
      uint32_t* __restrict c0 = c[0], * __restrict c1 = c[1], * __restrict c2 = c[2], * __restrict c3 = c[3];
      for (int64_t j = 0; j < nb; ++j) {
        const int32_t p = row[j];
        c0[j] += static_cast<uint32_t>(av[0] * p);
        c1[j] += static_cast<uint32_t>(av[1] * p);
        c2[j] += static_cast<uint32_t>(av[2] * p);
        c3[j] += static_cast<uint32_t>(av[3] * p);
      }
    } else {
      uint32_t* __restrict c0 = c[0];
      for (int64_t j = 0; j < nb; ++j) c0[j] += static_cast<uint32_t>(av[0] * static_cast<int32_t>(row[j]));
    }
  }
}

// Rows [m_lo, m_hi) of a (row m at a + m * as_m, its zero point za[m])
// times the [K, N] panel. emit(m, j0, nb, sums) receives row m's sums of
// columns [j0, j0 + nb) (unsigned; the caller casts them to int32).
template <typename Ta, typename Emit>
inline void IntegerPanelProduct(const Ta* a, int64_t as_m, int64_t as_k, const int32_t* za, const int16_t* panel,
                                int64_t K, int64_t N, int64_t m_lo, int64_t m_hi, Emit emit) {
  // A tile of the panel is at most 64K int16 (128 KB): it stays in L2 while
  // every row block passes over it.
  const int64_t tile =
      std::min<int64_t>(kPanelTile, std::max<int64_t>(16, (int64_t{1} << 16) / std::max<int64_t>(K, 1)));
  alignas(64) uint32_t acc[4][kPanelTile];
  for (int64_t j0 = 0; j0 < N; j0 += tile) {
    const int64_t nb = std::min(tile, N - j0);
    int64_t m = m_lo;
    for (; m + 4 <= m_hi; m += 4) {
      IntegerPanelBlock<4>(a + m * as_m, as_m, as_k, za + m, panel + j0, K, N, nb, acc);
      for (int r = 0; r < 4; ++r) emit(m + r, j0, nb, acc[r]);
    }
    for (; m < m_hi; ++m) {
      IntegerPanelBlock<1>(a + m * as_m, as_m, as_k, za + m, panel + j0, K, N, nb, acc);
      emit(m, j0, nb, acc[0]);
    }
  }
}

}  // namespace bp_cpu
