// A strided N-d iterator over operands that share one set of sizes (the
// output's): PyTorch's TensorIterator in miniature. Dims are ordered by the
// first operand's strides, size-1 dims dropped and adjacent dims coalesced
// when every operand allows it, so a contiguous (or broadcast) call becomes a
// few long rows and the row body is a tight loop with no index math.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "backplane/types.h"
#include "parallel.h"

namespace bp_cpu {

inline int64_t Numel(const DLTensor& t) {
  int64_t n = 1;
  for (int i = 0; i < t.ndim; ++i) n *= t.shape[i];
  return n;
}

inline char* DataPtr(const DLTensor& t) { return static_cast<char*>(t.data) + t.byte_offset; }

inline int64_t ItemSize(const DLTensor& t) { return (t.dtype.bits + 7) / 8; }

template <int N>
struct StridedLoop {
  // Left uninitialized on purpose: Init writes what is used, and small
  // calls should not pay for clearing 16 dims.
  int ndim = 0;  // after coalescing; dim 0 is the innermost
  int64_t sizes[BP_MAX_NDIM];
  int64_t strides[BP_MAX_NDIM][N];  // bytes
  char* base[N];
  int64_t numel = 1;

  // All operands must have `sizes` (ndim dims). strides are in elements.
  // sort=false keeps row-major order, so the linear position of an element
  // is its row-major index (argmax needs that).
  void Init(int nd, const int64_t* shape, const DLTensor* const* ops, bool sort = true) {
    numel = 1;
    for (int d = 0; d < nd; ++d) numel *= shape[d];
    for (int k = 0; k < N; ++k) base[k] = DataPtr(*ops[k]);
    // Collect non-trivial dims, innermost first.
    int perm[BP_MAX_NDIM];
    int m = 0;
    for (int d = nd - 1; d >= 0; --d)
      if (shape[d] != 1) perm[m++] = d;
    // Order by the first operand's |stride| ascending (stable), so a
    // transposed output is still walked in memory order.
    auto key = [&](int d) {
      int64_t s = ops[0]->strides[d];
      return s < 0 ? -s : s;
    };
    for (int i = 1; i < m && sort; ++i) {
      int v = perm[i], j = i;
      while (j > 0 && key(perm[j - 1]) > key(v)) {
        perm[j] = perm[j - 1];
        --j;
      }
      perm[j] = v;
    }
    ndim = 0;
    for (int i = 0; i < m; ++i) {
      const int d = perm[i];
      if (ndim > 0) {
        // Merge d into the previous (inner) dim when every operand steps
        // through it as an extension of the inner one.
        bool merge = true;
        for (int k = 0; k < N && merge; ++k) {
          const int64_t es = ItemSize(*ops[k]);
          merge = ops[k]->strides[d] * es == strides[ndim - 1][k] * sizes[ndim - 1];
        }
        if (merge) {
          sizes[ndim - 1] *= shape[d];
          continue;
        }
      }
      sizes[ndim] = shape[d];
      for (int k = 0; k < N; ++k) strides[ndim][k] = ops[k]->strides[d] * ItemSize(*ops[k]);
      ++ndim;
    }
    if (ndim == 0) {  // 0-dim or all-ones: one element
      sizes[0] = 1;
      for (int k = 0; k < N; ++k) strides[0][k] = 0;
      ndim = 1;
    }
  }

  // Calls row(ptrs, inner_strides, n) for the linear element range [begin, end).
  template <typename Row>
  void ForRange(int64_t begin, int64_t end, Row&& row) const {
    ForRangeAt(base, begin, end, row);
  }

