// An ONNX model loaded for execution, and a session that runs it on one
// Backplane device through the public C API. The header a host application
// starts from (docs/bp-run.md, "The frontend library in a host app").
//
// Model::load reads a .onnx file (and external-data files beside it),
// checks it (parses, opset supported, every node input produced before it
// is used — a cycle is reported —, initializer data matching their dims)
// and orders the nodes topologically. Session first rewrites a copy of the
// graph with the optimizer's passes (optimizer_passes(), each one can be
// turned off: disable_pass), then uploads initializers and
// Constant values to the device once (those of at most 64 elements stay on
// the host until a node needs them there), runs nodes in order as Backplane
// operators (the shared node-to-operator mapping of exec.h), releases each
// intermediate at its last use (its memory returns to the device's caching
// allocator), and returns the graph outputs. It plans once per set of input
// sizes: the first run folds shape subgraphs on the host and records the
// operator calls, later runs with the same sizes replay them
// (docs/bp-run.md).
//
// Shapes and dtypes are the model's: inputs must have the declared element
// type (one of the nine of dtype.h) and the declared static dims (symbolic
// dims take any size); outputs come back with whatever the operators make.
//
// Errors are returned as one line naming the file, node or input; nothing
// throws out of Model or Session (except std::bad_alloc).
//
// Thread-safety: a loaded Model is immutable and may be shared by sessions
// on several threads. A Session is not thread-safe: one Session per thread
// (several sessions of one model on one context may run concurrently).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
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

/// A parsed, checked, topologically ordered ONNX graph. Copyable value.
class Model {
 public:
  /// Loads `path` into *out (replacing what it held). False with *err (one
  /// line, "<path>: ...", naming the node or value) on a read or parse
  /// error, a default-domain opset newer than kMaxOpset, a node whose input
  /// or output count ONNX's schema refuses, a value produced twice, a node
  /// input no node produces, a cycle, or an initializer whose data is
  /// shorter or longer than its dims (external data: relative to the file's
  /// directory). Unmapped op types are not checked here (Session::prepare).
  static bool load(const std::string& path, Model* out, std::string* err);

  const std::string& path() const { return path_; }
  // Accessors: references into the model, valid while it lives.
  /// Nodes in a topological order (the file's order where it is one).
  const std::vector<OnnxNode>& nodes() const { return nodes_; }
  /// Graph inputs that are not initializers, in declaration order.
  const std::vector<ValueInfo>& inputs() const { return inputs_; }
  /// Graph outputs in declaration order (Session::run returns them so).
  const std::vector<ValueInfo>& outputs() const { return outputs_; }
  /// Initializers by name, as stored bytes on the host.
  const std::map<std::string, RawTensor>& initializers() const { return initializers_; }
  /// The default-domain opset (0 when the model imports none).
  int64_t opset() const { return opset_; }
  /// This model with its nodes (a topological order) and initializers
  /// replaced: the graph optimizer's result (Session::prepare).
  Model with_graph(std::vector<OnnxNode> nodes, std::map<std::string, RawTensor> initializers) const;

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
  double host_seconds = 0.0;    // of it, until its calls were enqueued (mapping, dispatch)
};

/// Runs one node's mapping with `ex`: its outputs, held by `ex`. Throws
/// NotMapped naming the op when no mapping exists (or the mapping's own
/// gap), CallFailed when an operator fails.
std::vector<bp_tensor_t*> run_node(Exec& ex, const OnnxNode& node, const std::vector<NodeInput>& inputs);

/// The graph optimizer's passes (Session::prepare runs them before
/// planning), in the order they run: name (for Session::disable_pass and
/// bp-run --no-opt) and what it does.
std::vector<std::pair<std::string, std::string>> optimizer_passes();

