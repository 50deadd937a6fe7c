#include <cmath>
#include <fstream>

#include "report.h"

namespace bpc {

namespace {
// JSON has no NaN or inf: write them as strings.
nlohmann::json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}
double number_from(const nlohmann::json& j) {
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "nan") return NAN;
    return s == "inf" ? INFINITY : -INFINITY;
  }
  return j.is_number() ? j.get<double>() : 0.0;
}
nlohmann::json cells_to_json(const std::vector<std::string>& ops,
                             const std::map<std::string, std::array<CellResult, kNumDTypes>>& cells) {
  nlohmann::json out = nlohmann::json::object();
  for (const std::string& op : ops) {
    const auto it = cells.find(op);
    if (it == cells.end()) continue;
    nlohmann::json row = nlohmann::json::object();
    for (int k = 0; k < kNumDTypes; ++k) {
      const CellResult& c = it->second[static_cast<size_t>(k)];
      if (c.outcome == Outcome::kNotClaimed) continue;
      row[dtype_name(dtype_at(k))] = {{"outcome", outcome_name(c.outcome)}, {"cases", c.cases},
                                      {"failed", c.failed}, {"reason", c.reason}};
    }
    if (!row.empty()) out[op] = row;
  }
  return out;
}

}  // namespace

nlohmann::json case_to_json(const CaseResult& c) {
  nlohmann::json j;
  j["group"] = c.group;
  j["test_id"] = c.test_id;
  j["backend"] = c.backend;
  j["device"] = c.device;
  j["op"] = c.op;
  j["dtype"] = c.dtype;
  j["sample"] = c.sample;
  j["desc"] = c.desc;
  j["seed"] = c.seed;
  j["input_shapes"] = c.input_shapes;
  j["output_shape"] = c.output_shape;
  j["inputs"] = c.inputs;
  j["outcome"] = outcome_name(c.outcome);
  j["path"] = c.path;
  j["message"] = c.message;
  if (c.has_numbers) {
    j["worst_index"] = c.worst_index;
    j["expected"] = number(c.expected);
    j["actual"] = number(c.actual);
    j["max_abs_error"] = number(c.max_abs);
    j["max_rel_error"] = number(c.max_rel);
    j["max_ulp_error"] = number(c.max_ulp);
  }
  j["repro"] = c.repro;
  return j;
}

CaseResult case_from_json(const nlohmann::json& j) {
  CaseResult c;
  c.group = j.value("group", std::string(kGroupOps));
  c.test_id = j.value("test_id", "");
  c.backend = j.value("backend", "");
  c.device = j.value("device", "");
  c.op = j.value("op", "");
  c.dtype = j.value("dtype", "");
  c.sample = j.value("sample", -1);
  c.desc = j.value("desc", "");
  c.seed = j.value("seed", uint64_t{0});
  if (j.contains("input_shapes")) c.input_shapes = j["input_shapes"].get<std::vector<std::vector<int64_t>>>();
  if (j.contains("output_shape")) c.output_shape = j["output_shape"].get<std::vector<int64_t>>();
  c.inputs = j.value("inputs", "");
  if (!outcome_from_name(j.value("outcome", "fail"), &c.outcome)) c.outcome = Outcome::kFail;
  c.path = j.value("path", "");
  c.message = j.value("message", "");
  if (j.contains("worst_index")) {
    c.has_numbers = true;
    c.worst_index = j["worst_index"].get<int64_t>();
    c.expected = number_from(j["expected"]);
    c.actual = number_from(j["actual"]);
    c.max_abs = number_from(j["max_abs_error"]);
    c.max_rel = number_from(j["max_rel_error"]);
    c.max_ulp = number_from(j["max_ulp_error"]);
  }
  c.repro = j.value("repro", "");
  return c;
}

nlohmann::json run_to_json(const std::vector<DeviceReport>& reports, uint64_t seed, bool full) {
  nlohmann::json root;
  root["tool"] = "bp-conformance";
  root["seed"] = seed;
  root["tier"] = full ? "full" : "quick";
  root["devices"] = nlohmann::json::array();
  for (const DeviceReport& r : reports) {
    nlohmann::json d;
    d["backend"] = r.backend;
    d["device"] = r.device;
    d["device_name"] = r.device_name;
    const Totals t = totals_of(r);
    d["totals"] = {{"native", t.native},           {"fallback", t.fallback},       {"fail", t.fail},
                   {"unsupported", t.unsupported}, {"untested", t.untested},       {"crashed", t.crashed},
                   {"timeout", t.timeout},         {"expected_fail", t.xfail},     {"unexpected_pass", t.xpass},
                   {"wrote_then_failed", t.wrote}, {"not_reached", t.not_reached}, {"core_pass", t.core},
                   {"cast_pass", t.cast}};
    d["cells"] = cells_to_json(r.ops, r.cells);
    d["fallback_cells"] = cells_to_json(r.ops, r.fallback_cells);
    d["tests_expected"] = r.tests_expected;
    d["tests_reported"] = r.tests_reported;
    d["tests_filed_by_parent"] = r.tests_filed;
    d["verdict"] = verdict_of(r, ReportOptions{}).summary;
    d["cases"] = nlohmann::json::array();
    for (const CaseResult& c : r.cases) d["cases"].push_back(case_to_json(c));
    root["devices"].push_back(d);
  }
  return root;
}

bool write_json_file(const std::string& path, const nlohmann::json& j, std::string* err) {
  std::ofstream f(path);
  if (!f) {
    *err = "cannot open " + path + " for writing";
    return false;
  }
  f << j.dump(2) << "\n";
  return static_cast<bool>(f);
}

}  // namespace bpc
