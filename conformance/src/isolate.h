// Crash isolation, the runner side. The tests GoogleTest registered are cut
// into groups per target: one per operator (its cells and dtype probes), one
// for the fallback group, one for the ABI group. Each group runs in its own
// child (this executable re-run as a worker with --gtest_filter naming the
// group's tests) under a time limit. A crash or timeout costs only the test
// (one (operator, dtype) cell) it happened in: that test gets the child's
// fate, crashed or timeout, with the sample it was on, and the group's tests
// after it run again in a fresh child (each with the full time limit).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "child_process.h"
#include "runner.h"
#include "suites.h"

namespace bpc {

struct TestGroup {
  std::string label;                  // "add.Tensor", "fallback group", "ABI group"
  std::vector<std::string> test_ids;  // "Ops/OpCellTest.Run/cpu_0__add_Tensor__float32"
  std::vector<TestKey> keys;          // same order
};

// The registered tests (after InitGoogleTest) grouped per target id, in registration order.
std::map<std::string, std::vector<TestGroup>> plan_groups();

// An empty report for a target: names, and one row per selected operator.
DeviceReport target_report(Runner& runner, const Target& t, const RunOptions& opt);

// Runs the groups of one target, each in a child: `worker_argv` makes this
// executable a worker (the group's --gtest_filter is appended). `progress`
// is called before each group with (index, count, label).
// `backend_arg` is how the user named the backend (for rerun lines).
void run_target_isolated(const std::vector<TestGroup>& groups, const std::vector<std::string>& worker_argv,
                         const std::string& backend_arg, double timeout_s, const std::function<void(size_t, size_t, const std::string&)>& progress,
                         DeviceReport* report);

// Files a case under its group: ops and fallback cases fold into their cells.
void add_case(DeviceReport* report, CaseResult c);

}  // namespace bpc
