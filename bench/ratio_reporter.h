// A Google Benchmark reporter that prints, after the usual table, each
// benchmark's time as a ratio of its anchor measured in the same run.
// Pairing is by name: "Anchor_<X>/<args>" is the anchor of "<X>/<args>".
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace bp_bench {

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred || run.run_type != Run::RT_Iteration) continue;
      times_[run.benchmark_name()] = run.GetAdjustedRealTime();
    }
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf("\nRatios to the anchor measured in this run (time / anchor time; < 1 is faster):\n");
    for (const auto& [name, time] : times_) {
      if (name.rfind("Anchor_", 0) == 0) continue;
      auto it = times_.find("Anchor_" + name);
      if (it == times_.end() || it->second <= 0) continue;
      std::printf("  %-48s %8.3f\n", name.c_str(), time / it->second);
    }
  }

 private:
  std::map<std::string, double> times_;
};

// main() body shared by our benchmark binaries.
inline int RunWithRatios(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}

}  // namespace bp_bench
