#include "isolate.h"

#include <algorithm>

namespace bpc {

std::map<std::string, std::vector<TestGroup>> plan_groups() {
  std::map<std::string, std::vector<TestGroup>> out;
  std::map<std::string, std::map<std::string, size_t>> index;  // target -> group key -> position
  const ::testing::UnitTest& ut = *::testing::UnitTest::GetInstance();
  for (int i = 0; i < ut.total_test_suite_count(); ++i) {
    const ::testing::TestSuite& suite = *ut.GetTestSuite(i);
    for (int j = 0; j < suite.total_test_count(); ++j) {
      const ::testing::TestInfo& info = *suite.GetTestInfo(j);
      TestKey key;
      if (!test_key(suite.name(), info.name(), &key)) continue;
      // Operator cells and their dtype probes share a child; each other group has one.
      const std::string label = key.group == kGroupFallback  ? "fallback group"
                                : key.group == kGroupAbi     ? "ABI group"
                                : key.group == kGroupStreams ? "streams group"
                                                             : key.op;
      auto& groups = out[key.target];
      auto& pos = index[key.target];
      auto it = pos.find(label);
      if (it == pos.end()) {
        it = pos.emplace(label, groups.size()).first;
        groups.push_back(TestGroup{label, {}, {}});
      }
      groups[it->second].test_ids.push_back(std::string(suite.name()) + "." + info.name());
      groups[it->second].keys.push_back(key);
    }
  }
  return out;
}

DeviceReport target_report(Runner& runner, const Target& t, const RunOptions& opt) {
  uint64_t caps = 0;
  DeviceReport r = runner.empty_report(t.backend, t.device, &caps);
  for (const OpEntry& op : runner.ops()) {
    if (!glob_match(opt.op_glob, op.name)) continue;
    r.ops.push_back(op.name);
    r.cells[op.name];
  }
  return r;
}

void add_case(DeviceReport* report, CaseResult c) {
  DType d;
  const bool cell = dtype_from_name(c.dtype, &d);
  if (cell && c.group == kGroupOps) fold_case(&report->cells[c.op][static_cast<size_t>(d)], c);
  if (cell && c.group == kGroupFallback) fold_case(&report->fallback_cells[c.op][static_cast<size_t>(d)], c);
  report->cases.push_back(std::move(c));
}

namespace {

// The case filed for test `id` (index i of `group`) that a child never
// reported: the child's fate. The test that was running when the child died
// carries the sample it was on (when the child said) and a rerun line for
// exactly that case.
CaseResult lost_test(const TestGroup& group, size_t i, const ChildOutcome& child, const std::string& backend_arg,
                     const DeviceReport& report) {
  const std::string& id = group.test_ids[i];
  const TestKey& key = group.keys[i];
  const bool running = id == child.last_test;
  CaseResult r;
  if (running && child.has_last_case) r = child.last_case;  // sample, desc, seed, shapes, inputs, repro
  r.group = key.group;
  r.test_id = id;
  r.backend = report.backend;
  r.device = report.device;
  const bool whole_tests = key.group == kGroupAbi || key.group == kGroupStreams;  // no op, dtype or sample
  r.op = whole_tests ? key.group + "." + id.substr(id.find('.') + 1, id.rfind('/') - id.find('.') - 1) : key.op;
  r.dtype = key.dtype;
  if (!(running && child.has_last_case)) r.sample = -1;
  r.outcome = child.status == ChildOutcome::kTimeout       ? Outcome::kTimeout
              : child.status == ChildOutcome::kSpawnFailed ? Outcome::kFail
                                                           : Outcome::kCrashed;
  const std::string message =
      child.status == ChildOutcome::kExited ? "the worker exited before reporting this test" : child.message;
  r.message = running ? message : message + " (this test had not run yet)";
  if (whole_tests) {
    r.repro = self_exe() + " --backend " + backend_arg + " --group " + key.group + " --no-isolate --gtest_filter='" +
              id + "'";
  } else if (r.repro.empty()) {
    r.repro = self_exe() + " --backend " + backend_arg + " --op " + key.op + " --dtype " + key.dtype + " --group " +
              (key.group == kGroupClaims ? "claims" : key.group);
  } else if (r.repro.find(" --group ") == std::string::npos) {
    r.repro += std::string(" --group ") + (key.group == kGroupClaims ? "claims" : key.group);
  }
  return r;
}

}  // namespace

void run_target_isolated(const std::vector<TestGroup>& groups, const std::vector<std::string>& worker_argv,
                         const std::string& backend_arg, double timeout_s, const std::function<void(size_t, size_t, const std::string&)>& progress,
                         DeviceReport* report) {
  for (size_t g = 0; g < groups.size(); ++g) {
    if (progress) progress(g, groups.size(), groups[g].label);
    report->tests_expected += static_cast<int>(groups[g].test_ids.size());
    // A crash or timeout costs only the test it happened in: the tests after
    // it run again in a fresh child, until every test reported or was filed.
    TestGroup pending = groups[g];
    while (!pending.test_ids.empty()) {
      std::string filter;
      for (const std::string& id : pending.test_ids) filter += (filter.empty() ? "" : ":") + id;
      std::vector<std::string> argv = worker_argv;
      argv.push_back("--gtest_filter=" + filter);
      ChildOutcome child = run_child(argv, timeout_s);
      report->tests_reported += static_cast<int>(child.ended_tests.size());
      for (CaseResult& c : child.cases) add_case(report, std::move(c));
      if (child.status == ChildOutcome::kExited && child.ended_tests.size() == pending.test_ids.size()) break;
      // The test that was running takes the child's fate. If none was (the
      // child died starting, or between tests, or could not start), every
      // test left does: running them again would end the same way.
      // (The running test must be one of this child's, or nothing would be
      // removed and the loop would not end.)
      const bool attributable =
          !child.last_test.empty() && child.status != ChildOutcome::kSpawnFailed &&
          std::find(pending.test_ids.begin(), pending.test_ids.end(), child.last_test) != pending.test_ids.end();
      TestGroup rest{pending.label, {}, {}};
      for (size_t i = 0; i < pending.test_ids.size(); ++i) {
        const std::string& id = pending.test_ids[i];
        if (child.ended_tests.count(id) != 0) continue;
        if (attributable && id != child.last_test) {
          rest.test_ids.push_back(id);
          rest.keys.push_back(pending.keys[i]);
          continue;
        }
        ++report->tests_filed;
        // A dtype probe that never ran is no finding.
        if (pending.keys[i].group == kGroupClaims && id != child.last_test) continue;
        add_case(report, lost_test(pending, i, child, backend_arg, *report));
      }
      pending = std::move(rest);
    }
  }
}

}  // namespace bpc
