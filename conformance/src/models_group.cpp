#include "models_group.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace bpc {
namespace {

bool IsFile(const std::string& path) {
  struct stat sb;
  return stat(path.c_str(), &sb) == 0 && S_ISREG(sb.st_mode);
}

std::vector<std::string> ModelNames(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name[0] != '.' && IsFile(dir + "/" + name + "/model.onnx") && IsFile(dir + "/" + name + "/meta.json")) {
        names.push_back(name);
      }
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Full precision: std::to_string would print a 1e-13 tolerance as 0.000000.
std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Reads "<count> nodes <ms> ms" after `key` in a bp-run report line.
void ReadShare(const std::string& line, const char* key, int* nodes, double* ms) {
  std::istringstream in(line);
  std::string word;
  in >> word;
  if (word != key) return;
  int n = 0;
  double t = 0;
  std::string unit;
  // Other lines start with the same word ("fallback time by ONNX op"): only a
  // share line parses.
  if (in >> n >> unit >> t && unit == "nodes") {
    *nodes = n;
    *ms = t;
  }
}

ModelResult RunOne(const std::string& bp_run, const std::string& dir, const std::string& model,
                   const std::string& device, int timeout_s) {
  ModelResult r;
  r.model = model;
  const std::string d = dir + "/" + model;
  nlohmann::json meta;
  try {
    std::ifstream f(d + "/meta.json");
    f >> meta;
  } catch (const std::exception& e) {
    r.detail = std::string("meta.json unreadable: ") + e.what();
    return r;
  }
  if (!meta.contains("rtol") || !meta.contains("atol")) {
    r.detail = "meta.json has no tolerance (re-export the models)";
    return r;
  }
  std::string cmd = "timeout " + std::to_string(timeout_s) + " " + Quote(bp_run) + " " + Quote(d + "/model.onnx") +
                    " --device " + Quote(device) + " --report --shadow --expect-rtol " +
                    Number(meta["rtol"].get<double>()) + " --expect-atol " + Number(meta["atol"].get<double>());
  const auto& inputs = meta["inputs"];
  for (size_t k = 0; k < inputs.size(); ++k) {
    cmd += " --input " + Quote(inputs[k].get<std::string>() + "=" + d + "/input_" + std::to_string(k) + ".npy");
  }
  const auto& outputs = meta["outputs"];
  for (size_t k = 0; k < outputs.size(); ++k) {
    cmd += " --expect " + Quote(outputs[k].get<std::string>() + "=" + d + "/expected_" + std::to_string(k) + ".npy");
  }
  cmd += " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) {
    r.detail = "could not start bp-run";
    return r;
  }
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = pclose(p);
  bool mismatch = false, any_expect = false;
  std::string worst, diffs;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const size_t at = line.find("expect ");
    if (at != std::string::npos && line.find(": match") != std::string::npos) {
      any_expect = true;
      const size_t open = line.find('(');
      if (open != std::string::npos) diffs = line.substr(open + 1, line.rfind(')') - open - 1);
    } else if (at != std::string::npos && line.find(": MISMATCH") != std::string::npos) {
      any_expect = true;
      mismatch = true;
      diffs = line.substr(line.find(':') + 2);
    }
    ReadShare(line, "native", &r.native_nodes, &r.native_ms);
    ReadShare(line, "fallback", &r.fallback_nodes, &r.fallback_ms);
    ReadShare(line, "core", &r.core_nodes, &r.core_ms);
    if (line.rfind("shadow: worst", 0) == 0 || line.rfind("shadow: every node", 0) == 0) worst = line.substr(8);
    if (worst.empty() && line.rfind("shadow: first divergent", 0) == 0) worst = line.substr(8);
  }
  r.worst_node = worst;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 124) {
    r.detail = "timed out after " + std::to_string(timeout_s) + " s";
  } else if (WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) > 128)) {
    r.detail = "bp-run crashed";
  } else if (!any_expect) {
    // bp-run's own one-line error (an unmapped node, a failed kernel).
    std::string last;
    std::istringstream again(out);
    for (std::string line; std::getline(again, line);) {
      if (line.rfind("bp-run:", 0) == 0) last = line;
    }
    r.detail = last.empty() ? "bp-run exited with status " + std::to_string(WEXITSTATUS(status)) : last;
  } else {
    r.ran = true;
    r.match = !mismatch;
    r.detail = diffs;
  }
  return r;
}

}  // namespace

int ModelsReport::matched() const {
  return static_cast<int>(std::count_if(models.begin(), models.end(), [](const ModelResult& m) { return m.match; }));
}

std::string models_dir_to_use(const std::string& requested) {
  if (requested == "none") return "";
  if (!requested.empty()) return ModelNames(requested).empty() ? "" : requested;
#ifdef BPC_DEFAULT_MODELS_DIR
  if (!ModelNames(BPC_DEFAULT_MODELS_DIR).empty()) return BPC_DEFAULT_MODELS_DIR;
#endif
  return "";
}

ModelsReport run_models(const std::string& bp_run, const std::string& dir, const std::string& device,
                        int timeout_s) {
  ModelsReport rep;
  rep.device = device;
  for (const std::string& m : ModelNames(dir)) rep.models.push_back(RunOne(bp_run, dir, m, device, timeout_s));
  return rep;
}

void print_models(std::ostream& os, const std::vector<ModelsReport>& reports) {
  for (const ModelsReport& r : reports) {
    os << "\nModels on " << r.device << ": " << r.matched() << " of " << r.models.size()
       << " match torch (bp-run; native share of nodes / of node time; worst node against the cpu)\n";
    for (const ModelResult& m : r.models) {
      char line[512];
      if (!m.ran) {
        std::snprintf(line, sizeof line, "  %-20s NOT RUN   %s\n", m.model.c_str(), m.detail.c_str());
      } else {
        const int nodes = m.native_nodes + m.fallback_nodes + m.core_nodes;
        const double ms = m.native_ms + m.fallback_ms + m.core_ms;
        std::snprintf(line, sizeof line, "  %-20s %-9s %s; native %d of %d nodes (%.0f%% of the time); %s\n",
                      m.model.c_str(), m.match ? "match" : "MISMATCH", m.detail.c_str(), m.native_nodes, nodes,
                      ms > 0 ? 100.0 * m.native_ms / ms : 0.0, m.worst_node.c_str());
      }
      os << line;
    }
  }
}

std::string models_verdict(const ModelsReport& r) {
  std::string names;
  for (const ModelResult& m : r.models) names += (names.empty() ? "" : ", ") + m.model;
  return "models " + std::to_string(r.matched()) + " of " + std::to_string(r.models.size()) + " match (" + names + ")";
}

nlohmann::json models_to_json(const std::vector<ModelsReport>& reports) {
  nlohmann::json j = nlohmann::json::array();
  for (const ModelsReport& r : reports) {
    nlohmann::json models = nlohmann::json::array();
    for (const ModelResult& m : r.models) {
      models.push_back({{"model", m.model}, {"ran", m.ran}, {"match", m.match}, {"detail", m.detail},
                        {"native_nodes", m.native_nodes}, {"fallback_nodes", m.fallback_nodes},
                        {"core_nodes", m.core_nodes}, {"native_ms", m.native_ms}, {"fallback_ms", m.fallback_ms},
                        {"core_ms", m.core_ms}, {"worst_node", m.worst_node}});
    }
    j.push_back({{"device", r.device}, {"models", models}});
  }
  return j;
}

}  // namespace bpc
