// bp-conformance: checks which operators x dtypes each loaded backend gets
// right, against the suite's own double-precision reference.
//
//   bp-conformance                       every discovered backend
//   bp-conformance --backend cpu --op 'add*' --dtype float32 --json out.json
//   bp-conformance --backend cpu --op add.Tensor --dtype float32 --sample 3 --seed 1
#include <cstdio>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <unistd.h>

#include "backplane/backplane.h"
#include "isolate.h"
#include "onnx/onnx_corpus.h"  // ONNX node-test corpus
#include "report.h"
#include "runner.h"

namespace {

using namespace bpc;

struct Cli {
  std::vector<std::string> backends;
  std::string op = "*";
  std::string dtype;
  int sample = -1;
  uint64_t seed = 1;
  std::string json;
  bool quick = false;
  bool full = false;
  bool list = false;
  bool failures_only = false;
  int max_failures = 50;
  bool no_isolate = false;
  std::string expectations;  // file or directory; default: the installed or source-tree directory
  double timeout = 300.0;
  // Worker mode (internal): run one (backend, device, op) group, stream JSON lines.
  bool worker = false;
  std::string worker_backend;
  std::string worker_backend_arg;
  int worker_device = 0;
};

std::string self_exe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "bp-conformance";
  buf[n] = 0;
  return buf;
}

// The command line that makes a child a worker for one backend.
std::vector<std::string> worker_argv(const Cli& cli, const std::string& backend, const std::string& backend_arg) {
  std::vector<std::string> a = {self_exe(), "--worker", "--worker-backend", backend, "--worker-backend-arg",
                                backend_arg, "--seed", std::to_string(cli.seed)};
  for (const std::string& b : cli.backends) a.insert(a.end(), {"--backend", b});
  if (!cli.dtype.empty()) a.insert(a.end(), {"--dtype", cli.dtype});
  if (cli.sample >= 0) a.insert(a.end(), {"--sample", std::to_string(cli.sample)});
  if (cli.quick) a.push_back("--quick");
  if (!cli.expectations.empty()) a.insert(a.end(), {"--expectations", cli.expectations});
  return a;
}

// Where expectation files are found when --expectations is not given: beside
// an installed binary (<prefix>/share/backplane/conformance/expectations),
// else the source tree this binary was built from.
std::string default_expectations_dir() {
  const std::string exe = self_exe();
  const std::string installed = exe.substr(0, exe.rfind('/')) + "/../share/backplane/conformance/expectations";
  if (access(installed.c_str(), R_OK) == 0) return installed;
#ifdef BPC_SOURCE_EXPECTATIONS_DIR
  return BPC_SOURCE_EXPECTATIONS_DIR;
#else
  return "";
#endif
}

bool load_backend_expectations(const Cli& cli, const std::string& backend, Expectations* ex) {
  std::string err;
  const std::string path = cli.expectations.empty() ? default_expectations_dir() : cli.expectations;
  if (!load_expectations(path, backend, ex, &err)) {
    std::cerr << "bp-conformance: " << err << "\n";
    return false;
  }
  return true;
}

// Worker mode: the group's cases as JSON lines on stdout; exits 0 when done.
int run_worker(bp_context_t* ctx, const Cli& cli, const RunOptions& opt) {
  int32_t backend = -1;
  if (bp_backend_find(ctx, cli.worker_backend.c_str(), &backend) != BP_STATUS_OK) {
    std::cerr << "bp-conformance worker: no backend " << cli.worker_backend << "\n";
    return 3;
  }
  Runner runner(ctx);
  Expectations ex;
  if (!load_backend_expectations(cli, cli.worker_backend, &ex)) return 3;
  runner.expectations = &ex;
  runner.on_case_start = [](const std::string& dtype, int sample) { emit_start(dtype, sample); };
  runner.on_case_done = [](const CaseResult& c) { emit_case(c); };
  RunOptions o = opt;
  o.backend_arg = cli.worker_backend_arg;
  uint64_t caps = 0;
  DeviceReport report = runner.empty_report(backend, cli.worker_device, &caps);
  const bp_device_t dev{backend, cli.worker_device};
  for (const OpEntry& op : runner.ops()) {
    if (op.name != cli.op) continue;
    for (int k = 0; k < kNumDTypes; ++k) {
      if (o.has_dtype && o.dtype != dtype_at(k)) continue;
      runner.run_cell(op, dtype_at(k), backend, dev, caps, o, &report);
    }
  }
  return 0;
}

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || (s.size() > 3 && s.compare(s.size() - 3, 3, ".so") == 0);
}

