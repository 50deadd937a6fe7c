#include <algorithm>
#include <iomanip>

#include "report.h"

namespace bpc {

Totals totals_of(const DeviceReport& r) {
  Totals t;
  for (const auto& row : r.cells) {
    for (const CellResult& c : row.second) {
      switch (c.outcome) {
        case Outcome::kNativePass: ++t.native; break;
        case Outcome::kFallbackPass: ++t.fallback; break;
        case Outcome::kCastPass:
          ++t.cast;
          break;
        case Outcome::kFail: ++t.fail; break;
        case Outcome::kUnsupported: ++t.unsupported; break;
        case Outcome::kUntested: ++t.untested; break;
        case Outcome::kCrashed: ++t.crashed; break;
        case Outcome::kTimeout: ++t.timeout; break;
        case Outcome::kExpectedFail: ++t.xfail; break;
        case Outcome::kUnexpectedPass: ++t.xpass; break;
        case Outcome::kWroteOnError: ++t.wrote; break;
        case Outcome::kNotReached: ++t.not_reached; break;
        case Outcome::kCorePass:
          ++t.core;
          break;
        case Outcome::kNotClaimed: break;
      }
    }
  }
  return t;
}

void print_legend(std::ostream& os) {
  os << "Legend: N native pass (the backend's own kernels)   F pass via fallback (CPU or backend-wide)\n"
     << "        x fail   u unsupported (not run: no device, missing fp64/fp16/bf16 capability)\n"
     << "        ? claimed but no samples in bp-conformance   - dtype not claimed in ops.yaml\n"
     << "        C crashed (isolated child died)   T timeout   W wrote its output, then failed or declined\n"
     << "        r rejected inputs only: every sample was bad input, no kernel ran\n"
     << "        V pass served by the core alone (views, metadata): no kernel ran, not counted as native\n"
     << "        S pass on the backend's own kernel after the core cast its inputs (the cast route)\n"
     << "        X expected failure (xfail in expectations/<backend>.yaml)   P unexpected pass (stale xfail)\n";
}

void print_matrix(std::ostream& os, const DeviceReport& r) {
  size_t width = 10;
  for (const std::string& op : r.ops) width = std::max(width, op.size());
  os << "\n== " << r.backend << " (" << r.device << (r.device_name.empty() ? "" : ", " + r.device_name)
     << ")\n";
  os << std::left << std::setw(static_cast<int>(width)) << "op";
  static const char* kShort[kNumDTypes] = {"f32", "f64", "f16", "bf16", "i8", "u8", "i32", "i64", "bool"};
  for (const char* s : kShort) os << " " << std::setw(4) << s;
  os << "\n";
  for (const std::string& op : r.ops) {
    os << std::left << std::setw(static_cast<int>(width)) << op;
    const auto it = r.cells.find(op);
    for (int k = 0; k < kNumDTypes; ++k) {
      const char ch = it == r.cells.end() ? '-' : outcome_char(it->second[static_cast<size_t>(k)].outcome);
      os << " " << std::setw(4) << ch;
    }
    os << "\n";
  }
  print_totals(os, r);
}

void print_totals(std::ostream& os, const DeviceReport& r) {
  const Totals t = totals_of(r);
  os << "Totals: " << t.native << " native, " << t.fallback << " fallback, " << t.fail << " fail, "
     << t.unsupported << " unsupported, " << t.untested << " untested";
  if (t.wrote) os << ", " << t.wrote << " wrote then failed";
  if (t.cast) os << ", " << t.cast << " via cast route";
  if (t.core) os << ", " << t.core << " core only (no kernel)";
  if (t.not_reached) os << ", " << t.not_reached << " rejected inputs only";
  if (t.crashed) os << ", " << t.crashed << " crashed";
  if (t.timeout) os << ", " << t.timeout << " timeout";
  if (t.xfail) os << ", " << t.xfail << " expected fail";
  if (t.xpass) os << ", " << t.xpass << " unexpected pass";
  os << "\n";
  // Why cells were unsupported, once per reason.
  std::vector<std::string> reasons;
  for (const auto& row : r.cells) {
    for (const CellResult& c : row.second) {
      if ((c.outcome == Outcome::kUnsupported || c.outcome == Outcome::kUntested || c.outcome == Outcome::kNotReached ||
           c.outcome == Outcome::kExpectedFail || c.outcome == Outcome::kUnexpectedPass) &&
          std::find(reasons.begin(), reasons.end(), c.reason) == reasons.end()) {
        reasons.push_back(c.reason);
      }
    }
  }
  for (const std::string& why : reasons) os << "  note: " << why << "\n";
}

void print_failures(std::ostream& os, const DeviceReport& r, int max_cases) {
  int expected = 0, printed = 0, hidden = 0;
  for (const CaseResult& c : r.cases) {
    if (!outcome_is_failure(c.outcome)) continue;
    DType d;
    const auto row = r.cells.find(c.op);
    const Outcome cell = c.group == kGroupOps && dtype_from_name(c.dtype, &d) && row != r.cells.end()
                             ? row->second[static_cast<size_t>(d)].outcome
                             : Outcome::kNotClaimed;
    if (cell == Outcome::kExpectedFail || cell == Outcome::kUnsupported) {
      ++expected;  // an xfail or unsupported cell: listed in its reason, not as a failure
      continue;
    }
    if (max_cases >= 0 && printed >= max_cases) {
      ++hidden;
      continue;
    }
    ++printed;
    os << "FAIL " << (c.group == kGroupOps ? "" : "[" + c.group + " group] ") << c.backend << " " << c.device << " " << c.op << " " << c.dtype << " sample " << c.sample
       << " (" << c.desc << ") seed " << c.seed << ": " << outcome_name(c.outcome) << "\n    " << c.message
       << "\n";
    if (!c.inputs.empty()) os << "    inputs: " << c.inputs << "\n";
    if (!c.repro.empty()) os << "    rerun: " << c.repro << "\n";
  }
  for (const auto& row : r.cells) {
    for (int k = 0; k < kNumDTypes; ++k) {
      const CellResult& cell = row.second[static_cast<size_t>(k)];
      if (cell.outcome == Outcome::kUnexpectedPass) {
        os << "UNEXPECTED PASS " << r.backend << " " << r.device << " " << row.first << " "
           << dtype_name(dtype_at(k)) << ": " << cell.reason << "\n";
      }
    }
  }
  if (hidden > 0) os << "... and " << hidden << " more failing cases (--max-failures -1 prints all; --json has all)\n";
  if (expected > 0) os << "(" << expected << " failing cases in xfail or unsupported cells not listed)\n";
}

}  // namespace bpc
