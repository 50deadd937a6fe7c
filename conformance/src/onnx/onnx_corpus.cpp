#include "onnx/onnx_corpus.h"

#include <algorithm>
#include <chrono>
#include <dirent.h>
#include <fnmatch.h>
#include <iostream>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "child_process.h"
#include "onnx/onnx_model.h"
#include "onnx/onnx_run.h"

namespace bpc {

using onnx_corpus::OnnxTest;

int OnnxReport::mapped() const {
  int n = 0;
  for (const auto& t : tests) n += t.outcome != "not_mapped";
  return n;
}
int OnnxReport::passed() const {
  int n = 0;
  for (const auto& t : tests) n += t.outcome == "pass";
  return n;
}
int OnnxReport::not_mapped() const { return static_cast<int>(tests.size()) - mapped(); }
int OnnxReport::xfailed() const {
  int n = 0;
  for (const auto& t : tests) n += t.outcome == "xfail";
  return n;
}
int OnnxReport::failed() const { return mapped() - passed() - xfailed(); }

void apply_onnx_xfail(const Expectations& ex, OnnxReport* report) {
  for (OnnxTestResult& t : report->tests) {
    const Expectation* e = ex.find_onnx_xfail(t.test);
    if (e == nullptr || t.outcome == "not_mapped") continue;
    if (t.outcome == "pass") {
      t.outcome = "xpass";
      t.message = "passes, but " + ex.where(*e) + " lists it as onnx_xfail (" + e->reason + "): remove the entry";
    } else {
      t.outcome = "xfail";
      t.message = "expected (" + ex.where(*e) + ": " + e->reason + "): " + t.message;
    }
  }
}

namespace {

// The headline's counts; mapped and total side by side, so that neither
// reads as the whole corpus.
std::string onnx_counts(const OnnxReport& r) {
  std::string s = std::to_string(r.passed()) + " of " + std::to_string(r.mapped()) + " mapped pass";
  if (r.xfailed()) s += " (" + std::to_string(r.xfailed()) + " expected failures)";
  return s + ", " + std::to_string(r.not_mapped()) + " of " + std::to_string(r.tests.size()) + " not mapped";
}

}  // namespace

std::string onnx_verdict_suffix(const OnnxReport& r) {
  if (!r.error.empty() && r.tests.empty()) return "; ONNX node tests FAIL: not run: " + r.error;
  return std::string("; ONNX node tests ") + (r.failed() ? "FAIL: " + std::to_string(r.failed()) + " failing, " : "") +
         onnx_counts(r);
}

namespace {

const char* kDefaultCorpus = "/usr/share/libonnx-testdata/data/node";

bool is_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string device_label(bp_context_t* ctx, int32_t backend, int32_t index) {
  bp_backend_info_t info{};
  info.struct_size = sizeof info;
  const std::string name = bp_backend_info(ctx, backend, &info) == BP_STATUS_OK && info.name ? info.name : "?";
  return name + ":" + std::to_string(index);
}

OnnxReport empty_report(bp_context_t* ctx, int32_t backend, int32_t device_index) {
  OnnxReport r;
  r.device = device_label(ctx, backend, device_index);
  r.backend = r.device.substr(0, r.device.rfind(':'));
  return r;
}

nlohmann::json result_to_json(const OnnxTestResult& t) {
  return {{"test", t.test}, {"onnx_op", t.onnx_op}, {"outcome", t.outcome},
          {"reason", t.reason}, {"message", t.message}, {"path", t.path}};
}

OnnxTestResult result_from_json(const nlohmann::json& j) {
  OnnxTestResult t;
  t.test = j.value("test", "");
  t.onnx_op = j.value("onnx_op", "");
  t.outcome = j.value("outcome", "error");
  t.reason = j.value("reason", "");
  t.message = j.value("message", "");
  t.path = j.value("path", "");
  return t;
}

// Reasons that differ only in a count group together.
std::string group_key(const std::string& reason) {
  if (reason.rfind("graph has ", 0) == 0) return "graph has more than one node";
  return reason;
}

}  // namespace

std::vector<std::string> list_onnx_tests(const OnnxOptions& opt, std::string* err) {
  std::vector<std::string> r;
  DIR* d = opendir(opt.dir.c_str());
  if (d == nullptr) {
    *err = "no ONNX node-test corpus at " + opt.dir;
    return r;
  }
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind("test_", 0) != 0 || fnmatch(opt.filter.c_str(), name.c_str(), 0) != 0) continue;
    if (is_file(opt.dir + "/" + name + "/model.onnx")) r.push_back(name);
  }
  closedir(d);
  std::sort(r.begin(), r.end());
  if (r.empty()) *err = "no test in " + opt.dir + " matches '" + opt.filter + "'";
  return r;
}

