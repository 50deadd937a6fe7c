// Runs cases on a backend device through the public C API (backplane.h)
// only: inputs made on the CPU (bp_tensor_from_host), moved to the device
// (bp_tensor_to_device), views made with the core's view operators, the
// operator called with bp_op_find + bp_op_call, results read back with
// bp_tensor_to_host. Native vs fallback comes from the kernel counters.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "backplane/backplane.h"
#include "device_tensor.h"
#include "expectations.h"
#include "opdb.h"
#include "result.h"

namespace bpc {

struct RunOptions {
  std::string op_glob = "*";
  bool has_dtype = false;
  DType dtype = DType::kFloat32;
  int sample = -1;         // -1: every sample
  uint64_t seed = 1;
  bool full = true;
  std::string backend_arg; // how the user named the backend, for repro lines
  // Run the cells of `unsupported:` expectation entries too, so that a stale
  // entry (the cell passes) is found (apply_unsupported files the outcome).
  bool verify_expectations = false;
};

// One operator of the library as the runner sees it.
struct OpEntry {
  std::string name;
  bp_op_t* op = nullptr;
  const OpClaim* claim = nullptr;  // nullptr: not in ops.yaml (a plugin's own operator)
  std::string kind;
};

class Runner {
 public:
  explicit Runner(bp_context_t* ctx);
  // The library's operators (bp_op_count / bp_op_at / bp_op_info), in table order.
  const std::vector<OpEntry>& ops() const { return ops_; }
  // Runs every selected (op, dtype, sample) on one device of a backend.
  DeviceReport run_device(int32_t backend, int32_t device_index, const RunOptions& opt);
  // A report for a backend with no device: every claimed cell unsupported.
  DeviceReport no_device_report(int32_t backend, const RunOptions& opt);
  // An empty report for a device (names filled); *caps gets its BP_DEVICE_CAP_* bits.
  DeviceReport empty_report(int32_t backend, int32_t device_index, uint64_t* caps);
  // Called before each case runs, with the case as describe_case() gives it,
  // and after it finished (worker mode streams both).
  std::function<void(const CaseResult& pending)> on_case_start;
  std::function<void(const CaseResult&)> on_case_done;
  // The backend's expectation file: its unsupported cells are not run.
  const Expectations* expectations = nullptr;
  // Stamped on every CaseResult run_cell makes (see result.h).
  std::string case_group = kGroupOps;
  std::string case_test_id;
  // Runs the cases of one (op, dtype) cell on a device, appending to `report`.
  void run_cell(const OpEntry& op, DType d, int32_t backend, bp_device_t dev, uint64_t caps,
                const RunOptions& opt, DeviceReport* report);
  // Runs one case; `device_label` is "cpu:0".
  CaseResult run_case(const OpEntry& op, DType d, const Case& c, int32_t backend, bp_device_t dev,
                      const RunOptions& opt, const std::string& device_label);
  // What is known of a case before it runs: names, sample, seed, shapes,
  // inputs, the command that reruns it (outcome not set).
  CaseResult describe_case(const OpEntry& op, DType d, const Case& c, int32_t backend, const RunOptions& opt,
                           const std::string& device_label);
  const OpEntry* find_entry(const std::string& name) const;
  bp_context_t* context() const { return ctx_; }

 private:
  bp_op_t* find_op(const std::string& name);
  // The boxed arguments of a sample, its tensors made on `dev` (held by `pool`).
  struct CallArgs {
    std::vector<bp_value_t> values;
    std::vector<std::vector<bp_tensor_t*>> lists;
    std::vector<bp_tensor_t*> tensors;  // per argument: its tensor, or nullptr
  };
  bool make_args(const Sample& sample, bp_device_t dev, TensorPool* pool, CallArgs* out, std::string* err);
  // Case `c` did not complete on the backend's own kernel (it declined, failed,
  // or the input was rejected): reruns it through the operator's out= variant
  // with a poisoned out tensor and the fallback refused (strict). If that call
  // fails but the out tensor changed, the kernel wrote before failing:
  // *r becomes kWroteOnError. Operators without an out= variant, and in-place
  // variants (their wrong self shows in the values), are not checked.
  // (runner_poison.cpp)
  void check_write_on_error(const OpEntry& op, const Case& c, int32_t backend, bp_device_t dev, CaseResult* r);

  bp_context_t* ctx_;
  std::vector<OpEntry> ops_;
  std::map<std::string, bp_op_t*> op_cache_;
};

// fnmatch globs, comma-separated: "add*,mul.Tensor" matches either.
bool glob_match(const std::string& pattern, const std::string& text);
std::string backend_name(bp_context_t* ctx, int32_t backend);

}  // namespace bpc