int32_t backend_count(bp_context_t* ctx) {
  int32_t n = 0;
  return bp_backend_count(ctx, &n) == BP_STATUS_OK ? n : 0;
}

bool backend_loaded(bp_context_t* ctx, int32_t b, bp_backend_info_t* info) {
  *info = bp_backend_info_t{};
  info->struct_size = sizeof *info;
  return bp_backend_info(ctx, b, info) == BP_STATUS_OK && info->loaded;
}

// Resolves --backend arguments to backend ids: a path is loaded with
// bp_plugin_load; a name is looked up after discovery. Discovery always runs
// (after the paths, so a given path wins over a discovered plugin of the same
// name): the CPU fallback needs the CPU backend's kernels.
bool select_backends(bp_context_t* ctx, const std::vector<std::string>& args,
                     std::vector<std::pair<int32_t, std::string>>* out) {
  bool discovered = false;
  auto discover = [&] {
    if (!discovered) {
      int32_t loaded = 0;
      bp_plugin_discover(ctx, &loaded);
      discovered = true;
    }
  };
  if (args.empty()) {
    discover();
    bp_backend_info_t info;
    for (int32_t b = 0; b < backend_count(ctx); ++b) {
      if (backend_loaded(ctx, b, &info)) out->push_back({b, ""});
    }
    return true;
  }
  for (const std::string& a : args) {
    if (looks_like_path(a)) {
      const int32_t before = backend_count(ctx);
      const bp_status_t st = bp_plugin_load(ctx, a.c_str(), nullptr);
      if (st != BP_STATUS_OK) {
        std::cerr << "bp-conformance: cannot load plugin " << a << ": " << bp_status_name(st) << ": "
                  << bp_last_error_message() << "\n";
        return false;
      }
      const int32_t after = backend_count(ctx);
      bp_backend_info_t info;
      for (int32_t b = before; b < after; ++b) {
        if (backend_loaded(ctx, b, &info)) out->push_back({b, a});
      }
    }
  }
  for (const std::string& a : args) {
    if (looks_like_path(a)) continue;
    discover();
    int32_t b = -1;
    if (bp_backend_find(ctx, a.c_str(), &b) != BP_STATUS_OK) {
      std::cerr << "bp-conformance: no backend named '" << a << "' (" << bp_last_error_message()
                << "); loaded:";
      bp_backend_info_t info;
      for (int32_t k = 0; k < backend_count(ctx); ++k) {
        if (backend_loaded(ctx, k, &info)) std::cerr << " " << info.name;
      }
      std::cerr << "\n";
      return false;
    }
    out->push_back({b, a});
  }
  discover();
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

}  // namespace

