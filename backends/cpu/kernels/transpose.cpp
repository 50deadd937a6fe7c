// Tiled transpose copy: both the reads and the writes of one tile stay in L1,
// where an untiled walk misses the cache on every strided access.
#include "transpose.h"

#include <cstdint>
#include <cstring>

#include "iter.h"

namespace bp_cpu {
namespace {

// Tile side in elements: a 32x32 tile of 4-byte elements is 4 KiB per side.
constexpr int64_t kTile = 32;

// dst(i, j) = src(i, j) for i in [0, cols), j in [j_lo, j_hi): dst is
// contiguous in i (row pitch dpitch bytes per j), src contiguous in j (pitch
// spitch bytes per i).
template <typename E>
void CopyTiles(char* dst, const char* src, int64_t cols, int64_t j_lo, int64_t j_hi, int64_t dpitch,
               int64_t spitch) {
  for (int64_t jb = j_lo; jb < j_hi; jb += kTile) {
    const int64_t je = jb + kTile < j_hi ? jb + kTile : j_hi;
    for (int64_t ib = 0; ib < cols; ib += kTile) {
      const int64_t ie = ib + kTile < cols ? ib + kTile : cols;
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
  const int64_t blocks = (rows + kTile - 1) / kTile;
  ParallelFor(blocks, rows * cols, [&](int64_t lo, int64_t hi) {
    const int64_t j_hi = hi * kTile < rows ? hi * kTile : rows;
    CopyTiles<E>(dst, src, cols, lo * kTile, j_hi, dpitch, spitch);
  });
}

}  // namespace

bool TryTiledTransposeCopy(const DLTensor& dst, const DLTensor& src) {
  const int64_t es = ItemSize(dst);
  if (es != ItemSize(src) || (es != 1 && es != 2 && es != 4 && es != 8) || dst.ndim != src.ndim) return false;
  const DLTensor* ops[2] = {&dst, &src};
  StridedLoop<2> loop;
  loop.Init(dst.ndim, dst.shape, ops);  // dims in dst's memory order, merged where both allow
  if (loop.ndim != 2 || loop.numel < kTile * kTile) return false;
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
