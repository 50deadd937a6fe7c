// Side-by-side timing in one process: our code and its anchor run in
// alternating rounds (the order flips every round), so both see the same
// machine load; each row reports the median of the per-round ratios, which
// is what docs/benchmarks.md quotes. The machine is shared and noisy:
// compare ratios from one run, not absolute times across runs.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace bp_bench {

// A side of a row: runs the measured work `iters` times.
using Batch = void (*)(void* state, int64_t iters);

struct RowResult {
  std::string name;
  double ours_ns = 0;    // median time per iteration, ours
  double anchor_ns = 0;  // median time per iteration, the anchor
  double ratio = 0;      // median of the per-round ratios ours / anchor
};

inline double NowNs() {
  return static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Times `ours` and `anchor` in `rounds` interleaved rounds of `iters`
// iterations each, after one warm-up round of each.
inline RowResult Interleave(const std::string& name, Batch ours, void* ours_state, Batch anchor, void* anchor_state,
                            int rounds, int64_t iters) {
  ours(ours_state, iters);
  anchor(anchor_state, iters);
  std::vector<double> t_ours, t_anchor, ratios;
  for (int r = 0; r < rounds; ++r) {
    double a = 0, o = 0;
    for (int side = 0; side < 2; ++side) {
      const bool run_ours = (side == 0) == (r % 2 == 0);
      const double t0 = NowNs();
      if (run_ours) {
        ours(ours_state, iters);
      } else {
        anchor(anchor_state, iters);
      }
      (run_ours ? o : a) = (NowNs() - t0) / static_cast<double>(iters);
    }
    t_ours.push_back(o);
    t_anchor.push_back(a);
    if (a > 0) ratios.push_back(o / a);
  }
  return RowResult{name, Median(t_ours), Median(t_anchor), Median(ratios)};
}

// The 1-minute load average, to print beside the results ("?" if unknown).
inline std::string LoadAverage() {
  std::ifstream f("/proc/loadavg");
  std::string one;
  if (!(f >> one)) return "?";
  return one;
}

}  // namespace bp_bench
