// Crash isolation: one (backend, device, operator) group runs in a child
// process (this executable re-run in worker mode), with a time limit. The
// child streams one JSON object per line on its stdout:
//   {"start": {"test": ID, "what": "float32 sample 3", "case": {...}}}  before each case or test
//   {"case": {...case_to_json...}}                        after a case
//   {"end": {"test": ID}}                                 after each GoogleTest test
// so the parent knows which test was running when a child crashed or hung,
// and which tests never reported (expected minus reported = lost to a crash).
#pragma once

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "result.h"

namespace bpc {

struct ChildOutcome {
  enum Status { kExited, kCrashed, kTimeout, kSpawnFailed } status = kExited;
  int exit_code = 0;
  int signal = 0;
  std::vector<CaseResult> cases;
  std::string last_started;  // "<test id> (float32 sample 3)" of the last case begun, "" if none
  std::string last_test;     // the test ID of it
  bool has_last_case = false;  // last_case: the case begun last (sample, shapes, inputs, seed, repro)
  CaseResult last_case;
  std::set<std::string> ended_tests;
  // Lines {"record": {...}} of other workers (the ONNX corpus), in order.
  std::vector<nlohmann::json> records;
  std::string message;       // for kCrashed / kTimeout / kSpawnFailed
};

// The absolute path of the running executable (/proc/self/exe): what
// workers are started with and what rerun lines begin with (an installed
// bp-conformance need not be on PATH). "bp-conformance" if it cannot be read.
std::string self_exe();

// Runs `argv` (argv[0] is the program path) with a time limit in seconds and
// collects its streamed cases.
ChildOutcome run_child(const std::vector<std::string>& argv, double timeout_s);

// The worker side: write one line (flushes).
void emit_line(const nlohmann::json& j);  // any record, e.g. {"record": {...}}
// Before a case or test; `pending` (may be nullptr) is the case about to run,
// so a parent whose child dies in it can report that very sample.
void emit_start(const std::string& test_id, const std::string& what, const CaseResult* pending = nullptr);
void emit_case(const CaseResult& c);
void emit_test_end(const std::string& test_id);

}  // namespace bpc
