// The pointwise fast path: how a call plan runs when its meta result, worked
// out once at prepare time (dispatch_plan.cpp), leaves nothing to decide per
// call but sizes and pointers.
//
// Why it exists: the generic path (BindArgs -> meta infer -> output checks ->
// prepare -> kernel views) copies Geometry structs and builds a meta plan on
// every call, while a pointwise call whose plan has no casts and no
// temporaries needs only the broadcast sizes, the output and the kernel
// views. The rules stay the meta function's: the plan ran it for the
// signature; here only the size-dependent parts run (broadcasting through
// BroadcastSizes and meta::BroadcastStrides, the output's sizes, overlap). Anything
// else returns false before any side effect and goes the generic way, so
// messages and semantics stay exactly the generic path's.
#include <cstring>

#include "call_plan.h"
#include "dispatch_internal.h"
#include "dtype.h"
#include "meta/common.h"
#include "meta/families.h"

namespace bp::core {
namespace {

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

// Meta families whose result depends on the argument kinds, dtypes, devices
// and ranks only (never on a value), so a plan can hold it.
bool DecidedBySignature(const MetaFunctions* m) {
  using namespace meta;  // NOLINT: the family tables
  return m == &kBinaryMeta || m == &kTrueDivideMeta || m == &kComparisonMeta || m == &kUnaryNoBoolMeta ||
         m == &kUnaryFloatMeta || m == &kUnaryFloatOnlyMeta || m == &kFillMeta;
}

}  // namespace

void SetupFastPath(bp_op_t* op) {
  op->fast = false;
  if (op->kind != OpKind::kKernel || op->meta == nullptr || op->num_returns != 1) return;
  if (!DecidedBySignature(op->meta)) return;
  const Schema& s = op->schema;
  for (int32_t i = 0; i < op->num_args; ++i) {
    const Argument& a = s.arguments[i];
    if (a.type == ArgType::kTensor && !a.optional) {
      op->fast_arg[i] = FastArg::kTensor;
    } else if (a.type == ArgType::kScalar && !a.optional) {
      op->fast_arg[i] = FastArg::kScalar;
    } else {
      return;  // strings (gelu's approximate) are values the meta function reads
    }
  }
  const int32_t nmeta = op->num_meta_args;
  if (nmeta < 1 || op->fast_arg[0] != FastArg::kTensor) return;
  // The mutated argument: the trailing out= tensor, or self.
  const int32_t mut = op->mutated_arg;
  if (op->variant == OpVariant::kOut) {
    if (mut != op->num_args - 1 || mut != nmeta || op->fast_arg[mut] != FastArg::kTensor) return;
  } else if (mut > 0) {
    return;
  }
  op->fast_num_inputs = 0;
  for (int32_t i = 0; i < nmeta; ++i) {
    if (op->fast_arg[i] == FastArg::kTensor) op->fast_inputs[op->fast_num_inputs++] = static_cast<int8_t>(i);
  }
  op->fast = op->fast_num_inputs > 0;
}

bool FastRun(const bp_call_plan_t& plan, const bp_value_t* args, int32_t num_args, bp_tensor_t** out_results,
             int32_t num_results, Status* status) {
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
    k = bp_kernel_arg_t{};
    k.kind = v.kind;
    if (v.kind == BP_VALUE_TENSOR) {
      tensors[i] = v.u.tensor;
    } else if (v.kind == BP_VALUE_BOOL) {
      k.u.b = v.u.b != 0 ? 1 : 0;
    } else if (v.kind == BP_VALUE_DOUBLE) {
      k.u.d = v.u.d;
    } else {
      k.u.i = v.u.i;
    }
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
    } else if (!SameSizes(g, *ref)) {
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
  if (plan.check_sizes && !SizesFit(*ref, want.bits / 8)) return false;

  // The output: the mutated argument as it is, or a fresh contiguous tensor.
  const int32_t mut = op->mutated_arg;
  bp_tensor_t* out = nullptr;
  if (mut >= 0) {
    out = tensors[mut];
    const Geometry& og = out->geo;
    if (&og != ref && !SameSizes(og, *ref)) return false;
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
    if (&g != ref && !SameSizes(g, *ref)) {
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

}  // namespace bp::core
