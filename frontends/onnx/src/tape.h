// A session's planned run (internal to the frontend). The first run for an
// input-shape signature runs the mappings with a Tape as the Exec's
// Recorder: every operator call (its resolved PreparedCall and its
// arguments, attributes already parsed into ints, lists and strings), every
// empty tensor, and the tensors made from host values (constants: kept by
// the tape, made once). Later runs with the same input shapes replay the
// tape: no mapping, no name lookup, no attribute parsing, no host value
// made again; each call runs through its own call plan (bp_op_prepare_for_args
// on the first replay; prepared again if a plugin load made it stale). A run whose calls depend on tensor values read back to the
// host is refused (replayable() false): its session keeps running the
// mappings.
//
// Tensor arguments are recorded as references: a slot (a tensor made in the
// run: a graph input or a call's result, one slot per tensor made) or a
// fixed tensor (retained by the tape: initializers, folded values,
// constants). Not thread-safe: one tape per session.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "bponnx/exec.h"

namespace bponnx {

class Tape : public Recorder {
 public:
  explicit Tape(bp_device_t dev) : dev_(dev) {}
  ~Tape() override;
  Tape(const Tape&) = delete;
  Tape& operator=(const Tape&) = delete;

  // ---- Recording (the planning run, in this order) ----
  /// The next graph input's tensor on the device (Model::inputs() order).
  void bind_input(bp_tensor_t* t);
  /// A tensor every run shares as is (retained until the tape dies).
  void bind_fixed(bp_tensor_t* t);
  /// The node (session step `step`) whose calls come next.
  void begin_node(size_t step);
  /// That node's inputs (their host pointers must outlive the tape) and outputs.
  void end_node(const std::vector<NodeInput>& inputs, const std::vector<bp_tensor_t*>& outputs);
  /// The graph outputs; ends recording (lifetimes are decided here).
  void finish(const std::vector<bp_tensor_t*>& outputs);
  /// Marks the run as not replayable, with the first reason given.
  void refuse(const std::string& why);
  bool replayable() const { return why_not_.empty(); }
  const std::string& why_not() const { return why_not_; }

  void on_call(const PreparedCall& c, const bp_value_t* args, int32_t num_args, bp_tensor_t* const* outs,
               int32_t num_outs) override;
  void on_empty(const std::vector<int64_t>& sizes, DLDataType dtype, bp_tensor_t* out) override;
  void on_constant(bp_tensor_t* t) override { bind_fixed(t); }
  void on_read_back(bp_tensor_t* t) override;

  // ---- Replaying ----
  /// What a replayed node did, for a session's observer.
  struct NodeDone {
    size_t step = 0;
    const std::vector<NodeInput>* inputs = nullptr;
    const std::vector<bp_tensor_t*>* outputs = nullptr;
    const std::vector<bp_op_t*>* ops = nullptr;
    std::chrono::steady_clock::time_point start;
  };
  /// Replays the recorded calls with `inputs` (graph inputs on the device,
  /// one reference each, taken over: released here). On success *outputs
  /// gets one new reference per graph output. False with *err (the call's
  /// error) and *failed_step when a call fails; nothing is returned then.
  /// `each_node`, when set, is called after each node.
  bool run(bp_context_t* ctx, const std::vector<bp_tensor_t*>& inputs,
           const std::function<void(const NodeDone&)>& each_node, std::vector<bp_tensor_t*>* outputs, std::string* err,
           size_t* failed_step);
  /// Largest number of tensors alive at once between nodes of a replay.
  size_t peak_live() const { return peak_live_; }

 private:
  // >= 0: a slot of the run; < 0: fixed_[-ref - 1]; kNone: no tensor.
  using Ref = int32_t;
  static constexpr Ref kNone = INT32_MIN;
  struct Patch {
    int32_t arg;
    int32_t elem;  // -1: the argument's tensor; else the element of its tensor list
    Ref ref;
  };
  struct Op {
    const PreparedCall* call = nullptr;  // nullptr: bp_tensor_empty(sizes, dtype)
    bp_call_plan_t* plan = nullptr;      // owned; made on the first replay
    std::vector<int64_t> sizes;
    DLDataType dtype{};
    std::vector<bp_value_t> args;
    // Owned copies of what the arguments borrow, by argument index.
    std::unordered_map<int32_t, std::vector<int64_t>> ints;
    std::unordered_map<int32_t, std::string> strs;
    std::unordered_map<int32_t, std::vector<bp_tensor_t*>> lists;
    std::vector<Patch> patches;
    std::vector<int32_t> outs;  // result slots
  };
  struct Node {
    size_t step = 0;
    size_t op_begin = 0, op_end = 0;
    std::vector<Ref> in_refs, out_refs;
    std::vector<const HostTensor*> in_hosts;
    std::vector<int32_t> release;  // slots whose last reader is this node
  };
  Ref ref_of(bp_tensor_t* t);
  int32_t new_slot(bp_tensor_t* t);
  bp_tensor_t* resolve(Ref r, const std::vector<bp_tensor_t*>& slots) const;
  // One recorded call with its patched arguments, through its plan.
  static void call(bp_context_t* ctx, Op& op, bp_tensor_t** results, int32_t num_results);
  void seal();

  bp_device_t dev_;
  std::unordered_map<bp_tensor_t*, Ref> refs_;  // recording only
  std::vector<bp_tensor_t*> fixed_;
  std::vector<Op> ops_;
  std::vector<Node> nodes_;
  std::vector<int32_t> input_slots_;
  std::vector<Ref> output_refs_;
  int32_t slots_ = 0;
  std::string why_not_;
  size_t peak_live_ = 0;
};

}  // namespace bponnx
