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

#include "backplane/backplane.h"
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
};

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
// bp_plugin_load; a name is looked up after discovery.
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
      continue;
    }
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
  CLI11_PARSE(app, argc, argv);

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
  if (!select_backends(ctx, cli.backends, &backends)) {
    bp_context_destroy(ctx);
    return 2;
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
  for (const auto& b : backends) {
    bp_backend_info_t info{};
    info.struct_size = sizeof info;
    if (bp_backend_info(ctx, b.first, &info) != BP_STATUS_OK) continue;
    RunOptions o = opt;
    o.backend_arg = b.second.empty() ? info.name : b.second;
    if (info.device_count <= 0) {
      reports.push_back(runner.no_device_report(b.first, o));
      continue;
    }
    for (int32_t d = 0; d < info.device_count; ++d) reports.push_back(runner.run_device(b.first, d, o));
  }

  bool failed = false;
  if (!cli.failures_only) print_legend(std::cout);
  for (const DeviceReport& r : reports) {
    if (!cli.failures_only) print_matrix(std::cout, r);
    print_failures(std::cout, r);
    failed = failed || totals_of(r).any_failure();
  }
  if (!cli.json.empty()) {
    std::string err;
    if (!write_json_file(cli.json, run_to_json(reports, opt.seed, opt.full), &err)) {
      std::cerr << "bp-conformance: " << err << "\n";
      bp_context_destroy(ctx);
      return 2;
    }
  }
  bp_context_destroy(ctx);
  return failed ? 1 : 0;
}
