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
  bool any_failure() const { return fail + crashed + timeout + xpass > 0; }
};
Totals totals_of(const DeviceReport& r);

// The matrix of one backend device, its totals and one-line verdict.
void print_matrix(std::ostream& os, const DeviceReport& r);
// Just the totals, the verdict and the reasons of unsupported cells.
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
