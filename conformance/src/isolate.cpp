#include "isolate.h"

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
      const std::string label = key.group == kGroupFallback ? "fallback group"
                                : key.group == kGroupAbi    ? "ABI group"
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

void run_target_isolated(const std::vector<TestGroup>& groups, const std::vector<std::string>& worker_argv,
                         const std::string& backend_arg, double timeout_s, const std::function<void(size_t, size_t, const std::string&)>& progress,
                         DeviceReport* report) {
  for (size_t g = 0; g < groups.size(); ++g) {
    const TestGroup& group = groups[g];
    if (progress) progress(g, groups.size(), group.label);
    std::string filter;
    for (const std::string& id : group.test_ids) filter += (filter.empty() ? "" : ":") + id;
    std::vector<std::string> argv = worker_argv;
    argv.push_back("--gtest_filter=" + filter);
    ChildOutcome child = run_child(argv, timeout_s);
    report->tests_expected += static_cast<int>(group.test_ids.size());
    report->tests_reported += static_cast<int>(child.ended_tests.size());
    for (CaseResult& c : child.cases) add_case(report, std::move(c));
    if (child.status == ChildOutcome::kExited && child.ended_tests.size() == group.test_ids.size()) continue;
    // Every test that never reported gets the child's fate; the one that was
    // running when it died carries the message.
    const Outcome fate = child.status == ChildOutcome::kTimeout ? Outcome::kTimeout
                         : child.status == ChildOutcome::kSpawnFailed ? Outcome::kFail
                                                                      : Outcome::kCrashed;
    std::string message = child.message;
    if (child.status == ChildOutcome::kExited) message = "the worker exited before reporting this test";
    for (size_t i = 0; i < group.test_ids.size(); ++i) {
      const std::string& id = group.test_ids[i];
      if (child.ended_tests.count(id) != 0) continue;
      const TestKey& key = group.keys[i];
      const bool running = id == child.last_test;
      ++report->tests_filed;
      if (key.group == kGroupClaims && !running) continue;  // a probe that never ran is no finding
      CaseResult r;
      r.group = key.group;
      r.test_id = id;
      r.backend = report->backend;
      r.device = report->device;
      r.op = key.group == kGroupAbi ? "abi." + id.substr(id.find('.') + 1, id.rfind('/') - id.find('.') - 1) : key.op;
      r.dtype = key.dtype;
      r.sample = -1;
      r.outcome = fate;
      r.message = running ? message : message + " (this test had not run yet)";
      if (key.group == kGroupAbi) {
        r.repro = "bp-conformance --backend " + backend_arg + " --group abi --no-isolate --gtest_filter='" + id + "'";
      } else {
        r.repro = "bp-conformance --backend " + backend_arg + " --op " + key.op + " --dtype " + key.dtype +
                  " --group " + (key.group == kGroupClaims ? "claims" : key.group) + " --no-isolate";
      }
      add_case(report, std::move(r));
    }
  }
}

}  // namespace bpc
