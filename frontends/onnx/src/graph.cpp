#include "bponnx/graph.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>

#include "bponnx/proto.h"
#include "node_label.h"

namespace bponnx {

namespace {

std::string dir_of(const std::string& path) {
  const size_t k = path.find_last_of('/');
  return k == std::string::npos ? "." : path.substr(0, k);
}

ValueInfo value_info(const onnx::ValueInfoProto& vi) {
  ValueInfo v;
  v.name = vi.name();
  if (vi.type().value_case() != onnx::TypeProto::kTensorType) return v;
  const auto& tt = vi.type().tensor_type();
  v.elem_type = tt.elem_type();
  v.has_shape = tt.has_shape();
  for (const auto& d : tt.shape().dim()) {
    v.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
    v.dim_names.push_back(d.has_dim_param() ? d.dim_param() : "");
  }
  return v;
}

// The node's input and output counts against ONNX's schema of its op at its
// opset (libonnx): "" when they fit or ONNX does not know the op (then it
// has no mapping either, which prepare() reports).
std::string check_arity(const OnnxNode& n) {
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(n.op_type, static_cast<int>(n.opset), n.domain);
  if (schema == nullptr) return "";
  const int ins = static_cast<int>(n.inputs.size()), outs = static_cast<int>(n.outputs.size());
  if (ins < schema->min_input() || ins > schema->max_input()) {
    return std::to_string(ins) + " inputs, ONNX's schema takes " + std::to_string(schema->min_input()) + " to " +
           std::to_string(schema->max_input());
  }
  if (outs < schema->min_output() || outs > schema->max_output()) {
    return std::to_string(outs) + " outputs, ONNX's schema makes " + std::to_string(schema->min_output()) + " to " +
           std::to_string(schema->max_output());
  }
  const auto& formal = schema->inputs();
  for (size_t k = 0; k < formal.size() && k < n.inputs.size(); ++k) {
    if (formal[k].GetOption() == onnx::OpSchema::Single && n.inputs[k].empty()) {
      return "required input " + std::to_string(k) + " (" + formal[k].GetName() + ") is left out";
    }
  }
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    if (k == 0 && n.outputs[k].empty()) return "output 0 has no name";
  }
  return "";
}

}  // namespace

std::string node_label(const OnnxNode& n) {
  return "node '" + (n.name.empty() ? n.outputs.empty() ? std::string("?") : n.outputs[0] : n.name) + "' (" +
         (n.domain.empty() ? "" : n.domain + ".") + n.op_type + ", opset " + std::to_string(n.opset) + ")";
}

