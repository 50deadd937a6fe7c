// bp-conformance: checks which operators x dtypes each loaded backend gets
// right, against the suite's own double-precision reference; the fallback,
// dtype-claims, ABI/runtime and streams groups; and the ONNX node-test corpus.
//
//   bp-conformance                       every discovered backend, every group
//   bp-conformance --backend cpu --op 'add*' --dtype float32 --json out.json
//   bp-conformance --backend cpu --op add.Tensor --dtype float32 --sample 3 --seed 1
//   bp-conformance --list-tests          the GoogleTest IDs of the run
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "backend_select.h"
#include "backplane/backplane.h"
#include "baseline.h"
#include "device_inventory.h"
#include "dump_inputs.h"
#include "expect_backends.h"
#include "isolate.h"
#include "load_probe.h"
#include "groups/collectives_group.h"  // the collectives group (ranks as processes)
#include "models/models_group.h"  // the models group (real networks)
#include "onnx/onnx_corpus.h"     // ONNX node-test corpus
#include "report.h"
#include "runner.h"
#include "suites.h"

namespace {

using namespace bpc;

bp_context_t* g_context = nullptr;  // lives until the process exits (see main)

struct Cli {
  std::vector<std::string> backends;
  std::string op = "*";
  std::string dtype;
  int sample = -1;
  uint64_t seed = 1;
  std::vector<std::string> groups = {"ops", "fallback", "claims", "abi", "streams"};
  std::string json, junit, baseline;
  bool quick = false;
  bool full = false;
  bool list = false;
  bool list_tests = false;
  bool failures_only = false;
  bool verify_expectations = false;
  bool no_progress = false;
  int max_failures = 50;
  bool no_isolate = false;
  std::string expectations;  // file or directory; default: the installed or source-tree directory
  std::string models;        // the models group's directory; "none" turns it off
  double timeout = 300.0;
  bool worker = false;       // internal: run the tests --gtest_filter names, stream JSON lines
  std::vector<std::string> gtest_args;
  std::string worker_backend;  // the ONNX corpus worker's backend and device
  int worker_device = 0;
  std::vector<std::string> plugin_files;  // internal (workers): load exactly these files, no discovery
  std::vector<std::string> loaded_files;  // the parent's: what it passes its workers as --plugin-file
  std::string dump_inputs;                // --dump-inputs DIR
};

// The plugin arguments of every worker: the user's --backend arguments (how
// rerun lines name the backends) and the files the parent loaded.
void add_plugin_args(const Cli& cli, std::vector<std::string>* a) {
  for (const std::string& b : cli.backends) a->insert(a->end(), {"--backend", b});
  for (const std::string& f : cli.loaded_files) a->insert(a->end(), {"--plugin-file", f});
}

bool has_group(const Cli& cli, const std::string& g) {
  for (const std::string& x : cli.groups) {
    if (x == g) return true;
  }
  return false;
}

// The command line that makes a child a worker registering the same tests.
std::vector<std::string> worker_argv(const Cli& cli) {
  std::vector<std::string> a = {self_exe(), "--worker", "--seed", std::to_string(cli.seed), "--op", cli.op};
  add_plugin_args(cli, &a);
  for (const std::string& g : cli.groups) a.insert(a.end(), {"--group", g});
  if (!cli.dtype.empty()) a.insert(a.end(), {"--dtype", cli.dtype});
  if (cli.sample >= 0) a.insert(a.end(), {"--sample", std::to_string(cli.sample)});
  if (cli.quick) a.push_back("--quick");
  if (cli.verify_expectations) a.push_back("--verify-expectations");
  if (!cli.expectations.empty()) a.insert(a.end(), {"--expectations", cli.expectations});
  return a;
}

// Where expectation files are found when --expectations is not given:
// <prefix>/share/backplane/conformance/expectations relative to this binary
// (the build tree has the same layout, linked to the source tree's files).
std::string default_expectations_dir() {
  const std::string exe = self_exe();
  return exe.substr(0, exe.rfind('/')) + "/../share/backplane/conformance/expectations";
}

// Loads and checks one backend's expectation file (an unknown operator is an error).
bool load_backend_expectations(const Cli& cli, const Runner& runner, const std::string& backend, Expectations* ex) {
  std::string err;
  const std::string path = cli.expectations.empty() ? default_expectations_dir() : cli.expectations;
  std::vector<std::string> names;
  for (const OpEntry& op : runner.ops()) names.push_back(op.name);
  if (!load_expectations(path, backend, ex, &err) || !check_expectation_ops(*ex, names, &err)) {
    std::cerr << "bp-conformance: " << err << "\n";
    return false;
  }
  return true;
}

void list_everything(bp_context_t* ctx, Runner& runner, const std::vector<std::pair<int32_t, std::string>>& backends) {
  std::cout << "Backends:\n";
  for (const auto& b : backends) {
    bp_backend_info_t info{};
    info.struct_size = sizeof info;
    if (bp_backend_info(ctx, b.first, &info) != BP_STATUS_OK) continue;
    std::cout << "  " << info.name << " (" << info.device_count << " devices"
              << (info.no_device_reason ? std::string(": ") + info.no_device_reason : std::string()) << ") "
              << (info.plugin_path ? info.plugin_path : "") << "\n";
  }
  std::cout << "Operators (name, kind, claimed dtypes, samples for float32 or the first claimed dtype):\n";
  for (const OpEntry& op : runner.ops()) {
    std::cout << "  " << op.name << "  " << op.kind << "  ";
    if (op.claim == nullptr) {
      std::cout << "(not in ops.yaml: not checked)\n";
      continue;
    }
    int first = -1;
    for (int k = 0; k < kNumDTypes; ++k) {
      if (op.claim->claims(dtype_at(k))) {
        std::cout << dtype_name(dtype_at(k)) << " ";
        if (first < 0) first = k;
      }
    }
    std::string why;
    const size_t n = first < 0 ? 0 : make_cases(*op.claim, dtype_at(first), 1, true, &why).size();
    std::cout << " samples: " << n << (op.op == nullptr ? "  (MISSING from libbackplane)" : "") << "\n";
  }
}

// The (backend, device) targets of the run; backends without a device get a
// report of unsupported cells instead.
std::vector<Target> make_targets(bp_context_t* ctx, const std::vector<std::pair<int32_t, std::string>>& backends,
                                 std::vector<int32_t>* deviceless) {
  std::vector<Target> targets;
  for (const auto& b : backends) {
    bp_backend_info_t info{};
    info.struct_size = sizeof info;
    if (bp_backend_info(ctx, b.first, &info) != BP_STATUS_OK) continue;
    if (info.device_count <= 0) deviceless->push_back(b.first);
    for (int32_t d = 0; d < info.device_count; ++d) {
      Target t;
      t.backend = b.first;
      t.device = d;
      t.backend_name = info.name;
      t.device_label = std::string(info.name) + ":" + std::to_string(d);
      t.plugin_path = info.plugin_path ? info.plugin_path : "";
      targets.push_back(t);
    }
  }
  return targets;
}

// "[opencl:0 37/121] add.Tensor" on one line, rewritten in place, while a
// target runs; only when stdout is a terminal.
class Progress {
 public:
  explicit Progress(bool on) : on_(on) {}
  void show(const std::string& device, size_t i, size_t n, const std::string& label) {
    if (!on_) return;
    std::printf("\r\033[K[%s %zu/%zu] %s", device.c_str(), i + 1, n, label.c_str());
    std::fflush(stdout);
  }
  void clear() {
    if (on_) std::printf("\r\033[K");
    std::fflush(stdout);
  }

