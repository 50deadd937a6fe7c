// The CPU kernels' OpenMP region (backends/cpu/kernels/parallel.h): every
// slice runs once, and what the workers wrote is what the caller reads after
// the region. Under the tsan preset this test is also the check that the
// region's fork and join annotations are there: without them TSan reports
// the caller's reads below as races with the workers' writes (issue 42
// item 4). cpu_parallel_race_control is its negative control: workers that
// write the same elements must still be reported.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstdint>
#include <vector>

#include "parallel.h"

namespace {

TEST(CpuParallelRegion, EverySliceOnceAndWorkersWritesVisibleAfterJoin) {
  omp_set_num_threads(2);  // a real second thread, whatever OMP_NUM_THREADS says
  constexpr int64_t n = 1 << 17;
  std::vector<int64_t> in(n), out(n, -1);
  for (int64_t i = 0; i < n; ++i) in[i] = 3 * i + 1;  // written by the caller before the fork
  std::vector<int64_t> threads_seen(2, 0);
  bp_cpu::ParallelRegion([&](int64_t t, int64_t nt) {
    threads_seen[static_cast<size_t>(t)] = nt;
    for (int64_t i = n * t / nt; i < n * (t + 1) / nt; ++i) out[i] = in[i] * 2;
  });
  EXPECT_EQ(threads_seen[0], 2);
  EXPECT_EQ(threads_seen[1], 2) << "the region ran on one thread: nothing was checked";
  int64_t wrong = 0;
  for (int64_t i = 0; i < n; ++i) wrong += out[i] != (3 * i + 1) * 2;
  EXPECT_EQ(wrong, 0);
}

// Many regions in a row, each reading a variable of the caller's stack that
// changes between them: libgomp reuses its worker threads, so only the first
// region has thread creation to order it (the case the annotations are for).
TEST(CpuParallelRegion, RegionsAfterTheFirstSeeTheCallersWrites) {
  omp_set_num_threads(2);
  std::vector<int64_t> out(1 << 16);
  int64_t wrong = 0;
  for (int64_t k = 1; k <= 50; ++k) {
    const int64_t mul = k;
    bp_cpu::ParallelFor(static_cast<int64_t>(out.size()), bp_cpu::kParallelGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) out[static_cast<size_t>(i)] = i * mul;
    });
    wrong += out.back() != static_cast<int64_t>(out.size() - 1) * mul;
  }
  EXPECT_EQ(wrong, 0);
}

TEST(CpuParallelRegion, ParallelForSplitsIntoDisjointCoveringSlices) {
  omp_set_num_threads(2);
  constexpr int64_t n = 1000;
  std::vector<int> hits(n, 0);
  bp_cpu::ParallelFor(n, bp_cpu::kParallelGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) ++hits[static_cast<size_t>(i)];
  });
  int64_t not_once = 0;
  for (int h : hits) not_once += h != 1;
  EXPECT_EQ(not_once, 0);
}

}  // namespace
