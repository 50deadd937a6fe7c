// Per-backend expectation files, conformance/expectations/<backend>.yaml:
// cells a backend does not support (permanent) and cells expected to fail
// for now (xfail), each with a reason. An xfail cell that passes is an
// "unexpected pass" and fails the run, so stale entries get removed.
//
//   unsupported:
//     - op: "conv2d"              # operator name or glob
//       dtypes: [bfloat16]        # optional: every claimed dtype when absent
//       reason: "no bf16 MAC units"
//   xfail:
//     - op: "sin"
//       dtypes: [float32]
//       reason: "argument reduction loses accuracy beyond |x| = 1e4 (issue 12)"
//
// The parser takes exactly this YAML subset: the two top-level keys, list
// items of `key: value` pairs, scalars plain or double-quoted, flow lists.
#pragma once

#include <string>
#include <vector>

#include "dtype.h"
#include "result.h"

namespace bpc {

struct Expectation {
  std::string op;                 // glob
  std::vector<std::string> dtypes;  // empty: all
  std::string reason;
  int line = 0;                   // where it is in its file
  bool matches(const std::string& op_name, DType d) const;
};

struct Expectations {
  std::string source;  // the file it came from, "" if none
  std::vector<Expectation> unsupported;
  std::vector<Expectation> xfail;
  const Expectation* find_unsupported(const std::string& op, DType d) const;
  const Expectation* find_xfail(const std::string& op, DType d) const;
};

// Parses expectation text; false with *err ("line 7: ...") on a syntax error
// or an entry without op or reason.
bool parse_expectations(const std::string& text, Expectations* out, std::string* err);
// Loads <dir>/<backend>.yaml, or `path` itself when it is a file. A missing
// file is no error (no expectations).
bool load_expectations(const std::string& path, const std::string& backend, Expectations* out, std::string* err);

// An entry whose op pattern matches none of `op_names` is an error (a typo
// would otherwise silently expect nothing): false with "<file>:<line>: ...".
bool check_expectation_ops(const Expectations& ex, const std::vector<std::string>& op_names, std::string* err);

// Turns failing xfail cells into expected failures and passing ones into
// unexpected passes (with the entry's reason).
void apply_xfail(const Expectations& ex, DeviceReport* report);

}  // namespace bpc
