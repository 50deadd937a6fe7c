// Negative control for tests/cpu_parallel_region_test.cpp under
// ThreadSanitizer: two workers of one ParallelRegion write the same elements
// (overlapping slices, the bug a wrong chunk bound makes). The region's TSan
// annotations order only the caller with the workers, never the workers with
// each other, so TSan must report this race; ctest passes only on TSan's data-race
// report in the output. Built only for the tsan preset.
#include <omp.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "parallel.h"

int main() {
  omp_set_num_threads(2);
  std::vector<int64_t> out(4096, 0);
  for (int k = 0; k < 20; ++k) {  // regions after the first, too
    bp_cpu::ParallelRegion([&](int64_t t, int64_t) {
      for (auto& v : out) v = t;  // every worker writes every element
    });
  }
  std::printf("wrote %lld\n", static_cast<long long>(out[0]));
  return 0;
}
