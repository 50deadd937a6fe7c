// Reports: the console matrix (op x dtype per backend device, legend,
// totals, verdict, failures with repro lines) and the JSON report.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "result.h"

namespace bpc {

struct Totals {
  int native = 0, fallback = 0, fail = 0, unsupported = 0, untested = 0, crashed = 0, timeout = 0;
  int xfail = 0, xpass = 0;
  int wrote = 0;        // 'W': wrote its output, then failed
  int not_reached = 0;  // 'r': only rejected inputs, no kernel ran
  int core = 0;         // 'V': passed in the core without any kernel (views)
  int cast = 0;         // 'S': passed on the native kernel after a cast the core staged
  bool any_failure() const { return fail + wrote + crashed + timeout + xpass > 0; }
};
Totals totals_of(const DeviceReport& r);

// What decides a backend device's verdict (docs/conformance.md): every
// claimed cell it runs passes (native or fallback; xfail cells are counted
// apart), nothing crashed or timed out, the fallback, ABI and streams
// groups pass. With verify_expectations a stale xfail (XPASS) also fails it.
struct ReportOptions {
  bool verify_expectations = false;
};
struct GroupTotals {
  int pass = 0, fail = 0, unsupported = 0, crashed = 0, timeout = 0;
};
struct Verdict {
  bool conformant = true;
  bool tested = true;       // false: no device (nothing ran)
  std::string summary;      // "CONFORMANT: 922 cells native, ..." / "NOT CONFORMANT: ..."
};
GroupTotals group_totals(const DeviceReport& r, const std::string& group);
Verdict verdict_of(const DeviceReport& r, const ReportOptions& o);
// "cpu:0: CONFORMANT (...)", one line.
std::string verdict_line(const DeviceReport& r, const ReportOptions& o);
// The fallback, dtype-claims and ABI/runtime groups of one device: totals,
// failures, skip reasons, claim mismatches in both directions, and tests lost
// to crashes (expected minus reported).
void print_groups(std::ostream& os, const DeviceReport& r);
// JUnit XML: one <testsuite> per (device, group), one <testcase> per case
// with its backend, device, op, dtype, shapes, seed, outcome, errors and
// rerun line as <properties>.
std::string junit_xml(const std::vector<DeviceReport>& reports);
bool write_junit_file(const std::string& path, const std::vector<DeviceReport>& reports, std::string* err);

// The matrix of one backend device and its totals.
void print_matrix(std::ostream& os, const DeviceReport& r);
// Just the totals and the reasons of unsupported cells.
void print_totals(std::ostream& os, const DeviceReport& r);
// Every failing case: op, dtype, sample, seed, expected vs actual at the
// worst index, max abs/rel error, and the command that reruns it.
// At most `max_cases` failing cases are printed (< 0: all); the rest are counted.
void print_failures(std::ostream& os, const DeviceReport& r, int max_cases = -1);
void print_legend(std::ostream& os);

nlohmann::json case_to_json(const CaseResult& c);
CaseResult case_from_json(const nlohmann::json& j);
// The whole run: {"tool", "seed", "tier", "devices": [{backend, device, totals, cells, cases}]}.
nlohmann::json run_to_json(const std::vector<DeviceReport>& reports, uint64_t seed, bool full);
bool write_json_file(const std::string& path, const nlohmann::json& j, std::string* err);

}  // namespace bpc
