// --baseline: compares this run's cells with an earlier --json report and
// names what got better and what got worse, cell by cell (device, group,
// operator, dtype), plus ABI-group tests.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace bpc {

struct CellChange {
  std::string device, group, op, dtype;
  std::string before, after;  // outcome names ("native_pass", "fail", ...; "absent")
  std::string reason;         // the new cell's reason (why it fails now)
};

struct BaselineDiff {
  std::vector<CellChange> regressions;  // was passing, now fails/crashes/times out, or native -> fallback
  std::vector<CellChange> fixes;        // was failing, now passes; or fallback -> native
  int unchanged = 0;
  int only_before = 0, only_now = 0;    // cells present in one run only (other selection)
};

// Both arguments are run_to_json() documents; `now` is this run.
BaselineDiff diff_runs(const nlohmann::json& before, const nlohmann::json& now);
// Reads `path` and diffs; false with *err when it cannot be read or is not a report.
bool diff_against_baseline(const std::string& path, const nlohmann::json& now, BaselineDiff* out, std::string* err);
void print_baseline_diff(std::ostream& os, const std::string& path, const BaselineDiff& d);

}  // namespace bpc
