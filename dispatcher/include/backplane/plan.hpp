// bp::Plan: a prepared call (bp_call_plan_t, backplane/call_plan.h) held by
// a call site that repeats one signature. Included at the end of
// backplane.hpp. The typed operator functions (ops.hpp) need none: they go
// through bp_op_call, which looks plans up in the context's cache.
#pragma once

#include <utility>
#include <vector>

#include "backplane/backplane.hpp"

namespace bp {

/// An owned call plan (move-only). Not for concurrent refresh(); call() may
/// run on several threads at once.
class Plan {
 public:
  /// No plan.
  Plan() = default;
  /// Prepares `op` for the signature (kinds, dtypes, devices, ranks) of
  /// `args`. Throws bp::Error.
  Plan(const Context& ctx, const bp_op_t* op, const std::vector<bp_value_t>& args) : state_(ctx.state()), op_(op) {
    for (const bp_value_t& v : args) sig_.push_back(signature_of(v));
    prepare(&plan_);
  }
  ~Plan() { bp_plan_release(plan_); }
  Plan(Plan&& o) noexcept
      : state_(std::move(o.state_)), op_(o.op_), sig_(std::move(o.sig_)), plan_(std::exchange(o.plan_, nullptr)) {}
  Plan& operator=(Plan&& o) noexcept {
    Plan tmp(std::move(o));
    std::swap(state_, tmp.state_);
    std::swap(op_, tmp.op_);
    std::swap(sig_, tmp.sig_);
    std::swap(plan_, tmp.plan_);
    return *this;
  }
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  /// The C handle, borrowed.
  bp_call_plan_t* get() const { return plan_; }
  /// What the plan decided (bp_plan_info). Throws bp::Error.
  bp_plan_info_t info() const {
    bp_plan_info_t i{};
    i.struct_size = sizeof(i);
    check(bp_plan_info(plan_, &i));
    return i;
  }
  /// Runs the plan with `args` (they must fit its signature) and returns its
  /// `num_results` results. Throws bp::Error (FAILED_PRECONDITION when stale:
  /// see refresh()).
  std::vector<Tensor> call(const std::vector<bp_value_t>& args, int32_t num_results = 1) const {
    std::vector<bp_tensor_t*> raw(static_cast<size_t>(num_results), nullptr);
    check(bp_plan_call(plan_, args.data(), static_cast<int32_t>(args.size()), raw.data(), num_results));
    std::vector<Tensor> out;
    for (bp_tensor_t* t : raw) out.emplace_back(state_, t);
    return out;
  }
  /// Runs the plan for its effect (in-place and out= operators).
  void run(const bp_value_t* args, int32_t num_args) const { check(bp_plan_call(plan_, args, num_args, nullptr, 0)); }
  /// Prepares the plan again if its context's routes changed since (a plugin
  /// loaded or unloaded, a kernel registered); true when it did. Throws bp::Error.
  bool refresh() {
    if (info().route != BP_PLAN_ROUTE_STALE) return false;
    bp_call_plan_t* fresh = nullptr;
    prepare(&fresh);
    bp_plan_release(std::exchange(plan_, fresh));
    return true;
  }

 private:
  std::shared_ptr<detail::ContextState> state_;
  const bp_op_t* op_ = nullptr;
  std::vector<bp_arg_signature_t> sig_;  // kept for refresh()

  // call_plan.h's signature of one argument (a list: its first element of rank > 0, else its first).
  static bp_arg_signature_t signature_of(const bp_value_t& v) {
    bp_arg_signature_t s{};
    s.kind = v.kind;
    const bp_tensor_t* t = v.kind == BP_VALUE_TENSOR ? v.u.tensor : nullptr;
    if (v.kind == BP_VALUE_TENSOR_LIST) {
      for (int64_t j = 0; j < v.u.tensor_list.size; ++j) {
        const bp_tensor_t* e = v.u.tensor_list.data[j];
        if (e == nullptr) continue;  // the call words the error
        if (t == nullptr || (bp_tensor_ndim(t) == 0 && bp_tensor_ndim(e) > 0)) t = e;
      }
    }
    if (t == nullptr) return s;
    s.ndim = bp_tensor_ndim(t);
    s.dtype = bp_tensor_dtype(t);
    s.device = bp_tensor_device(t);
    return s;
  }
  void prepare(bp_call_plan_t** out) const {
    bp_call_signature_t s{};
    s.struct_size = sizeof(s);
    s.num_args = static_cast<int32_t>(sig_.size());
    s.args = sig_.data();
    check(bp_op_prepare(state_->ctx, op_, &s, out));
  }
  bp_call_plan_t* plan_ = nullptr;
};

}  // namespace bp
