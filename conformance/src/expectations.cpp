#include "expectations.h"

#include <fnmatch.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

namespace bpc {

bool Expectation::matches(const std::string& op_name, DType d) const {
  if (fnmatch(op.c_str(), op_name.c_str(), 0) != 0) return false;
  if (dtypes.empty()) return true;
  for (const std::string& n : dtypes) {
    if (n == dtype_name(d)) return true;
  }
  return false;
}

const Expectation* Expectations::find_unsupported(const std::string& op, DType d) const {
  for (const Expectation& e : unsupported) if (e.matches(op, d)) return &e;
  return nullptr;
}

const Expectation* Expectations::find_xfail(const std::string& op, DType d) const {
  for (const Expectation& e : xfail) if (e.matches(op, d)) return &e;
  return nullptr;
}

const Expectation* Expectations::find_onnx_xfail(const std::string& test) const {
  for (const Expectation& e : onnx_xfail) {
    if (fnmatch(e.op.c_str(), test.c_str(), 0) == 0) return &e;
  }
  return nullptr;
}

std::string Expectations::where(const Expectation& e) const {
  return (e.file.empty() ? source : e.file) + ":" + std::to_string(e.line);
}

namespace {

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  const size_t b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

// Drops a trailing comment that is not inside double quotes.
std::string strip_comment(const std::string& s) {
  bool quoted = false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '"') quoted = !quoted;
    if (s[i] == '#' && !quoted && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) return s.substr(0, i);
  }
  return s;
}

std::string unquote(const std::string& v) {
  const std::string t = trim(v);
  if (t.size() >= 2 && t.front() == '"' && t.back() == '"') return t.substr(1, t.size() - 2);
  if (t.size() >= 2 && t.front() == '\'' && t.back() == '\'') return t.substr(1, t.size() - 2);
  return t;
}

bool parse_list(const std::string& v, std::vector<std::string>* out) {
  const std::string t = trim(v);
  if (t.size() < 2 || t.front() != '[' || t.back() != ']') return false;
  std::stringstream ss(t.substr(1, t.size() - 2));
  std::string item;
  while (std::getline(ss, item, ',')) {
    item = unquote(item);
    if (!item.empty()) out->push_back(item);
  }
  return true;
}

}  // namespace

bool parse_expectations(const std::string& text, Expectations* out, std::string* err) {
  std::vector<Expectation>* section = nullptr;
  Expectation* current = nullptr;
  std::stringstream ss(text);
  std::string raw;
  int line_no = 0;
  auto fail = [&](const std::string& why) {
    *err = "line " + std::to_string(line_no) + ": " + why;
    return false;
  };
  while (std::getline(ss, raw)) {
    ++line_no;
    const std::string line = strip_comment(raw);
    const std::string t = trim(line);
    if (t.empty() || t == "---") continue;
    const bool top = line.find_first_not_of(" \t") == 0;
    if (top) {
      if (t == "unsupported:") {
        section = &out->unsupported;
      } else if (t == "xfail:") {
        section = &out->xfail;
      } else if (t == "onnx_xfail:") {
        section = &out->onnx_xfail;
      } else {
        return fail("expected 'unsupported:', 'xfail:' or 'onnx_xfail:', got '" + t + "'");
      }
      current = nullptr;
      continue;
    }
    if (section == nullptr) return fail("entry outside 'unsupported:', 'xfail:' or 'onnx_xfail:'");
    const bool onnx = section == &out->onnx_xfail;
    std::string kv = t;
    if (kv.rfind("- ", 0) == 0 || kv == "-") {
      section->push_back(Expectation());
      current = &section->back();
      current->line = line_no;
      kv = trim(kv.substr(1));
      if (kv.empty()) continue;
    }
    if (current == nullptr) return fail("a key before the first '- ' item");
    const size_t colon = kv.find(':');
    if (colon == std::string::npos) return fail("expected 'key: value', got '" + kv + "'");
    const std::string key = trim(kv.substr(0, colon));
    const std::string value = kv.substr(colon + 1);
    if (key == (onnx ? "test" : "op")) {
      current->op = unquote(value);
    } else if (key == "reason") {
      current->reason = unquote(value);
    } else if (onnx) {
      return fail("unknown key '" + key + "' in onnx_xfail (test, reason)");
    } else if (key == "dtypes") {
      if (!parse_list(value, &current->dtypes)) return fail("dtypes must be a list like [float32, int8]");
      for (const std::string& d : current->dtypes) {
        DType dt;
        if (!dtype_from_name(d, &dt)) return fail("unknown dtype '" + d + "'");
      }
    } else {
      return fail("unknown key '" + key + "' (op, dtypes, reason)");
    }
  }
  for (const auto* list : {&out->unsupported, &out->xfail, &out->onnx_xfail}) {
    for (const Expectation& e : *list) {
      if (e.op.empty() || e.reason.empty()) {
        *err = "line " + std::to_string(e.line) + ": every entry needs " +
               (list == &out->onnx_xfail ? "a test" : "an op") + " and a reason";
        return false;
      }
    }
  }
  return true;
}