int main(int argc, char** argv) {
  Cli cli;
  CLI::App app{"bp-conformance: which operators x dtypes each Backplane backend gets right"};
  app.add_option("--backend", cli.backends, "backend name (after discovery) or plugin path; repeatable")
      ->type_name("NAME|PATH");
  app.add_option("--op", cli.op, "operator name or glob ('add*', 'div.Tensor_mode')");
  app.add_option("--dtype", cli.dtype, "one dtype: float32 float64 float16 bfloat16 int8 uint8 int32 int64 bool");
  app.add_option("--sample", cli.sample, "run only this sample number (see the failure's rerun line)");
  app.add_option("--seed", cli.seed, "seed of the sample generator (default 1)");
  app.add_option("--json", cli.json, "write a JSON report of every case to FILE")->type_name("FILE");
  auto* quick = app.add_flag("--quick", cli.quick, "quick tier: fewer, smaller samples");
  app.add_flag("--full", cli.full, "full tier (the default)")->excludes(quick);
  app.add_flag("--list", cli.list, "list backends, operators, claimed dtypes and sample counts");
  app.add_flag("--failures-only", cli.failures_only, "print only failures and totals, no matrix");
  app.add_option("--max-failures", cli.max_failures,
                 "failing cases printed per device (default 50, -1: all; the JSON report has every one)");
  app.add_flag("--no-isolate", cli.no_isolate,
               "run every case in this process (default: each (backend, op) group in a child process)");
  app.add_option("--expectations", cli.expectations,
                 "expectation file, or directory of <backend>.yaml files (default: the installed ones)")
      ->type_name("PATH");
  app.add_option("--timeout", cli.timeout, "time limit in seconds of one (backend, op) group (default 300)");
  app.add_flag("--worker", cli.worker)->group("");
  app.add_option("--worker-backend", cli.worker_backend)->group("");
  app.add_option("--worker-backend-arg", cli.worker_backend_arg)->group("");
  app.add_option("--worker-device", cli.worker_device)->group("");
  OnnxCli onnx_cli;  // ONNX node-test corpus (onnx/onnx_corpus.h)
  add_onnx_options(app, &onnx_cli);
  CLI11_PARSE(app, argc, argv);
  OnnxOptions onnx_opt;
  const bool run_onnx = onnx_selected(app, &onnx_cli, app.count("--op") + app.count("--dtype") > 0, &onnx_opt);

  RunOptions opt;
  opt.op_glob = cli.op;
  opt.sample = cli.sample;
  opt.seed = cli.seed;
  opt.full = !cli.quick;
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
  std::vector<std::pair<int32_t, std::string>> backends;
  // Fallbacks must run (and be counted as F), never be refused: BACKPLANE_STRICT=1
  // in the environment would turn every F cell into a failure.
  bp_context_set_strict_fallback(ctx, 0);
  if (!select_backends(ctx, cli.backends, &backends)) {
    bp_context_destroy(ctx);
    return 2;
  }
  if (onnx_cli.worker) {  // ONNX corpus worker: one backend device's tests
    const int rc = run_onnx_worker(ctx, cli.worker_backend, cli.worker_device, onnx_opt, onnx_cli.worker_start);
    bp_context_destroy(ctx);
    return rc;
  }
  if (cli.worker) {
    const int rc = run_worker(ctx, cli, opt);
    bp_context_destroy(ctx);
    return rc;
  }
  Runner runner(ctx);
  if (cli.list) {
    list_everything(ctx, runner, backends);
    bp_context_destroy(ctx);
    return 0;
  }
  if (backends.empty()) {
    std::cerr << "bp-conformance: no backend loaded (set BACKPLANE_PLUGIN_PATH or pass --backend PATH)\n";
    bp_context_destroy(ctx);
    return 2;
  }

  std::vector<DeviceReport> reports;
  std::vector<OnnxReport> onnx_reports;  // ONNX corpus, run after each device's op matrix
  for (const auto& b : backends) {
    bp_backend_info_t info{};
    info.struct_size = sizeof info;
    if (bp_backend_info(ctx, b.first, &info) != BP_STATUS_OK) continue;
    RunOptions o = opt;
    o.backend_arg = b.second.empty() ? info.name : b.second;
    Expectations ex;
    if (!load_backend_expectations(cli, info.name, &ex)) {
      bp_context_destroy(ctx);
      return 2;
    }
    runner.expectations = &ex;
    if (info.device_count <= 0) {
      reports.push_back(runner.no_device_report(b.first, o));
      continue;
    }
    for (int32_t d = 0; d < info.device_count; ++d) {
      if (cli.no_isolate) {
        reports.push_back(runner.run_device(b.first, d, o));
      } else {
        reports.push_back(run_device_isolated(runner, b.first, d, o, worker_argv(cli, info.name, o.backend_arg),
                                              cli.timeout));
      }
      apply_xfail(ex, &reports.back());
      if (run_onnx) {
        onnx_reports.push_back(run_onnx_device(ctx, b.first, d, onnx_opt, !cli.no_isolate,
                                               worker_argv(cli, info.name, o.backend_arg)));
      }
    }
    runner.expectations = nullptr;
  }

  bool failed = false;
  if (!cli.failures_only) print_legend(std::cout);
  for (const DeviceReport& r : reports) {
    if (!cli.failures_only) print_matrix(std::cout, r);
    print_failures(std::cout, r, cli.max_failures);
    if (cli.failures_only) print_totals(std::cout, r);
    failed = failed || totals_of(r).any_failure();
  }
  if (run_onnx) print_onnx_summary(std::cout, onnx_reports);
  // ONNX failures fail the run only when the corpus was asked for by name.
  failed = failed || (onnx_cli.explicit_request && onnx_any_failure(onnx_reports));
  if (!cli.json.empty()) {
    std::string err;
    nlohmann::json j = run_to_json(reports, opt.seed, opt.full);
    if (run_onnx) j["onnx_node_tests"] = onnx_to_json(onnx_reports);
    if (!write_json_file(cli.json, j, &err)) {
      std::cerr << "bp-conformance: " << err << "\n";
      bp_context_destroy(ctx);
      return 2;
    }
  }
  bp_context_destroy(ctx);
  return failed ? 1 : 0;
}