OnnxTestResult run_onnx_test(bp_context_t* ctx, bp_device_t dev, const std::string& test_dir) {
  OnnxTest test;
  std::string err;
  if (!onnx_corpus::load_onnx_test(test_dir, &test, &err)) {
    OnnxTestResult r;
    r.test = test_dir.substr(test_dir.find_last_of('/') + 1);
    r.outcome = "error";
    r.message = err;
    return r;
  }
  return onnx_corpus::run_loaded_test(ctx, dev, test);
}

namespace {
// The report's header and the corpus's test list; false, with rep->error
// set, when there is nothing to run.
bool start_corpus(bp_context_t* ctx, int32_t backend, int32_t device_index, const OnnxOptions& opt, OnnxReport* rep,
                  std::vector<std::string>* tests) {
  *rep = empty_report(ctx, backend, device_index);
  if (!onnx_corpus::onnx_support_built()) {
    rep->error = "bp-conformance was built without ONNX support (libonnx-dev and protobuf not found)";
    return false;
  }
  std::string err;
  *tests = list_onnx_tests(opt, &err);
  if (tests->empty()) rep->error = err;
  return !tests->empty();
}
}  // namespace

OnnxReport run_onnx_corpus(bp_context_t* ctx, int32_t backend, int32_t device_index, const OnnxOptions& opt) {
  OnnxReport rep;
  std::vector<std::string> tests;
  if (!start_corpus(ctx, backend, device_index, opt, &rep, &tests)) return rep;
  for (const std::string& t : tests) {
    rep.tests.push_back(run_onnx_test(ctx, bp_device_t{backend, device_index}, opt.dir + "/" + t));
  }
  return rep;
}

int run_onnx_worker(bp_context_t* ctx, const std::string& backend_name, int32_t device_index, const OnnxOptions& opt,
                    int start) {
  int32_t backend = -1;
  if (bp_backend_find(ctx, backend_name.c_str(), &backend) != BP_STATUS_OK) {
    std::cerr << "bp-conformance ONNX worker: no backend " << backend_name << "\n";
    return 3;
  }
  std::string err;
  const std::vector<std::string> tests = list_onnx_tests(opt, &err);
  for (size_t k = static_cast<size_t>(std::max(start, 0)); k < tests.size(); ++k) {
    emit_line({{"start", {{"test", tests[k]}}}});
    const OnnxTestResult r = run_onnx_test(ctx, bp_device_t{backend, device_index}, opt.dir + "/" + tests[k]);
    emit_line({{"record", result_to_json(r)}});
  }
  return 0;
}

OnnxReport run_onnx_corpus_isolated(bp_context_t* ctx, int32_t backend, int32_t device_index,
                                    const OnnxOptions& opt, const std::vector<std::string>& worker_argv) {
  OnnxReport rep;
  std::vector<std::string> tests;
  if (!start_corpus(ctx, backend, device_index, opt, &rep, &tests)) return rep;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(opt.timeout_s);
  int crashes = 0;
  size_t next = 0;
  auto crashed = [&](size_t k, const std::string& why) {
    OnnxTestResult r;
    r.test = tests[k];
    r.outcome = "crashed";
    r.message = why;
    rep.tests.push_back(r);
  };
  while (next < tests.size()) {
    const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0 || crashes >= 20) {
      const std::string why = left <= 0 ? "not run: the device's run ran past its time limit"
                                        : "not run: the worker crashed 20 times";
      for (; next < tests.size(); ++next) crashed(next, why);
      break;
    }
    std::vector<std::string> argv = worker_argv;
    argv.insert(argv.end(), {"--onnx-worker-start", std::to_string(next)});
    const ChildOutcome child = run_child(argv, left);
    for (const nlohmann::json& j : child.records) {
      if (next >= tests.size()) break;
      if (!j.is_object()) continue;
      rep.tests.push_back(result_from_json(j));
      ++next;
    }
    if (child.status == ChildOutcome::kExited) {
      for (; next < tests.size(); ++next) crashed(next, "the worker ended before this test");
      break;
    }
    if (child.status == ChildOutcome::kSpawnFailed) {
      rep.error = child.message;
      break;
    }
    ++crashes;
    if (next < tests.size()) crashed(next++, child.message);  // the test that was running
  }
  return rep;
}

