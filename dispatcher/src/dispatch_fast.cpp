// The pointwise fast path of bp_op_call.
//
// Why it exists: the generic path (BindArgs -> meta infer -> output checks ->
// prepare -> kernel views) spends thousands of instructions per call on
// copying Geometry structs and building plans, while the common pointwise
// call (one dtype, one device, operands that broadcast) needs none of it.
// The fast path takes only calls the generic path would run unchanged (no
// casts, no temporaries), broadcasts as meta::BroadcastTo does, checks what
// the meta function checks for them, and builds the kernel call straight from
// the tensors' metadata. Everything else, every error included, returns
// false before any side effect and goes the generic way, so messages and
// semantics stay exactly the generic path's.
//
// What a call signature resolves to (the argument kinds and the inputs'
// dtype and device -> the output dtype, the device state, the native kernel)
// is cached per operator (FastPlanCache, registry.h) and trusted while no
// kernel table was published and no backend loaded or unloaded since
// (g_route_generation, context.h). The operator's argument count is a
// template parameter (bp_op_t::fast_call), so the binding loop unrolls.
#include <algorithm>
#include <cstring>

#include "api.h"
#include "dispatch_internal.h"
#include "dtype.h"
#include "meta/common.h"
#include "meta/families.h"
#include "rcu.h"

