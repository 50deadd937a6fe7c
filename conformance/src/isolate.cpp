#include "isolate.h"

#include <array>
#include <cstdlib>

namespace bpc {

DeviceReport run_device_isolated(Runner& runner, int32_t backend, int32_t device_index, const RunOptions& opt,
                                 const std::vector<std::string>& worker_argv, double timeout_s) {
  uint64_t caps = 0;
  DeviceReport report = runner.empty_report(backend, device_index, &caps);
  for (const OpEntry& op : runner.ops()) {
    if (!glob_match(opt.op_glob, op.name)) continue;
    report.ops.push_back(op.name);
    auto& cells = report.cells[op.name];
    if (op.claim == nullptr) continue;
    bool any = false;
    for (int k = 0; k < kNumDTypes; ++k) {
      any = any || (op.claim->claims(dtype_at(k)) && (!opt.has_dtype || opt.dtype == dtype_at(k)));
    }
    if (!any) continue;
    std::vector<std::string> argv = worker_argv;
    argv.insert(argv.end(), {"--worker-device", std::to_string(device_index), "--op", op.name});
    ChildOutcome child = run_child(argv, timeout_s);
    std::array<bool, kNumDTypes> seen{};
    for (CaseResult& c : child.cases) {
      DType d;
      if (!dtype_from_name(c.dtype, &d)) continue;
      seen[static_cast<size_t>(d)] = true;
      fold_case(&cells[static_cast<size_t>(d)], c);
      report.cases.push_back(std::move(c));
    }
    if (child.status == ChildOutcome::kExited) continue;
    const Outcome o = child.status == ChildOutcome::kTimeout ? Outcome::kTimeout : Outcome::kCrashed;
    // The case that was running gets the crash; claimed dtypes that never
    // started are reported too, so no cell silently passes.
    std::string running_dtype = child.last_started.substr(0, child.last_started.find(' '));
    for (int k = 0; k < kNumDTypes; ++k) {
      const DType d = dtype_at(k);
      if (!op.claim->claims(d) || (opt.has_dtype && opt.dtype != d)) continue;
      const bool running = running_dtype == dtype_name(d);
      if (seen[static_cast<size_t>(k)] && !running) continue;
      CaseResult r;
      r.backend = report.backend;
      r.device = report.device;
      r.op = op.name;
      r.dtype = dtype_name(d);
      r.seed = opt.seed;
      r.sample = -1;
      if (running) {
        const size_t sp = child.last_started.rfind(' ');
        r.sample = std::atoi(child.last_started.c_str() + sp + 1);
      }
      r.outcome = child.status == ChildOutcome::kSpawnFailed ? Outcome::kFail : o;
      r.message = running ? child.message : child.message + " (this dtype had not run yet)";
      if (r.sample >= 0) {
        r.repro = "bp-conformance --backend " + (opt.backend_arg.empty() ? r.backend : opt.backend_arg) +
                  " --op " + op.name + " --dtype " + r.dtype + " --sample " + std::to_string(r.sample) +
                  " --seed " + std::to_string(opt.seed) + " --no-isolate";
      }
      fold_case(&cells[static_cast<size_t>(k)], r);
      report.cases.push_back(r);
    }
  }
  return report;
}

}  // namespace bpc
