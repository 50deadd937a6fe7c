// What a Session observer (graph.h) can tell about a model run, and how its
// outputs compare with expected values. bp-run (--report, --shadow,
// --expect) and bp-conformance's models group share these.
//
//   - node_path: did a node run on the backend's own kernels (native),
//     through a fallback, or only in the core (views, host-side values)?
//   - ShadowCheck: runs each node again on the CPU, from the device's own
//     inputs, and measures how far the device's outputs are from the CPU's.
//   - compare_output: a graph output against expected values (a .npy).
//
// Thread-safety: node_path, node_display_name, input_shapes and
// compare_output may run on any thread (they only read; compare_output makes
// its own CPU tensors). A ShadowCheck is not thread-safe: one per Session,
// called from that session's observer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backplane/backplane.h"
#include "bponnx/graph.h"

namespace bponnx {

/// The shadow check's default tolerance: a node's output element a differs
/// from the CPU's e when |a - e| > atol + rtol * |e|.
constexpr double kShadowRtol = 1e-3;
constexpr double kShadowAtol = 1e-4;

enum class NodePath { kNative, kFallback, kCore };
/// "native", "fallback", "core".
const char* node_path_name(NodePath p);
/// kFallback when any of `ops` (the operators one node called) went through
/// a fallback on `backend` (bp_op_dispatch_kind), else kNative when any ran
/// the backend's own kernel, else kCore (views and host-side values only).
NodePath node_path(bp_context_t* ctx, int32_t backend, const std::vector<bp_op_t*>& ops);

/// A node as reports name it: its name, or its first output when unnamed.
std::string node_display_name(const OnnxNode& n);
/// Its inputs' sizes: "[1, 3, 64, 64] [64, 3, 7, 7] -" ('-' for one left out).
std::string input_shapes(const std::vector<NodeInput>& inputs);

/// One node's outputs against the CPU's.
struct ShadowFinding {
  bool found = false;  // beyond tolerance (ratio > 1)
  size_t index = 0;    // position in Model::nodes()
  std::string node, op, shapes;
  double max_abs = 0.0, max_rel = 0.0;
  /// max over elements of |a - e| / (atol + rtol * |e|): the share of the
  /// tolerance used (> 1: beyond it). Infinite for a size mismatch, NaN where
  /// the CPU has none, or an infinity the device does not match.
  double ratio = 0.0;
};

class ShadowCheck {
 public:
  /// Compares nodes run on `dev` with the CPU. `ctx` must outlive the check.
  ShadowCheck(bp_context_t* ctx, bp_device_t dev, double rtol = kShadowRtol, double atol = kShadowAtol);
  /// Runs `nr`'s node on the CPU from copies of its inputs and compares every
  /// output (call it from the Session observer). A node the CPU cannot run
  /// is not counted; the first such one is kept in error().
  void check(const NodeRun& nr);
  /// The first node beyond tolerance (found == false when none).
  const ShadowFinding& first() const { return first_; }
  /// The node that used most of its tolerance (found when beyond it; index,
  /// node and op empty when nothing was checked).
  const ShadowFinding& worst() const { return worst_; }
  size_t checked() const { return checked_; }
  /// How many checked nodes had an output beyond tolerance.
  size_t beyond() const { return beyond_; }
  /// "<node>: <reason>" of the first node that could not be checked, or "".
  const std::string& error() const { return error_; }

 private:
  bp_context_t* ctx_;
  bp_device_t dev_;
  double rtol_, atol_;
  ShadowFinding first_, worst_;
  bool any_ = false;
  size_t checked_ = 0, beyond_ = 0;
  std::string error_;
};

/// An output compared with expected values: |got - want| <= atol + rtol * |want|.
struct OutputMatch {
  bool match = false;
  std::string error;  // sizes differ, or a call failed: "shape [2, 3], expected [3, 2]"
  double max_abs = 0.0, max_rel = 0.0;
  size_t beyond = 0, count = 0;  // elements beyond tolerance, of count
  size_t worst_index = 0;        // flat index of the element furthest beyond
  double worst_got = 0.0, worst_want = 0.0;
  /// "max abs 1e-06, max rel 2e-05" and, on a mismatch, "; 3 of 1000 beyond
  /// rtol R atol A (worst at flat index I: got G, expected E)"; or error.
  std::string message(double rtol, double atol) const;
};
/// Compares `got` (any device, borrowed) with `want` (host bytes, e.g. from
/// npy_read) on the CPU, in float64, elementwise; the sizes must be equal
/// (no broadcasting), the dtypes may differ. Never throws: a size mismatch
/// or a failed call comes back in OutputMatch::error with match false.
OutputMatch compare_output(bp_context_t* ctx, bp_tensor_t* got, const RawTensor& want, double rtol, double atol);

}  // namespace bponnx
