// JUnit XML, as CI systems (Jenkins, GitLab, GitHub test reporters) read it:
// <testsuites> of <testsuite name="cpu:0 ops"> of <testcase>, a <failure>
// for a wrong result, an <error> for a crash or timeout, <skipped> for a cell
// not run or an expected failure; every case's facts as <properties>.
#include <fstream>
#include <map>
#include <sstream>

#include "gen.h"
#include "report.h"

namespace bpc {

namespace {

// XML 1.0 text: escape markup, drop characters XML cannot carry.
std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (const char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (c < 0x20 && ch != '\n' && ch != '\t' && ch != '\r') out += '?';
        else out += ch;
    }
  }
  return out;
}

std::string shapes_str(const std::vector<std::vector<int64_t>>& shapes) {
  std::string s;
  for (const auto& sh : shapes) s += (s.empty() ? "" : " ") + sizes_str(sh);
  return s;
}

std::string num(double v) {
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}

enum class Kind { kPass, kFailure, kError, kSkipped };

Kind kind_of(const CaseResult& c, const DeviceReport& r) {
  if (c.group == kGroupOps) {
    DType d;
    const auto row = r.cells.find(c.op);
    if (dtype_from_name(c.dtype, &d) && row != r.cells.end()) {
      const Outcome cell = row->second[static_cast<size_t>(d)].outcome;
      if ((cell == Outcome::kExpectedFail || cell == Outcome::kUnsupported) && c.outcome != Outcome::kNativePass &&
          c.outcome != Outcome::kFallbackPass && c.outcome != Outcome::kCastPass && c.outcome != Outcome::kCorePass) {
        return Kind::kSkipped;  // a known failure: reported, not counted
      }
    }
  }
  switch (c.outcome) {
    case Outcome::kFail:
    case Outcome::kWroteOnError:
    case Outcome::kUnexpectedPass: return Kind::kFailure;
    case Outcome::kCrashed:
    case Outcome::kTimeout: return Kind::kError;
    case Outcome::kUnsupported:
    case Outcome::kUntested:
    case Outcome::kExpectedFail:
    case Outcome::kNotClaimed: return Kind::kSkipped;
    default: return Kind::kPass;
  }
}

void property(std::ostream& os, const char* name, const std::string& value) {
  os << "        <property name=\"" << name << "\" value=\"" << xml_escape(value) << "\"/>\n";
}

}  // namespace

std::string junit_xml(const std::vector<DeviceReport>& reports) {
  struct Suite {
    std::string name;
    std::vector<std::pair<const CaseResult*, Kind>> cases;
    int failures = 0, errors = 0, skipped = 0;
  };
  std::vector<Suite> suites;
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  for (const DeviceReport& r : reports) {
    std::map<std::string, size_t> by_group;
    for (const CaseResult& c : r.cases) {
      auto it = by_group.find(c.group);
      if (it == by_group.end()) {
        it = by_group.emplace(c.group, suites.size()).first;
        suites.push_back(Suite{r.device + " " + c.group, {}, 0, 0, 0});
      }
      Suite& s = suites[it->second];
      const Kind k = kind_of(c, r);
      s.cases.push_back({&c, k});
      s.failures += k == Kind::kFailure;
      s.errors += k == Kind::kError;
      s.skipped += k == Kind::kSkipped;
    }
  }
  for (const Suite& s : suites) {
    tests += static_cast<int>(s.cases.size());
    failures += s.failures;
    errors += s.errors;
    skipped += s.skipped;
  }
  std::ostringstream os;
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
     << "<testsuites name=\"bp-conformance\" tests=\"" << tests << "\" failures=\"" << failures << "\" errors=\""
     << errors << "\" skipped=\"" << skipped << "\">\n";
  int suite_id = 0;
  for (const Suite& s : suites) {
    os << "  <testsuite name=\"" << xml_escape(s.name) << "\" id=\"" << suite_id++ << "\" tests=\"" << s.cases.size()
       << "\" failures=\"" << s.failures << "\" errors=\"" << s.errors << "\" skipped=\"" << s.skipped << "\">\n";
    for (const auto& [c, kind] : s.cases) {
      std::string name = c->test_id.empty() ? c->op + "/" + c->dtype : c->test_id;
      if (c->sample >= 0) name += "/sample" + std::to_string(c->sample);
      os << "    <testcase name=\"" << xml_escape(name) << "\" classname=\"bp-conformance." << xml_escape(c->backend)
         << "." << xml_escape(c->group) << "\">\n"
         << "      <properties>\n";
      property(os, "backend", c->backend);
      property(os, "device", c->device);
      property(os, "group", c->group);
      property(os, "op", c->op);
      if (!c->desc.empty()) property(os, "desc", c->desc);
      property(os, "dtype", c->dtype);
      property(os, "sample", std::to_string(c->sample));
      property(os, "input_shapes", shapes_str(c->input_shapes));
      property(os, "output_shape", sizes_str(c->output_shape));
      property(os, "seed", std::to_string(c->seed));
      property(os, "outcome", outcome_name(c->outcome));
      property(os, "path", c->path);
      if (c->has_numbers) {
        property(os, "max_abs_error", num(c->max_abs));
        property(os, "max_rel_error", num(c->max_rel));
        property(os, "max_ulp_error", num(c->max_ulp));
        property(os, "worst_index", std::to_string(c->worst_index));
        property(os, "expected", num(c->expected));
        property(os, "actual", num(c->actual));
      }
      property(os, "repro", c->repro);
      os << "      </properties>\n";
      const std::string first_line = c->message.substr(0, c->message.find('\n'));
      const std::string body = c->message + (c->repro.empty() ? "" : "\nrerun: " + c->repro);
      switch (kind) {
        case Kind::kFailure:
          os << "      <failure message=\"" << xml_escape(first_line) << "\" type=\"" << outcome_name(c->outcome)
             << "\">" << xml_escape(body) << "</failure>\n";
          break;
        case Kind::kError:
          os << "      <error message=\"" << xml_escape(first_line) << "\" type=\"" << outcome_name(c->outcome)
             << "\">" << xml_escape(body) << "</error>\n";
          break;
        case Kind::kSkipped: os << "      <skipped message=\"" << xml_escape(first_line) << "\"/>\n"; break;
        case Kind::kPass: break;
      }
      os << "    </testcase>\n";
    }
    os << "  </testsuite>\n";
  }
  os << "</testsuites>\n";
  return os.str();
}

bool write_junit_file(const std::string& path, const std::vector<DeviceReport>& reports, std::string* err) {
  std::ofstream f(path);
  if (!f) {
    *err = "cannot open " + path + " for writing";
    return false;
  }
  f << junit_xml(reports);
  return static_cast<bool>(f);
}

}  // namespace bpc