 private:
  bool on_;
};

// The reason of the first cell that has one (a deviceless backend's "no device: ...").
std::string first_cell_reason(const DeviceReport& r) {
  for (const auto& row : r.cells) {
    for (const CellResult& c : row.second) {
      if (!c.reason.empty()) return c.reason;
    }
  }
  return "";
}

// Every loaded backend, with its devices, for the BACKPLANE_EXPECT_BACKENDS check.
std::vector<FoundBackend> found_backends(bp_context_t* ctx) {
  std::vector<FoundBackend> out;
  int32_t n = 0;
  if (bp_backend_count(ctx, &n) != BP_STATUS_OK) return out;
  for (int32_t b = 0; b < n; ++b) {
    bp_backend_info_t info{};
    info.struct_size = sizeof info;
    if (bp_backend_info(ctx, b, &info) != BP_STATUS_OK || !info.loaded || info.name == nullptr) continue;
    out.push_back({info.name, info.device_count, info.no_device_reason ? info.no_device_reason : ""});
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Cli cli;
  CLI::App app{"bp-conformance: which operators x dtypes each Backplane backend gets right"};
  app.add_option("--backend", cli.backends, "backend name (after discovery) or plugin path; repeatable")
      ->type_name("NAME|PATH");
  app.add_option("--op", cli.op, "operator names or globs, comma-separated ('add*', 'neg,div.Tensor_mode')");
  app.add_option("--dtype", cli.dtype, "one dtype: float32 float64 float16 bfloat16 int8 uint8 int32 int64 bool");
  app.add_option("--sample", cli.sample, "run only this sample number (see the failure's rerun line)");
  app.add_option("--seed", cli.seed, "seed of the sample generator (default 1)");
  app.add_option("--group", cli.groups, "groups to run (repeatable): ops fallback claims abi streams collectives (default: all but collectives)")
      ->check(CLI::IsMember({"ops", "fallback", "claims", "abi", "streams", "collectives"}))
      ->take_all();
  app.add_option("--json", cli.json, "write a JSON report of every case to FILE")->type_name("FILE");
  app.add_option("--junit", cli.junit, "write a JUnit XML report (one testcase per case) to FILE")->type_name("FILE");
  app.add_option("--baseline", cli.baseline, "compare with an earlier --json report: print fixes and regressions")
      ->type_name("FILE");
  auto* quick = app.add_flag("--quick", cli.quick, "quick tier: fewer, smaller samples");
  app.add_flag("--full", cli.full, "full tier (the default)")->excludes(quick);
  app.add_flag("--list", cli.list, "list backends, operators, claimed dtypes and sample counts");
  app.add_flag("--list-tests", cli.list_tests, "list the GoogleTest IDs this run would execute");
  app.add_flag("--failures-only", cli.failures_only, "print only failures and totals, no matrix");
  app.add_flag("--verify-expectations", cli.verify_expectations,
               "run the cells of unsupported entries too; fail the run when an xfail or unsupported entry's "
               "cell passes (the entry is stale)");
  app.add_flag("--no-progress", cli.no_progress, "no progress line, even on a terminal");
  app.add_option("--max-failures", cli.max_failures,
                 "failing cases printed per device (default 50, -1: all; the JSON report has every one)");
  app.add_flag("--no-isolate", cli.no_isolate,
               "run every test in this process (default: each (backend, op) group in a child process)");
  app.add_option("--expectations", cli.expectations,
                 "expectation file, or directory of <backend>.yaml files (default: the installed ones)")
      ->type_name("PATH");
  app.add_option("--timeout", cli.timeout, "time limit in seconds of one isolated group (default 300)");
  app.add_option("--dump-inputs", cli.dump_inputs,
                 "write the inputs of each failing operator sample as .npy files under DIR "
                 "(DIR/<device>_<op>_<dtype>_sample<N>/arg<k>.npy)")
      ->type_name("DIR");
  app.add_flag("--worker", cli.worker)->group("");
  std::string probe_load;  // a load probe's child (load_probe.h)
  bool probe_discover = false;
  app.add_option("--probe-load", probe_load)->group("");
  app.add_flag("--probe-discover", probe_discover)->group("");
  app.add_option("--plugin-file", cli.plugin_files)->group("");       // workers: the parent's plugin files
  app.add_option("--worker-backend", cli.worker_backend)->group("");  // the ONNX corpus worker's target
  app.add_option("--worker-device", cli.worker_device)->group("");
  OnnxCli onnx_cli;  // ONNX node-test corpus (onnx/onnx_corpus.h)
  add_onnx_options(app, &onnx_cli);
  ModelsCli models_cli;
  add_models_options(app, &models_cli);
  CollectivesCli collectives_cli;
  add_collectives_options(app, &collectives_cli);
  // --gtest_* flags (--gtest_filter with --no-isolate, ...) go to GoogleTest.
  app.allow_extras();
  CLI11_PARSE(app, argc, argv);
  if (!probe_load.empty() || probe_discover) return run_load_probe(probe_load);
  for (const std::string& extra : app.remaining()) {
    if (extra.rfind("--gtest_", 0) != 0) {
      std::cerr << "bp-conformance: unknown argument '" << extra << "' (see --help)\n";
      return 2;
    }
    cli.gtest_args.push_back(extra);
  }
  if (!cli.gtest_args.empty() && !cli.no_isolate && !cli.worker) {
    // Isolated runs plan their children from the registry; a filter there would be ignored.
    std::cerr << "bp-conformance: --gtest_* flags need --no-isolate\n";
    return 2;
  }
  OnnxOptions onnx_opt;
  const bool run_onnx = onnx_selected(app, &onnx_cli, app.count("--op") + app.count("--dtype") > 0, &onnx_opt);

  RunOptions opt;
  opt.op_glob = cli.op;
  opt.sample = cli.sample;
  opt.seed = cli.seed;
  opt.full = !cli.quick;
  opt.verify_expectations = cli.verify_expectations;
  if (!cli.dtype.empty()) {
    if (!dtype_from_name(cli.dtype, &opt.dtype)) {
      std::cerr << "bp-conformance: unknown dtype '" << cli.dtype << "'\n";
      return 2;
    }
    opt.has_dtype = true;
  }

  bp_context_options_t copts{};
  copts.struct_size = sizeof copts;
  copts.min_log_level = BP_LOG_ERROR;  // fallback warnings would drown the matrix; counters tell us
  bp_context_t* ctx = nullptr;
  if (bp_context_create(&copts, &ctx) != BP_STATUS_OK) {
    std::cerr << "bp-conformance: bp_context_create failed: " << bp_last_error_message() << "\n";
    return 2;
  }
  // The context is never destroyed, in the parent or in a worker: destroying
  // it unloads the plugins, and a plugin that leaves a thread running after
  // its shutdown would then crash the process as its code is unmapped (the
  // parent before its verdicts reach a pipe). The exit ends the threads.
  // Kept in a global so that the leak checker sees it reachable.
  g_context = ctx;
  // Fallbacks must run (and be counted as F), never be refused: BACKPLANE_STRICT=1
  // in the environment would turn every F cell into a failure.
  bp_context_set_strict_fallback(ctx, 0);
  std::vector<std::pair<int32_t, std::string>> backends;
  // Plugin loads run first in a child (LOAD CRASHED / LOAD TIMEOUT verdicts,
  // one per file), except in workers: they load exactly the files their
  // parent loaded, and never discover.
  const bool is_worker =
      cli.worker || onnx_cli.worker || !models_cli.worker_model.empty() || is_collectives_worker(collectives_cli);
  SelectOptions sel;
  sel.load_timeout_s = is_worker || cli.no_isolate ? 0.0 : cli.timeout;
  if (is_worker) sel.worker_files = &cli.plugin_files;
  SelectResult selected;
  if (!select_backends(ctx, cli.backends, sel, &backends, &selected)) return 2;
  const int load_failures = selected.load_failures;
  cli.loaded_files = selected.loaded_files;
  // Workers load the --backend plugins again: never the ones whose load failed here.
  for (const std::string& path : selected.skipped_paths) {
    cli.backends.erase(std::remove(cli.backends.begin(), cli.backends.end(), path), cli.backends.end());
  }
  if (onnx_cli.worker) return run_onnx_worker(ctx, cli.worker_backend, cli.worker_device, onnx_opt, onnx_cli.worker_start);
  if (!models_cli.worker_model.empty()) return run_models_worker(ctx, cli.worker_backend, cli.worker_device, models_cli);
  if (is_collectives_worker(collectives_cli)) {
    return run_collectives_worker(ctx, cli.worker_backend, cli.worker_device, collectives_cli);
  }
  Runner runner(ctx);
  if (cli.list) {
    list_everything(ctx, runner, backends);
    return 0;
  }
  if (backends.empty()) {
    std::cerr << "bp-conformance: no backend loaded (set BACKPLANE_PLUGIN_PATH or pass --backend PATH)\n";
    return 2;
  }

  // The suites, instantiated over what was found.
  std::vector<int32_t> deviceless;
  const std::vector<Target> targets = make_targets(ctx, backends, &deviceless);
  // The collectives group runs its ranks as processes of their own, before
  // (and apart from) the suites; alone, it is the whole run.
  bool collectives_failed = false;
  if (has_group(cli, "collectives")) {
    std::vector<std::string> base = {self_exe()};
    add_plugin_args(cli, &base);
    collectives_failed = !run_collectives_group(targets, base, collectives_cli, std::cout);
    // A backend with no device gets no rank: say so, as the suites' report does.
    for (int32_t b : deviceless) {
      bp_backend_info_t info{};
      info.struct_size = sizeof info;
      const bool ok = bp_backend_info(ctx, b, &info) == BP_STATUS_OK && info.no_device_reason != nullptr;
      std::cout << "\n== " << backend_name(ctx, b) << ": no device (" << (ok ? info.no_device_reason : "no reason given")
                << ")\n";
    }
    cli.groups.erase(std::remove(cli.groups.begin(), cli.groups.end(), "collectives"), cli.groups.end());
    if (cli.groups.empty()) return collectives_failed || load_failures > 0 ? 1 : 0;
  }
  SuiteState& state = suite_state();
  state.runner = &runner;
  state.options = opt;
  for (const auto& b : backends) {
    const std::string name = backend_name(ctx, b.first);
    state.backend_args[name] = b.second.empty() ? name : b.second;
    if (!load_backend_expectations(cli, runner, name, &state.expectations[name])) return 2;
  }
  {
    SuiteState planned;
    plan_cells(targets, runner, opt, &planned);
    if (has_group(cli, "ops")) state.op_cells = std::move(planned.op_cells);
    if (has_group(cli, "fallback")) state.fallback_cells = std::move(planned.fallback_cells);
    if (has_group(cli, "claims")) state.claim_probes = std::move(planned.claim_probes);
  }
  state.abi_group = has_group(cli, "abi");
  state.streams_group = has_group(cli, "streams");
  set_suite_context(ctx);
  set_suite_targets(targets);
  std::vector<std::string> gargs = {argv[0]};
  gargs.insert(gargs.end(), cli.gtest_args.begin(), cli.gtest_args.end());
  if (cli.gtest_args.empty()) {  // the groups not selected (the cell suites have no cells then)
    std::string off;
    if (!has_group(cli, "abi")) off += ":Abi/*";
    if (!has_group(cli, "streams")) off += ":Streams/*";
    if (!off.empty()) gargs.push_back("--gtest_filter=-" + off.substr(1));
  }
  std::vector<char*> gargv;
  for (std::string& s : gargs) gargv.push_back(s.data());
  int gargc = static_cast<int>(gargv.size());
  gargv.push_back(nullptr);  // argv[argc] is NULL: GoogleTest moves it when it removes its flags
  ::testing::InitGoogleTest(&gargc, gargv.data());
  if (cli.list_tests) {
    for (const auto& t : plan_groups()) {
      for (const TestGroup& g : t.second) {
        for (const std::string& id : g.test_ids) std::cout << id << "\n";
      }
    }
    return 0;
  }
  install_case_listener();

  if (cli.worker) {
    state.on_start = [](const std::string& id, const std::string& what, const CaseResult* c) { emit_start(id, what, c); };
    state.on_case = [](const CaseResult& c) { emit_case(c); };
    state.on_test_end = [](const std::string& id) { emit_test_end(id); };
    // Failures are in the stream; exit 0 means "every test reported".
    const int failures = RUN_ALL_TESTS();
    (void)failures;
    return 0;
  }

  std::vector<DeviceReport> reports;
  print_device_inventory(stdout, ctx, {});
  std::cout << std::endl;
  Progress progress(!cli.no_progress && isatty(STDOUT_FILENO) == 1);
  std::map<std::string, size_t> by_target;
  for (const Target& t : targets) {
    by_target[t.id()] = reports.size();
    reports.push_back(target_report(runner, t, opt));
  }
  if (cli.no_isolate) {
    state.on_case = [&](const CaseResult& c) {
      for (size_t i = 0; i < targets.size(); ++i) {
        if (targets[i].device_label == c.device) add_case(&reports[i], c);
      }
    };
    state.on_test_end = [&](const std::string&) {};
    const int failures = RUN_ALL_TESTS();  // the report below counts them
    (void)failures;
    for (DeviceReport& r : reports) r.tests_expected = r.tests_reported = -1;  // one process: nothing lost
  } else {
    const auto plan = plan_groups();
    for (const Target& t : targets) {
      const auto it = plan.find(t.id());
      if (it == plan.end()) continue;
      DeviceReport& r = reports[by_target[t.id()]];
      run_target_isolated(
          it->second, worker_argv(cli), state.backend_args[t.backend_name], cli.timeout,
          [&](size_t i, size_t n, const std::string& label) { progress.show(t.device_label, i, n, label); }, &r);
      progress.clear();
    }
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    apply_unsupported(state.expectations[targets[i].backend_name], &reports[i]);
    apply_xfail(state.expectations[targets[i].backend_name], &reports[i]);
  }
  for (int32_t b : deviceless) reports.push_back(runner.no_device_report(b, opt));

  ReportOptions ro;
  ro.verify_expectations = cli.verify_expectations;
  bool failed = false;
  if (!cli.failures_only) print_legend(std::cout);
  for (const DeviceReport& r : reports) {
    if (r.device == r.backend) {  // no device: one line instead of a matrix of 'u'
      const Totals t = totals_of(r);
      std::cout << "\n== " << r.backend << ": no device, " << t.unsupported << " cells unsupported ("
                << first_cell_reason(r) << ")\n";
      continue;
    }
    if (cli.failures_only) std::cout << "\n== " << r.backend << " (" << r.device << ")\n";
    if (!cli.failures_only) print_matrix(std::cout, r);
    print_groups(std::cout, r);
    print_failures(std::cout, r, cli.max_failures);
    failed = failed || !verdict_of(r, ro).conformant;
  }
  if (!cli.dump_inputs.empty()) dump_failing_inputs(runner, reports, cli.dump_inputs, std::cout);
  // The ONNX node-test corpus, per device (its worker streams records).
  std::vector<OnnxReport> onnx_reports;
  if (run_onnx) {
    for (const Target& t : targets) {
      progress.show(t.device_label, 0, 1, "ONNX node tests");
      std::vector<std::string> argv = {self_exe(), "--seed", std::to_string(cli.seed), "--worker-backend",
                                       t.backend_name};
      add_plugin_args(cli, &argv);
      onnx_reports.push_back(run_onnx_device(ctx, t.backend, t.device, onnx_opt, !cli.no_isolate, argv));
      apply_onnx_xfail(state.expectations[t.backend_name], &onnx_reports.back());
      progress.clear();
    }
    print_onnx_summary(std::cout, onnx_reports);
    // A failing node test fails the run unless an onnx_xfail entry (with its reason) covers it.
    failed = failed || onnx_any_failure(onnx_reports);
  }

  // The models group (real networks), per device, each model in a child.
  std::vector<std::string> models_argv = {self_exe(), "--seed", std::to_string(cli.seed)};
  add_plugin_args(cli, &models_argv);
  const bool narrowed = app.count("--op") + app.count("--dtype") + app.count("--group") + app.count("--sample") > 0;
  const ModelsGroup models = run_models_group(
      ctx, targets, models_cli, narrowed || cli.quick, !cli.no_isolate, models_argv, state.backend_args, cli.timeout,
      [&](const Target& t, const std::string& what) { progress.show(t.device_label, 0, 1, what); }, std::cout,
      &reports);
  progress.clear();
  failed = failed || models.failed;

  std::cout << "\nVerdicts:\n";
  // Backends this machine must have (CI): checked on discovery runs; a run
  // narrowed with --backend tests what it names.
  const char* expect_env = std::getenv(kExpectBackendsEnv);
  if (cli.backends.empty() && expect_env != nullptr) {
    for (const std::string& line :
         missing_expected_backends(parse_expected_backends(expect_env), found_backends(ctx))) {
      std::cout << "  " << line << "\n";
      failed = true;
    }
  }
  for (const DeviceReport& r : reports) {
    std::cout << "  " << verdict_line(r, ro);
    for (const OnnxReport& o : onnx_reports) {
      if (o.device == r.device) std::cout << onnx_verdict_suffix(o);
    }
    std::cout << models_verdict_suffix(models, r.device);
    std::cout << "\n";
  }

  nlohmann::json run = run_to_json(reports, opt.seed, opt.full);
  if (run_onnx) run["onnx_node_tests"] = onnx_to_json(onnx_reports);
  if (models.selected) run["models"] = models_to_json(models);
  if (!cli.baseline.empty()) {
    std::string err;
    BaselineDiff diff;
    if (!diff_against_baseline(cli.baseline, run, &diff, &err)) {
      std::cerr << "bp-conformance: " << err << "\n";
      return 2;
    }
    print_baseline_diff(std::cout, cli.baseline, diff);
    failed = failed || !diff.regressions.empty();
  }
  std::string err;
  if (!cli.json.empty() && !write_json_file(cli.json, run, &err)) {
    std::cerr << "bp-conformance: " << err << "\n";
    return 2;
  }
  if (!cli.junit.empty() && !write_junit_file(cli.junit, reports, &err)) {
    std::cerr << "bp-conformance: " << err << "\n";
    return 2;
  }
  return failed || collectives_failed || load_failures > 0 ? 1 : 0;
}
