// The verdict of a backend device and the summaries of the groups beside the
// operator matrix: fallback (native kernels masked), dtype claims, ABI/runtime,
// streams.
#include <algorithm>
#include <map>
#include <sstream>

#include "report.h"

namespace bpc {

namespace {


// Claimed cells of the ops group that do not run on the backend's own kernels.
std::vector<std::string> claimed_not_native(const DeviceReport& r) {
  std::vector<std::string> out;
  for (const std::string& op : r.ops) {
    const auto it = r.cells.find(op);
    if (it == r.cells.end()) continue;
    for (int k = 0; k < kNumDTypes; ++k) {
      if (it->second[static_cast<size_t>(k)].outcome == Outcome::kFallbackPass) {
        out.push_back(op + "[" + dtype_name(dtype_at(k)) + "]");
      }
    }
  }
  return out;
}

void print_list(std::ostream& os, const std::vector<std::string>& items, size_t max) {
  for (size_t i = 0; i < items.size() && i < max; ++i) os << (i ? ", " : "    ") << items[i];
  if (items.size() > max) os << ", ... (" << items.size() - max << " more; --json has all)";
  if (!items.empty()) os << "\n";
}

std::string first_unsupported_reason(const DeviceReport& r) {
  for (const auto& row : r.cells) {
    for (const CellResult& c : row.second) {
      if (c.outcome == Outcome::kUnsupported) return ": " + c.reason;
    }
  }
  return "";
}

}  // namespace

GroupTotals group_totals(const DeviceReport& r, const std::string& group) {
  GroupTotals t;
  auto count = [&](Outcome o) {
    switch (o) {
      case Outcome::kNativePass:
      case Outcome::kFallbackPass:
      case Outcome::kCastPass:
      case Outcome::kCorePass:
      case Outcome::kExpectedFail: ++t.pass; break;
      case Outcome::kFail:
      case Outcome::kWroteOnError:
      case Outcome::kUnexpectedPass: ++t.fail; break;
      case Outcome::kCrashed: ++t.crashed; break;
      case Outcome::kTimeout: ++t.timeout; break;
      case Outcome::kUnsupported:
      case Outcome::kUntested:
      case Outcome::kNotReached: ++t.unsupported; break;
      case Outcome::kNotClaimed: break;
    }
  };
  if (group == kGroupFallback) {
    for (const auto& row : r.fallback_cells) {
      for (const CellResult& c : row.second) count(c.outcome);
    }
  } else {
    for (const CaseResult& c : r.cases) {
      if (c.group == group) count(c.outcome);
    }
  }
  return t;
}

Verdict verdict_of(const DeviceReport& r, const ReportOptions& o) {
  Verdict v;
  const Totals t = totals_of(r);
  const GroupTotals fb = group_totals(r, kGroupFallback);
  const GroupTotals abi = group_totals(r, kGroupAbi);
  const GroupTotals str = group_totals(r, kGroupStreams);
  const GroupTotals claims = group_totals(r, kGroupClaims);
  std::ostringstream bad;
  auto add = [&](int n, const char* what) {
    if (n > 0) bad << (bad.tellp() > 0 ? ", " : "") << n << " " << what;
  };
  add(t.fail, "failing cells");
  add(t.wrote, "cells whose kernel wrote its output, then failed");
  add(t.crashed, "crashed cells");
  add(t.timeout, "timed-out cells");
  if (o.verify_expectations) add(t.xpass, "unexpected passes (stale xfail or unsupported entries)");
  add(fb.fail + fb.crashed + fb.timeout, "fallback-group failures");
  add(abi.fail + abi.crashed + abi.timeout, "ABI-group failures");
  add(str.fail + str.crashed + str.timeout, "streams-group failures");
  add(claims.fail, "unclaimed dtypes accepted with wrong values");
  add(claims.crashed + claims.timeout, "crashed dtype probes");
  // Tests a dead child never reported are filed as crashed/timed-out cells;
  // any beyond those would be lost silently, so they fail the verdict too.
  add(r.tests_expected - r.tests_reported - r.tests_filed, "tests lost without a report");
  std::ostringstream s;
  if (bad.tellp() > 0) {
    v.conformant = false;
    s << "NOT CONFORMANT: " << bad.str();
  } else if (t.native + t.fallback + t.cast + t.core + t.xfail + fb.pass + abi.pass + str.pass + claims.pass +
                 claims.unsupported ==
             0) {
    v.tested = false;
    s << "NOT TESTED: nothing ran (" << t.unsupported << " cells unsupported" << first_unsupported_reason(r) << ")";
  } else {
    s << "CONFORMANT: " << t.native << " cells native, " << t.fallback << " via fallback";
    if (t.cast) s << ", " << t.cast << " via cast route";
    if (t.core) s << ", " << t.core << " core only";
    if (t.xfail) s << ", " << t.xfail << " expected failures";
    if (t.xpass) s << ", " << t.xpass << " stale xfail entries";
    if (t.unsupported) s << ", " << t.unsupported << " unsupported";
    if (t.not_reached) s << ", " << t.not_reached << " with rejected inputs only";
    if (fb.pass + fb.unsupported > 0) s << "; fallback group " << fb.pass << " cells pass";
    if (abi.pass + abi.unsupported > 0) s << "; ABI group " << abi.pass << " pass, " << abi.unsupported << " skipped";
    if (str.pass + str.unsupported > 0) {
      s << "; streams group " << str.pass << " pass, " << str.unsupported << " skipped";
    }
  }
  v.summary = s.str();
  return v;
}

std::string verdict_line(const DeviceReport& r, const ReportOptions& o) {
  return r.backend + " (" + r.device + "): " + verdict_of(r, o).summary;
}

void print_groups(std::ostream& os, const DeviceReport& r) {
  const GroupTotals fb = group_totals(r, kGroupFallback);
  if (fb.pass + fb.fail + fb.unsupported + fb.crashed + fb.timeout > 0) {
    os << "Fallback group (each operator with " << r.backend << "'s native kernel masked): " << fb.pass
       << " cells pass, " << fb.fail << " fail, " << fb.unsupported << " unsupported";
    if (fb.crashed + fb.timeout) os << ", " << fb.crashed << " crashed, " << fb.timeout << " timeout";
    os << "\n";
  }
  // Dtype claims, both directions.
  std::vector<std::string> unclaimed_native, unclaimed_wrong;
  int probes = 0;
  for (const CaseResult& c : r.cases) {
    if (c.group != kGroupClaims) continue;
    ++probes;
    if (c.outcome == Outcome::kNativePass) unclaimed_native.push_back(c.op + "[" + c.dtype + "]");
    if (c.outcome == Outcome::kFail || c.outcome == Outcome::kWroteOnError) {
      unclaimed_wrong.push_back(c.op + "[" + c.dtype + "]");
    }
  }
  const std::vector<std::string> not_native = claimed_not_native(r);
  if (probes > 0 || !not_native.empty()) {
    os << "Dtype claims: " << not_native.size() << " cells claimed by ops.yaml run via fallback, not natively";
    os << (not_native.empty() ? "\n" : ":\n");
    print_list(os, not_native, 12);
    if (probes > 0) {
      os << "              " << unclaimed_native.size() << " of " << probes
         << " unclaimed (op, dtype) probes run natively (ops.yaml under-claims)";
      os << (unclaimed_native.empty() ? "\n" : ":\n");
      print_list(os, unclaimed_native, 40);
    }
    if (!unclaimed_wrong.empty()) {
      os << "              " << unclaimed_wrong.size()
         << " unclaimed (op, dtype) probes accepted with wrong values (FAIL):\n";
      print_list(os, unclaimed_wrong, 40);
    }
  }
  const GroupTotals abi = group_totals(r, kGroupAbi);
  if (abi.pass + abi.fail + abi.unsupported + abi.crashed + abi.timeout > 0) {
    os << "ABI/runtime group: " << abi.pass << " pass, " << abi.fail << " fail, " << abi.unsupported << " skipped";
    if (abi.crashed + abi.timeout) os << ", " << abi.crashed << " crashed, " << abi.timeout << " timeout";
    os << "\n";
    for (const CaseResult& c : r.cases) {
      if (c.group == kGroupAbi && c.outcome == Outcome::kUnsupported) {
        os << "  skipped " << c.op << ": " << c.message << "\n";
      }
    }
  }
  const GroupTotals str = group_totals(r, kGroupStreams);
  if (str.pass + str.fail + str.unsupported + str.crashed + str.timeout > 0) {
    os << "Streams group: " << str.pass << " pass, " << str.fail << " fail, " << str.unsupported << " skipped";
    if (str.crashed + str.timeout) os << ", " << str.crashed << " crashed, " << str.timeout << " timeout";
    os << "\n";
    for (const CaseResult& c : r.cases) {
      if (c.group != kGroupStreams) continue;
      if (c.outcome == Outcome::kUnsupported) os << "  skipped " << c.op << ": " << c.message << "\n";
      // What a passing test saw (the race without an event, event timing ...).
      if (c.outcome == Outcome::kNativePass && !c.message.empty()) os << "  note " << c.op << ": " << c.message << "\n";
    }
  }
  if (r.tests_expected > 0) {
    os << "GoogleTest: " << r.tests_expected << " tests expected, " << r.tests_reported << " reported";
    if (r.tests_expected > r.tests_reported) {
      os << " (" << r.tests_expected - r.tests_reported << " never reported: their child crashed or timed out)";
    }
    os << "\n";
  }
}

}  // namespace bpc
