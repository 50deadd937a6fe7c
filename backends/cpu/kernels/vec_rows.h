// Runs a row-vector kernel over operands that share ops[0]'s sizes (ops[0]
// the output): rows whose inputs have unit or zero stride and whose output
// has unit stride (contiguous, broadcast-by-row, one broadcast element) go
// straight to vec(ptrs, steps, n) with steps 1 or 0; other strided rows are
// staged through small buffers, so every element takes the same arithmetic.
// Threading and the inline path for small calls are RunOps'.
#pragma once

#include <cstring>
#include <utility>

#include "iter.h"

namespace bp_cpu {

// Calls with fewer elements keep the scalar loop: the vector kernels' tail
// buffers and run-time dispatch cost about 20 ns, a third of a one-element
// add.out (bp_bench_dispatch); the results are the same bits either way.
constexpr int64_t kVecMinElements = 64;

inline bool UseVecRows(const DLTensor& out) { return Numel(out) >= kVecMinElements; }

// The 2-D broadcast-by-row case: `out` dense in some dim order (contiguous,
// channels-last, ...), `dense` with out's strides, and `row` varying only
// along out's innermost (unit-stride) dim: a per-channel scale of a
// channels-last image, a bias added to every row. Then element i of out is
// dense[i] op row[i % cols]; true with *cols. Per row through VecRows, rows
// of a few channels cost more in calls than in arithmetic.
inline bool RowBroadcast(const DLTensor& out, const DLTensor& dense, const DLTensor& row, int64_t* cols) {
  int dims[BP_MAX_NDIM];
  int n = 0;
  for (int d = 0; d < out.ndim; ++d)
    if (out.shape[d] != 1) dims[n++] = d;
  if (n < 2) return false;
  // Insertion sort by out's stride, innermost first (n <= BP_MAX_NDIM).
  for (int i = 1; i < n; ++i)
    for (int j = i; j > 0 && out.strides[dims[j]] < out.strides[dims[j - 1]]; --j) std::swap(dims[j], dims[j - 1]);
  int64_t expect = 1;
  for (int i = 0; i < n; ++i) {
    const int d = dims[i];
    if (out.strides[d] != expect || dense.strides[d] != expect) return false;
    if (row.strides[d] != (i == 0 ? 1 : 0)) return false;
    expect *= out.shape[d];
  }
  *cols = out.shape[dims[0]];
  return true;
}

template <int N, typename Vec>
inline void VecRows(const DLTensor* const (&ops)[N], Vec vec) {
  int64_t es[N];
  for (int k = 0; k < N; ++k) es[k] = ItemSize(*ops[k]);
  RunOps(ops, [&](char* const* p, const int64_t* s, int64_t n) {
    int64_t step[N];
    bool direct = s[0] == es[0];
    for (int k = 1; k < N; ++k) {
      step[k] = s[k] == es[k] ? 1 : 0;
      direct = direct && (s[k] == es[k] || s[k] == 0);
    }
    step[0] = 1;
    if (direct) {
      vec(p, step, n);
      return;
    }
    constexpr int64_t kChunk = 256;
    alignas(64) char buf[N][kChunk * 8];
    char* q[N];
    int64_t ones[N];
    for (int k = 0; k < N; ++k) {
      q[k] = buf[k];
      ones[k] = 1;
    }
    for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
      const int64_t m = n - i0 < kChunk ? n - i0 : kChunk;
      for (int k = 1; k < N; ++k)
        for (int64_t i = 0; i < m; ++i) std::memcpy(buf[k] + i * es[k], p[k] + (i0 + i) * s[k], es[k]);
      vec(q, ones, m);
      for (int64_t i = 0; i < m; ++i) std::memcpy(p[0] + (i0 + i) * s[0], buf[0] + i * es[0], es[0]);
    }
  });
}

}  // namespace bp_cpu
