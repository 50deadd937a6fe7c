#include "bponnx/graph.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>

#include "bponnx/proto.h"

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

std::string node_label(const OnnxNode& n) {
  return "node '" + (n.name.empty() ? n.outputs.empty() ? std::string("?") : n.outputs[0] : n.name) + "' (" +
         (n.domain.empty() ? "" : n.domain + ".") + n.op_type + ", opset " + std::to_string(n.opset) + ")";
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
  std::map<std::string, int64_t> opsets;
  for (const auto& o : model.opset_import()) opsets[o.domain() == "ai.onnx" ? "" : o.domain()] = o.version();
  out->opset_ = opsets.count("") ? opsets[""] : 0;
  if (out->opset_ > kMaxOpset) {
    *err = where + "default-domain opset " + std::to_string(out->opset_) + " is newer than the newest supported (" +
           std::to_string(kMaxOpset) + ")";
    return false;
  }
  const std::string base = dir_of(path);
  const onnx::GraphProto& g = model.graph();
  std::map<std::string, int> declared;
  for (const auto& vi : g.input()) declared[vi.name()] = vi.type().tensor_type().elem_type();
  for (const auto& init : g.initializer()) {
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
  const auto fn = table.find(node.op_type);
  if (!node.domain.empty() || fn == table.end()) {
    throw NotMapped{"op " + (node.domain.empty() ? "" : node.domain + ".") + node.op_type};
  }
  return fn->second(ex, node, inputs);
}

// One value: a tensor held by the session, and its host copy when small.
struct Session::Slot {
  bp_tensor_t* t = nullptr;
  bool host_ready = false;
  HostTensor host;
  Slot() = default;
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;
  ~Slot() { bp_tensor_release(t); }
  void reset() {
    bp_tensor_release(t);
    t = nullptr;
    host_ready = false;
  }
};

// One node to run, with everything a run would otherwise look up by name:
// its mapping, the ids of its inputs and outputs (-1: left out / not asked
// for), and the computed values that die after it (last read here, or made
// here and read by nobody).
struct Session::Step {
  size_t index = 0;  // position in Model::nodes()
  const OnnxNode* node = nullptr;
  const MapFn* fn = nullptr;
  std::vector<int> ins, outs, release;
};

namespace {
// Values this small also get a host copy (shape-like inputs: Reshape's
// shape, Slice's starts, Range's limits, ...): initializers and constants
// of any dtype, once at prepare(); computed values when integer or bool.
constexpr int64_t kHostCopyLimit = 64;
}  // namespace

Session::Session(bp_context_t* ctx, bp_device_t dev, const Model* model)
    : ctx_(ctx), dev_(dev), model_(model), ops_(ctx) {}

Session::~Session() = default;

int Session::value_id(const std::string& name) {
  if (name.empty()) return -1;
  const auto it = value_id_.find(name);
  if (it != value_id_.end()) return it->second;
  const int id = static_cast<int>(value_id_.size());
  value_id_[name] = id;
  return id;
}

bool Session::prepare(std::string* err) {
  const std::string where = model_->path() + ": ";
  std::string first;
  std::set<std::string> missing;  // every op type without a mapping, for one complete list
  not_mapped_.clear();
  for (const OnnxNode& n : model_->nodes()) {
    if (n.op_type == "Constant" && n.domain.empty()) continue;
    if (!n.domain.empty() || !map_table().count(n.op_type)) {
      const std::string op = (n.domain.empty() ? "" : n.domain + ".") + n.op_type;
      if (first.empty()) {
        first = node_label(n) + ": no mapping to Backplane operators for ONNX op " + op;
        not_mapped_ = "op " + op;
      }
      missing.insert(op);
    }
  }
  if (!first.empty()) {
    *err = where + first;
    if (missing.size() > 1) {
      std::string all;
      for (const std::string& m : missing) all += (all.empty() ? "" : ", ") + m;
      *err += " (unmapped ops in this model: " + all + ")";
    }
    return false;
  }
  value_id_.clear();
  persistent_.clear();
  try {
    Exec ex(ctx_, dev_, &ops_);
    auto keep = [&](const std::string& name, bp_tensor_t* t) {
      auto s = std::make_unique<Slot>();
      bp_tensor_retain(t);
      s->t = t;
      if (bp_tensor_numel(t) <= kHostCopyLimit) {
        s->host = ex.to_host(t);
        s->host_ready = true;
      }
      const size_t id = static_cast<size_t>(value_id(name));
      if (persistent_.size() <= id) persistent_.resize(id + 1);
      persistent_[id] = std::move(s);
    };
    for (const auto& kv : model_->initializers()) {
      if (!kv.second.unsupported.empty()) {
        *err = where + "initializer " + kv.first + " has element type " + kv.second.unsupported +
               ", which Backplane lacks";
        return false;
      }
      keep(kv.first, ex.upload(kv.second));
    }
    for (const OnnxNode& n : model_->nodes()) {
      if (n.op_type != "Constant" || !n.domain.empty()) continue;
      HostTensor h;
      bp_tensor_t* t = nullptr;
      if (n.has("value") && n.attrs.at("value").kind == OnnxAttribute::kTensor) {
        t = ex.upload(n.attrs.at("value").tensor);
      } else if (n.has("value_float") || n.has("value_int")) {
        h.dtype = n.has("value_int") ? DType::kInt64 : DType::kFloat32;
        h.values = {n.has("value_int") ? static_cast<double>(n.get_int("value_int", 0))
                                       : n.get_float("value_float", 0)};
        t = ex.upload(h);
      } else if (n.has("value_ints") || n.has("value_floats")) {
        const bool ints = n.has("value_ints");
        h.dtype = ints ? DType::kInt64 : DType::kFloat32;
        if (ints) {
          for (int64_t v : n.get_ints("value_ints", {})) h.values.push_back(static_cast<double>(v));
        } else {
          h.values = n.attrs.at("value_floats").floats;
        }
        h.sizes = {static_cast<int64_t>(h.values.size())};
        t = ex.upload(h);
      } else {
        *err = where + node_label(n) + ": Constant without a value, value_float(s) or value_int(s) attribute";
        return false;
      }
      keep(n.outputs.at(0), t);
    }
  } catch (const NotMapped& e) {
    *err = where + e.reason;
    not_mapped_ = e.reason;
    return false;
  } catch (const CallFailed& e) {
    *err = where + "uploading initializers: " + e.message;
    return false;
  }
  plan();
  prepared_ = true;
  return true;
}

void Session::plan() {
  steps_.clear();
  input_ids_.clear();
  output_ids_.clear();
  for (const ValueInfo& v : model_->inputs()) input_ids_.push_back(value_id(v.name));
  std::set<int> outputs;
  for (const ValueInfo& v : model_->outputs()) {
    output_ids_.push_back(value_id(v.name));
    outputs.insert(output_ids_.back());
  }
  const auto& nodes = model_->nodes();
  for (size_t k = 0; k < nodes.size(); ++k) {
    const OnnxNode& n = nodes[k];
    if (n.op_type == "Constant" && n.domain.empty()) continue;
    Step st;
    st.index = k;
    st.node = &n;
    st.fn = &map_table().at(n.op_type);  // prepare() checked every node has one
    for (const std::string& i : n.inputs) st.ins.push_back(value_id(i));
    for (const std::string& o : n.outputs) st.outs.push_back(value_id(o));
    steps_.push_back(std::move(st));
  }
  persistent_.resize(value_id_.size());
  // Each computed value (not persistent, not a graph output) is released
  // after the last step that reads it, or after the step that makes it
  // when no step reads it.
  std::vector<int> last(value_id_.size(), -1);
  for (size_t s = 0; s < steps_.size(); ++s) {
    for (int id : steps_[s].ins) {
      if (id >= 0) last[static_cast<size_t>(id)] = static_cast<int>(s);
    }
  }
  for (size_t s = 0; s < steps_.size(); ++s) {
    for (int id : steps_[s].outs) {
      if (id >= 0 && last[static_cast<size_t>(id)] < 0) last[static_cast<size_t>(id)] = static_cast<int>(s);
    }
  }
  for (size_t id = 0; id < last.size(); ++id) {
    if (last[id] >= 0 && !persistent_[id] && !outputs.count(static_cast<int>(id))) {
      steps_[static_cast<size_t>(last[id])].release.push_back(static_cast<int>(id));
    }
  }
}

bool Session::run(const std::map<std::string, bp_tensor_t*>& inputs, std::vector<bp_tensor_t*>* outputs,
                  std::string* err) {
  const std::string where = model_->path() + ": ";
  if (!prepared_ && !prepare(err)) return false;
  not_mapped_.clear();
  std::vector<Slot> values(value_id_.size());
  for (size_t k = 0; k < model_->inputs().size(); ++k) {
    const ValueInfo& v = model_->inputs()[k];
    const auto it = inputs.find(v.name);
    if (it == inputs.end() || it->second == nullptr) {
      *err = where + "input " + v.name + " is missing";
      return false;
    }
    bp_tensor_t* t = it->second;
    DType want;
    if (v.elem_type != 0 && dtype_from_onnx(v.elem_type, &want, nullptr) && dtype_of(t) != want) {
      *err = where + "input " + v.name + " has dtype " + dtype_name(dtype_of(t)) + ", the model declares " +
             dtype_name(want);
      return false;
    }
    const std::vector<int64_t> got = sizes_of(t);
    bool shape_ok = !v.has_shape || got.size() == v.dims.size();
    for (size_t d = 0; shape_ok && v.has_shape && d < got.size(); ++d) shape_ok = v.dims[d] < 0 || v.dims[d] == got[d];
    if (!shape_ok) {
      std::vector<int64_t> decl = v.dims;
      std::string s = "[";
      for (size_t d = 0; d < decl.size(); ++d) {
        s += (d ? ", " : "") +
             (decl[d] < 0 ? (v.dim_names[d].empty() ? std::string("?") : v.dim_names[d]) : std::to_string(decl[d]));
      }
      *err = where + "input " + v.name + " has shape " + sizes_str(got) + ", the model declares " + s + "]";
      return false;
    }
    Slot& s = values[static_cast<size_t>(input_ids_[k])];
    if (bp_tensor_device(t).backend != dev_.backend || bp_tensor_device(t).index != dev_.index) {
      const bp_status_t st = bp_tensor_to_device(t, dev_, &s.t);
      if (st != BP_STATUS_OK) {
        *err = where + "input " + v.name + ": " + api_error("bp_tensor_to_device", st);
        return false;
      }
    } else {
      bp_tensor_retain(t);
      s.t = t;
    }
  }
  if (!run_steps(&values, err)) return false;
  outputs->clear();
  for (int id : output_ids_) {
    const size_t i = static_cast<size_t>(id);
    bp_tensor_t* t = persistent_[i] ? persistent_[i]->t : values[i].t;
    bp_tensor_retain(t);
    outputs->push_back(t);
  }
  return true;
}

bool Session::run_steps(std::vector<Slot>* values, std::string* err) {
  size_t live = 0;
  for (const Slot& s : *values) live += s.t != nullptr ? 1 : 0;
  peak_live_ = live;
  Exec ex(ctx_, dev_, &ops_);
  std::vector<NodeInput> ins;
  for (const Step& step : steps_) {
    const OnnxNode& n = *step.node;
    const bool observed = static_cast<bool>(observer_);
    const auto start = observed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    NodeRun nr;
    try {
      ex.reset();
      ins.clear();
      for (int id : step.ins) {
        NodeInput in;
        if (id >= 0) {
          const size_t i = static_cast<size_t>(id);
          Slot* s = persistent_[i] ? persistent_[i].get() : &(*values)[i];
          in.t = s->t;
          // Small computed values: integer and bool ones (shapes, indices,
          // axes) at once; float ones only if a mapping asks (host_of), so
          // an activation is not read back for nothing.
          if (!s->host_ready && bp_tensor_numel(s->t) <= kHostCopyLimit) {
            if (dtype_is_float(dtype_of(s->t))) {
              in.host_cache = &s->host;
              in.host_cached = &s->host_ready;
              in.host_exec = &ex;
            } else {
              s->host = ex.to_host(s->t);
              s->host_ready = true;
            }
          }
          if (s->host_ready) in.host = &s->host;
        }
        ins.push_back(in);
      }
      const std::vector<bp_tensor_t*> outs = (*step.fn)(ex, n, ins);
      for (size_t o = 0; o < step.outs.size(); ++o) {
        if (step.outs[o] < 0) continue;
        if (o >= outs.size() || outs[o] == nullptr) {
          *err = model_->path() + ": " + node_label(n) + ": the mapping made no output " + n.outputs[o];
          return false;
        }
        Slot& s = (*values)[static_cast<size_t>(step.outs[o])];
        bp_tensor_retain(outs[o]);
        s.t = outs[o];
        ++live;
      }
      if (observed) {
        bp_device_synchronize(ctx_, dev_);
        nr.index = step.index;
        nr.node = &n;
        nr.inputs = &ins;
        nr.outputs = outs;
        nr.ops = ex.called();
        nr.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
    } catch (const NotMapped& e) {
      *err = model_->path() + ": " + node_label(n) + ": not mapped: " + e.reason;
      not_mapped_ = e.reason;
      return false;
    } catch (const CallFailed& e) {
      *err = model_->path() + ": " + node_label(n) + ": " + e.message;
      return false;
    } catch (const std::exception& e) {
      *err = model_->path() + ": " + node_label(n) + ": the mapping failed: " + e.what();
      return false;
    }
    if (observed) observer_(nr);
    peak_live_ = std::max(peak_live_, live);
    for (int id : step.release) {
      Slot& s = (*values)[static_cast<size_t>(id)];
      if (s.t != nullptr) --live;
      s.reset();
    }
  }
  return true;
}

}  // namespace bponnx
