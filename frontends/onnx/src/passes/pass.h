// The graph optimizer: small passes run on a loaded model's graph at session
// creation, before planning (Session::prepare). Each pass is one file with
// one job, named in the pass list (pipeline.cpp), and can be turned off by
// name (bp-run --no-opt NAME, Session::disable_pass). A pass only rewrites
// what it proves equivalent; anything unexpected is left as it is.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "backplane/backplane.h"
#include "bponnx/model.h"

namespace bponnx {
namespace passes {

/// The graph a pass rewrites: nodes in a topological order, initializers,
/// and the names of the graph outputs (values that must stay).
struct PassGraph {
  std::vector<OnnxNode> nodes;
  std::map<std::string, RawTensor> initializers;
  std::vector<std::string> outputs;
  bp_context_t* ctx = nullptr;  // for passes that run nodes (on its CPU device); nullptr: they do nothing
  bp_device_t device{0, 0};     // the session's device
};

/// One pass: its name (the --no-opt word) and what it does to the graph;
/// `run` returns how many rewrites it made.
struct Pass {
  const char* name;
  const char* what;  // one line for --help and docs
  int (*run)(PassGraph* g);
};

/// Every pass, in the order they run.
const std::vector<Pass>& pass_list();

/// Runs every pass of pass_list() not named in `disabled` ("all" turns them
/// all off).
void optimize(PassGraph* g, const std::set<std::string>& disabled);

// The passes (one file each).
int fold_constants(PassGraph* g);
int fuse_gelu(PassGraph* g);
int eliminate_dead_nodes(PassGraph* g);
int fold_conv_batchnorm(PassGraph* g);
int fuse_layer_norm(PassGraph* g);
int fuse_conv_activation(PassGraph* g);
int fuse_attention(PassGraph* g);
int mark_channels_last(PassGraph* g);

/// The Conv attribute mark_channels_last sets: the Conv mapping runs the
/// convolution on a channels-last (NHWC-strided) input.
constexpr const char* kChannelsLastAttr = "backplane_channels_last";

// Helpers shared by the passes (graph_util.cpp).
/// How many node inputs read each value (graph outputs count as a reader).
std::map<std::string, int> reader_counts(const PassGraph& g);
/// A float32 initializer's values; false when `name` is no float32 initializer.
bool float_initializer(const PassGraph& g, const std::string& name, std::vector<float>* out);
/// A float32 initializer from values.
RawTensor float_tensor(const std::vector<int64_t>& sizes, const std::vector<float>& values);
/// A value name not used in the graph, made from `base`.
std::string fresh_name(const PassGraph& g, const std::string& base);

/// What the pattern passes ask of a graph while they match: each value's
/// producing node and reader count, and float32 scalar initializers.
/// Built once per pass run; stays valid while nodes are only marked, not moved.
struct Matcher {
  explicit Matcher(PassGraph* graph);
  PassGraph* g;
  std::map<std::string, size_t> producer;  // value -> index of the node making it
  std::map<std::string, int> readers;      // reader_counts(*g)

  /// The default-domain node making `v` when its op type is `op` and it has
  /// `num_inputs` inputs and one output; nullptr otherwise.
  const OnnxNode* made_by(const std::string& v, const char* op, size_t num_inputs = 2) const;
  /// True when `v` is a float32 one-element initializer within 1e-6 (relative) of `want`.
  bool scalar(const std::string& v, double want) const;
  /// The operand of binary node `n` that is not the scalar `want`; "" when neither is.
  std::string other_than(const OnnxNode& n, double want) const;
  /// True when `v` has exactly `count` readers (a graph output counts as one).
  bool read_by(const std::string& v, int count = 1) const;
};

/// Drops the nodes whose `drop` entry is true, keeping the others' order.
void drop_nodes(PassGraph* g, const std::vector<bool>& drop);

}  // namespace passes
}  // namespace bponnx
