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
// Anything else returns false before any side effect and goes the generic
// way, so messages and semantics stay exactly the generic path's.
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

// The pointwise fast path of a fast plan: true when it served the call
// (*status set: OK or the recorded error); false, before any side effect,
// when the generic path must (sizes that do not broadcast, overlapping
// outputs, ...), which then words any error.
__attribute__((always_inline)) inline bool FastRun(const bp_call_plan_t& plan, const bp_value_t* args,
                                                   int32_t num_args, bp_tensor_t** out_results, int32_t num_results,
                                                   Status* status) {
  using namespace detail;  // NOLINT: the call path's shared internals
  const bp_op_t* op = plan.op;
  bp_context_t* ctx = plan.ctx;
  if (num_results < 0 || num_results > 1 || (num_results > 0 && out_results == nullptr)) return false;
  const int32_t n = op->num_args;
  const int32_t nmeta = op->num_meta_args;

  // Binding: the arguments fit the plan's signature (kinds, dtypes, devices,
  // ranks), so only values are read here.
  bp_tensor_t* tensors[kMaxArgs];
  bp_kernel_arg_t kargs[kMaxArgs];
  for (int32_t i = 0; i < n; ++i) {
    const bp_value_t& v = i < num_args ? args[i] : op->defaults[i];
    bp_kernel_arg_t& k = kargs[i];
    k.kind = v.kind;
    k.reserved0 = 0;
    tensors[i] = v.u.tensor;
    // A tensor, int or double: its 8 bytes as they are (the tensor's DLTensor
    // is set below); a bool as 0 or 1.
    std::memcpy(&k.u.i, &v.u.i, sizeof(int64_t));
    if (v.kind == BP_VALUE_BOOL) k.u.i = v.u.b != 0 ? 1 : 0;
  }

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
      if (BroadcastSizes(m, tensors[op->fast_inputs[k]]->geo, &m.ndim, m.sizes) >= 0) return false;
    }
    m.dtype = ref->dtype;
    m.device = ref->device;
    m.offset = 0;
    ref = &m;
  }
  const DLDataType want = plan.out_dtype;
  if (plan.check_sizes && !fast::SizesFit(*ref, want.bits / 8)) return false;

  // The output: the mutated argument as it is, or a fresh contiguous tensor.
  const int32_t mut = op->mutated_arg;
  bp_tensor_t* out = nullptr;
  if (mut >= 0) {
    out = tensors[mut];
    const Geometry& og = out->geo;
    if (&og != ref && !fast::SameSizes(og, *ref)) return false;
    // Overlap (meta/overlap.cpp): a written tensor with a stride-0 dim, or
    // an input that shares its storage without being the same tensor, takes
    // the generic path, which allows the exact alias and refuses the rest.
    for (int32_t d = 0; d < og.ndim; ++d) {
      if (og.strides[d] == 0 && og.sizes[d] > 1) return false;
    }
    for (int32_t k = 0; k < nin; ++k) {
      const bp_tensor_t* t = tensors[op->fast_inputs[k]];
      if (t != out && t->storage == out->storage) return false;
    }
  }
  DeviceState* dev = plan.dev;
  const int32_t device_type = dev->slot->device_type;  // every tensor is on dev (the signature)
  const bool fresh = mut < 0;
  if (fresh) {
    *status = EmptyTensorLike(ctx, dev, *ref, want, op->name.c_str(), &out);
    if (!status->ok()) return true;
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
  Status st = ExecuteRoute(ctx, op, dev, plan.route, &call, &to_host);
  if (st.ok() && to_host) {  // the kernel declined this call
    if (fresh) TensorRelease(out);
    *status = RunHostFallback(ctx, op, args, num_args, dev, out_results, num_results);
    return true;
  }
  if (!st.ok()) {
    if (fresh) TensorRelease(out);
    *status = std::move(st);
    return true;
  }
  if (num_results > 0) {
    if (!fresh) TensorRetain(out);
    out_results[0] = out;
  } else if (fresh) {
    TensorRelease(out);
  }
  return true;
}


// Runs `plan` for arguments already known to fit its signature and its
// generation current. Caller is inside a ReadSection.
__attribute__((always_inline)) inline Status RunPlan(const bp_call_plan_t& plan, const bp_value_t* args,
                                                     int32_t num_args, bp_tensor_t** out_results,
                                                     int32_t num_results) {
  if (plan.fast) {
    Status st;
    if (FastRun(plan, args, num_args, out_results, num_results, &st)) return st;
  }
  return CallOp(plan.ctx, plan.op, args, num_args, out_results, num_results, &plan);
}

// A plan for the call prepared now and put in `op`'s cache (in `free_slot`,
// or the next slot round robin when it is -1), or into *uncached when the
// context holds its most cached plans (dispatch_plan.cpp). Off the hit path.
const bp_call_plan_t* PrepareCached(bp_context_t* ctx, const bp_op_t* op, const bp_value_t* args, int32_t num_args,
                                    int free_slot, Status* status, std::unique_ptr<bp_call_plan_t>* uncached);

// The plan in `op`'s cache for the call's signature, or a new one put there.
// nullptr (with *status OK) when the arguments have no signature (a NULL
// tensor...): CallOp then decides and words everything itself.
__attribute__((always_inline)) inline const bp_call_plan_t* CachedPlan(bp_context_t* ctx, const bp_op_t* op,
                                                                       const bp_value_t* args, int32_t num_args,
                                                                       Status* status,
                                                                       std::unique_ptr<bp_call_plan_t>* uncached) {
  if (num_args < 0 || num_args > op->num_args || (num_args > 0 && args == nullptr)) return nullptr;
  uint64_t key[kMaxArgs];
  for (int32_t i = 0; i < num_args; ++i) {
    if (!PackArg(args[i], &key[i])) return nullptr;
  }
  const uint64_t generation = ctx->route_generation.load(std::memory_order_seq_cst);
  int free_slot = -1;
  for (int s = 0; s < kPlanCacheSlots; ++s) {
    const bp_call_plan_t* p = op->plan_cache[s].load(std::memory_order_acquire);
    if (p == nullptr || p->generation != generation) {
      if (free_slot < 0) free_slot = s;
      continue;
    }
    if (p->num_args != num_args) continue;
    uint64_t differ = 0;  // branch-free: num_args is small
    for (int32_t i = 0; i < num_args; ++i) differ |= p->key[i] ^ key[i];
    if (differ == 0) return p;
  }
  return PrepareCached(ctx, op, args, num_args, free_slot, status, uncached);
}

// bp_op_call's body: the call through the operator's cached plan for the
// arguments' signature. Caller is inside a ReadSection.
__attribute__((always_inline)) inline Status CallCached(bp_context_t* ctx, const bp_op_t* op,
                                                        const bp_value_t* args, int32_t num_args,
                                                        bp_tensor_t** out_results, int32_t num_results) {
  if (op->ctx == ctx && !op->removed.load(std::memory_order_acquire)) {
    Status st;
    std::unique_ptr<bp_call_plan_t> uncached;
    const bp_call_plan_t* plan = CachedPlan(ctx, op, args, num_args, &st, &uncached);
    BP_RETURN_IF_ERROR(st);
    if (plan != nullptr) return RunPlan(*plan, args, num_args, out_results, num_results);
  }
  return CallOp(ctx, op, args, num_args, out_results, num_results, nullptr);
}

}  // namespace bp::core
