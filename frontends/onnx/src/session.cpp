// Session: prepares a Model on one device and runs it. The first run for a
// set of input sizes runs the mappings node by node (shape subgraphs folded
// on the host, shape_fold.h) and records what they call (tape.h); later runs
// with the same sizes replay that record.
#include <algorithm>
#include <chrono>
#include <set>

#include "bponnx/graph.h"
#include "node_label.h"
#include "passes/optimize_model.h"
#include "shape_fold.h"
#include "tape.h"

namespace bponnx {

// One value: a tensor held by the session and, for values known on the host
// (small initializers and constants, folded shapes, values read back), its
// host copy, with a device tensor and a CPU tensor each made on first need.
struct Session::Slot {
  bp_tensor_t* t = nullptr;    // on the session's device
  bp_tensor_t* cpu = nullptr;  // the host values as a CPU tensor (host-only inputs)
  bool host_ready = false;
  HostTensor host;
  Slot() = default;
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;
  ~Slot() { reset(); }
  void reset() {
    bp_tensor_release(t);
    bp_tensor_release(cpu);
    t = cpu = nullptr;
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
  // Reads only initializers, Constant values and other such nodes' outputs:
  // computed by the first run, then kept with them (persistent_).
  bool constant = false;
};

// A recorded run for one signature, and the folded values its record reads.
struct Session::Plan {
  explicit Plan(bp_device_t dev) : tape(dev) {}
  Tape tape;
  std::vector<std::unique_ptr<Slot>> folded;
};

// One run of the mappings: its computed values by id (slot points into
// `own`, `persistent_` or `folded`), and the tape recording it (or nullptr).
struct Session::RunState {
  std::vector<Slot> own;
  std::vector<Slot*> slot;
  std::vector<std::unique_ptr<Slot>>* folded = nullptr;
  Tape* tape = nullptr;
};

namespace {
// Plans kept per session: a session fed ever-new shapes records again
// rather than holding every record.
constexpr size_t kMaxPlans = 8;

// A Constant node's value on the host: false when it is a tensor the host
// cannot widen (float16/bfloat16), which is then uploaded as stored.
bool constant_host_value(const OnnxNode& n, HostTensor* h) {
  if (n.has("value") && n.attrs.at("value").kind == OnnxAttribute::kTensor) {
    return host_from_raw(n.attrs.at("value").tensor, h);
  }
  if (n.has("value_float") || n.has("value_int")) {
    h->dtype = n.has("value_int") ? DType::kInt64 : DType::kFloat32;
    h->values = {n.has("value_int") ? static_cast<double>(n.get_int("value_int", 0)) : n.get_float("value_float", 0)};
    return true;
  }
  const bool ints = n.has("value_ints");
  h->dtype = ints ? DType::kInt64 : DType::kFloat32;
  if (ints) {
    for (int64_t v : n.get_ints("value_ints", {})) h->values.push_back(static_cast<double>(v));
  } else {
    h->values = n.attrs.at("value_floats").floats;
  }
  h->sizes = {static_cast<int64_t>(h->values.size())};
  return true;
}
}  // namespace

Session::Session(bp_context_t* ctx, bp_device_t dev, const Model* model)
    : ctx_(ctx), dev_(dev), source_(model), model_(model), ops_(ctx) {}

Session::~Session() = default;

int Session::value_id(const std::string& name) {
  if (name.empty()) return -1;
  const auto it = value_id_.find(name);
  if (it != value_id_.end()) return it->second;
  const int id = static_cast<int>(value_id_.size());
  value_id_[name] = id;
  return id;
}

bool Session::disable_pass(const std::string& name, std::string* err) {
  std::string names = "all";
  bool known = name == "all";
  for (const auto& p : optimizer_passes()) {
    known = known || p.first == name;
    names += ", " + p.first;
  }
  if (!known) {
    *err = "unknown optimizer pass '" + name + "' (passes: " + names + ")";
    return false;
  }
  disabled_passes_.insert(name);
  return true;
}

bool Session::prepare(std::string* err) {
  prepared_ = false;  // steps_ point into optimized_, which is replaced now
  steps_.clear();
  plans_.clear();
  // The optimized copy holds its own initializers: none is made when every pass is off.
  optimized_ = disabled_passes_.count("all") ? Model() : optimize_model(*source_, disabled_passes_, ctx_, dev_);
  model_ = disabled_passes_.count("all") ? source_ : &optimized_;
  const std::string where = model_->path() + ": ";
  std::string first;
  std::set<std::string> missing;  // every op type without a mapping, for one complete list
  not_mapped_.clear();
  for (const OnnxNode& n : model_->nodes()) {
    if (n.op_type == "Constant" && n.domain.empty()) continue;
    if (!map_table().count(map_key(n))) {
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
  plans_.clear();
  value_id_.clear();
  persistent_.clear();
  try {
    Exec ex(ctx_, dev_, &ops_);
    auto slot_of = [&](const std::string& name) -> Slot& {
      const size_t id = static_cast<size_t>(value_id(name));
      if (persistent_.size() <= id) persistent_.resize(id + 1);
      persistent_[id] = std::make_unique<Slot>();
      return *persistent_[id];
    };
    // Small values stay on the host (a device copy is made only if a node
    // reads them there); larger ones, and float16/bfloat16, are uploaded.
    auto keep = [&](const std::string& name, const RawTensor* raw, const HostTensor* h) {
      Slot& s = slot_of(name);
      const int64_t numel = raw != nullptr ? raw->numel() : h->numel();
      if (numel <= kHostValueLimit && (h != nullptr || host_from_raw(*raw, &s.host))) {
        if (h != nullptr) s.host = *h;
        s.host_ready = true;
        return;
      }
      s.t = raw != nullptr ? ex.upload(*raw) : ex.upload(*h);
      bp_tensor_retain(s.t);
      // Weights never change during a session: constant, so kernels may keep
      // them in their own layout (the CPU backend's convolution weights).
      bp_tensor_set_constant(s.t);
      if (numel <= kHostValueLimit) {
        s.host = ex.to_host(s.t);
        s.host_ready = true;
      }
    };
    for (const auto& kv : model_->initializers()) {
      if (!kv.second.unsupported.empty()) {
        *err = where + "initializer " + kv.first + " has element type " + kv.second.unsupported +
               ", which Backplane lacks";
        return false;
      }
      keep(kv.first, &kv.second, nullptr);
    }
    for (const OnnxNode& n : model_->nodes()) {
      if (n.op_type != "Constant" || !n.domain.empty()) continue;
      const bool tensor = n.has("value") && n.attrs.at("value").kind == OnnxAttribute::kTensor;
      if (!tensor && !n.has("value_float") && !n.has("value_int") && !n.has("value_ints") && !n.has("value_floats")) {
        *err = where + node_label(n) + ": Constant without a value, value_float(s) or value_int(s) attribute";
        return false;
      }
      if (tensor && !n.attrs.at("value").tensor.unsupported.empty()) {
        throw NotMapped{"dtype " + n.attrs.at("value").tensor.unsupported};
      }
      HostTensor h;
      if (constant_host_value(n, &h))
        keep(n.outputs.at(0), nullptr, &h);
      else
        keep(n.outputs.at(0), &n.attrs.at("value").tensor, nullptr);
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
  std::set<int> constant;  // ids of values the same in every run
  for (size_t id = 0; id < persistent_.size(); ++id) {
    if (persistent_[id]) constant.insert(static_cast<int>(id));
  }
  for (size_t k = 0; k < nodes.size(); ++k) {
    const OnnxNode& n = nodes[k];
    if (n.op_type == "Constant" && n.domain.empty()) continue;
    Step st;
    st.index = k;
    st.node = &n;
    st.fn = &map_table().at(map_key(n));  // prepare() checked every node has one
    for (const std::string& i : n.inputs) st.ins.push_back(value_id(i));
    for (const std::string& o : n.outputs) st.outs.push_back(value_id(o));
    st.constant = !st.ins.empty();
    for (int id : st.ins) st.constant = st.constant && (id < 0 || constant.count(id));
    if (st.constant) {
      for (int id : st.outs) constant.insert(id);
    }
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
    if (last[id] >= 0 && !constant.count(static_cast<int>(id)) && !outputs.count(static_cast<int>(id))) {
      steps_[static_cast<size_t>(last[id])].release.push_back(static_cast<int>(id));
    }
  }
}

bp_tensor_t* Session::device_of(Slot* s, Exec& ex) {
  if (s->t == nullptr) {
    s->t = ex.upload(s->host);  // reported to a recording tape as a constant
    bp_tensor_retain(s->t);
  }
  return s->t;
}

bp_tensor_t* Session::cpu_of(Slot* s) {
  if (s->cpu == nullptr) {
    Exec host(ctx_, bp_device_t{0, 0}, &ops_);
    s->cpu = host.upload(s->host);
    bp_tensor_retain(s->cpu);
  }
  return s->cpu;
}

bool Session::run(const std::map<std::string, bp_tensor_t*>& inputs, std::vector<bp_tensor_t*>* outputs,
                  std::string* err) {
  const std::string where = model_->path() + ": ";
  if (!prepared_ && !prepare(err)) return false;
  not_mapped_.clear();
  replayed_ = false;
  std::vector<bp_tensor_t*> moved;  // one reference per graph input, on the device
  auto drop = [&moved] {
    for (bp_tensor_t* t : moved) bp_tensor_release(t);
  };
  std::vector<std::vector<int64_t>> signature;
  for (size_t k = 0; k < model_->inputs().size(); ++k) {
    const ValueInfo& v = model_->inputs()[k];
    const auto it = inputs.find(v.name);
    if (it == inputs.end() || it->second == nullptr) {
      *err = where + "input " + v.name + " is missing";
      drop();
      return false;
    }
    bp_tensor_t* t = it->second;
    DType want;
    if (v.elem_type != 0 && dtype_from_onnx(v.elem_type, &want, nullptr) && dtype_of(t) != want) {
      *err = where + "input " + v.name + " has dtype " + dtype_name(dtype_of(t)) + ", the model declares " +
             dtype_name(want);
      drop();
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
      drop();
      return false;
    }
    signature.push_back(got);
    bp_tensor_t* on_dev = t;
    if (bp_tensor_device(t).backend != dev_.backend || bp_tensor_device(t).index != dev_.index) {
      const bp_status_t st = bp_tensor_to_device(t, dev_, &on_dev);
      if (st != BP_STATUS_OK) {
        *err = where + "input " + v.name + ": " + api_error("bp_tensor_to_device", st);
        drop();
        return false;
      }
    } else {
      bp_tensor_retain(t);
    }
    moved.push_back(on_dev);
  }
  // Dtypes are the declared ones (checked above): the sizes decide the plan.
  auto found = plans_.find(signature);
  replayed_ = found != plans_.end() && found->second->tape.replayable();
  if (replayed_) return replay(found->second.get(), moved, outputs, err);
  RunState rs;
  rs.own = std::vector<Slot>(value_id_.size());
  rs.slot.resize(value_id_.size());
  for (size_t i = 0; i < rs.slot.size(); ++i) rs.slot[i] = persistent_[i] ? persistent_[i].get() : &rs.own[i];
  std::unique_ptr<Plan> recording;
  std::vector<std::unique_ptr<Slot>> folded;
  if (found == plans_.end()) {
    recording = std::make_unique<Plan>(dev_);
    rs.tape = &recording->tape;
    rs.folded = &recording->folded;
  } else {
    rs.folded = &folded;
  }
  for (size_t k = 0; k < moved.size(); ++k) rs.slot[static_cast<size_t>(input_ids_[k])]->t = moved[k];
  if (!run_steps(&rs, outputs, err)) return false;
  if (recording) {
    if (plans_.size() >= kMaxPlans) plans_.clear();
    plans_[signature] = std::move(recording);
  }
  return true;
}

bool Session::replay(Plan* p, const std::vector<bp_tensor_t*>& inputs, std::vector<bp_tensor_t*>* outputs,
                     std::string* err) {
  std::function<void(const Tape::NodeDone&)> each;
  if (observer_) {
    each = [this](const Tape::NodeDone& d) {
      const auto enqueued = std::chrono::steady_clock::now();
      bp_device_synchronize(ctx_, dev_);
      const Step& step = steps_[d.step];
      NodeRun nr;
      nr.index = step.index;
      nr.node = step.node;
      nr.inputs = d.inputs;
      nr.outputs = *d.outputs;
      nr.ops = *d.ops;
      nr.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - d.start).count();
      nr.host_seconds = std::chrono::duration<double>(enqueued - d.start).count();
      observer_(nr);
    };
  }
  size_t failed = 0;
  if (!p->tape.run(ctx_, inputs, each, outputs, err, &failed)) {
    *err = model_->path() + ": " + node_label(*steps_[failed].node) + ": " + *err;
    return false;
  }
  peak_live_ = p->tape.peak_live();
  return true;
}

bool Session::run_steps(RunState* rs, std::vector<bp_tensor_t*>* outputs, std::string* err) {
  std::vector<Slot*>& slots = rs->slot;
  Tape* tape = rs->tape;
  size_t live = 0;
  for (const Slot& s : rs->own) live += s.t != nullptr ? 1 : 0;
  peak_live_ = live;
  Exec ex(ctx_, dev_, &ops_);
  if (tape != nullptr) {
    ex.set_recorder(tape);
    for (int id : input_ids_) tape->bind_input(slots[static_cast<size_t>(id)]->t);
  }
  // A value's tensor for input k of a node; for a host-known one, its device
  // copy, or the CPU one where the mapping reads it only on the host. Values
  // kept across runs (persistent, folded) are fixed tensors of the record.
  auto tensor_of = [&](Slot* s, const OnnxNode& n, size_t k, int id) {
    bp_tensor_t* t = s->t != nullptr || !s->host_ready ? s->t : host_only_input(n, k) ? cpu_of(s) : device_of(s, ex);
    if (tape != nullptr && t != nullptr && s != &rs->own[static_cast<size_t>(id)]) tape->bind_fixed(t);
    return t;
  };
  std::vector<NodeInput> ins;
  std::vector<FoldInput> fold_ins;
  std::vector<HostTensor> folded_values;
  for (size_t si = 0; si < steps_.size(); ++si) {
    const Step& step = steps_[si];
    const OnnxNode& n = *step.node;
    const bool first_constant = step.constant && !persistent_[static_cast<size_t>(step.outs[0] < 0 ? 0 : step.outs[0])];
    if (step.constant && !first_constant) continue;  // computed by an earlier run
    if (first_constant) {
      // Its outputs join the initializers; its calls are not part of a run's record.
      for (int id : step.outs) {
        if (id < 0) continue;
        persistent_[static_cast<size_t>(id)] = std::make_unique<Slot>();
        slots[static_cast<size_t>(id)] = persistent_[static_cast<size_t>(id)].get();
      }
      ex.set_recorder(nullptr);
    } else {
      ex.set_recorder(tape);
    }
    // A constant node that fails leaves no half-made persistent value behind.
    struct Undo {
      std::vector<std::unique_ptr<Slot>>* persistent;
      const std::vector<int>* outs;
      bool armed;
      ~Undo() {
        for (int id : *outs) {
          if (armed && id >= 0) (*persistent)[static_cast<size_t>(id)].reset();
        }
      }
    } undo{&persistent_, &step.outs, first_constant};
    const bool observed = static_cast<bool>(observer_);
    const auto start = observed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    NodeRun nr;
    try {
      ex.reset();
      ins.clear();
      fold_ins.clear();
      for (int id : step.ins) {
        FoldInput f;
        const Slot* s = id >= 0 ? slots[static_cast<size_t>(id)] : nullptr;
        if (s != nullptr && (s->t != nullptr || s->host_ready)) {
          f.present = true;
          f.host = s->host_ready ? &s->host : nullptr;
          f.sizes = s->host_ready ? s->host.sizes : sizes_of(s->t);
        }
        fold_ins.push_back(std::move(f));
      }
      if (tape != nullptr && !first_constant) tape->begin_node(si);
      std::vector<bp_tensor_t*> outs;
      const bool folds = fold_on_host(n, fold_ins, &folded_values);
      if (folds && first_constant) {
        Slot* s = slots[static_cast<size_t>(step.outs[0])];
        s->host = std::move(folded_values[0]);
        s->host_ready = true;
      } else if (folds) {
        auto s = std::make_unique<Slot>();
        s->host = std::move(folded_values[0]);
        s->host_ready = true;
        slots[static_cast<size_t>(step.outs[0])] = s.get();
        rs->folded->push_back(std::move(s));
      }
      for (size_t k = 0; k < step.ins.size(); ++k) {
        NodeInput in;
        const int id = step.ins[k];
        if (id >= 0) {
          Slot* s = slots[static_cast<size_t>(id)];
          in.t = tensor_of(s, n, k, id);
          if (s->host_ready) {
            in.host = &s->host;
          } else if (bp_tensor_numel(s->t) <= kHostValueLimit) {
            // A small value computed on the device is read back only if a
            // mapping asks (host_of): that run depends on device values.
            in.host_cache = &s->host;
            in.host_cached = &s->host_ready;
            in.host_exec = &ex;
          }
        }
        ins.push_back(in);
      }
      if (folds) {  // no device work: its CPU tensor stands for it (observers, the tape)
        outs.push_back(cpu_of(slots[static_cast<size_t>(step.outs[0])]));
        if (tape != nullptr && !first_constant) tape->bind_fixed(outs.back());
      } else {
        outs = (*step.fn)(ex, n, ins);
        for (size_t o = 0; o < step.outs.size(); ++o) {
          if (step.outs[o] < 0) continue;
          if (o >= outs.size() || outs[o] == nullptr) {
            *err = model_->path() + ": " + node_label(n) + ": the mapping made no output " + n.outputs[o];
            return false;
          }
          Slot& s = *slots[static_cast<size_t>(step.outs[o])];
          bp_tensor_retain(outs[o]);
          s.t = outs[o];
          if (tape != nullptr && first_constant) tape->bind_fixed(s.t);
          live += first_constant ? 0 : 1;
        }
      }
      if (tape != nullptr && !first_constant) tape->end_node(ins, outs);
      if (observed) {
        nr.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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
    undo.armed = false;
    if (observed) observer_(nr);
    peak_live_ = std::max(peak_live_, live);
    for (int id : step.release) {
      Slot* s = slots[static_cast<size_t>(id)];
      if (s != &rs->own[static_cast<size_t>(id)]) continue;  // folded: kept with its plan
      if (s->t != nullptr) --live;
      s->reset();
    }
  }
  std::vector<bp_tensor_t*> result;
  try {
    for (int id : output_ids_) {
      Slot* s = slots[static_cast<size_t>(id)];
      result.push_back(s->t != nullptr ? s->t : device_of(s, ex));
      if (tape != nullptr && s != &rs->own[static_cast<size_t>(id)]) tape->bind_fixed(result.back());
    }
  } catch (const CallFailed& e) {
    *err = model_->path() + ": graph outputs: " + e.message;
    return false;
  }
  if (tape != nullptr) tape->finish(result);
  outputs->clear();
  for (bp_tensor_t* t : result) {
    bp_tensor_retain(t);
    outputs->push_back(t);
  }
  return true;
}

}  // namespace bponnx
