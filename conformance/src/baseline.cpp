#include "baseline.h"

#include <fstream>
#include <map>
#include <tuple>

namespace bpc {

namespace {

using Key = std::tuple<std::string, std::string, std::string, std::string>;  // device, group, op, dtype
struct Cell {
  std::string outcome, reason;
};

std::map<Key, Cell> cells_of(const nlohmann::json& run) {
  std::map<Key, Cell> out;
  if (!run.contains("devices") || !run["devices"].is_array()) return out;
  for (const auto& d : run["devices"]) {
    const std::string device = d.value("device", "");
    for (const char* group : {"cells", "fallback_cells"}) {
      if (!d.contains(group) || !d[group].is_object()) continue;
      const std::string g = std::string(group) == "cells" ? "ops" : "fallback";
      for (const auto& [op, row] : d[group].items()) {
        for (const auto& [dtype, cell] : row.items()) {
          out[Key{device, g, op, dtype}] = Cell{cell.value("outcome", ""), cell.value("reason", "")};
        }
      }
    }
    if (d.contains("cases") && d["cases"].is_array()) {
      for (const auto& c : d["cases"]) {
        const std::string g = c.value("group", "");
        if (g != "abi" && g != "streams") continue;  // whole-test groups: one case per test
        out[Key{device, g, c.value("op", ""), ""}] = Cell{c.value("outcome", ""), c.value("message", "")};
      }
    }
  }
  return out;
}

// 0: nothing ran (not_reached too: no kernel ran); 1: bad; 2: pass via fallback; 3: native pass (or any pass, ABI
// and streams groups; or a pass in the core alone, which earlier reports counted as native; or a pass on the native kernel
// after a cast, which earlier reports counted as native).
int rank(const std::string& o) {
  if (o == "native_pass" || o == "core_pass" || o == "cast_pass") return 3;
  if (o == "fallback_pass") return 2;
  if (o == "fail" || o == "wrote_then_failed" || o == "crashed" || o == "timeout" || o == "unexpected_pass" || o == "expected_fail") return 1;
  return 0;
}

}  // namespace

BaselineDiff diff_runs(const nlohmann::json& before, const nlohmann::json& now) {
  BaselineDiff d;
  const std::map<Key, Cell> a = cells_of(before), b = cells_of(now);
  for (const auto& [key, cell] : b) {
    const auto it = a.find(key);
    if (it == a.end()) {
      ++d.only_now;
      continue;
    }
    const int was = rank(it->second.outcome), is = rank(cell.outcome);
    CellChange ch{std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key),
                  it->second.outcome, cell.outcome, cell.reason};
    if (was == 0 || is == 0 || was == is) {
      ++d.unchanged;  // unsupported/untested on either side is not a change of correctness
    } else if (is < was) {
      d.regressions.push_back(ch);
    } else {
      d.fixes.push_back(ch);
    }
  }
  for (const auto& kv : a) d.only_before += b.count(kv.first) == 0;
  return d;
}

bool diff_against_baseline(const std::string& path, const nlohmann::json& now, BaselineDiff* out, std::string* err) {
  std::ifstream f(path);
  if (!f) {
    *err = "--baseline: cannot read " + path;
    return false;
  }
  const nlohmann::json before = nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
  if (before.is_discarded() || !before.is_object() || before.value("tool", "") != "bp-conformance") {
    *err = "--baseline: " + path + " is not a bp-conformance --json report";
    return false;
  }
  *out = diff_runs(before, now);
  return true;
}

void print_baseline_diff(std::ostream& os, const std::string& path, const BaselineDiff& d) {
  os << "\nAgainst baseline " << path << ": " << d.regressions.size() << " regressions, " << d.fixes.size()
     << " fixes, " << d.unchanged << " cells unchanged";
  if (d.only_before + d.only_now) {
    os << " (" << d.only_before << " cells only in the baseline, " << d.only_now << " only in this run)";
  }
  os << "\n";
  auto line = [&](const char* what, const CellChange& c) {
    os << "  " << what << " " << c.device << " " << c.group << " " << c.op << (c.dtype.empty() ? "" : " " + c.dtype)
       << ": " << c.before << " -> " << c.after;
    if (!c.reason.empty() && rank(c.after) <= 1) os << " (" << c.reason.substr(0, c.reason.find('\n')) << ")";
    os << "\n";
  };
  for (const CellChange& c : d.regressions) line("REGRESSION", c);
  for (const CellChange& c : d.fixes) line("fixed     ", c);
}

}  // namespace bpc
