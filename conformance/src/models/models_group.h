// bp-conformance's models group: real networks (exported by
// frontends/onnx/tests/export_models.py, with torch's outputs for fixed
// inputs) run through the ONNX frontend on each backend device, one isolated
// child per model. Per model: whether every output matches torch's within
// the model's tolerance (rtol and atol in its meta.json, set by the export),
// the nodes and the time that ran natively, through
// a fallback or only in the core, and the node whose output is furthest from
// the CPU's for the same inputs (bponnx::ShadowCheck; not on the CPU itself).
//
// The group does not change a backend's verdict line's CONFORMANT (see
// docs/conformance.md), but a model that does not match makes the exit code
// 1; with --models given, so does a group that cannot run.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "backplane/backplane.h"
#include "result.h"
#include "target.h"

namespace CLI {
class App;
}

namespace bpc {

struct ModelResult {
  std::string model;    // "resnet18"
  std::string outcome;  // match mismatch error crashed timeout
  std::string message;  // mismatch: the first output beyond tolerance; error/crashed/timeout: what happened
  std::string rerun;    // the bp-run command that reruns it, with --expect and --shadow
  double rtol = 0.0, atol = 0.0;
  double max_abs = 0.0, max_rel = 0.0;  // over every output
  int nodes = 0, native_nodes = 0, fallback_nodes = 0, core_nodes = 0;
  double seconds = 0.0, native_seconds = 0.0, fallback_seconds = 0.0,
         core_seconds = 0.0;  // sums of each node's fastest timed run
  // What one run moved between the host and the device (the transfer
  // counters, bp_transfer_stats, over the last timed run): fallbacks, inputs
  // and outputs. 0 on the CPU backend.
  uint64_t to_device_copies = 0, to_device_bytes = 0, to_host_copies = 0, to_host_bytes = 0;
  // The shadow check (not run on the CPU backend: it would compare the CPU with itself).
  bool shadowed = false;
  std::string worst_node, worst_op;  // "" when no node was compared or every node equals the CPU's
  int64_t worst_index = -1;
  double worst_max_abs = 0.0, worst_max_rel = 0.0, worst_ratio = 0.0;  // ratio > 1: beyond the node's tolerance
  int shadow_nodes = 0;                                                // nodes compared with the CPU
  int beyond_nodes = 0;                                                // ... and beyond the shadow tolerance
  std::string shadow_error;                                            // the first node the CPU could not run, if any
};

struct ModelsReport {
  std::string backend, device;  // "cpu", "cpu:0"
  std::string error;            // why nothing ran ("" when models ran)
  std::vector<ModelResult> models;
  int matched() const;
};

struct ModelsCli {
  std::string dir;                // --models DIR ("": the default directory; "none": skip the group)
  bool no_models = false;         // --no-models
  bool explicit_request = false;  // --models given
  std::string worker_model;       // hidden: run this one model and stream its record
};
void add_models_options(CLI::App& app, ModelsCli* cli);

// The models directory: --models; else <prefix>/share/backplane/models
// relative to this binary (in the build tree, a link to its models directory;
// installed, where bp-export-models can write them).
std::string models_dir(const ModelsCli& cli);

// The models under `dir` (directories with model.onnx and meta.json),
// sorted; empty with *err saying why (the export's own note when it could
// not run, e.g. python3-torch missing).
std::vector<std::string> list_models(const std::string& dir, std::string* err);

// An exported model's meta.json: input and output names (files input_<k>.npy,
// expected_<k>.npy beside it) and its tolerance.
struct ModelMeta {
  std::vector<std::string> inputs, outputs;
  double rtol = 0.0, atol = 0.0;
};
bool read_model_meta(const std::string& model_dir, ModelMeta* out, std::string* err);

// The smallest spread (standard deviation over its elements) a float output
// of torch's reference may have. Below it the exported weights made the
// activations vanish (mobilenet_v3_small's once had 1.7e-10), and any kernel
// would match within the tolerance: the model is refused (outcome error).
// export_models.py checks the same floor (MIN_SPREAD) when it exports.
inline constexpr double kMinReferenceSpread = 1e-2;
// "" when `values` spread at least kMinReferenceSpread; else why `output` is refused.
std::string reference_spread_error(const std::string& output, const std::vector<double>& values);
// The bp-run command that reruns a model on `device` ("vendor_sim:0") with
// the shadow check; with `expect` it also compares the outputs with torch's.
std::string model_rerun(const std::string& dir, const std::string& name, const ModelMeta& meta,
                        const std::string& device, bool expect);

// Runs one exported model on `dev`, in this process (models_run.cpp).
ModelResult run_model(bp_context_t* ctx, bp_device_t dev, const std::string& dir, const std::string& name);
// False when bp-conformance was built without the ONNX frontend.
bool models_support_built();

// Worker mode: runs `cli.worker_model` on device `device` of `backend`,
// writing one {"record": ...} line to stdout; returns the exit code.
int run_models_worker(bp_context_t* ctx, const std::string& backend, int32_t device, const ModelsCli& cli);

// What main() gets back from the group.
struct ModelsGroup {
  bool selected = false;  // the group was part of the run (ran, or says why not)
  std::vector<ModelsReport> reports;
  bool failed = false;  // a model did not match (crashed, timed out, erred), or --models given and nothing ran
};

// The whole group: runs every model on every target (each in a child made
// from `worker_argv` when `isolate`; `backend_args` says how the user named
// each backend, so a rerun line of a plugin given by path loads it through
// BACKPLANE_PLUGINS), prints its section, and files one
// case per (device, model) under group "models" in `reports` (JSON and
// JUnit carry them). Not selected (returns at once) with --no-models or
// --models none, or when `subset_selected` (--op, --dtype, --group,
// --sample or --quick narrowed the run) and --models was not given.
ModelsGroup run_models_group(bp_context_t* ctx, const std::vector<Target>& targets, const ModelsCli& cli,
                             bool subset_selected, bool isolate, const std::vector<std::string>& worker_argv,
                             const std::map<std::string, std::string>& backend_args, double timeout_s,
                             const std::function<void(const Target&, const std::string&)>& progress, std::ostream& os,
                             std::vector<DeviceReport>* reports);

// "; models 6 of 6 match: resnet18, ..." for the verdict line of `device`
// ("" when the group was not selected).
std::string models_verdict_suffix(const ModelsGroup& g, const std::string& device);
nlohmann::json models_to_json(const ModelsGroup& g);

// Reports (models_report.cpp).
inline constexpr const char* kGroupModels = "models";
void print_models(std::ostream& os, const std::string& dir, const std::vector<ModelsReport>& reports);
nlohmann::json model_to_json(const ModelResult& m);
ModelResult model_from_json(const nlohmann::json& j);
// The model as a CaseResult of group "models" (op = the model's name).
CaseResult model_case(const ModelsReport& r, const ModelResult& m);

}  // namespace bpc
