// The inner blocks of the integer panel product (integer_panel.h) in
// Highway, compiled once per target instruction set (foreach_target.h
// re-includes this file) and dispatched at run time like the other vector
// kernels: x86-64's baseline SSE2 has no 32-bit lane multiply, which the
// AVX2 and AVX-512 targets do in one instruction. Lanes are uint32: the
// products are exact (|a * p| <= 255 * 255) and the sums wrap, as ONNX's
// int32 result does.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/integer_panel.cpp"
#include "kernels/integer_panel.h"

#include <hwy/foreach_target.h>  // must come before highway.h
#include <hwy/highway.h>

#include <cstring>

HWY_BEFORE_NAMESPACE();
namespace bp_cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DU = hn::ScalableTag<uint32_t>;
using DI = hn::RebindToSigned<DU>;
using D16 = hn::Rebind<int16_t, DU>;  // one int16 per uint32 lane

// acc[r][j] += a_r * row[j] for `rows` rows (1 or 4), j < nb.
template <int kRows>
HWY_INLINE void AddRow(const int32_t* a, const int16_t* HWY_RESTRICT row, int64_t nb, uint32_t* const* acc) {
  const DU d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  hn::Vec<DU> va[kRows];
  for (int r = 0; r < kRows; ++r) va[r] = hn::Set(d, static_cast<uint32_t>(a[r]));
  int64_t j = 0;
  for (; j + L <= nb; j += L) {
    const hn::Vec<DU> p = hn::BitCast(d, hn::PromoteTo(DI(), hn::LoadU(D16(), row + j)));
    for (int r = 0; r < kRows; ++r) hn::StoreU(hn::Add(hn::LoadU(d, acc[r] + j), hn::Mul(va[r], p)), d, acc[r] + j);
  }
  for (; j < nb; ++j) {
    const uint32_t p = static_cast<uint32_t>(static_cast<int32_t>(row[j]));
    for (int r = 0; r < kRows; ++r) acc[r][j] += static_cast<uint32_t>(a[r]) * p;
  }
}

void Block4Impl(const int16_t* a, int64_t K, const int16_t* panel, int64_t N, int64_t nb, uint32_t (*acc)[kPanelTile]) {
  uint32_t* rows[4] = {acc[0], acc[1], acc[2], acc[3]};
  for (int r = 0; r < 4; ++r) std::memset(acc[r], 0, static_cast<size_t>(nb) * sizeof(uint32_t));
  for (int64_t k = 0; k < K; ++k) {
    const int32_t ak[4] = {a[k], a[K + k], a[2 * K + k], a[3 * K + k]};
    if ((ak[0] | ak[1] | ak[2] | ak[3]) == 0) continue;  // zero points often equal common values (padding, ReLU zeros)
    AddRow<4>(ak, panel + k * N, nb, rows);
  }
}

void Block1Impl(const int16_t* a, int64_t K, const int16_t* panel, int64_t N, int64_t nb, uint32_t* acc) {
  uint32_t* rows[1] = {acc};
  std::memset(acc, 0, static_cast<size_t>(nb) * sizeof(uint32_t));
  for (int64_t k = 0; k < K; ++k) {
    const int32_t ak[1] = {a[k]};
    if (ak[0] == 0) continue;
    AddRow<1>(ak, panel + k * N, nb, rows);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace bp_cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace bp_cpu {

HWY_EXPORT(Block4Impl);
HWY_EXPORT(Block1Impl);

void IntegerPanelBlock4(const int16_t* a, int64_t K, const int16_t* panel, int64_t N, int64_t nb,
                        uint32_t (*acc)[kPanelTile]) {
  HWY_DYNAMIC_DISPATCH(Block4Impl)(a, K, panel, N, nb, acc);
}

void IntegerPanelBlock1(const int16_t* a, int64_t K, const int16_t* panel, int64_t N, int64_t nb, uint32_t* acc) {
  HWY_DYNAMIC_DISPATCH(Block1Impl)(a, K, panel, N, nb, acc);
}

}  // namespace bp_cpu
#endif  // HWY_ONCE
