#include "result.h"

namespace bpc {

namespace {
struct OutcomeRow {
  Outcome o;
  const char* name;
  char c;
};
constexpr OutcomeRow kOutcomes[] = {
    {Outcome::kNotClaimed, "not_claimed", '-'}, {Outcome::kNativePass, "native_pass", 'N'},
    {Outcome::kFallbackPass, "fallback_pass", 'F'}, {Outcome::kFail, "fail", 'x'},
    {Outcome::kUnsupported, "unsupported", 'u'}, {Outcome::kUntested, "untested", '?'},
    {Outcome::kCrashed, "crashed", 'C'},         {Outcome::kTimeout, "timeout", 'T'},
    {Outcome::kExpectedFail, "expected_fail", 'X'}, {Outcome::kUnexpectedPass, "unexpected_pass", 'P'},
};

int severity(Outcome o) {
  switch (o) {
    case Outcome::kNotClaimed: return 0;
    case Outcome::kUntested: return 1;
    case Outcome::kUnsupported: return 2;
    case Outcome::kNativePass: return 3;
    case Outcome::kFallbackPass: return 4;
    case Outcome::kFail: return 5;
    case Outcome::kTimeout: return 6;
    case Outcome::kCrashed: return 7;
    case Outcome::kExpectedFail: return 5;
    case Outcome::kUnexpectedPass: return 5;
  }
  return 0;
}
}  // namespace

const char* outcome_name(Outcome o) {
  for (const auto& r : kOutcomes) if (r.o == o) return r.name;
  return "?";
}

char outcome_char(Outcome o) {
  for (const auto& r : kOutcomes) if (r.o == o) return r.c;
  return '?';
}

bool outcome_from_name(const std::string& name, Outcome* out) {
  for (const auto& r : kOutcomes) {
    if (name == r.name) {
      *out = r.o;
      return true;
    }
  }
  return false;
}

void fold_case(CellResult* cell, const CaseResult& c) {
  ++cell->cases;
  const bool bad = c.outcome == Outcome::kFail || c.outcome == Outcome::kCrashed ||
                   c.outcome == Outcome::kTimeout;
  if (bad) {
    if (cell->failed == 0) cell->reason = "sample " + std::to_string(c.sample) + ": " + c.message;
    ++cell->failed;
  }
  if (severity(c.outcome) > severity(cell->outcome)) {
    cell->outcome = c.outcome;
    if (c.outcome == Outcome::kUnsupported || c.outcome == Outcome::kUntested) cell->reason = c.message;
  }
}

}  // namespace bpc
