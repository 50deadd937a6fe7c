// The integer panel product matmul_integer and conv_integer share: rows of
// an int8/uint8 operand a, minus their zero points, times an int16 [K, N]
// panel (the other operand minus its zero points, widened once by the
// caller; every difference of two int8/uint8 values fits int16). Each a_mk
// adds a_mk * panel[k, :] into a row of int32 sums (Highway vectors,
// integer_panel.cpp). Four rows of a share each load of the
// panel, and columns go in tiles small enough that a tile of the panel
// stays in cache across all rows: otherwise every row streams the whole
// panel (a 3x3 conv with 128 channels on 28 x 28 has a 1152 x 784 panel).
// Every difference is at most 255 in magnitude, so a sum overflows int32
// only past K = 2^31 / 255^2 (about 33000), where ONNX's int32 result wraps
// too: the sums are unsigned (wrapping, no UB) and the caller casts them to
// int32.
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

// acc[r][0..nb) = sum over k of a[r * K + k] * panel[k * N + j] for four
// rows r (Block4) or one (Block1); a holds the rows' differences (already
// minus their zero points), panel points at the tile's first column.
// integer_panel.cpp builds them once per instruction set (Highway, picked
// at run time: x86-64's baseline SSE2 has no 32-bit lane multiply).
void IntegerPanelBlock4(const int16_t* a, int64_t K, const int16_t* panel, int64_t N, int64_t nb,
                        uint32_t (*acc)[kPanelTile]);
void IntegerPanelBlock1(const int16_t* a, int64_t K, const int16_t* panel, int64_t N, int64_t nb, uint32_t* acc);

// The rows [m_lo, m_hi) of a (row m at a + m * as_m, element k at
// + k * as_k) minus their zero points za[m], as int16 into out[(m - m_lo) * K + k].
template <typename Ta>
inline void ShiftedRows(const Ta* a, int64_t as_m, int64_t as_k, const int32_t* za, int64_t m_lo, int64_t m_hi,
                        int64_t K, int16_t* out) {
  for (int64_t m = m_lo; m < m_hi; ++m)
    for (int64_t k = 0; k < K; ++k)
      out[(m - m_lo) * K + k] = static_cast<int16_t>(static_cast<int32_t>(a[m * as_m + k * as_k]) - za[m]);
}

// Rows [m_lo, m_hi) of a16 ([rows, K] differences, contiguous) times the
// [K, N] panel. emit(m, j0, nb, sums) receives row m's sums of columns
// [j0, j0 + nb) (unsigned; the caller casts them to int32).
template <typename Emit>
inline void IntegerPanelProduct(const int16_t* a16, const int16_t* panel, int64_t K, int64_t N, int64_t m_lo,
                                int64_t m_hi, Emit emit) {
  // A tile of the panel is at most 64K int16 (128 KB): it stays in L2 while
  // every row block passes over it.
  const int64_t tile =
      std::min<int64_t>(kPanelTile, std::max<int64_t>(16, (int64_t{1} << 16) / std::max<int64_t>(K, 1)));
  alignas(64) uint32_t acc[4][kPanelTile];
  for (int64_t j0 = 0; j0 < N; j0 += tile) {
    const int64_t nb = std::min(tile, N - j0);
    int64_t m = m_lo;
    for (; m + 4 <= m_hi; m += 4) {
      IntegerPanelBlock4(a16 + m * K, K, panel + j0, N, nb, acc);
      for (int r = 0; r < 4; ++r) emit(m + r, j0, nb, acc[r]);
    }
    for (; m < m_hi; ++m) {
      IntegerPanelBlock1(a16 + m * K, K, panel + j0, N, nb, acc[0]);
      emit(m, j0, nb, acc[0]);
    }
  }
}

}  // namespace bp_cpu
