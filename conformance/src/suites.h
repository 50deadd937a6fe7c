// The GoogleTest suites of bp-conformance, value-parameterized over what the
// run found at start (target.h):
//   Ops/OpCellTest.Run/<target>__<op>__<dtype>            the operator matrix
//   Fallback/FallbackCellTest.Run/<target>__<op>__<dtype>  the same cells with
//       the backend's native kernel masked (bp_op_set_kernel_masked)
//   Claims/DtypeClaimTest.Probe/<target>__<op>__<dtype>    one sample of a dtype
//       ops.yaml does not claim: does it run natively anyway?
//   Abi/AbiRuntimeTest.<Name>/<target>                     the ABI/runtime group
//   Streams/StreamsTest.<Name>/<target>                    the streams group
// Each test streams CaseResults through SuiteState::on_case; a listener turns
// tests that do not (the ABI and streams groups) into one CaseResult each.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "expectations.h"
#include "runner.h"
#include "target.h"

namespace bpc {

// One (target, operator, dtype) cell of a cell suite.
struct CellParam {
  Target target;
  std::string op;
  DType dtype = DType::kFloat32;
  std::string id() const;  // "cpu_0__add_Tensor__float32"
};

struct CellName {
  std::string operator()(const ::testing::TestParamInfo<CellParam>& info) const { return info.param.id(); }
};

// What the suites share; filled by main() before InitGoogleTest.
struct SuiteState {
  Runner* runner = nullptr;
  RunOptions options;                                   // op glob, dtype, seed, tier
  std::map<std::string, Expectations> expectations;     // by backend name
  std::map<std::string, std::string> backend_args;      // backend name -> how the user named it
  std::vector<CellParam> op_cells, fallback_cells, claim_probes;
  bool abi_group = true;                                // run the Abi/ suites
  bool streams_group = true;                            // run the Streams/ suites
  std::function<void(const CaseResult&)> on_case;       // every case, as it finishes
  // Before each case or test: its ID, "float32 sample 3", and for a case what
  // is known of it before it runs (Runner::describe_case), else nullptr.
  std::function<void(const std::string& test_id, const std::string& what, const CaseResult* pending)> on_start;
  std::function<void(const std::string& test_id)> on_test_end;                          // after each test
};
SuiteState& suite_state();

// The cells of `targets` x selected operators x dtypes, in table order:
// claimed dtypes for the ops and fallback groups (the fallback group skips
// the CPU backend: it is the fallback target), unclaimed ones for the probes.
void plan_cells(const std::vector<Target>& targets, const Runner& runner, const RunOptions& opt,
                SuiteState* state);

// Installs the listener that streams per-test results (replacing GoogleTest's
// console printer: bp-conformance prints its own report).
void install_case_listener();

// Which group and (target id, op) a registered test belongs to, from its ID.
struct TestKey {
  std::string group;   // kGroupOps, kGroupFallback, kGroupClaims, kGroupAbi, kGroupStreams
  std::string target;  // "cpu_0"
  std::string op;      // "" for the ABI and streams groups
  std::string dtype;   // "" for the ABI and streams groups
};
bool test_key(const std::string& suite_name, const std::string& test_name, TestKey* key);

}  // namespace bpc
