// bp-conformance's ONNX backend node-test corpus (libonnx-testdata's
// data/node: one directory per test, model.onnx with one node and
// test_data_set_*/{input,output}_N.pb). Each test's node is mapped to one or
// a few Backplane operator calls, run on a backend device through the public
// C API, and compared with the expected outputs (rtol 1e-3, atol 1e-7 as
// onnx.backend.test does; exact for integers and bool; NaN matches NaN).
//
// Outcomes per test: pass, fail (wrong values, sizes or dtype), not_mapped
// (no mapping: "op X", "attribute Op.attr=value", "dtype Op(dtype)",
// "graph ...", "input ..."/"output ..."), error (a call returned a status),
// crashed (the isolated worker died or ran out of time while on this test);
// after the expectation files' onnx_xfail entries: xfail (failed, and an
// entry with a reason covers it) and xpass (passed although an entry says it
// fails: a stale entry). Every fail, error, crashed and xpass fails the run.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "backplane/backplane.h"
#include "expectations.h"

namespace CLI {
class App;
}

namespace bpc {

struct OnnxOptions {
  std::string dir;           // the corpus (directory of test_* directories)
  std::string filter = "*";  // glob on test directory names
  double timeout_s = 600;    // time limit of one backend device's run
};

struct OnnxTestResult {
  std::string test, onnx_op;
  std::string outcome;  // pass fail not_mapped error crashed xfail xpass
  std::string reason;   // not_mapped: the gap, "op Foo" ...
  std::string message;  // fail/error/crashed: what happened
  std::string path;     // native, cpu_fallback, backend_fallback, core, none ("" when not run)
};

struct OnnxReport {
  std::string backend, device;  // "cpu", "cpu:0"
  std::string error;            // the run could not start (no corpus, no ONNX support)
  std::vector<OnnxTestResult> tests;
  int mapped() const;
  int passed() const;
  int not_mapped() const;
  int xfailed() const;
  int failed() const;  // fail, error, crashed and xpass
};

// Files the onnx_xfail entries of `ex` over the report's tests.
void apply_onnx_xfail(const Expectations& ex, OnnxReport* report);
// For the device's verdict line: "; ONNX node tests 713 of 716 mapped pass
// (3 expected failures), 216 of 932 not mapped", "FAIL: 2 failing, " first
// when some test failed; the report's error when it could not run.
std::string onnx_verdict_suffix(const OnnxReport& r);

// The test directories under opt.dir whose names match opt.filter, sorted.
std::vector<std::string> list_onnx_tests(const OnnxOptions& opt, std::string* err);

// Runs one test directory on a device, in this process.
OnnxTestResult run_onnx_test(bp_context_t* ctx, bp_device_t dev, const std::string& test_dir);

// Runs every selected test on one backend device in this process.
OnnxReport run_onnx_corpus(bp_context_t* ctx, int32_t backend, int32_t device_index, const OnnxOptions& opt);

// Runs them in child processes (this executable re-run with `worker_argv`
// plus the ONNX worker flags): a crash or timeout costs the test that was
// running (crashed); the run resumes after it in a new child.
OnnxReport run_onnx_corpus_isolated(bp_context_t* ctx, int32_t backend, int32_t device_index,
                                    const OnnxOptions& opt, const std::vector<std::string>& worker_argv);

// Per device: "cpu:0: ONNX node tests: N of M mapped pass, K of T not mapped (...)",
// the failing tests with their message, then the not-mapped tests grouped
// by reason (largest groups first, a few test names each).
void print_onnx_summary(std::ostream& os, const std::vector<OnnxReport>& reports);
nlohmann::json onnx_to_json(const std::vector<OnnxReport>& reports);
// True when some report has a failed, error or crashed test (or could not run).
bool onnx_any_failure(const std::vector<OnnxReport>& reports);

// The command-line side, so main.cpp stays small.
struct OnnxCli {
  std::string dir;       // --onnx-node-tests DIR ("none": skip)
  std::string filter = "*";
  bool no_onnx = false;
  bool explicit_request = false;  // --onnx-node-tests or --onnx-filter given
  // Hidden worker flags: run the selected tests from index `worker_start` on
  // one device, streaming JSON lines.
  bool worker = false;
  int worker_start = 0;
};
void add_onnx_options(CLI::App& app, OnnxCli* cli);
// After parsing: whether the corpus runs (the op matrix narrowed with
// --op/--dtype skips it unless it was asked for) and its options.
bool onnx_selected(const CLI::App& app, OnnxCli* cli, bool subset_selected, OnnxOptions* opt);
// What main.cpp calls per backend device: isolated (base_worker_argv, the
// command line that makes this executable a worker for the backend, gets
// the device and the ONNX worker flags appended) or in this process.
OnnxReport run_onnx_device(bp_context_t* ctx, int32_t backend, int32_t device_index, const OnnxOptions& opt,
                           bool isolate, std::vector<std::string> base_worker_argv);
// Worker mode (--onnx-worker): runs the selected tests from index `start` on
// device `device_index` of the backend named `backend`, streaming one JSON
// line per test to stdout; returns the exit code.
int run_onnx_worker(bp_context_t* ctx, const std::string& backend, int32_t device_index, const OnnxOptions& opt,
                    int start);

}  // namespace bpc
