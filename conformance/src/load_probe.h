// Load isolation: a plugin's load (its entry, negotiation and init) runs
// first in a child process with a time limit, so a plugin whose init
// crashes, calls exit() or hangs becomes a verdict line instead of taking
// bp-conformance down (or wedging it), and the run goes on with the others.
#pragma once

#include <string>

namespace bpc {

struct LoadProbe {
  enum Verdict { kLoaded, kLoadError, kCrashed, kExited, kTimeout, kProbeFailed } verdict = kLoaded;
  std::string detail;  // "signal 11 (Segmentation fault)", "exit code 3", "no answer in 5 s"
};

// Loads `path` (or, when empty, runs plugin discovery) in a fresh context of a
// child process (this executable re-run with --probe-load PATH or
// --probe-discover) and reports how that went; the child ends with it.
LoadProbe probe_plugin_load(const std::string& path, double timeout_s);

// The child's side: loads `path` (empty: discovery) into a new context and
// returns the child's exit code (0 loaded, 101 a load error).
int run_load_probe(const std::string& path);

// The verdict line for a probe that did not load: "LOAD CRASHED  <what>: <detail>",
// "LOAD EXITED", "LOAD TIMEOUT"; "" for kLoaded and kLoadError (the
// in-process load then reports its own status and message).
std::string load_verdict_line(const LoadProbe& p, const std::string& what);

}  // namespace bpc
