// The models group: where the models are, running each one in a child per
// backend device, and what main() gets back (see models_group.h).
#include "models/models_group.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

#include "child_process.h"

namespace bpc {

int ModelsReport::matched() const {
  int n = 0;
  for (const ModelResult& m : models) n += m.outcome == "match";
  return n;
}

namespace {

// What export_models.py leaves in the directory when it could not export
// (python3-torch or python3-torchvision missing): its reason, one line.
const char* kNotExportedNote = "NOT_EXPORTED.txt";

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

std::string self_dir() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  buf[n] = 0;
  const std::string exe = buf;
  return exe.substr(0, exe.rfind('/'));
}

// The exporter, installed beside bp-conformance (bin/bp-export-models).
std::string export_command() { return self_dir() + "/bp-export-models"; }

std::string first_line_of(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// One model on one target: in a child (a crash or a timeout is that model's
// outcome) or in this process.
ModelResult run_isolated(bp_context_t* ctx, const Target& t, const std::string& dir, const std::string& name,
                         bool isolate, std::vector<std::string> argv, double timeout_s) {
  if (!isolate) return run_model(ctx, bp_device_t{t.backend, t.device}, dir, name);
  argv.insert(argv.end(), {"--worker-backend", t.backend_name, "--worker-device", std::to_string(t.device), "--models",
                           dir, "--models-worker", name});
  const ChildOutcome child = run_child(argv, timeout_s);
  for (const nlohmann::json& j : child.records) {
    if (j.is_object() && j.value("model", "") == name) return model_from_json(j);
  }
  ModelResult r;
  r.model = name;
  r.outcome = child.status == ChildOutcome::kTimeout   ? "timeout"
              : child.status == ChildOutcome::kCrashed ? "crashed"
                                                       : "error";
  r.message = child.status == ChildOutcome::kExited
                  ? "the worker exited (code " + std::to_string(child.exit_code) + ") without a result"
                  : child.message;
  ModelMeta meta;
  std::string err;
  if (read_model_meta(dir + "/" + name, &meta, &err)) r.rerun = model_rerun(dir, name, meta, t.device_label, true);
  return r;
}

}  // namespace

void add_models_options(CLI::App& app, ModelsCli* cli) {
  app.add_option("--models", cli->dir,
                 "exported models to run on each backend (export_models.py's output; default: the build tree's "
                 "models directory, in full runs); a model that does not match fails the run; given, so does an "
                 "empty DIR; 'none' skips")
      ->type_name("DIR")
      ->each([cli](const std::string&) { cli->explicit_request = true; });
  app.add_flag("--no-models", cli->no_models, "skip the models group");
  app.add_option("--models-worker", cli->worker_model)->group("");
}

std::string models_dir(const ModelsCli& cli) {
  if (!cli.dir.empty()) return cli.dir;
  // The build tree has the install tree's layout (share/backplane/models
  // links to the build tree's models), so no build path is compiled in.
  return self_dir() + "/../share/backplane/models";
}

std::vector<std::string> list_models(const std::string& dir, std::string* err) {
  std::vector<std::string> out;
  if (exists(dir + "/" + kNotExportedNote)) {
    *err = first_line_of(dir + "/" + kNotExportedNote);
    return out;
  }
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    *err = "no exported models in " + dir + " (make them with: " + export_command() + " " + dir + ")";
    return out;
  }
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name[0] != '.' && exists(dir + "/" + name + "/model.onnx") && exists(dir + "/" + name + "/meta.json")) {
      out.push_back(name);
    }
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  if (out.empty()) *err = "no exported model in " + dir + " (make them with: " + export_command() + " " + dir + ")";
  return out;
}

bool read_model_meta(const std::string& model_dir, ModelMeta* out, std::string* err) {
  const std::string path = model_dir + "/meta.json";
  std::ifstream f(path);
  if (!f) {
    *err = "cannot read " + path;
    return false;
  }
  try {
    const nlohmann::json j = nlohmann::json::parse(f);
    out->inputs = j.at("inputs").get<std::vector<std::string>>();
    out->outputs = j.at("outputs").get<std::vector<std::string>>();
    if (!j.contains("rtol") || !j.contains("atol")) {
      *err = path + " has no tolerance (rtol, atol): exported by an older export_models.py; run it again";
      return false;
    }
    out->rtol = j.at("rtol").get<double>();
    out->atol = j.at("atol").get<double>();
  } catch (const nlohmann::json::exception& e) {
    *err = path + ": " + e.what();
    return false;
  }
  return true;
}

std::string reference_spread_error(const std::string& output, const std::vector<double>& values) {
  double mean = 0.0, var = 0.0;
  for (double v : values) mean += v / static_cast<double>(values.size());
  for (double v : values) var += (v - mean) * (v - mean) / static_cast<double>(values.size());
  const double spread = std::sqrt(var);
  if (spread >= kMinReferenceSpread) return "";  // NaN fails too
  std::ostringstream os;
  os << "torch's reference " << output << " has a spread (std over " << values.size() << " elements) of " << spread
     << ", below the floor " << kMinReferenceSpread
     << ": the exported weights make the activations vanish, so any kernel would match; export the model again with "
     << export_command();
  return os.str();
}

