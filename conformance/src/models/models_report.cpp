// The models group's console section, its JSON records (the worker streams
// them; --json carries them) and its cases (JUnit).
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>

#include "models/models_group.h"

namespace bpc {

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

double share(double part, double whole) { return whole > 0.0 ? 100.0 * part / whole : 0.0; }

std::string worst_node(const ModelResult& m) {
  if (!m.shadowed) return "worst node: - (the cpu is the shadow)";
  if (m.shadow_nodes == 0)
    return "worst node: - (no node compared" + (m.shadow_error.empty() ? ")" : ": " + m.shadow_error + ")");
  if (m.worst_node.empty()) {
    return "worst node: none, each of " + std::to_string(m.shadow_nodes) + " nodes equals the cpu's result" +
           (m.shadow_error.empty() ? "" : "; not compared: " + m.shadow_error);
  }
  std::string s = "worst node #" + std::to_string(m.worst_index) + " '" + m.worst_node + "' (" + m.worst_op +
                  "): max abs " + fmt("%.3g", m.worst_max_abs) + ", max rel " + fmt("%.3g", m.worst_max_rel) + ", " +
                  (std::isinf(m.worst_ratio) ? std::string("beyond its tolerance (NaN, infinity or sizes differ)")
                   : m.worst_ratio > 1.0     ? fmt("%.3g", m.worst_ratio) + "x its tolerance"
                                             : fmt("%.3g", m.worst_ratio * 100.0) + "% of its tolerance");
  if (m.beyond_nodes > 0) {
    s += "; " + std::to_string(m.beyond_nodes) + " of " + std::to_string(m.shadow_nodes) + " nodes beyond tolerance";
  }
  if (!m.shadow_error.empty()) s += "; not compared: " + m.shadow_error;
  return s;
}

}  // namespace

void print_models(std::ostream& os, const std::string& dir, const std::vector<ModelsReport>& reports) {
  os << "\nModels group: real networks in " << dir << " against torch's outputs (tolerance per model: its meta.json);\n"
     << "the worst node is the one furthest from the CPU run on the same inputs (rtol 1e-3, atol 1e-4).\n";
  for (const ModelsReport& r : reports) {
    os << "\n" << r.device << ": models: ";
    if (r.models.empty()) {
      os << "not run (" << r.error << ")\n";
      continue;
    }
    os << r.matched() << " of " << r.models.size() << " match torch\n";
    for (const ModelResult& m : r.models) {
      os << "  " << std::left << std::setw(20) << m.model << " " << std::setw(9) << m.outcome << std::right;
      if (m.outcome == "match" || m.outcome == "mismatch") {
        os << "max abs " << fmt("%-9.3g", m.max_abs) << " max rel " << fmt("%-9.3g", m.max_rel) << " nodes "
           << m.native_nodes << " native / " << m.fallback_nodes << " fallback / " << m.core_nodes << " core, time "
           << fmt("%.1f", share(m.native_seconds, m.seconds)) << "% native\n";
        if (m.to_device_copies + m.to_host_copies > 0) {
          os << std::string(32, ' ') << "moved per run: " << m.to_device_copies << " copies, "
             << fmt("%.2f", m.to_device_bytes / 1048576.0) << " MiB to the device; " << m.to_host_copies
             << " copies, " << fmt("%.2f", m.to_host_bytes / 1048576.0) << " MiB to the host\n";
        }
        os << std::string(32, ' ') << worst_node(m) << "\n";
      } else {
        os << m.message << "\n";
      }
      if (m.outcome == "mismatch") os << std::string(32, ' ') << m.message << "\n";
      if (m.outcome != "match" && !m.rerun.empty()) os << std::string(32, ' ') << "rerun: " << m.rerun << "\n";
    }
  }
}

nlohmann::json model_to_json(const ModelResult& m) {
  return {{"model", m.model},
          {"outcome", m.outcome},
          {"message", m.message},
          {"rerun", m.rerun},
          {"rtol", m.rtol},
          {"atol", m.atol},
          {"max_abs_error", m.max_abs},
          {"max_rel_error", m.max_rel},
          {"nodes",
           {{"total", m.nodes}, {"native", m.native_nodes}, {"fallback", m.fallback_nodes}, {"core", m.core_nodes}}},
          {"seconds",
           {{"total", m.seconds},
            {"native", m.native_seconds},
            {"fallback", m.fallback_seconds},
            {"core", m.core_seconds}}},
          {"transfers_per_run",
           {{"host_to_device_copies", m.to_device_copies},
            {"host_to_device_bytes", m.to_device_bytes},
            {"device_to_host_copies", m.to_host_copies},
            {"device_to_host_bytes", m.to_host_bytes}}},
          {"shadow",
           {{"checked", m.shadowed},
            {"worst_node", m.worst_node},
            {"worst_op", m.worst_op},
            {"worst_index", m.worst_index},
            {"worst_max_abs", m.worst_max_abs},
            {"worst_max_rel", m.worst_max_rel},
            {"worst_tolerance_share", m.worst_ratio > 1e300 ? nlohmann::json("inf") : nlohmann::json(m.worst_ratio)},
            {"nodes_compared", m.shadow_nodes},
            {"nodes_beyond_tolerance", m.beyond_nodes},
            {"error", m.shadow_error}}}};
}

