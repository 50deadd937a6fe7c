// The call path of a prepared plan, inline into the two entry points that
// run plans (bp_op_call and bp_plan_call, dispatch_plan.cpp): the lookup in
// an operator's plan cache and the pointwise fast path.
//
// Why the fast path exists: the generic path (BindArgs -> meta infer ->
// output checks -> prepare -> kernel views) copies Geometry structs and
// builds a meta plan on every call, while a pointwise call whose plan has no
// casts and no temporaries needs only the broadcast sizes, the output and the
// kernel views. The rules stay the meta function's: the plan ran it for the
// signature; here only the size-dependent parts run (broadcasting through
// BroadcastSizes and meta::BroadcastStrides, the output's sizes, overlap).
// Anything else is left to the generic path before any side effect
// (FastResult::kNotServed), so messages and semantics stay exactly its own.
// Why inline: a call is a few hundred instructions; separate functions per
// step cost a good part of that in prologues, spills and reloads.
#pragma once

#include <cstring>
#include <memory>

#include "call_plan.h"
#include "dispatch.h"
#include "dispatch_internal.h"
#include "meta/common.h"

namespace bp::core {
namespace fast {

__attribute__((always_inline)) inline bool SameSizes(const Geometry& a, const Geometry& b) {
  if (a.ndim != b.ndim) return false;
  for (int32_t i = 0; i < a.ndim; ++i) {
    if (a.sizes[i] != b.sizes[i]) return false;
  }
  return true;
}

// True when numel * itemsize of `g` fits int64; then meta::CheckSizes passes too.
inline bool SizesFit(const Geometry& g, int64_t item) {
  int64_t n = item;
  for (int32_t i = 0; i < g.ndim; ++i) {
    if (__builtin_mul_overflow(n, g.sizes[i], &n)) return false;
  }
  return true;
}

}  // namespace fast

// True when the arguments fit the plan's signature (the call path's check;
// CheckFits words what does not fit).
__attribute__((always_inline)) inline bool Fits(const bp_call_plan_t& plan, const bp_value_t* args, int32_t num_args) {
  if (num_args != plan.num_args || (num_args > 0 && args == nullptr)) return false;
  uint64_t differ = 0;
  for (int32_t i = 0; i < num_args; ++i) {
    uint64_t k;
    if (!PackArg(args[i], &k)) return false;
    differ |= k ^ plan.key[i];
  }
  return differ == 0;
}

// INVALID_ARGUMENT naming the first argument that does not fit the plan, or
// OK where Fits was only too strict (dispatch_plan.cpp).
Status CheckFits(const bp_call_plan_t& plan, const bp_value_t* args, int32_t num_args);

// What FastRun did with a call.
enum class FastResult {
  kNotServed,  // nothing done: the generic path must serve it (and word any error)
  kOk,         // served
  kError,      // served, failed: *error says why
  kMisfit,     // nothing done: the arguments do not fit the plan (kCheckFit only)
};

// The pointwise fast path of a fast plan. kNotServed before any side effect
// when the generic path must serve the call (sizes that do not broadcast,
// overlapping outputs, ...). No Status is made on the way to kOk.
// kCheckFit: the caller has not matched the arguments to the plan's
// signature (bp_plan_call); Fits' check then runs inside the binding loop,
// before anything else, and a mismatch returns kMisfit.
template <bool kCheckFit>
__attribute__((always_inline)) inline FastResult FastRun(const bp_call_plan_t& plan, const bp_value_t* args,
                                                         int32_t num_args, bp_tensor_t** out_results,
                                                         int32_t num_results, Status* error) {
  constexpr FastResult kNo = FastResult::kNotServed;
  using namespace detail;  // NOLINT: the call path's shared internals
  const bp_op_t* op = plan.op;
  bp_context_t* ctx = plan.ctx;
  const int32_t n = op->num_args;
  const int32_t nmeta = op->num_meta_args;
  if (kCheckFit && (num_args != plan.num_args || (num_args > 0 && args == nullptr))) return FastResult::kMisfit;

  // Binding: once the arguments fit the plan's signature (kinds, dtypes,
  // devices, ranks), only values are read here.
  bp_tensor_t* tensors[kMaxArgs];
  bp_kernel_arg_t kargs[kMaxArgs];
  uint64_t differ = 0;
  for (int32_t i = 0; i < n; ++i) {
    const bp_value_t& v = i < num_args ? args[i] : op->defaults[i];
    if (kCheckFit && i < num_args) {
      uint64_t key;
      if (!PackArg(v, &key)) return FastResult::kMisfit;
      differ |= key ^ plan.key[i];
    }
    bp_kernel_arg_t& k = kargs[i];
    k.kind = v.kind;
    k.flags = 0;
    tensors[i] = v.u.tensor;
    // A tensor, int or double: its 8 bytes as they are (the tensor's DLTensor
    // is set below); a bool as 0 or 1.
    std::memcpy(&k.u.i, &v.u.i, sizeof(int64_t));
    if (v.kind == BP_VALUE_BOOL) k.u.i = v.u.b != 0 ? 1 : 0;
  }
  if (kCheckFit && differ != 0) return FastResult::kMisfit;
  if (num_results < 0 || num_results > 1 || (num_results > 0 && out_results == nullptr)) return kNo;

  // The output's sizes: an input's when the others equal them or are 0-dim,
  // else the broadcast sizes (meta's rule; a mismatch goes the generic way).
  const int32_t nin = op->fast_num_inputs;
  const Geometry* ref = &tensors[op->fast_inputs[0]]->geo;  // an input with the output's sizes
  bool broadcast = false;
  for (int32_t k = 1; k < nin; ++k) {
    const Geometry& g = tensors[op->fast_inputs[k]]->geo;
    if (g.ndim == 0) continue;
    if (ref->ndim == 0) {
      ref = &g;
    } else if (!fast::SameSizes(g, *ref)) {
      broadcast = true;
    }
  }
  Uninit<Geometry> made;
  if (broadcast) {
    Geometry& m = made.value;
    m.ndim = 0;
    for (int32_t k = 0; k < nin; ++k) {
      if (BroadcastSizes(m, tensors[op->fast_inputs[k]]->geo, &m.ndim, m.sizes) >= 0) return kNo;
    }
    m.dtype = ref->dtype;
    m.device = ref->device;
    m.offset = 0;
    ref = &m;
  }
  const DLDataType want = plan.out_dtype;
  if (plan.check_sizes && !fast::SizesFit(*ref, want.bits / 8)) return kNo;

  // The output: the mutated argument as it is, or a fresh contiguous tensor.
  const int32_t mut = op->mutated_arg;
  bp_tensor_t* out = nullptr;
  if (mut >= 0) {
    out = tensors[mut];
    // A constant or read-only tensor is never written: the generic path says so.
    if (out->storage->constant_id.load(std::memory_order_relaxed) != 0 || out->storage->read_only) return kNo;
    const Geometry& og = out->geo;
    if (&og != ref && !fast::SameSizes(og, *ref)) return kNo;
    // Overlap (meta/overlap.cpp): a written tensor with a stride-0 dim, or
    // an input that shares its memory without being the same tensor (one
    // storage, or bytes of one buffer imported twice: Overlaps), takes the
    // generic path, which allows the exact alias and refuses the rest.
    for (int32_t d = 0; d < og.ndim; ++d) {
      if (og.strides[d] == 0 && og.sizes[d] > 1) return kNo;
    }
    for (int32_t k = 0; k < nin; ++k) {
      const bp_tensor_t* t = tensors[op->fast_inputs[k]];
      if (t != out && Overlaps(out, t)) return kNo;
    }
  }
  DeviceState* dev = plan.dev;
  const int32_t device_type = dev->slot->device_type;  // every tensor is on dev (the signature)
  const bool fresh = mut < 0;
  if (fresh) {
    *error = EmptyTensorLike(ctx, dev, *ref, want, op->name.c_str(), &out);
    if (!error->ok()) return FastResult::kError;
    // meta's layout rule (PointwiseInfer): a channels-last input of the
    // output's sizes makes the output channels-last.
    if (__builtin_expect(ref->ndim == 4, 0)) {
      for (int32_t k = 0; k < nin; ++k) {
        const Geometry& g = tensors[op->fast_inputs[k]]->geo;
        if (g.ndim == 4 && fast::SameSizes(g, *ref) && g.is_channels_last()) {
          out->geo.set_channels_last_strides();
          break;
        }
      }
    }
  }

  // Kernel views: inputs of other sizes broadcast to the output's (meta's rule).
  DLTensor dl[kMaxArgs];
  int64_t bstrides[kMaxArgs][BP_MAX_NDIM];  // written only for inputs that broadcast
  for (int32_t k = 0; k < nin; ++k) {
    const int32_t i = op->fast_inputs[k];
    const bp_tensor_t* t = tensors[i];
    const Geometry& g = t->geo;
    FillDLTensor(t->storage->data, device_type, g, &dl[i]);
    if (&g != ref && !fast::SameSizes(g, *ref)) {
      meta::BroadcastStrides(g, ref->sizes, ref->ndim, bstrides[k]);
      dl[i].ndim = ref->ndim;
      dl[i].shape = const_cast<int64_t*>(ref->sizes);
      dl[i].strides = bstrides[k];
    }
    kargs[i].u.tensor = &dl[i];
  }
  DLTensor dl_out;
  FillDLTensor(out->storage->data, device_type, out->geo, &dl_out);
  DLTensor* out_ptrs[1] = {&dl_out};
  bp_kernel_call_t call = MakeKernelCall(op, dev, kargs, nmeta, out_ptrs, 1);
  bool to_host = false;
  if (__builtin_expect(!RunRouteKernel(ctx, op, dev, plan.route, &call, &to_host, error), 0)) {
    if (fresh) TensorRelease(out);
    // The kernel declined this call: the host fallback serves it.
    if (to_host) *error = RunHostFallback(ctx, op, args, num_args, dev, out_results, num_results);
    return error->ok() ? FastResult::kOk : FastResult::kError;
  }
  if (num_results > 0) {
    if (!fresh) TensorRetain(out);
    out_results[0] = out;
  } else if (fresh) {
    TensorRelease(out);
  }
  return FastResult::kOk;
}

// Runs `plan`, its generation current: BP_STATUS_OK, or the error code with
// *error set. kCheckFit: the arguments are yet to be matched to the plan's
// signature (bp_plan_call); otherwise they are known to fit (bp_op_call's
// cache lookup matched them). Caller is inside a ReadSection.
template <bool kCheckFit>
__attribute__((always_inline)) inline bp_status_t RunPlan(const bp_call_plan_t& plan, const bp_value_t* args,
                                                          int32_t num_args, bp_tensor_t** out_results,
                                                          int32_t num_results, Status* error) {
  bool fit_known = !kCheckFit;
  if (plan.fast) {
    const FastResult r = FastRun<kCheckFit>(plan, args, num_args, out_results, num_results, error);
    if (__builtin_expect(r == FastResult::kOk, 1)) return BP_STATUS_OK;
    if (r == FastResult::kError) return error->code();
    fit_known = r == FastResult::kNotServed;  // FastRun matched them first
  }
  if (!fit_known && !Fits(plan, args, num_args)) {
    *error = CheckFits(plan, args, num_args);  // words why
    if (!error->ok()) return error->code();
  }
  *error = CallOp(plan.ctx, plan.op, args, num_args, out_results, num_results, &plan);
  return error->code();
}

// CallUncached's `free_slot` for a call no plan can serve: arguments without
// a signature (a NULL tensor...), or an operator CallOp refuses.
constexpr int kNoSignature = -2;

// bp_op_call's miss: prepares the plan for the call's signature, caches it
// (in `free_slot`, or the next slot round robin when it is -1) unless the
// context holds its most cached plans, and runs it; or, for kNoSignature,
// runs CallOp, which words the error. Out of line (dispatch_plan.cpp): off
// the hit path.
bp_status_t CallUncached(bp_context_t* ctx, const bp_op_t* op, const bp_value_t* args, int32_t num_args,
                         bp_tensor_t** out_results, int32_t num_results, int free_slot, Status* error);

// bp_op_call's body: the call through the operator's cached plan for the
// arguments' signature. BP_STATUS_OK, or the error code with *error set.
// Caller is inside a ReadSection.
__attribute__((always_inline)) inline bp_status_t CallCached(bp_context_t* ctx, const bp_op_t* op,
                                                             const bp_value_t* args, int32_t num_args,
                                                             bp_tensor_t** out_results, int32_t num_results,
                                                             Status* error) {
  int free_slot = -1;
  if (op->ctx != ctx || op->removed.load(std::memory_order_acquire) || num_args < 0 || num_args > op->num_args ||
      (num_args > 0 && args == nullptr)) {
    return CallUncached(ctx, op, args, num_args, out_results, num_results, kNoSignature, error);
  }
  uint64_t key[kMaxArgs];
  for (int32_t i = 0; i < num_args; ++i) {
    if (!PackArg(args[i], &key[i])) {
      return CallUncached(ctx, op, args, num_args, out_results, num_results, kNoSignature, error);
    }
  }
  const uint64_t generation = ctx->route_generation.load(std::memory_order_seq_cst);
  for (int s = 0; s < kPlanCacheSlots; ++s) {
    const bp_call_plan_t* p = op->plan_cache[s].load(std::memory_order_acquire);
    if (p == nullptr || p->generation != generation) {
      if (free_slot < 0) free_slot = s;
      continue;
    }
    if (p->num_args != num_args) continue;
    uint64_t differ = 0;  // branch-free: num_args is small
    for (int32_t i = 0; i < num_args; ++i) differ |= p->key[i] ^ key[i];
    if (differ == 0) return RunPlan<false>(*p, args, num_args, out_results, num_results, error);
  }
  return CallUncached(ctx, op, args, num_args, out_results, num_results, free_slot, error);
}

}  // namespace bp::core