namespace bp::core {
namespace {

// Strides of a 0-dim operand broadcast to the output's sizes.
constexpr int64_t kZeroStrides[BP_MAX_NDIM] = {};

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

// FillDLTensor, inline, for a tensor of a dtype Backplane knows (itemsize
// bits / 8) on a device of DLPack type `device_type` (its backend's).
inline void FastDL(const bp_tensor_t* t, int32_t device_type, DLTensor* out) {
  const Geometry& g = t->geo;
  out->data = t->storage->data;
  out->device.device_type = static_cast<DLDeviceType>(device_type);
  out->device.device_id = g.device.index;
  out->ndim = g.ndim;
  out->dtype = g.dtype;
  out->shape = const_cast<int64_t*>(g.sizes);
  out->strides = const_cast<int64_t*>(g.strides);
  out->byte_offset = static_cast<uint64_t>(g.offset) * (g.dtype.bits / 8);
}

// The broadcast sizes of the call's inputs (trailing dims aligned, as
// torch.broadcast_shapes) into `sizes`, and *ref: an input of those sizes, or
// `made` filled with them. False when they do not broadcast (the generic path
// words the error).
bool BroadcastSizes(const bp_op_t* op, bp_tensor_t* const* tensors, int64_t* sizes, const Geometry** ref,
                    Geometry* made) {
  const int32_t nin = op->fast_num_inputs;
  int32_t ndim = 0;
  for (int32_t k = 0; k < nin; ++k) ndim = std::max(ndim, tensors[op->fast_inputs[k]]->geo.ndim);
  for (int32_t d = 0; d < ndim; ++d) sizes[d] = 1;
  for (int32_t k = 0; k < nin; ++k) {
    const Geometry& g = tensors[op->fast_inputs[k]]->geo;
    for (int32_t j = 0, d = ndim - g.ndim; j < g.ndim; ++j, ++d) {
      const int64_t s = g.sizes[j];
      if (sizes[d] == 1) {
        sizes[d] = s;
      } else if (s != 1 && s != sizes[d]) {
        return false;
      }
    }
  }
  for (int32_t k = 0; k < nin; ++k) {
    const Geometry& g = tensors[op->fast_inputs[k]]->geo;
    if (g.ndim == ndim && std::memcmp(g.sizes, sizes, sizeof(int64_t) * ndim) == 0) {
      *ref = &g;
      return true;
    }
  }
  made->ndim = ndim;
  made->dtype = tensors[op->fast_inputs[0]]->geo.dtype;
  made->device = tensors[op->fast_inputs[0]]->geo.device;
  made->offset = 0;
  std::memcpy(made->sizes, sizes, sizeof(int64_t) * ndim);
  *ref = made;
  return true;
}

FastFamily FamilyOf(const MetaFunctions* m) {
  using namespace meta;  // NOLINT: the family tables
  if (m == &kBinaryMeta) return FastFamily::kBinary;
  if (m == &kTrueDivideMeta) return FastFamily::kTrueDivide;
  if (m == &kDivModeMeta) return FastFamily::kDivMode;
  if (m == &kComparisonMeta) return FastFamily::kComparison;
  if (m == &kUnaryNoBoolMeta) return FastFamily::kUnaryNoBool;
  if (m == &kUnaryFloatMeta) return FastFamily::kUnaryFloat;
  if (m == &kUnaryFloatOnlyMeta) return FastFamily::kUnaryFloatOnly;
  if (m == &kFillMeta) return FastFamily::kFill;
  return FastFamily::kNone;
}

// The meta family's checks for a call whose tensors all have dtype `id`;
// false where the meta function would cast, or fail. Sets the output dtype.
bool FamilyAccepts(const bp_op_t* op, DType id, const bp_kernel_arg_t* kargs, DLDataType* want) {
  const int32_t nmeta = op->num_meta_args;
  switch (op->fast) {
    case FastFamily::kBinary:
      if (id == DType::kBool && op->fast_rejects_bool) return false;
      if (nmeta > 2) {  // alpha, as torch's alpha_check
        if (kargs[2].kind == BP_VALUE_BOOL && id != DType::kBool) return false;
        if (kargs[2].kind == BP_VALUE_DOUBLE && !DtypeIsFloating(id)) return false;
      }
      return true;
    case FastFamily::kTrueDivide: return DtypeIsFloating(id);
    case FastFamily::kDivMode:
      if (kargs[2].kind == BP_VALUE_NONE) return DtypeIsFloating(id);
      return std::strcmp(kargs[2].u.str, "trunc") == 0 || std::strcmp(kargs[2].u.str, "floor") == 0;
    case FastFamily::kComparison: *want = DtypeToDL(DType::kBool); return true;
    case FastFamily::kUnaryNoBool: return id != DType::kBool;
    case FastFamily::kUnaryFloat: return DtypeIsFloating(id);
    case FastFamily::kUnaryFloatOnly: {
      if (!DtypeIsFloating(id)) return false;
      const int a = op->fast_approx_arg;
      if (a < 0 || a >= nmeta || kargs[a].kind == BP_VALUE_NONE) return true;
      const char* mode = kargs[a].kind == BP_VALUE_STRING ? kargs[a].u.str : "";
      return std::strcmp(mode, "none") == 0 || std::strcmp(mode, "tanh") == 0;
    }
    case FastFamily::kFill: return true;
    case FastFamily::kNone: return false;
  }
  return false;
}

// A call signature's resolution (FastPlanCache, registry.h).
struct FastPlan {
  DLDataType want{};        // the output's dtype
  int32_t device_type = 0;  // DLDeviceType of the device's backend
  DeviceState* dev = nullptr;
  KernelEntry kernel;
};

// The cache key of a dtype and a device; 0 (never a key) when the device
// does not fit the key's bits.
inline uint64_t FastPlanKey(DLDataType dtype, bp_device_t device) {
  if (static_cast<uint32_t>(device.backend) >= 256u || static_cast<uint32_t>(device.index) >= (1u << 23)) return 0;
  uint32_t dt;
  std::memcpy(&dt, &dtype, sizeof(dt));
  return static_cast<uint64_t>(dt) << 32 | uint64_t{1} << 31 | static_cast<uint64_t>(device.backend) << 23 |
         static_cast<uint64_t>(device.index);
}

// The cached resolution of (kinds, dtype, device), if the operator's cache
// holds it and no route changed since it was written. Sequence-lock reader.
__attribute__((always_inline)) inline bool LoadPlan(const bp_op_t* op, uint64_t kinds, DLDataType dtype,
                                                    bp_device_t device, FastPlan* plan) {
  const FastPlanCache& c = op->fast_plan;
  const uint32_t seq = c.seq.load(std::memory_order_acquire);
  if ((seq & 1u) != 0) return false;
  // Acquire loads keep the second read of seq after them (no standalone
  // fence: GCC refuses those under ThreadSanitizer); plain loads on x86.
  const uint64_t generation = c.generation.load(std::memory_order_acquire);
  const uint64_t key = c.dtype_device.load(std::memory_order_acquire);
  const uint64_t cached_kinds = c.kinds.load(std::memory_order_acquire);
  const uint64_t out = c.out_dtype_type.load(std::memory_order_acquire);
  plan->dev = c.dev.load(std::memory_order_acquire);
  plan->kernel.fn = c.fn.load(std::memory_order_acquire);
  plan->kernel.data = c.kernel_data.load(std::memory_order_acquire);
  if (c.seq.load(std::memory_order_relaxed) != seq) return false;
  if (generation != g_route_generation.load(std::memory_order_seq_cst) || cached_kinds != kinds ||
      key != FastPlanKey(dtype, device)) {
    return false;
  }
  const uint32_t want = static_cast<uint32_t>(out);
  std::memcpy(&plan->want, &want, sizeof(want));
  plan->device_type = static_cast<int32_t>(out >> 32);
  return true;
}

// Works out what the signature resolves to (false: the generic path serves
// it) and caches it: the dtypes the operator takes and its family's checks,
// the device (ResolveDevice's success conditions; its errors come from the
// generic path), and the native kernel (only the native route is served here).
bool ResolvePlan(bp_context_t* ctx, const bp_op_t* op, uint64_t kinds, DLDataType dtype, bp_device_t device,
                 const bp_kernel_arg_t* kargs, FastPlan* plan) {
  // Read before the route is, so a change while it is worked out leaves a stale generation.
  const uint64_t generation = g_route_generation.load(std::memory_order_seq_cst);
  const DType id = DtypeFromDL(dtype);
  if (id == DType::kInvalid || (op->dtype_mask & DtypeBit(id)) == 0) return false;
  plan->want = dtype;
  if (!FamilyAccepts(op, id, kargs, &plan->want)) return false;
  if (device.backend < 0 || device.backend >= ctx->num_backends.load(std::memory_order_acquire)) return false;
  const BackendSlot& slot = ctx->slots[device.backend];
  if (!slot.loaded.load(std::memory_order_acquire) || device.index < 0 ||
      device.index >= static_cast<int32_t>(slot.devices.size())) {
    return false;
  }
  plan->dev = slot.devices[device.index];
  plan->device_type = slot.device_type;
  plan->kernel = KernelFor(op, device.backend);
  // Every tensor has dtype `id` (no casts here): the kernel's mask must hold it.
  if (plan->kernel.fn == nullptr || !KernelTakes(plan->kernel, DtypeBit(id))) return false;

  // Sequence-lock writer; a writer already at work means this one skips.
  const uint64_t key = FastPlanKey(dtype, device);
  FastPlanCache& c = const_cast<bp_op_t*>(op)->fast_plan;
  uint32_t seq = c.seq.load(std::memory_order_relaxed);
  if (key == 0 || (seq & 1u) != 0 || !c.seq.compare_exchange_strong(seq, seq + 1, std::memory_order_acquire)) {
    return true;
  }
  // Release stores keep the odd seq before them (a reader that sees a field
  // written here sees seq changed).
  uint32_t want;
  std::memcpy(&want, &plan->want, sizeof(want));
  c.generation.store(generation, std::memory_order_release);
  c.kinds.store(kinds, std::memory_order_release);
  c.dtype_device.store(key, std::memory_order_release);
  c.out_dtype_type.store(static_cast<uint64_t>(static_cast<uint32_t>(plan->device_type)) << 32 | want,
                         std::memory_order_release);
  c.dev.store(plan->dev, std::memory_order_release);
  c.fn.store(plan->kernel.fn, std::memory_order_release);
  c.kernel_data.store(plan->kernel.data, std::memory_order_release);
  c.seq.store(seq + 2, std::memory_order_release);
  return true;
}

// bp_op_call's body for an operator of `num_args` arguments with a fast path.
OpCallFn OpCallFor(int32_t num_args);

}  // namespace

void SetupFastPath(bp_op_t* op) {
  op->fast = FastFamily::kNone;
  op->fast_call = nullptr;
  if (op->kind != OpKind::kKernel || op->meta == nullptr || op->num_returns != 1) return;
  const FastFamily family = FamilyOf(op->meta);
  if (family == FastFamily::kNone) return;
  const Schema& s = op->schema;
  for (int32_t i = 0; i < op->num_args; ++i) {
    const Argument& a = s.arguments[i];
    if (a.type == ArgType::kTensor && !a.optional) {
      op->fast_arg[i] = FastArg::kTensor;
    } else if (a.type == ArgType::kScalar && !a.optional) {
      op->fast_arg[i] = FastArg::kScalar;
    } else if (a.type == ArgType::kString) {
      op->fast_arg[i] = a.optional ? FastArg::kOptionalString : FastArg::kString;
    } else {
      return;
    }
  }
  const int32_t nmeta = op->num_meta_args;
  if (nmeta < 1 || op->fast_arg[0] != FastArg::kTensor) return;
  if (family == FastFamily::kBinary && nmeta > 2 && op->fast_arg[2] != FastArg::kScalar) return;
  if (family == FastFamily::kDivMode && (nmeta < 3 || op->fast_arg[2] == FastArg::kTensor ||
                                         op->fast_arg[2] == FastArg::kScalar)) {
    return;
  }
  if (family == FastFamily::kFill && (nmeta < 2 || op->fast_arg[1] != FastArg::kScalar)) return;
  // The mutated argument: the trailing out= tensor, or self.
  const int32_t mut = op->mutated_arg;
  if (op->variant == OpVariant::kOut) {
    if (mut != op->num_args - 1 || mut != nmeta || op->fast_arg[mut] != FastArg::kTensor) return;
  } else if (mut > 0 || (mut < 0 && family == FastFamily::kFill)) {
    return;
  }
  op->fast_num_inputs = 0;
  for (int32_t i = 0; i < nmeta; ++i) {
    if (op->fast_arg[i] == FastArg::kTensor) op->fast_inputs[op->fast_num_inputs++] = static_cast<int8_t>(i);
  }
  const bp_op_t* f = op->functional;
  MetaCallInfo info{op->name.c_str(), f->arg_names, nmeta};
  op->fast_rejects_bool = family == FastFamily::kBinary && meta::BaseName(info) == "sub";
  op->fast_approx_arg = -1;
  for (int32_t i = 1; i < nmeta; ++i) {
    if (meta::ArgName(info, i) == "approximate") op->fast_approx_arg = static_cast<int8_t>(i);
  }
  op->fast_reads_strings = family == FastFamily::kDivMode || op->fast_approx_arg >= 0;
  op->fast = family;
  op->fast_call = OpCallFor(op->num_args);
}

namespace {
using namespace detail;  // NOLINT: the call path's shared internals

// The fast path for an operator of N arguments (0: any number). N known at
// compile time unrolls the binding loop, the longest part of the call.
template <int N>
inline bool FastCall(bp_context_t* ctx, const bp_op_t* op, const bp_value_t* args, int32_t num_args,
                     bp_tensor_t** out_results, int32_t num_results, bp_status_t* status) {
  const int32_t n = N > 0 ? N : op->num_args;
  if (num_args < 0 || num_args > n) return false;
  const int32_t nmeta = op->num_meta_args;

  // Binding: the kinds the generic BindArgs accepts for these schemas, kernel
  // arguments built as BuildKernelArgs builds them. `kinds` is the call's
  // signature for the plan cache.
  bp_tensor_t* tensors[kMaxArgs];
  tensors[0] = nullptr;  // argument 0 is a tensor (SetupFastPath); this tells the compiler
  bp_kernel_arg_t kargs[kMaxArgs];
  uint64_t kinds = 0;
#pragma GCC unroll 4
  for (int32_t i = 0; i < n; ++i) {
    const bp_value_t* v = i < num_args ? &args[i] : op->has_default[i] ? &op->defaults[i] : nullptr;
    if (v == nullptr) return false;
    const int32_t kind = v->kind;
    bp_kernel_arg_t& k = kargs[i];
    k = bp_kernel_arg_t{};
    k.kind = kind;
    kinds |= static_cast<uint64_t>(kind & 0xf) << (4 * i);
    switch (op->fast_arg[i]) {
      case FastArg::kTensor:
        if (kind != BP_VALUE_TENSOR || v->u.tensor == nullptr) return false;
        tensors[i] = v->u.tensor;
        break;
      case FastArg::kScalar:
        if (kind == BP_VALUE_INT) {
          k.u.i = v->u.i;
        } else if (kind == BP_VALUE_DOUBLE) {
          k.u.d = v->u.d;
        } else if (kind == BP_VALUE_BOOL) {
          k.u.b = v->u.b != 0 ? 1 : 0;
        } else {
          return false;
        }
        break;
      case FastArg::kString:
      case FastArg::kOptionalString:
        if (kind == BP_VALUE_STRING && v->u.str != nullptr) {
          k.u.str = v->u.str;
        } else if (kind != BP_VALUE_NONE || op->fast_arg[i] != FastArg::kOptionalString) {
          return false;
        }
        break;
    }
  }

  // One dtype and one device for every input; sizes broadcast (trailing
  // dims aligned, as torch.broadcast_shapes). Mismatches go the generic way,
  // which words the error.
  const Geometry& g0 = tensors[0]->geo;
  const DLDataType dtype = g0.dtype;
  const bp_device_t device = g0.device;
  const int32_t nin = op->fast_num_inputs;
  // The common case first: equal sizes, or 0-dim operands.
  const Geometry* ref = &g0;  // an input with the output's sizes
  bool broadcast = false;
  for (int32_t k = 1; k < nin; ++k) {
    const Geometry& g = tensors[op->fast_inputs[k]]->geo;
    if (!DtypeEqual(g.dtype, dtype) || !SameDevice(g.device, device)) return false;
    if (g.ndim == 0) continue;
    if (ref->ndim == 0) {
      ref = &g;
    } else if (!SameSizes(g, *ref)) {
      broadcast = true;
    }
  }
  int64_t sizes[BP_MAX_NDIM];
  Uninit<Geometry> made;
  if (broadcast && !BroadcastSizes(op, tensors, sizes, &ref, &made.value)) return false;
  const int32_t ndim = ref->ndim;

  // What the signature resolves to: from the operator's plan cache, or
  // worked out now (and cached).
  FastPlan plan;
  if (op->fast_reads_strings && !FamilyAccepts(op, DtypeFromDL(dtype), kargs, &plan.want)) return false;
  if (!LoadPlan(op, kinds, dtype, device, &plan) && !ResolvePlan(ctx, op, kinds, dtype, device, kargs, &plan)) {
    return false;
  }
  const DLDataType want = plan.want;
  if (op->fast != FastFamily::kFill && !SizesFit(*ref, want.bits / 8)) return false;

  // The output: the mutated argument as it is, or a fresh contiguous tensor.
  const int32_t mut = op->mutated_arg;
  bp_tensor_t* out = nullptr;
  if (mut >= 0) {
    out = tensors[mut];
    const Geometry& og = out->geo;
    if (!DtypeEqual(og.dtype, want) || !SameDevice(og.device, device) || (&og != ref && !SameSizes(og, *ref))) {
      return false;
    }
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
  const bool fresh = mut < 0;
  if (fresh) {
    Status st = EmptyTensorLike(ctx, dev, *ref, want, op->name.c_str(), &out);
    if (!st.ok()) {
      *status = SetLastError(st);
      return true;
    }
  }

  DLTensor dl[kMaxArgs];
  int64_t bstrides[kMaxArgs][BP_MAX_NDIM];  // written only for inputs that broadcast
  for (int32_t k = 0; k < nin; ++k) {
    const int32_t i = op->fast_inputs[k];
    const bp_tensor_t* t = tensors[i];
    const Geometry& g = t->geo;
    FastDL(t, plan.device_type, &dl[i]);
    if (g.ndim == 0 && ndim > 0) {  // a 0-dim operand: stride 0 everywhere
      dl[i].ndim = ndim;
      dl[i].shape = const_cast<int64_t*>(ref->sizes);
      dl[i].strides = const_cast<int64_t*>(kZeroStrides);
    } else if (broadcast && &g != ref && !SameSizes(g, *ref)) {  // as meta::BroadcastTo
      const int32_t lead = ndim - g.ndim;
      for (int32_t d = 0; d < ndim; ++d) {
        const int32_t j = d - lead;
        bstrides[k][d] = j < 0 || (g.sizes[j] == 1 && ref->sizes[d] != 1) ? 0 : g.strides[j];
      }
      dl[i].ndim = ndim;
      dl[i].shape = const_cast<int64_t*>(ref->sizes);
      dl[i].strides = bstrides[k];
    }
    kargs[i].u.tensor = &dl[i];
  }
  DLTensor dl_out;
  FastDL(out, plan.device_type, &dl_out);
  DLTensor* out_ptrs[1] = {&dl_out};
  bp_kernel_call_t call = MakeKernelCall(op, dev, kargs, nmeta, out_ptrs, 1);
  Route route;
  route.kernel = plan.kernel;
  bool to_host = false;
  Status st = ExecuteRoute(ctx, op, dev, route, &call, &to_host);
  if (st.ok() && to_host) {  // the kernel declined this call
    if (fresh) TensorRelease(out);
    st = RunHostFallback(ctx, op, args, num_args, dev, out_results, num_results);
    *status = st.ok() ? BP_STATUS_OK : SetLastError(st);
    return true;
  }
  if (!st.ok()) {
    if (fresh) TensorRelease(out);
    *status = SetLastError(st);
    return true;
  }
  if (num_results > 0) {
    if (!fresh) TensorRetain(out);
    out_results[0] = out;
  } else if (fresh) {
    TensorRelease(out);
  }
  *status = BP_STATUS_OK;
  return true;
}

// bp_op_call's body for an operator of N arguments with a fast path
// (OpCallFn). Not ApiCall: the fast path's success returns no Status object;
// the exception mapping is the same (ApiException).
template <int N>
bp_status_t OpCallFast(bp_context_t* ctx, const bp_op_t* op, const bp_value_t* args, int32_t num_args,
                       bp_tensor_t** out_results, int32_t num_results) noexcept {
  try {
    ReadSection rs;
    // The fast path runs before CallOp, whose frame (the bound arguments of
    // the generic path) costs more to set up than the fast call itself;
    // CallOp's own checks come first for calls it would reject.
    if (op->ctx == ctx && !op->removed.load(std::memory_order_acquire) && num_results >= 0 &&
        num_results <= op->num_returns && (num_results == 0 || out_results != nullptr) &&
        (num_args <= 0 || args != nullptr)) {
      bp_status_t rc;
      if (FastCall<N>(ctx, op, args, num_args, out_results, num_results, &rc)) return rc;
    }
    Status status = CallOp(ctx, op, args, num_args, out_results, num_results);
    return status.ok() ? BP_STATUS_OK : SetLastError(status);
  } catch (...) {
    return ApiException("bp_op_call");
  }
}

OpCallFn OpCallFor(int32_t num_args) {
  switch (num_args) {
    case 1: return OpCallFast<1>;
    case 2: return OpCallFast<2>;
    case 3: return OpCallFast<3>;
    case 4: return OpCallFast<4>;
    default: return OpCallFast<0>;
  }
}

}  // namespace

}  // namespace bp::core
