// Per-backend expectation files, conformance/expectations/<backend>.yaml
// (and common.yaml, whose entries hold for every backend: reasons in the
// test data, not in a backend): cells a backend does not support
// (permanent), cells expected to fail for now (xfail), and ONNX node tests
// expected to fail (onnx_xfail), each with a reason. An xfail cell or ONNX
// test that passes is an "unexpected pass", so stale entries get removed;
// with --verify-expectations an unsupported cell is run too, and one that
// passes is reported the same way.
//
//   unsupported:
//     - op: "conv2d"              # operator name or glob
//       dtypes: [bfloat16]        # optional: every claimed dtype when absent
//       reason: "no bf16 MAC units"
//   xfail:
//     - op: "sin"
//       dtypes: [float32]
//       reason: "argument reduction loses accuracy beyond |x| = 1e4 (issue 12)"
//   onnx_xfail:
//     - test: "test_cast_FLOAT_to_BFLOAT16"   # ONNX node-test directory name or glob
//       reason: "the test data truncates; Backplane rounds to nearest even"
//
// The parser takes exactly this YAML subset: the three top-level keys, list
// items of `key: value` pairs, scalars plain or double-quoted, flow lists.
#pragma once

#include <string>
#include <vector>

#include "dtype.h"
#include "result.h"

namespace bpc {

struct Expectation {
  std::string op;                   // glob: operator names; in onnx_xfail, ONNX node-test names
  std::vector<std::string> dtypes;  // empty: all
  std::string reason;
  int line = 0;                   // where it is in its file
  std::string file;               // ... and the file ("" when parsed from text)
  bool matches(const std::string& op_name, DType d) const;
};

struct Expectations {
  std::string source;  // the file it came from, "" if none
  std::vector<Expectation> unsupported;
  std::vector<Expectation> xfail;
  std::vector<Expectation> onnx_xfail;
  // "<file>:<line>" of an entry (its own file, else `source`).
  std::string where(const Expectation& e) const;
  const Expectation* find_unsupported(const std::string& op, DType d) const;
  const Expectation* find_xfail(const std::string& op, DType d) const;
  const Expectation* find_onnx_xfail(const std::string& test) const;
};

// Parses expectation text; false with *err ("line 7: ...") on a syntax error
// or an entry without op or reason.
bool parse_expectations(const std::string& text, Expectations* out, std::string* err);
// Loads <dir>/common.yaml and <dir>/<backend>.yaml, or `path` itself when it
// is a file. A missing file is no error (no expectations).
bool load_expectations(const std::string& path, const std::string& backend, Expectations* out, std::string* err);

// An entry whose op pattern matches none of `op_names` is an error (a typo
// would otherwise silently expect nothing): false with "<file>:<line>: ...".
bool check_expectation_ops(const Expectations& ex, const std::vector<std::string>& op_names, std::string* err);

// Turns failing xfail cells into expected failures and passing ones into
// unexpected passes (with the entry's reason).
void apply_xfail(const Expectations& ex, DeviceReport* report);
// Cells of unsupported entries that ran anyway (--verify-expectations): a
// passing one becomes an unexpected pass (the entry is stale), any other
// outcome the entry's unsupported cell. Cells that did not run are left alone.
void apply_unsupported(const Expectations& ex, DeviceReport* report);
// "unsupported per <file>:<line>: <reason>", the reason of such a cell.
std::string unsupported_reason(const Expectations& ex, const Expectation& e);

}  // namespace bpc
