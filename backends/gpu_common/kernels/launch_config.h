// Launch configuration shared by every kernel family. Plain C++ (host only)
// so the indexing test checks it without a device.
#pragma once

#include <cstdint>

namespace bp_gpu {

struct LaunchConfig {
  uint32_t grid = 0;  // 0: nothing to launch (empty tensor)
  uint32_t block = 0;
};

constexpr uint32_t kPointwiseBlock = 256;
// Resident blocks per SM we aim for with grid-stride loops: enough to hide
// latency, few enough that each thread loops over several elements.
constexpr uint32_t kBlocksPerSm = 8;

// Pointwise kernels: one thread per element, grid-stride loop when the grid
// is capped at kBlocksPerSm blocks per SM (sm_count <= 0 means unknown: 1).
inline LaunchConfig PointwiseLaunch(int64_t numel, int32_t sm_count) {
  LaunchConfig cfg;
  if (numel <= 0) return cfg;
  const int64_t sms = sm_count > 0 ? sm_count : 1;
  const int64_t wanted = (numel + kPointwiseBlock - 1) / kPointwiseBlock;
  const int64_t cap = sms * kBlocksPerSm;
  cfg.grid = static_cast<uint32_t>(wanted < cap ? wanted : cap);
  cfg.block = kPointwiseBlock;
  return cfg;
}

// Reductions: a "row" is the set of input elements folded into one output.
// Long rows get a block each (threads stride over the row, then a shared
// memory tree); short rows are folded serially by one thread each.
constexpr int64_t kSerialRowMax = 16;

struct ReduceLaunch {
  LaunchConfig cfg;
  bool serial = false;  // true: thread per output; false: block per output
};

inline uint32_t NextPow2(uint64_t v) {
  uint32_t p = 1;
  while (p < v && p < (1u << 30)) p <<= 1;
  return p;
}

// Block sizes are powers of two in [64, 256]: a multiple of both warp sizes
// (32 on NVIDIA, 64 on AMD CDNA) as the shared-memory tree needs.
inline ReduceLaunch RowReduceLaunch(int64_t num_rows, int64_t row_len, int32_t sm_count) {
  ReduceLaunch r;
  if (num_rows <= 0) return r;
  if (row_len <= kSerialRowMax) {
    r.serial = true;
    r.cfg = PointwiseLaunch(num_rows, sm_count);
    return r;
  }
  uint32_t block = NextPow2(static_cast<uint64_t>(row_len));
  if (block < 64) block = 64;
  if (block > 256) block = 256;
  const int64_t sms = sm_count > 0 ? sm_count : 1;
  const int64_t cap = sms * 32;
  r.cfg.grid = static_cast<uint32_t>(num_rows < cap ? num_rows : cap);
  r.cfg.block = block;
  return r;
}

}  // namespace bp_gpu