void print_onnx_summary(std::ostream& os, const std::vector<OnnxReport>& reports) {
  for (const OnnxReport& r : reports) {
    os << "\n" << r.device << ": ONNX node tests: ";
    if (!r.error.empty() && r.tests.empty()) {
      os << "not run: " << r.error << "\n";
      continue;
    }
    int native = 0, fallback = 0, core = 0;
    for (const auto& t : r.tests) {
      native += t.outcome == "pass" && t.path == "native";
      fallback += t.outcome == "pass" && t.path == "fallback";
      core += t.outcome == "pass" && t.path == "core";
    }
    os << onnx_counts(r) << " (passes: " << native << " native, " << fallback << " through a fallback, " << core
       << " views only)\n";
    for (const auto& t : r.tests) {
      if (t.outcome == "pass" || t.outcome == "not_mapped") continue;
      os << "  " << t.outcome << ": " << t.test << (t.onnx_op.empty() ? "" : " (" + t.onnx_op + ")") << ": "
         << t.message << "\n";
    }
    std::map<std::string, std::vector<std::string>> groups;
    for (const auto& t : r.tests) {
      if (t.outcome == "not_mapped") groups[group_key(t.reason)].push_back(t.test);
    }
    std::vector<std::pair<std::string, std::vector<std::string>>> sorted(groups.begin(), groups.end());
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
    if (!sorted.empty()) os << "  not mapped, by reason (tests):\n";
    constexpr size_t kMaxGroups = 12;  // the head of the list is what to add next; --json has every test
    for (size_t gi = 0; gi < sorted.size() && gi < kMaxGroups; ++gi) {
      const auto& g = sorted[gi];
      os << "    " << g.second.size() << "  " << g.first << ":";
      for (size_t k = 0; k < g.second.size() && k < 3; ++k) os << " " << g.second[k];
      if (g.second.size() > 3) os << " ...";
      os << "\n";
    }
    if (sorted.size() > kMaxGroups) {
      size_t rest = 0;
      for (size_t gi = kMaxGroups; gi < sorted.size(); ++gi) rest += sorted[gi].second.size();
      os << "    ... " << sorted.size() - kMaxGroups << " more reasons (" << rest << " tests; --json has every test)\n";
    }
  }
}

nlohmann::json onnx_to_json(const std::vector<OnnxReport>& reports) {
  nlohmann::json a = nlohmann::json::array();
  for (const OnnxReport& r : reports) {
    nlohmann::json d = {{"backend", r.backend},         {"device", r.device},           {"error", r.error},
                        {"total", r.tests.size()},      {"mapped", r.mapped()},         {"passed", r.passed()},
                        {"not_mapped", r.not_mapped()}, {"expected_fail", r.xfailed()}, {"failed", r.failed()}};
    d["tests"] = nlohmann::json::array();
    for (const auto& t : r.tests) d["tests"].push_back(result_to_json(t));
    a.push_back(d);
  }
  return a;
}

bool onnx_any_failure(const std::vector<OnnxReport>& reports) {
  for (const OnnxReport& r : reports) {
    if (!r.error.empty() && r.tests.empty()) return true;
    if (r.failed() > 0) return true;
  }
  return false;
}

void add_onnx_options(CLI::App& app, OnnxCli* cli) {
  app.add_option("--onnx-node-tests", cli->dir,
                 std::string("ONNX backend node-test corpus to run after the op matrix (default: ") + kDefaultCorpus +
                     " when present; 'none' skips)")
      ->type_name("DIR");
  app.add_option("--onnx-filter", cli->filter, "run only the ONNX node tests whose directory matches ('test_add*')")
      ->type_name("GLOB");
  app.add_flag("--no-onnx", cli->no_onnx, "skip the ONNX node-test corpus");
  app.add_flag("--onnx-worker", cli->worker)->group("");
  app.add_option("--onnx-worker-start", cli->worker_start)->group("");
}

bool onnx_selected(const CLI::App& app, OnnxCli* cli, bool subset_selected, OnnxOptions* opt) {
  cli->explicit_request = app.count("--onnx-node-tests") > 0 || app.count("--onnx-filter") > 0;
  if (cli->no_onnx || cli->dir == "none") return false;
  if (!cli->explicit_request && subset_selected) return false;
  opt->dir = cli->dir.empty() ? kDefaultCorpus : cli->dir;
  opt->filter = cli->filter;
  if (!onnx_corpus::onnx_support_built()) {
    if (!cli->explicit_request) std::cerr << "bp-conformance: ONNX node tests skipped: built without ONNX support\n";
    return cli->explicit_request;
  }
  if (!cli->explicit_request && access(opt->dir.c_str(), R_OK) != 0) return false;  // no corpus installed
  return true;
}

OnnxReport run_onnx_device(bp_context_t* ctx, int32_t backend, int32_t device_index, const OnnxOptions& opt,
                           bool isolate, std::vector<std::string> argv) {
  if (!isolate) return run_onnx_corpus(ctx, backend, device_index, opt);
  argv.insert(argv.end(), {"--worker-device", std::to_string(device_index), "--onnx-worker", "--onnx-node-tests",
                           opt.dir, "--onnx-filter", opt.filter});
  return run_onnx_corpus_isolated(ctx, backend, device_index, opt, argv);
}

}  // namespace bpc