namespace {

// Parses one file into *out (a missing file is no error), naming it on its entries.
bool load_file(const std::string& file, Expectations* out, std::string* err) {
  std::ifstream f(file);
  if (!f) return true;
  std::stringstream ss;
  ss << f.rdbuf();
  Expectations parsed;
  if (!parse_expectations(ss.str(), &parsed, err)) {
    *err = file + ": " + *err;
    return false;
  }
  auto append = [&](std::vector<Expectation>& from, std::vector<Expectation>* to) {
    for (Expectation& e : from) {
      e.file = file;
      to->push_back(std::move(e));
    }
  };
  append(parsed.unsupported, &out->unsupported);
  append(parsed.xfail, &out->xfail);
  append(parsed.onnx_xfail, &out->onnx_xfail);
  out->source = file;
  return true;
}

}  // namespace

bool load_expectations(const std::string& path, const std::string& backend, Expectations* out, std::string* err) {
  struct stat st;
  if (path.empty() || stat(path.c_str(), &st) != 0) return true;
  if (!S_ISDIR(st.st_mode)) return load_file(path, out, err);
  return load_file(path + "/common.yaml", out, err) && load_file(path + "/" + backend + ".yaml", out, err);
}

bool check_expectation_ops(const Expectations& ex, const std::vector<std::string>& op_names, std::string* err) {
  for (const auto* list : {&ex.unsupported, &ex.xfail}) {
    for (const Expectation& e : *list) {
      bool any = false;
      for (const std::string& name : op_names) any = any || fnmatch(e.op.c_str(), name.c_str(), 0) == 0;
      if (!any) {
        *err = ex.where(e) + ": op '" + e.op + "' matches no operator of this library (see bp-conformance --list)";
        return false;
      }
    }
  }
  return true;
}

void apply_xfail(const Expectations& ex, DeviceReport* report) {
  for (auto& row : report->cells) {
    for (int k = 0; k < kNumDTypes; ++k) {
      CellResult& cell = row.second[static_cast<size_t>(k)];
      const Expectation* e = ex.find_xfail(row.first, dtype_at(k));
      if (e == nullptr) continue;
      if (outcome_is_failure(cell.outcome)) {
        cell.outcome = Outcome::kExpectedFail;
        cell.reason = "xfail: " + e->reason + " (" + cell.reason + ")";
      } else if (cell.outcome == Outcome::kNativePass || cell.outcome == Outcome::kFallbackPass ||
                 cell.outcome == Outcome::kCastPass || cell.outcome == Outcome::kCorePass) {
        cell.outcome = Outcome::kUnexpectedPass;
        cell.reason = "passes, but " + ex.where(*e) + " lists it as xfail (" + e->reason + "): remove the entry";
      }
    }
  }
}

void apply_unsupported(const Expectations& ex, DeviceReport* report) {
  for (auto& row : report->cells) {
    for (int k = 0; k < kNumDTypes; ++k) {
      CellResult& cell = row.second[static_cast<size_t>(k)];
      const Expectation* e = ex.find_unsupported(row.first, dtype_at(k));
      if (e == nullptr || cell.outcome == Outcome::kNotClaimed || cell.outcome == Outcome::kUnsupported) continue;
      if (cell.outcome == Outcome::kNativePass || cell.outcome == Outcome::kFallbackPass ||
          cell.outcome == Outcome::kCastPass || cell.outcome == Outcome::kCorePass) {
        cell.outcome = Outcome::kUnexpectedPass;
        cell.reason = "passes, but " + ex.where(*e) + " lists it as unsupported (" + e->reason + "): remove the entry";
      } else {
        cell.outcome = Outcome::kUnsupported;
        cell.reason = unsupported_reason(ex, *e);
      }
    }
  }
}

std::string unsupported_reason(const Expectations& ex, const Expectation& e) {
  return "unsupported per " + ex.where(e) + ": " + e.reason;
}

}  // namespace bpc