/// Runs one Model on one device. Holds device memory for the model's
/// initializers from prepare() until destroyed.
class Session {
 public:
  /// `ctx` (with `dev` a device of it, e.g. from bp_device_parse) and
  /// `model` must outlive the session. Nothing runs until prepare().
  Session(bp_context_t* ctx, bp_device_t dev, const Model* model);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// Checks every node has a mapping (else false with an error naming op
  /// type, node name and opset, and every other unmapped op type of the
  /// model) and uploads initializers and Constant values to the device once
  /// (false on an element type Backplane lacks or a device error); values
  /// of at most 64 elements stay on the host. run() calls it when it was not
  /// called; calling it again forgets every plan.
  /// Before that, it runs the graph optimizer's passes (optimizer_passes())
  /// on a copy of the model, except those turned off by disable_pass.
  bool prepare(std::string* err);

  /// Turns the optimizer pass `name` off ("all": every pass) for the next
  /// prepare(); false with *err listing the pass names for an unknown name.
  bool disable_pass(const std::string& name, std::string* err);

  /// Runs the graph. `inputs` maps each graph input name to a tensor on any
  /// device (borrowed; copied to the session's device when elsewhere); its
  /// dtype and declared static dims are checked. On success `outputs` is
  /// cleared and receives one new reference per graph output, in
  /// Model::outputs() order, on the session's device (the caller releases
  /// each with bp_tensor_release). False with *err on a missing input, a
  /// wrong dtype or shape ("input X has shape [1, 3], the model declares
  /// [1, 4]"), a node the mappings cannot express or an operator error
  /// (naming the node); nothing is returned then. Runs synchronously with
  /// respect to the host only as far as the operators do: read outputs
  /// with bp_tensor_to_host, which synchronizes.
  bool run(const std::map<std::string, bp_tensor_t*>& inputs, std::vector<bp_tensor_t*>* outputs,
           std::string* err);

  /// Called after every node with what it did (bp-run's report, trace and
  /// shadow check); the device is synchronized before each call, so an
  /// observer slows a run. nullptr removes it. Called on run()'s thread.
  void set_observer(std::function<void(const NodeRun&)> fn) { observer_ = std::move(fn); }
  /// The model the session runs: after prepare(), the optimized copy (its
  /// nodes are those NodeRun::index counts); before, the model as given.
  const Model& model() const { return *model_; }
  /// True when the last successful run() replayed the record of an earlier
  /// run with the same input sizes (operator calls only: no mapping ran, no
  /// value was read back to the host, shapes were folded when recorded).
  /// False after a recording run, or for a model whose calls depend on
  /// device values (each run then runs the mappings).
  bool last_run_replayed() const { return replayed_; }
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
  struct Plan;
  struct RunState;
  // Value ids (value_id_) are dense: slots of a run are a vector, not a map.
  int value_id(const std::string& name);
  void plan();
  bool run_steps(RunState* rs, std::vector<bp_tensor_t*>* outputs, std::string* err);
  bool replay(Plan* p, const std::vector<bp_tensor_t*>& inputs, std::vector<bp_tensor_t*>* outputs, std::string* err);
  bp_tensor_t* device_of(Slot* s, Exec& ex);
  bp_tensor_t* cpu_of(Slot* s);
  bp_context_t* ctx_;
  bp_device_t dev_;
  const Model* source_;  // the model as loaded
  Model optimized_;      // source_ after the optimizer's passes (prepare())
  const Model* model_;   // the model the session runs: &optimized_ once prepared
  std::set<std::string> disabled_passes_;
  OpCache ops_;
  std::map<std::string, int> value_id_;            // every value name the graph uses -> its id
  std::vector<std::unique_ptr<Slot>> persistent_;  // by id: initializers and Constant values, else nullptr
  std::vector<Step> steps_;                        // the nodes to run (not Constant), in order
  std::vector<int> input_ids_, output_ids_;        // graph inputs and outputs, declared order
  // Planned runs by the graph inputs' sizes (session.cpp: the first run of
  // a signature records, later ones replay).
  std::map<std::vector<std::vector<int64_t>>, std::unique_ptr<Plan>> plans_;
  std::function<void(const NodeRun&)> observer_;
  size_t peak_live_ = 0;
  std::string not_mapped_;
  bool prepared_ = false;
  bool replayed_ = false;
};

}  // namespace bponnx
