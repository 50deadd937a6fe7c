// Crash isolation: one (backend, device, operator) group runs in a child
// process (this executable re-run in worker mode), with a time limit. The
// child streams one JSON object per line on its stdout:
//   {"start": {"dtype": "float32", "sample": 3}}   before each case
//   {"case": {...case_to_json...}}                 after it
// so the parent knows which case was running when a child crashed or hung.
#pragma once

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
  std::string last_started;  // "float32 sample 3" of the last case begun, "" if none
  // Lines {"record": {...}} of other workers (the ONNX corpus), in order;
  // {"start": {"test": name}} sets last_started to the name.
  std::vector<nlohmann::json> records;
  std::string message;       // for kCrashed / kTimeout / kSpawnFailed
};

// Runs `argv` (argv[0] is the program path) with a time limit in seconds and
// collects its streamed cases.
ChildOutcome run_child(const std::vector<std::string>& argv, double timeout_s);

// The worker side: write one line (flushes).
void emit_start(const std::string& dtype, int sample);
void emit_case(const CaseResult& c);

}  // namespace bpc
