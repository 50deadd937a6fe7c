// The models group: real networks (exported by torch with random weights,
// frontends/onnx/tests/export_models.py) run end to end on each device under
// test with bp-run, in its own process: per model, whether the outputs match
// torch's within the model's tolerance (meta.json), the share of nodes and of
// node time that ran on the backend's own kernels, and the node that diverges
// most from the CPU (bp-run --shadow). A model that crashes or hangs is a
// result, not a dead tool. The group reports; it does not change a verdict.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace bpc {

struct ModelResult {
  std::string model;
  bool ran = false;      // bp-run finished and printed its report
  bool match = false;    // every output within tolerance
  std::string detail;    // "max abs 2e-06, max rel 3e-04", or why it did not run
  int native_nodes = 0, fallback_nodes = 0, core_nodes = 0;
  double native_ms = 0, fallback_ms = 0, core_ms = 0;
  std::string worst_node;  // bp-run --shadow's worst node, or "every node matches the cpu"
};

struct ModelsReport {
  std::string device;  // "vendor_sim:0"
  std::vector<ModelResult> models;
  int matched() const;
};

// The models directory to use: `requested` when given and it holds models
// ("none" turns the group off), else the build tree's (BPC_DEFAULT_MODELS_DIR)
// when it holds models; "" when there is none.
std::string models_dir_to_use(const std::string& requested);

// Runs every model under `dir` on `device` with the bp-run at `bp_run`, each
// limited to `timeout_s` seconds.
ModelsReport run_models(const std::string& bp_run, const std::string& dir, const std::string& device,
                        int timeout_s);

void print_models(std::ostream& os, const std::vector<ModelsReport>& reports);
// "models 6 of 6 match (resnet18, ...)" for the verdict line.
std::string models_verdict(const ModelsReport& r);
nlohmann::json models_to_json(const std::vector<ModelsReport>& reports);

}  // namespace bpc
