// What a run produced: one CaseResult per case, one CellResult per
// (operator, dtype) of a backend device, folded from its cases.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dtype.h"

namespace bpc {

enum class Outcome {
  kNotClaimed,      // '-': ops.yaml does not claim the dtype
  kNativePass,      // 'N': passed, every kernel that ran was the backend's own
  kFallbackPass,    // 'F': passed, some work went through a fallback
  kCastPass,        // 'S': passed on the backend's own kernel after the core staged a dtype
                    //      cast for it (the cast route, bp_cast_count): no fallback ran
  kFail,            // 'x'
  kUnsupported,     // 'u': not run, with a reason (no device, no fp64 ...)
  kUntested,        // '?': claimed, but bp-conformance has no samples for it
  kCrashed,         // 'C': the isolated child died (signal)
  kTimeout,         // 'T': the isolated child ran past its time limit
  kExpectedFail,    // 'X': failed, and the backend's expectation file says xfail
  kUnexpectedPass,  // 'P': passed, but listed as xfail (a stale entry: fails the run)
  kWroteOnError,    // 'W': the kernel wrote its output, then returned an error or
                    //      declined (UNIMPLEMENTED): found by poisoning the out= tensor
  kNotReached,      // 'r': every sample was bad input the call rejected: no kernel computed anything
  kCorePass,        // 'V': passed, served by the core alone without any kernel (views, metadata):
                    //      says nothing about the backend's kernels, so not counted as native
};
const char* outcome_name(Outcome o);  // "native_pass", ...
char outcome_char(Outcome o);
bool outcome_from_name(const std::string& name, Outcome* out);

// The groups of a run (issue 4): the operator matrix, the same operators with
// the native kernel masked (fallback group), the ABI/runtime group, the
// streams group (ordering of streams and events), and the probes of dtypes
// ops.yaml does not claim (dtype-claims check).
inline constexpr const char* kGroupOps = "ops";
inline constexpr const char* kGroupFallback = "fallback";
inline constexpr const char* kGroupAbi = "abi";
inline constexpr const char* kGroupStreams = "streams";  // stream and event ordering
inline constexpr const char* kGroupClaims = "dtype_claims";

struct CaseResult {
  std::string group = kGroupOps;
  std::string test_id;    // GoogleTest ID: "Ops/OpCellTest.Run/cpu_0__add_Tensor__float32"
  std::string backend;
  std::string device;     // "cpu:0"
  std::string op;
  std::string dtype;
  int sample = 0;
  std::string desc;
  uint64_t seed = 0;
  std::vector<std::vector<int64_t>> input_shapes;
  std::vector<int64_t> output_shape;
  std::string inputs;     // every argument: "float32[2,3] transposed, float32[3], 2"
  Outcome outcome = Outcome::kFail;
  std::string path;       // "native", "cast", "cpu_fallback", "backend_fallback", "core", "none"
  std::string message;    // why it failed / was skipped; "" on a pass
  bool has_numbers = false;
  int64_t worst_index = -1;
  double expected = 0.0, actual = 0.0, max_abs = 0.0, max_rel = 0.0, max_ulp = 0.0;
  std::string repro;      // the one-line command that reruns just this case
};

struct CellResult {
  Outcome outcome = Outcome::kNotClaimed;
  std::string reason;     // for unsupported / untested / failures (first failure)
  int cases = 0;
  int failed = 0;
};

struct DeviceReport {
  std::string backend;
  std::string device;       // "cpu:0", or "opencl" when it has no device
  std::string device_name;
  std::vector<std::string> ops;                          // row order
  std::map<std::string, std::array<CellResult, kNumDTypes>> cells;           // ops group
  std::map<std::string, std::array<CellResult, kNumDTypes>> fallback_cells;  // fallback group
  std::vector<CaseResult> cases;  // every group's cases
  int tests_expected = 0;         // GoogleTest tests planned for this device
  int tests_reported = 0;         // ... and reported back by the children
  int tests_filed = 0;            // ... not reported, filed by the parent as crashed/timeout
};

// A failing case: fail, wrote-then-failed, crashed or timeout.
bool outcome_is_failure(Outcome o);

// Folds a case outcome into its cell (fail beats fallback beats native).
void fold_case(CellResult* cell, const CaseResult& c);

}  // namespace bpc