ModelResult model_from_json(const nlohmann::json& j) {
  ModelResult m;
  m.model = j.value("model", "");
  m.outcome = j.value("outcome", "error");
  m.message = j.value("message", "");
  m.rerun = j.value("rerun", "");
  m.rtol = j.value("rtol", 0.0);
  m.atol = j.value("atol", 0.0);
  m.max_abs = j.value("max_abs_error", 0.0);
  m.max_rel = j.value("max_rel_error", 0.0);
  const nlohmann::json n = j.value("nodes", nlohmann::json::object());
  m.nodes = n.value("total", 0);
  m.native_nodes = n.value("native", 0);
  m.fallback_nodes = n.value("fallback", 0);
  m.core_nodes = n.value("core", 0);
  const nlohmann::json t = j.value("seconds", nlohmann::json::object());
  m.seconds = t.value("total", 0.0);
  m.native_seconds = t.value("native", 0.0);
  m.fallback_seconds = t.value("fallback", 0.0);
  m.core_seconds = t.value("core", 0.0);
  const nlohmann::json x = j.value("transfers_per_run", nlohmann::json::object());
  m.to_device_copies = x.value("host_to_device_copies", uint64_t{0});
  m.to_device_bytes = x.value("host_to_device_bytes", uint64_t{0});
  m.to_host_copies = x.value("device_to_host_copies", uint64_t{0});
  m.to_host_bytes = x.value("device_to_host_bytes", uint64_t{0});
    const nlohmann::json s = j.value("shadow", nlohmann::json::object());
  m.shadowed = s.value("checked", false);
  m.worst_node = s.value("worst_node", "");
  m.worst_op = s.value("worst_op", "");
  m.worst_index = s.value("worst_index", int64_t{-1});
  m.worst_max_abs = s.value("worst_max_abs", 0.0);
  m.worst_max_rel = s.value("worst_max_rel", 0.0);
  const nlohmann::json share = s.value("worst_tolerance_share", nlohmann::json(0.0));
  m.worst_ratio = share.is_number() ? share.get<double>() : HUGE_VAL;
  m.shadow_nodes = s.value("nodes_compared", 0);
  m.beyond_nodes = s.value("nodes_beyond_tolerance", 0);
  m.shadow_error = s.value("error", "");
  return m;
}

CaseResult model_case(const ModelsReport& r, const ModelResult& m) {
  CaseResult c;
  c.group = kGroupModels;
  c.backend = r.backend;
  c.device = r.device;
  c.op = m.model.empty() ? "models" : m.model;
  c.test_id = "Models/" + r.device + "/" + c.op;
  c.sample = -1;
  c.repro = m.rerun;
  if (m.model.empty()) {  // the group could not run on this device
    c.outcome = Outcome::kUnsupported;
    c.message = "not run: " + r.error;
    return c;
  }
  c.path = m.fallback_nodes > 0 ? "fallback" : m.native_nodes > 0 ? "native" : "core";
  std::ostringstream desc;
  if (m.outcome == "match" || m.outcome == "mismatch") {
    desc << "max abs " << fmt("%.3g", m.max_abs) << ", max rel " << fmt("%.3g", m.max_rel) << " (rtol "
         << fmt("%.3g", m.rtol) << ", atol " << fmt("%.3g", m.atol) << "); ";
  }
  desc << "nodes " << m.native_nodes << " native / " << m.fallback_nodes << " fallback / " << m.core_nodes
       << " core, time " << fmt("%.1f", share(m.native_seconds, m.seconds)) << "% native; " << worst_node(m);
  c.desc = desc.str();
  if (m.outcome == "match") {
    c.outcome = m.fallback_nodes > 0 ? Outcome::kFallbackPass : Outcome::kNativePass;
  } else {
    c.outcome = m.outcome == "crashed"   ? Outcome::kCrashed
                : m.outcome == "timeout" ? Outcome::kTimeout
                                         : Outcome::kFail;
    c.message = m.outcome + ": " + m.message;
  }
  return c;
}

}  // namespace bpc