  // Same, with other base pointers (the same loop shape at another offset).
  template <typename Row>
  void ForRangeAt(char* const* bases, int64_t begin, int64_t end, Row&& row) const {
    if (begin >= end) return;
    int64_t idx[BP_MAX_NDIM];
    char* ptr[N];
    for (int k = 0; k < N; ++k) ptr[k] = bases[k];
    int64_t rem = begin;
    for (int d = 0; d < ndim; ++d) {
      idx[d] = rem % sizes[d];
      rem /= sizes[d];
      for (int k = 0; k < N; ++k) ptr[k] += idx[d] * strides[d][k];
    }
    int64_t inner[N];
    for (int k = 0; k < N; ++k) inner[k] = strides[0][k];
    int64_t pos = begin;
    while (pos < end) {
      const int64_t n = std::min(sizes[0] - idx[0], end - pos);
      row(ptr, inner, n);
      pos += n;
      if (pos >= end) break;
      // Step to the start of the next row, carrying into outer dims.
      for (int k = 0; k < N; ++k) ptr[k] -= idx[0] * strides[0][k];
      idx[0] = 0;
      for (int d = 1; d < ndim; ++d) {
        ++idx[d];
        for (int k = 0; k < N; ++k) ptr[k] += strides[d][k];
        if (idx[d] < sizes[d]) break;
        for (int k = 0; k < N; ++k) ptr[k] -= sizes[d] * strides[d][k];
        idx[d] = 0;
      }
    }
  }

  // Runs the whole range, split across OpenMP threads when it is large.
  template <typename Row>
  void Run(Row&& row) const {
    if (numel == 0) return;
    if (numel < kParallelGrain || omp_get_max_threads() == 1) {
      ForRange(0, numel, row);
      return;
    }
    ParallelRegion([&](int64_t t, int64_t nt) { ForRange(numel * t / nt, numel * (t + 1) / nt, row); });
  }
};

// Runs row() over operands that all have ops[0]'s sizes. When every operand
// is dense row-major or a single broadcast element (the common case), the
// whole range is one row and no iterator is built.
template <int N, typename Row>
inline void RunOps(const DLTensor* const (&ops)[N], Row&& row) {
  const DLTensor& o = *ops[0];
  int64_t numel = 1;
  for (int d = 0; d < o.ndim; ++d) numel *= o.shape[d];
  if (numel == 0) return;
  int64_t st[N];
  char* ptr[N];
  if (numel == 1) {  // one element (a scalar-like call): no layout to read
    for (int k = 0; k < N; ++k) {
      st[k] = ItemSize(*ops[k]);  // as for a dense operand: a row of one
      ptr[k] = DataPtr(*ops[k]);
    }
    row(ptr, st, 1);
    return;
  }
  bool simple = true;
  for (int k = 0; k < N && simple; ++k) {
    const DLTensor& t = *ops[k];
    bool dense = true, zero = true;
    int64_t expect = 1;
    for (int d = t.ndim - 1; d >= 0; --d) {
      if (t.shape[d] == 1) continue;
      dense = dense && t.strides[d] == expect;
      zero = zero && t.strides[d] == 0;
      expect *= t.shape[d];
    }
    simple = dense || zero;
    st[k] = dense ? ItemSize(t) : 0;
    ptr[k] = DataPtr(t);
  }
  if (!simple) {
    StridedLoop<N> loop;
    loop.Init(o.ndim, o.shape, ops);
    loop.Run(row);
    return;
  }
  if (numel < kParallelGrain || omp_get_max_threads() == 1) {
    row(ptr, st, numel);
    return;
  }
  ParallelRegion([&](int64_t t, int64_t nt) {
    const int64_t lo = numel * t / nt, hi = numel * (t + 1) / nt;
    char* p[N];
    for (int k = 0; k < N; ++k) p[k] = ptr[k] + lo * st[k];
    if (hi > lo) row(p, st, hi - lo);
  });
}

// Convenience: a loop over operands that all have ops[0]'s sizes.
template <int N>
inline StridedLoop<N> MakeLoop(const DLTensor* const (&ops)[N]) {
  StridedLoop<N> l;
  l.Init(ops[0]->ndim, ops[0]->shape, ops);
  return l;
}

}  // namespace bp_cpu
