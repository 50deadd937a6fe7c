#include "tape.h"

#include <algorithm>

namespace bponnx {

Tape::~Tape() {
  for (bp_tensor_t* t : fixed_) bp_tensor_release(t);
  for (Op& op : ops_) bp_plan_release(op.plan);
}

void Tape::call(bp_context_t* ctx, Op& op, bp_tensor_t** results, int32_t num_results) {
  const PreparedCall& c = *op.call;
  const int32_t n = static_cast<int32_t>(op.args.size());
  if (c.op != nullptr && op.plan == nullptr &&
      bp_op_prepare_for_args(ctx, c.op, op.args.data(), n, &op.plan) != BP_STATUS_OK) {
    op.plan = nullptr;  // bp_op_call words the error, if the call has one
  }
  if (op.plan == nullptr) return c.run(ctx, op.args.data(), n, results, num_results);
  bp_status_t st = bp_plan_call(op.plan, op.args.data(), n, results, num_results);
  bp_plan_info_t info{};
  info.struct_size = sizeof(info);
  if (st == BP_STATUS_FAILED_PRECONDITION && bp_plan_info(op.plan, &info) == BP_STATUS_OK &&
      info.route == BP_PLAN_ROUTE_STALE) {
    // A plugin was loaded or unloaded since: decide the route again.
    bp_plan_release(op.plan);
    op.plan = nullptr;
    return call(ctx, op, results, num_results);
  }
  if (st != BP_STATUS_OK) throw CallFailed{api_error(c.name.c_str(), st)};
}

void Tape::refuse(const std::string& why) {
  if (why_not_.empty()) why_not_ = why;
}

int32_t Tape::new_slot(bp_tensor_t* t) {
  const int32_t s = slots_++;
  refs_[t] = s;
  return s;
}

void Tape::bind_input(bp_tensor_t* t) { input_slots_.push_back(new_slot(t)); }

void Tape::bind_fixed(bp_tensor_t* t) {
  const auto it = refs_.find(t);
  if (it != refs_.end() && it->second < 0) return;  // already fixed
  bp_tensor_retain(t);
  fixed_.push_back(t);
  refs_[t] = -static_cast<Ref>(fixed_.size());
}

Tape::Ref Tape::ref_of(bp_tensor_t* t) {
  if (t == nullptr) return kNone;
  const auto it = refs_.find(t);
  if (it != refs_.end()) return it->second;
  refuse("a tensor made outside the recorded run is an operator argument");
  return kNone;
}

void Tape::begin_node(size_t step) {
  Node n;
  n.step = step;
  n.op_begin = n.op_end = ops_.size();
  nodes_.push_back(std::move(n));
}

void Tape::end_node(const std::vector<NodeInput>& inputs, const std::vector<bp_tensor_t*>& outputs) {
  Node& n = nodes_.back();
  n.op_end = ops_.size();
  for (const NodeInput& in : inputs) {
    n.in_refs.push_back(ref_of(in.t));
    n.in_hosts.push_back(in.host);
  }
  for (bp_tensor_t* t : outputs) n.out_refs.push_back(ref_of(t));
}

void Tape::on_call(const PreparedCall& c, const bp_value_t* args, int32_t num_args, bp_tensor_t* const* outs,
                   int32_t num_outs) {
  Op op;
  op.call = &c;
  op.args.assign(args, args + num_args);
  for (int32_t a = 0; a < num_args; ++a) {
    const bp_value_t& v = args[a];
    switch (v.kind) {
      case BP_VALUE_TENSOR:
        op.patches.push_back(Patch{a, -1, ref_of(v.u.tensor)});
        break;
      case BP_VALUE_TENSOR_LIST: {
        std::vector<bp_tensor_t*>& l = op.lists[a];
        l.assign(v.u.tensor_list.data, v.u.tensor_list.data + v.u.tensor_list.size);
        for (size_t e = 0; e < l.size(); ++e) op.patches.push_back(Patch{a, static_cast<int32_t>(e), ref_of(l[e])});
        break;
      }
      case BP_VALUE_INT_LIST:
        op.ints[a].assign(v.u.int_list.data, v.u.int_list.data + v.u.int_list.size);
        break;
      case BP_VALUE_STRING:
        op.strs[a] = v.u.str != nullptr ? v.u.str : "";
        if (v.u.str == nullptr) refuse("a NULL string argument");
        break;
      case BP_VALUE_NONE:
      case BP_VALUE_INT:
      case BP_VALUE_DOUBLE:
      case BP_VALUE_BOOL:
      case BP_VALUE_DTYPE:
        break;
      default:
        refuse("an argument of kind " + std::to_string(v.kind) + " to " + c.name);
    }
  }
  for (int32_t k = 0; k < num_outs; ++k) op.outs.push_back(new_slot(outs[k]));
  ops_.push_back(std::move(op));
}

void Tape::on_empty(const std::vector<int64_t>& sizes, DLDataType dtype, bp_tensor_t* out) {
  Op op;
  op.sizes = sizes;
  op.dtype = dtype;
  op.outs.push_back(new_slot(out));
  ops_.push_back(std::move(op));
}

void Tape::on_read_back(bp_tensor_t* t) {
  const auto it = refs_.find(t);
  if (it != refs_.end() && it->second < 0) return;  // a fixed tensor: the same values every run
  refuse("values computed on the device are read back to the host mid-graph");
}

void Tape::finish(const std::vector<bp_tensor_t*>& outputs) {
  for (bp_tensor_t* t : outputs) output_refs_.push_back(ref_of(t));
  refs_.clear();
  // Each slot dies after the last node that reads it (or makes it, when
  // none reads it); graph outputs live to the end.
  std::vector<int32_t> last(static_cast<size_t>(slots_), -1);
  auto use = [&](Ref r, size_t node) {
    if (r >= 0) last[static_cast<size_t>(r)] = std::max(last[static_cast<size_t>(r)], static_cast<int32_t>(node));
  };
  for (size_t k = 0; k < nodes_.size(); ++k) {
    for (size_t o = nodes_[k].op_begin; o < nodes_[k].op_end; ++o) {
      for (const Patch& p : ops_[o].patches) use(p.ref, k);
      for (int32_t s : ops_[o].outs) use(s, k);
    }
    for (Ref r : nodes_[k].in_refs) use(r, k);
    for (Ref r : nodes_[k].out_refs) use(r, k);
  }
  for (Ref r : output_refs_) {
    if (r >= 0) last[static_cast<size_t>(r)] = INT32_MAX;
  }
  for (size_t s = 0; s < last.size(); ++s) {
    if (last[s] >= 0 && last[s] != INT32_MAX)
      nodes_[static_cast<size_t>(last[s])].release.push_back(static_cast<int32_t>(s));
  }
  seal();
}

// Points every borrowed argument at the tape's own copies (after the last
// push_back: the copies do not move any more).
void Tape::seal() {
  for (Op& op : ops_) {
    for (auto& kv : op.ints) {
      op.args[static_cast<size_t>(kv.first)].u.int_list.data = kv.second.data();
    }
    for (auto& kv : op.strs) op.args[static_cast<size_t>(kv.first)].u.str = kv.second.c_str();
    for (auto& kv : op.lists) op.args[static_cast<size_t>(kv.first)].u.tensor_list.data = kv.second.data();
  }
}

bp_tensor_t* Tape::resolve(Ref r, const std::vector<bp_tensor_t*>& slots) const {
  if (r == kNone) return nullptr;
  return r >= 0 ? slots[static_cast<size_t>(r)] : fixed_[static_cast<size_t>(-r - 1)];
}

bool Tape::run(bp_context_t* ctx, const std::vector<bp_tensor_t*>& inputs,
               const std::function<void(const NodeDone&)>& each_node, std::vector<bp_tensor_t*>* outputs,
               std::string* err, size_t* failed_step) {
  std::vector<bp_tensor_t*> slots(static_cast<size_t>(slots_), nullptr);
  auto release_all = [&] {
    for (bp_tensor_t*& t : slots) {
      bp_tensor_release(t);
      t = nullptr;
    }
  };
  for (size_t k = 0; k < inputs.size() && k < input_slots_.size(); ++k)
    slots[static_cast<size_t>(input_slots_[k])] = inputs[k];
  size_t live = inputs.size();
  peak_live_ = live;
  std::vector<NodeInput> node_ins;
  std::vector<bp_tensor_t*> node_outs;
  std::vector<bp_op_t*> node_ops;
  for (const Node& n : nodes_) {
    NodeDone done;
    if (each_node) done.start = std::chrono::steady_clock::now();
    try {
      for (size_t o = n.op_begin; o < n.op_end; ++o) {
        Op& op = ops_[o];
        for (const Patch& p : op.patches) {
          bp_tensor_t* t = resolve(p.ref, slots);
          if (p.elem < 0)
            op.args[static_cast<size_t>(p.arg)].u.tensor = t;
          else
            op.lists[p.arg][static_cast<size_t>(p.elem)] = t;
        }
        if (op.call == nullptr) {
          const bp_status_t st = bp_tensor_empty(ctx, dev_, static_cast<int32_t>(op.sizes.size()), op.sizes.data(),
                                                 op.dtype, &slots[static_cast<size_t>(op.outs[0])]);
          if (st != BP_STATUS_OK) throw CallFailed{api_error("bp_tensor_empty", st)};
          ++live;
          continue;
        }
        // Results land in consecutive slots (one call's results were recorded so).
        std::vector<bp_tensor_t*> r(op.outs.size(), nullptr);
        call(ctx, op, r.data(), static_cast<int32_t>(r.size()));
        for (size_t k = 0; k < r.size(); ++k) {
          slots[static_cast<size_t>(op.outs[k])] = r[k];
          if (r[k] == nullptr)
            throw CallFailed{op.call->name + ": bp_op_call returned fewer result tensors than asked for"};
          ++live;
        }
      }
    } catch (const CallFailed& e) {
      *err = e.message;
      *failed_step = n.step;
      release_all();
      return false;
    }
    if (each_node) {
      node_ins.clear();
      node_outs.clear();
      node_ops.clear();
      for (size_t k = 0; k < n.in_refs.size(); ++k) {
        NodeInput in;
        in.t = resolve(n.in_refs[k], slots);
        in.host = n.in_hosts[k];
        node_ins.push_back(in);
      }
      for (Ref r : n.out_refs) node_outs.push_back(resolve(r, slots));
      for (size_t o = n.op_begin; o < n.op_end; ++o) {
        if (ops_[o].call != nullptr) node_ops.push_back(ops_[o].call->op);
      }
      done.step = n.step;
      done.inputs = &node_ins;
      done.outputs = &node_outs;
      done.ops = &node_ops;
      each_node(done);
    }
    peak_live_ = std::max(peak_live_, live);
    for (int32_t s : n.release) {
      bp_tensor_t*& t = slots[static_cast<size_t>(s)];
      if (t != nullptr) --live;
      bp_tensor_release(t);
      t = nullptr;
    }
  }
  outputs->clear();
  for (Ref r : output_refs_) {
    bp_tensor_t* t = resolve(r, slots);
    bp_tensor_retain(t);
    outputs->push_back(t);
  }
  release_all();
  return true;
}

}  // namespace bponnx