bool Model::load(const std::string& path, Model* out, std::string* err) {
  *out = Model{};
  out->path_ = path;
  const std::string where = path + ": ";
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *err = where + "cannot read the file";
    return false;
  }
  std::ostringstream os;
  os << in.rdbuf();
  const std::string bytes = os.str();
  onnx::ModelProto model;
  if (bytes.empty() || !model.ParseFromString(bytes) || !model.has_graph()) {
    *err = where + "not an ONNX model (the file does not parse as a ModelProto with a graph; truncated?)";
    return false;
  }
  // Each domain once, with a version >= 1: a version a node is then checked
  // and mapped against (0 or -1 matched no schema and slipped past checks).
  std::map<std::string, int64_t> opsets;
  for (const auto& o : model.opset_import()) {
    const std::string dom = o.domain() == "ai.onnx" ? "" : o.domain();
    const std::string shown = dom.empty() ? "the default domain (ai.onnx)" : "domain '" + dom + "'";
    if (opsets.count(dom)) {
      *err = where + "opset_import lists " + shown + " twice (versions " + std::to_string(opsets[dom]) + " and " +
             std::to_string(o.version()) + "), expected each domain once";
      return false;
    }
    if (o.version() < 1) {
      *err = where + "opset_import gives " + shown + " version " + std::to_string(o.version()) +
             ", expected a version >= 1";
      return false;
    }
    opsets[dom] = o.version();
  }
  out->opset_ = opsets.count("") ? opsets[""] : 0;
  if (out->opset_ > kMaxOpset) {
    *err = where + "default-domain opset " + std::to_string(out->opset_) + " is newer than the newest supported (" +
           std::to_string(kMaxOpset) + ")";
    return false;
  }
  const std::string base = dir_of(path);
  const onnx::GraphProto& g = model.graph();
  // Names are SSA: every value has one definition (a graph input, an
  // initializer or one node output). A second definition shadowed the first
  // at run time and leaked its tensor.
  std::map<std::string, int> declared;
  for (const auto& vi : g.input()) {
    if (declared.count(vi.name())) {
      *err = where + "graph input " + vi.name() + " is declared twice";
      return false;
    }
    declared[vi.name()] = vi.type().tensor_type().elem_type();
  }
  for (const auto& init : g.initializer()) {
    if (out->initializers_.count(init.name())) {
      *err = where + "initializer " + init.name() + " is given twice";
      return false;
    }
    RawTensor t;
    if (!raw_tensor_from_proto(init, base, &t, err, declared[init.name()])) {
      *err = where + "initializer " + init.name() + ": " + *err;
      return false;
    }
    out->initializers_[init.name()] = std::move(t);
  }
  for (const auto& vi : g.input()) {
    if (!out->initializers_.count(vi.name())) out->inputs_.push_back(value_info(vi));
  }
  for (const auto& vi : g.output()) out->outputs_.push_back(value_info(vi));

  // Nodes, then Kahn's topological sort (stable: the file's order first).
  std::vector<OnnxNode> nodes(static_cast<size_t>(g.node_size()));
  std::map<std::string, size_t> producer;
  for (int k = 0; k < g.node_size(); ++k) {
    const auto& np = g.node(k);
    const std::string dom = np.domain() == "ai.onnx" ? "" : np.domain();
    if (!node_from_proto(np, opsets.count(dom) ? opsets[dom] : 0, base, &nodes[static_cast<size_t>(k)], err)) {
      *err = where + *err;
      return false;
    }
    if (!opsets.count(dom)) {
      *err = where + node_label(nodes[static_cast<size_t>(k)]) + ": its domain " +
             (dom.empty() ? std::string("'' (ai.onnx)") : "'" + dom + "'") +
             " has no opset_import entry, expected the model to give its version";
      return false;
    }
    const std::string arity = check_arity(nodes[static_cast<size_t>(k)]);
    if (!arity.empty()) {
      *err = where + node_label(nodes[static_cast<size_t>(k)]) + ": " + arity;
      return false;
    }
    for (const std::string& o : nodes[static_cast<size_t>(k)].outputs) {
      if (o.empty()) continue;
      if (producer.count(o) || out->initializers_.count(o)) {
        *err = where + node_label(nodes[static_cast<size_t>(k)]) + ": output " + o + " is produced twice";
        return false;
      }
      if (declared.count(o)) {
        *err = where + node_label(nodes[static_cast<size_t>(k)]) + ": output " + o +
               " has the name of a graph input, expected a new name (each value is defined once)";
        return false;
      }
      producer[o] = static_cast<size_t>(k);
    }
  }
  std::set<std::string> available;
  for (const auto& kv : out->initializers_) available.insert(kv.first);
  for (const ValueInfo& v : out->inputs_) available.insert(v.name);
  for (size_t k = 0; k < nodes.size(); ++k) {
    for (const std::string& i : nodes[k].inputs) {
      if (!i.empty() && !available.count(i) && !producer.count(i)) {
        *err = where + node_label(nodes[k]) + ": input " + i +
               " is neither a graph input, an initializer nor any node's output";
        return false;
      }
    }
  }
  std::vector<bool> done(nodes.size(), false);
  size_t placed = 0;
  while (placed < nodes.size()) {
    bool progress = false;
    for (size_t k = 0; k < nodes.size(); ++k) {
      if (done[k]) continue;
      bool ready = true;
      for (const std::string& i : nodes[k].inputs) ready = ready && (i.empty() || available.count(i));
      if (!ready) continue;
      done[k] = true;
      progress = true;
      ++placed;
      for (const std::string& o : nodes[k].outputs) available.insert(o);
      out->nodes_.push_back(nodes[k]);
    }
    if (!progress) {
      for (size_t k = 0; k < nodes.size(); ++k) {
        if (!done[k]) {
          *err = where + "the graph has a cycle: " + node_label(nodes[k]) + " waits on its own output";
          return false;
        }
      }
    }
  }
  for (const ValueInfo& v : out->outputs_) {
    if (!available.count(v.name)) {
      *err = where + "graph output " + v.name + " is produced by no node";
      return false;
    }
  }
  return true;
}

std::vector<bp_tensor_t*> run_node(Exec& ex, const OnnxNode& node, const std::vector<NodeInput>& inputs) {
  const MapTable& table = map_table();
  const auto fn = table.find(map_key(node));
  if (fn == table.end()) {
    throw NotMapped{"op " + (node.domain.empty() ? "" : node.domain + ".") + node.op_type};
  }
  return fn->second(ex, node, inputs);
}

Model Model::with_graph(std::vector<OnnxNode> nodes, std::map<std::string, RawTensor> initializers) const {
  Model m;
  m.path_ = path_;
  m.inputs_ = inputs_;
  m.outputs_ = outputs_;
  m.opset_ = opset_;
  m.nodes_ = std::move(nodes);
  m.initializers_ = std::move(initializers);
  return m;
}

}  // namespace bponnx