std::string model_rerun(const std::string& dir, const std::string& name, const ModelMeta& meta,
                        const std::string& device, bool expect) {
  const std::string d = dir + "/" + name;
  std::ostringstream os;
  os.precision(9);  // the tolerance as meta.json has it
  os << "bp-run " << d << "/model.onnx --device " << device;
  for (size_t k = 0; k < meta.inputs.size(); ++k)
    os << " --input " << meta.inputs[k] << "=" << d << "/input_" << k << ".npy";
  if (expect) {
    for (size_t k = 0; k < meta.outputs.size(); ++k) {
      os << " --expect " << meta.outputs[k] << "=" << d << "/expected_" << k << ".npy";
    }
    os << " --expect-rtol " << meta.rtol << " --expect-atol " << meta.atol;
  }
  os << " --shadow";
  return os.str();
}

int run_models_worker(bp_context_t* ctx, const std::string& backend, int32_t device, const ModelsCli& cli) {
  int32_t b = -1;
  if (bp_backend_find(ctx, backend.c_str(), &b) != BP_STATUS_OK) {
    std::cerr << "bp-conformance models worker: no backend " << backend << "\n";
    return 3;
  }
  const ModelResult r = run_model(ctx, bp_device_t{b, device}, models_dir(cli), cli.worker_model);
  emit_line({{"record", model_to_json(r)}});
  return 0;
}

ModelsGroup run_models_group(bp_context_t* ctx, const std::vector<Target>& targets, const ModelsCli& cli,
                             bool subset_selected, bool isolate, const std::vector<std::string>& worker_argv,
                             const std::map<std::string, std::string>& backend_args, double timeout_s,
                             const std::function<void(const Target&, const std::string&)>& progress, std::ostream& os,
                             std::vector<DeviceReport>* reports) {
  ModelsGroup g;
  if (cli.no_models || cli.dir == "none" || (subset_selected && !cli.explicit_request)) return g;
  g.selected = true;
  const std::string dir = models_dir(cli);
  std::string why;
  std::vector<std::string> names = list_models(dir, &why);
  if (!models_support_built()) {
    names.clear();
    why = "bp-conformance was built without the ONNX frontend (libonnx-dev and protobuf not found)";
  }
  for (const Target& t : targets) {
    ModelsReport rep;
    rep.backend = t.backend_name;
    rep.device = t.device_label;
    rep.error = names.empty() ? why : "";
    const auto arg = backend_args.find(t.backend_name);
    const bool by_path = arg != backend_args.end() && arg->second.find('/') != std::string::npos;
    for (const std::string& name : names) {
      progress(t, "model " + name);
      rep.models.push_back(run_isolated(ctx, t, dir, name, isolate, worker_argv, timeout_s));
      std::string& rerun = rep.models.back().rerun;
      if (by_path && !rerun.empty()) rerun = "BACKPLANE_PLUGINS=" + arg->second + " " + rerun;
    }
    g.reports.push_back(rep);
    // A model that ran and did not match fails any run (issue 42: a plain
    // run, CI's main job, must not stay green over a wrong network); a
    // group that could not run fails only a run that asked for it.
    g.failed = g.failed || rep.matched() < static_cast<int>(rep.models.size());
    g.failed = g.failed || (cli.explicit_request && names.empty());
  }
  print_models(os, dir, g.reports);
  // One case per (device, model), or one "not run" case per device.
  for (const ModelsReport& r : g.reports) {
    for (DeviceReport& d : *reports) {
      if (d.device != r.device) continue;
      if (r.models.empty()) d.cases.push_back(model_case(r, ModelResult{}));
      for (const ModelResult& m : r.models) d.cases.push_back(model_case(r, m));
    }
  }
  return g;
}

std::string models_verdict_suffix(const ModelsGroup& g, const std::string& device) {
  for (const ModelsReport& r : g.reports) {
    if (r.device != device) continue;
    if (r.models.empty()) return "; models: not run (" + r.error + ")";
    std::vector<std::string> match, other;
    for (const ModelResult& m : r.models) {
      if (m.outcome == "match") {
        match.push_back(m.model);
      } else {
        other.push_back(m.model + " " + m.outcome);
      }
    }
    std::string s = std::string("; models ") + (other.empty() ? "" : "FAIL: ") + std::to_string(match.size()) +
                    " of " + std::to_string(r.models.size()) + " match" +
                    (match.empty() ? "" : ": " + join(match, ", "));
    if (!other.empty()) s += " (" + join(other, ", ") + ")";
    return s;
  }
  return "";
}

nlohmann::json models_to_json(const ModelsGroup& g) {
  nlohmann::json a = nlohmann::json::array();
  for (const ModelsReport& r : g.reports) {
    nlohmann::json d = {{"backend", r.backend},
                        {"device", r.device},
                        {"error", r.error},
                        {"total", r.models.size()},
                        {"matched", r.matched()}};
    d["models"] = nlohmann::json::array();
    for (const ModelResult& m : r.models) d["models"].push_back(model_to_json(m));
    a.push_back(d);
  }
  return a;
}

}  // namespace bpc
