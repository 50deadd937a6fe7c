// Tiled transpose copy: both the reads and the writes of one tile stay in L1,
// where an untiled walk misses the cache on every strided access.
#include "transpose.h"

#include <cstdint>
#include <cstring>

#include "iter.h"
#include "simd.h"

namespace bp_cpu {
namespace {

// Tile sides in elements: kTileI source rows (destination columns) by kTileJ
// source columns (destination rows). 16 4-byte elements fill one cache line
// of a destination row; few source rows keep their lines in L1 even when the
// pitch is a power of two (all rows in one cache set).
constexpr int64_t kTileI = 16;
constexpr int64_t kTileJ = 64;

// dst(i, j) = src(i, j) for i in [0, cols), j in [j_lo, j_hi): dst is
// contiguous in i (row pitch dpitch bytes per j), src contiguous in j (pitch
// spitch bytes per i).
template <typename E>
void CopyTiles(char* dst, const char* src, int64_t cols, int64_t j_lo, int64_t j_hi, int64_t dpitch,
               int64_t spitch) {
  for (int64_t jb = j_lo; jb < j_hi; jb += kTileJ) {
    const int64_t je = jb + kTileJ < j_hi ? jb + kTileJ : j_hi;
    for (int64_t ib = 0; ib < cols; ib += kTileI) {
      const int64_t ie = ib + kTileI < cols ? ib + kTileI : cols;
      if constexpr (sizeof(E) == 4) {
        // 32-bit elements: 4x4 register transposes (simd.h). Source rows are
        // i (pitch spitch), destination rows j (pitch dpitch).
        if (spitch % 4 == 0 && dpitch % 4 == 0) {
          simd::TransposeU32(reinterpret_cast<const uint32_t*>(src + ib * spitch + jb * 4), spitch / 4,
                             reinterpret_cast<uint32_t*>(dst + jb * dpitch + ib * 4), dpitch / 4, ie - ib, je - jb);
          continue;
        }
      }
      for (int64_t j = jb; j < je; ++j) {
        E* d = reinterpret_cast<E*>(dst + j * dpitch);
        const char* s = src + j * static_cast<int64_t>(sizeof(E));
        for (int64_t i = ib; i < ie; ++i) std::memcpy(&d[i], s + i * spitch, sizeof(E));
      }
    }
  }
}

template <typename E>
void RunTiles(char* dst, const char* src, int64_t cols, int64_t rows, int64_t dpitch, int64_t spitch) {
  const int64_t blocks = (rows + kTileJ - 1) / kTileJ;
  ParallelFor(blocks, rows * cols, [&](int64_t lo, int64_t hi) {
    const int64_t j_hi = hi * kTileJ < rows ? hi * kTileJ : rows;
    CopyTiles<E>(dst, src, cols, lo * kTileJ, j_hi, dpitch, spitch);
  });
}

}  // namespace

bool TryTiledTransposeCopy(const DLTensor& dst, const DLTensor& src) {
  const int64_t es = ItemSize(dst);
  if (es != ItemSize(src) || (es != 1 && es != 2 && es != 4 && es != 8) || dst.ndim != src.ndim) return false;
  const DLTensor* ops[2] = {&dst, &src};
  StridedLoop<2> loop;
  loop.Init(dst.ndim, dst.shape, ops);  // dims in dst's memory order, merged where both allow
  if (loop.ndim != 2 || loop.numel < kTileI * kTileJ) return false;
  if (loop.strides[0][0] != es || loop.strides[1][1] != es) return false;
  const int64_t cols = loop.sizes[0], rows = loop.sizes[1];
  const int64_t dpitch = loop.strides[1][0], spitch = loop.strides[0][1];
  switch (es) {
    case 1: RunTiles<uint8_t>(loop.base[0], loop.base[1], cols, rows, dpitch, spitch); break;
    case 2: RunTiles<uint16_t>(loop.base[0], loop.base[1], cols, rows, dpitch, spitch); break;
    case 4: RunTiles<uint32_t>(loop.base[0], loop.base[1], cols, rows, dpitch, spitch); break;
    default: RunTiles<uint64_t>(loop.base[0], loop.base[1], cols, rows, dpitch, spitch); break;
  }
  return true;
}

}  // namespace bp_cpu
