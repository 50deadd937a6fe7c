// The inner blocks of the integer panel product (integer_panel.h), built
// once per instruction set where the compiler and loader can pick one at
// load time (GCC/Clang target_clones, an ifunc: x86-64 Linux). The loops are
// plain C++ the compiler vectorizes; the AVX2 clone multiplies eight int32
// lanes at once where SSE2 (the x86-64 baseline) emulates that multiply.
#include "integer_panel.h"

#include <cstring>

#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#define BP_PANEL_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define BP_PANEL_CLONES
#endif

namespace bp_cpu {

BP_PANEL_CLONES
void IntegerPanelBlock4(const int16_t* a, int64_t K, const int16_t* panel, int64_t N, int64_t nb,
                        uint32_t (*acc)[kPanelTile]) {
  uint32_t* __restrict c0 = acc[0], * __restrict c1 = acc[1], * __restrict c2 = acc[2], * __restrict c3 = acc[3];
  for (int r = 0; r < 4; ++r) std::memset(acc[r], 0, static_cast<size_t>(nb) * sizeof(uint32_t));
  for (int64_t k = 0; k < K; ++k) {
    const int32_t a0 = a[k], a1 = a[K + k], a2 = a[2 * K + k], a3 = a[3 * K + k];
    if ((a0 | a1 | a2 | a3) == 0) continue;  // zero points often equal common values (padding, ReLU zeros)
    const int16_t* __restrict row = panel + k * N;
    for (int64_t j = 0; j < nb; ++j) {
      const int32_t p = row[j];
      // |a * p| <= 255 * 255: exact in int32; the sums wrap (unsigned).
      c0[j] += static_cast<uint32_t>(a0 * p);
      c1[j] += static_cast<uint32_t>(a1 * p);
      c2[j] += static_cast<uint32_t>(a2 * p);
      c3[j] += static_cast<uint32_t>(a3 * p);
    }
  }
}

BP_PANEL_CLONES
void IntegerPanelBlock1(const int16_t* a, int64_t K, const int16_t* panel, int64_t N, int64_t nb, uint32_t* acc) {
  uint32_t* __restrict c0 = acc;
  std::memset(c0, 0, static_cast<size_t>(nb) * sizeof(uint32_t));
  for (int64_t k = 0; k < K; ++k) {
    const int32_t a0 = a[k];
    if (a0 == 0) continue;
    const int16_t* __restrict row = panel + k * N;
    for (int64_t j = 0; j < nb; ++j) c0[j] += static_cast<uint32_t>(a0 * static_cast<int32_t>(row[j]));
  }
}

}  // namespace bp_cpu
