#include "result.h"

namespace bpc {

namespace {
struct OutcomeRow {
  Outcome o;
  const char* name;
  char c;
};
constexpr OutcomeRow kOutcomes[] = {
    {Outcome::kNotClaimed, "not_claimed", '-'},
    {Outcome::kNativePass, "native_pass", 'N'},
    {Outcome::kFallbackPass, "fallback_pass", 'F'},
    {Outcome::kCastPass, "cast_pass", 'S'},
    {Outcome::kFail, "fail", 'x'},
    {Outcome::kUnsupported, "unsupported", 'u'},
    {Outcome::kUntested, "untested", '?'},
    {Outcome::kCrashed, "crashed", 'C'},
    {Outcome::kTimeout, "timeout", 'T'},
    {Outcome::kExpectedFail, "expected_fail", 'X'},
    {Outcome::kUnexpectedPass, "unexpected_pass", 'P'},
    {Outcome::kWroteOnError, "wrote_then_failed", 'W'},
    {Outcome::kNotReached, "not_reached", 'r'},
    {Outcome::kCorePass, "core_pass", 'V'},
};

int severity(Outcome o) {
  switch (o) {
    case Outcome::kNotClaimed: return 0;
    case Outcome::kUntested: return 1;
    case Outcome::kUnsupported: return 2;
    case Outcome::kNotReached: return 3;  // any sample that reached a kernel says more
    case Outcome::kCorePass:
      return 4;  // ... and so does any sample a kernel computed
    case Outcome::kNativePass:
      return 5;
    case Outcome::kCastPass:
      return 6;  // a cast beats native, a fallback beats a cast
    case Outcome::kFallbackPass:
      return 7;
    case Outcome::kFail:
      return 8;
    case Outcome::kWroteOnError:
      return 9;
    case Outcome::kTimeout:
      return 10;
    case Outcome::kCrashed:
      return 11;
    case Outcome::kExpectedFail:
      return 8;
    case Outcome::kUnexpectedPass:
      return 8;
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

bool outcome_is_failure(Outcome o) {
  return o == Outcome::kFail || o == Outcome::kWroteOnError || o == Outcome::kCrashed || o == Outcome::kTimeout;
}

void fold_case(CellResult* cell, const CaseResult& c) {
  ++cell->cases;
  const bool bad = outcome_is_failure(c.outcome);
  if (bad) {
    if (cell->failed == 0) cell->reason = "sample " + std::to_string(c.sample) + ": " + c.message;
    ++cell->failed;
  }
  if (severity(c.outcome) > severity(cell->outcome)) {
    cell->outcome = c.outcome;
    if (c.outcome == Outcome::kUnsupported || c.outcome == Outcome::kUntested || c.outcome == Outcome::kNotReached) {
      cell->reason = c.message;
    }
  }
}

}  // namespace bpc
