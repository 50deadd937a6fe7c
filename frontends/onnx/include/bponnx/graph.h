// An ONNX model loaded for execution, and a session that runs it on one
// Backplane device through the public C API.
//
// Model::load reads a .onnx file (and external-data files beside it),
// checks it (parses, opset supported, every node input produced before it
// is used — a cycle is reported —, initializer data matching their dims)
// and orders the nodes topologically. Session uploads initializers and
// Constant values to the device once, runs nodes in order as Backplane
// operators (the shared node-to-operator mapping of exec.h), releases each
// intermediate at its last use (its memory returns to the device's caching
// allocator), and returns the graph outputs.
//
// Errors are returned as one line naming the file, node or input; nothing
// throws out of Model or Session. Not thread-safe: one Session per thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backplane/backplane.h"
#include "bponnx/exec.h"
#include "bponnx/model.h"

namespace bponnx {

/// The newest default-domain opset the mappings are written against.
constexpr int64_t kMaxOpset = 17;

/// A graph input or output as declared: element type and dims (-1 for a
/// symbolic or unknown dim, named in dim_names).
struct ValueInfo {
  std::string name;
  int elem_type = 0;  // ONNX TensorProto.DataType code; 0 when not declared
  std::vector<int64_t> dims;
  std::vector<std::string> dim_names;
  bool has_shape = false;
};

class Model {
 public:
  /// Loads `path`. False with *err (one line naming the file and what is
  /// wrong) on a read or parse error, an unsupported opset, a node input no
  /// node produces, a cycle, or an initializer whose data does not match.
  static bool load(const std::string& path, Model* out, std::string* err);

  const std::string& path() const { return path_; }
  /// Nodes in a topological order (the file's order where it is one).
  const std::vector<OnnxNode>& nodes() const { return nodes_; }
  /// Graph inputs that are not initializers, in declaration order.
  const std::vector<ValueInfo>& inputs() const { return inputs_; }
  const std::vector<ValueInfo>& outputs() const { return outputs_; }
  const std::map<std::string, RawTensor>& initializers() const { return initializers_; }
  int64_t opset() const { return opset_; }

 private:
  std::string path_;
  std::vector<OnnxNode> nodes_;
  std::vector<ValueInfo> inputs_, outputs_;
  std::map<std::string, RawTensor> initializers_;
  int64_t opset_ = 0;
};

/// What the observer sees after each node ran.
struct NodeRun {
  size_t index = 0;             // position in Model::nodes()
  const OnnxNode* node = nullptr;
  const std::vector<NodeInput>* inputs = nullptr;  // borrowed for the callback
  std::vector<bp_tensor_t*> outputs;               // borrowed; nullptr for outputs not made
  std::vector<bp_op_t*> ops;    // every operator the mapping called, in order
  double seconds = 0.0;         // wall time of the node (device synchronized)
};

/// Runs one node's mapping with `ex` (throws NotMapped / CallFailed).
/// Fails with NotMapped naming the op when no mapping exists.
std::vector<bp_tensor_t*> run_node(Exec& ex, const OnnxNode& node, const std::vector<NodeInput>& inputs);

class Session {
 public:
  /// `model` must outlive the session. Nothing runs until prepare().
  Session(bp_context_t* ctx, bp_device_t dev, const Model* model);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// Checks every node has a mapping (else an error naming op type, node
  /// name and opset) and uploads initializers and Constant values once.
  bool prepare(std::string* err);

  /// Runs the graph. `inputs` maps each graph input name to a tensor on any
  /// device (moved to the session's device when elsewhere); its dtype and
  /// declared static dims are checked. On success `outputs` receives one new
  /// reference per graph output, in order (the caller releases them).
  bool run(const std::map<std::string, bp_tensor_t*>& inputs, std::vector<bp_tensor_t*>* outputs,
           std::string* err);

  /// Called after every node (bp-run's report, trace and shadow check).
  void set_observer(std::function<void(const NodeRun&)> fn) { observer_ = std::move(fn); }
  /// Largest number of intermediate values alive at once in the last run.
  size_t peak_live_values() const { return peak_live_; }
  /// When the last prepare() or run() failed because a node has no mapping
  /// (an op type, attribute or dtype the mappings lack): that gap, as
  /// NotMapped words it ("op Resize", "attribute Conv.auto_pad=SAME_UPPER");
  /// "" otherwise, also when it failed for another reason.
  const std::string& not_mapped() const { return not_mapped_; }

 private:
  struct Slot;
  struct Step;
  // Value ids (value_id_) are dense: slots of a run are a vector, not a map.
  int value_id(const std::string& name);
  void plan();
  bool run_steps(std::vector<Slot>* values, std::string* err);
  bp_context_t* ctx_;
  bp_device_t dev_;
  const Model* model_;
  OpCache ops_;
  std::map<std::string, int> value_id_;            // every value name the graph uses -> its id
  std::vector<std::unique_ptr<Slot>> persistent_;  // by id: initializers and Constant values, else nullptr
  std::vector<Step> steps_;                        // the nodes to run (not Constant), in order
  std::vector<int> input_ids_, output_ids_;        // graph inputs and outputs, declared order
  std::function<void(const NodeRun&)> observer_;
  size_t peak_live_ = 0;
  std::string not_mapped_;
  bool prepared_ = false;
};

}  // namespace bponnx
