// Call plans: preparing one for a signature (the route, the dispatch key's
// device, whether the pointwise fast path serves it), the per-operator plan
// cache behind bp_op_call, and the bp_op_prepare / bp_plan_* entry points.
#include <memory>
#include <string>

#include "api.h"
#include "call_plan.h"
#include "dispatch_internal.h"
#include "dtype.h"
#include "plan_run.h"
#include "rcu.h"

namespace bp::core {
namespace {
using namespace detail;  // NOLINT: the call path's shared internals

const char* KindName(int32_t kind) {
  static const char* const kNames[] = {"None",  "Tensor", "Tensor[]",   "int", "int[]",
                                       "float", "bool",   "ScalarType", "str"};
  return kind >= 0 && kind <= BP_VALUE_STRING ? kNames[kind] : "an unknown value kind";
}

std::string SignatureText(bp_context_t* ctx, const bp_arg_signature_t& s) {
  std::string t = KindName(s.kind);
  if (s.kind != BP_VALUE_TENSOR && s.kind != BP_VALUE_TENSOR_LIST) return t;
  const bool known = s.device.backend >= 0 && s.device.backend < ctx->num_backends.load(std::memory_order_acquire);
  return t + " " + DtypeName(s.dtype) + " of rank " + std::to_string(s.ndim) + " on " +
         (known ? DeviceText(ctx, s.device)
                : "device " + std::to_string(s.device.backend) + ":" + std::to_string(s.device.index));
}

// Binds the meta arguments of a signature of tensors and scalars: tensors
// of the signature's dtypes, devices and ranks, sizes 1 (what a plan knows
// of a call). False when the signature has other kinds (lists, strings:
// values a meta function reads) or leaves out an argument without default.
bool BindSignature(const bp_op_t* op, const bp_call_plan_t& plan, Bound* b) {
  for (int32_t i = 0; i < op->num_args; ++i) {
    const bool given = i < plan.num_args;
    if (!given && !op->has_default[i]) return false;
    const int32_t kind = given ? plan.sig[i].kind : op->defaults[i].kind;
    MetaArg& m = b->margs[i];
    m = MetaArg{};
    m.kind = kind;
    if (kind == BP_VALUE_TENSOR) {
      if (!given) return false;
      const bp_arg_signature_t& s = plan.sig[i];
      Geometry& g = b->geos[i];
      g = Geometry{};
      g.ndim = s.ndim;
      g.dtype = s.dtype;
      g.device = s.device;
      for (int32_t d = 0; d < s.ndim; ++d) {
        g.sizes[d] = 1;
        g.strides[d] = 1;
      }
      m.tensor = &g;
    } else if (kind != BP_VALUE_INT && kind != BP_VALUE_DOUBLE && kind != BP_VALUE_BOOL && kind != BP_VALUE_NONE) {
      return false;
    }
  }
  return true;
}

// The meta function's result for the plan's signature (BindSignature), and
// the call's compute dtypes (InferPlan's). False when it cannot be known
// from the signature alone: the call's own meta run decides then.
bool SignatureMeta(const bp_op_t* op, const bp_call_plan_t& plan, Bound* b, MetaPlan* meta, uint32_t* dtypes) {
  if (op->kind != OpKind::kKernel || op->meta == nullptr || !BindSignature(op, plan, b)) return false;
  return InferPlan(op, *b, meta, dtypes).ok();
}

// Whether the plan's meta result lets FastRun serve its calls: the meta
// function, run once on the signature (SignatureMeta: `b`, `meta`,
// `dtypes`), asks for no cast, no temporary and one output, which the
// mutated argument (if any) already has the dtype of. Only operators whose
// meta function reads no argument value (SetupFastPath) get here.
bool FastEligible(const bp_op_t* op, const bp_call_plan_t& plan, const Bound& b, const MetaPlan& meta, uint32_t dtypes,
                  DLDataType* out_dtype) {
  if (!op->fast || (plan.route_kind != BP_PLAN_ROUTE_NATIVE && plan.route_kind != BP_PLAN_ROUTE_BACKEND_FALLBACK)) {
    return false;
  }
  for (int32_t i = 0; i < plan.num_args; ++i) {
    const bp_arg_signature_t& s = plan.sig[i];
    if (s.kind == BP_VALUE_TENSOR && (s.device.backend != plan.device.backend || s.device.index != plan.device.index)) {
      return false;
    }
  }
  if (meta.num_outputs != 1 || meta.no_output_alias) return false;
  for (int32_t i = 0; i < op->num_args; ++i) {
    if (b.margs[i].kind == BP_VALUE_NONE) return false;  // a fast operator takes tensors and scalars (SetupFastPath)
  }
  // A native kernel whose dtype mask lacks the compute dtype: such plans are routed elsewhere.
  if (plan.route_kind == BP_PLAN_ROUTE_NATIVE && !KernelTakes(plan.route.kernel, dtypes)) return false;
  for (int32_t i = 0; i < op->num_meta_args; ++i) {
    if (meta.cast_to[i].bits != 0 && !DtypeEqual(meta.cast_to[i], b.geos[i].dtype)) return false;
    if (meta.rewritten[i].kind != BP_VALUE_NONE) return false;
  }
  const int32_t mut = op->mutated_arg;
  if (mut >= 0 && !DtypeEqual(plan.sig[mut].dtype, meta.outputs[0].dtype)) return false;
  *out_dtype = meta.outputs[0].dtype;
  return true;
}

// The dispatch key of a signature (KeyChooser, as CallOp picks it from the
// bound tensors), and an error when the devices do not mix.
Status SignatureKey(bp_context_t* ctx, const bp_op_t* op, const bp_call_plan_t& plan, bp_device_t* key) {
  KeyChooser chooser(ctx->host_backend);
  for (int32_t i = 0; i < plan.num_args; ++i) {
    const bp_arg_signature_t& s = plan.sig[i];
    if (s.kind == BP_VALUE_TENSOR || (s.kind == BP_VALUE_TENSOR_LIST && s.ndim + s.device.backend > 0)) {
      chooser.Offer(i, s.device, s.ndim > 0);
    }
  }
  *key = chooser.key;
  for (int32_t i = 0; i < plan.num_args; ++i) {
    const bp_arg_signature_t& s = plan.sig[i];
    if (s.kind != BP_VALUE_TENSOR) continue;
    BP_RETURN_IF_ERROR(chooser.Check(ctx, op, i, s.device, s.ndim));
  }
  return Status::Ok();
}

}  // namespace

bool SignatureOf(const bp_value_t& v, bp_arg_signature_t* out) {
  *out = bp_arg_signature_t{};
  out->kind = v.kind;
  const bp_tensor_t* t = nullptr;
  if (v.kind == BP_VALUE_TENSOR) {
    t = v.u.tensor;
    if (t == nullptr) return false;
  } else if (v.kind == BP_VALUE_TENSOR_LIST) {
    // The first element of rank > 0, else the first: the one the dispatch key comes from.
    const int64_t n = v.u.tensor_list.size;
    if (n < 0 || (n > 0 && v.u.tensor_list.data == nullptr)) return false;
    for (int64_t j = 0; j < n; ++j) {
      const bp_tensor_t* e = v.u.tensor_list.data[j];
      if (e == nullptr) return false;
      if (t == nullptr || (t->geo.ndim == 0 && e->geo.ndim > 0)) t = e;
    }
    if (t == nullptr) return true;
  } else {
    return true;
  }
  out->ndim = t->geo.ndim;
  out->dtype = t->geo.dtype;
  out->device = t->geo.device;
  return true;
}

void DecidePlanRoute(bp_context_t* ctx, const bp_op_t* op, DeviceState* dev, uint32_t dtypes, Status* status,
                     Route* route) {
  // dtypes 0 (not known from the signature): a native kernel whose mask
  // lacks a call's compute dtypes is rerouted per call (CallOp).
  *status = DecideRoute(ctx, op, dev->slot->id, dtypes, route);
}

Status PreparePlan(bp_context_t* ctx, const bp_op_t* op, const bp_arg_signature_t* sig, int32_t num_args,
                   std::unique_ptr<bp_call_plan_t>* out) {
  if (op->ctx != ctx) return Error(BP_STATUS_INVALID_ARGUMENT, "bp_op_prepare: operator belongs to another context");
  if (op->removed.load(std::memory_order_acquire)) {
    return Error(BP_STATUS_FAILED_PRECONDITION,
                 "bp_op_prepare: operator '" + op->name + "' was removed (plugin unloaded)");
  }
  if (num_args < 0 || num_args > op->num_args || (num_args > 0 && sig == nullptr)) {
    return Error(BP_STATUS_INVALID_ARGUMENT, op->name + ": a signature of " + std::to_string(num_args) +
                                                 " arguments; the operator takes at most " +
                                                 std::to_string(op->num_args));
  }
  auto plan = std::make_unique<bp_call_plan_t>();
  plan->ctx = ctx;
  plan->op = op;
  // Read before the route is, so a change while it is worked out leaves the plan stale.
  plan->generation = ctx->route_generation.load(std::memory_order_seq_cst);
  plan->num_args = num_args;
  for (int32_t i = 0; i < num_args; ++i) {
    plan->sig[i] = sig[i];
    if (!PackSignature(sig[i], &plan->key[i])) {
      return Error(BP_STATUS_INVALID_ARGUMENT, op->name + ": signature of argument '" + op->arg_names[i] +
                                                   "' is not a valid " + KindName(sig[i].kind) + " (" +
                                                   SignatureText(ctx, sig[i]) + ")");
    }
  }
  ctx->plan_builds.fetch_add(1, std::memory_order_relaxed);
  if (op->kind != OpKind::kKernel && op->kind != OpKind::kCustom) {
    plan->route_kind = BP_PLAN_ROUTE_CORE;
  }
  Status st = SignatureKey(ctx, op, *plan, &plan->device);
  if (st.ok()) st = ResolveDevice(ctx, plan->device, op->name.c_str(), &plan->dev);
  // The meta result and compute dtypes when the signature decides them: a
  // kernel's dtype mask routes the plan now (bp_plan_info tells the route),
  // and the fast path is decided from them.
  Bound b;
  Uninit<MetaPlan> meta;
  uint32_t dtypes = 0;
  const bool meta_known = SignatureMeta(op, *plan, &b, &meta.value, &dtypes);
  if (!meta_known) dtypes = 0;
  if (st.ok() && plan->route_kind != BP_PLAN_ROUTE_CORE) {
    DecidePlanRoute(ctx, op, plan->dev, dtypes, &st, &plan->route);
    if (st.ok()) {
      plan->route_kind = plan->route.kind == RouteKind::kNative            ? BP_PLAN_ROUTE_NATIVE
                         : plan->route.kind == RouteKind::kBackendFallback ? BP_PLAN_ROUTE_BACKEND_FALLBACK
                                                                           : BP_PLAN_ROUTE_HOST_FALLBACK;
    }
  }
  if (!st.ok()) {
    plan->route_kind = BP_PLAN_ROUTE_ERROR;
    plan->dev = nullptr;
    plan->route_status = std::move(st);
  }
  plan->fast = meta_known && FastEligible(op, *plan, b, meta.value, dtypes, &plan->out_dtype);
  plan->check_sizes = !WritesOneValue(op->meta);
  *out = std::move(plan);
  return Status::Ok();
}

void FreeCachedPlans(bp_context_t* ctx) {
  for (bp_call_plan_t* p : ctx->cached_plans) delete p;
  ctx->cached_plans.clear();
}

namespace {

// Cached plans a context keeps at most; past it a call's plan is prepared
// for that call only (a program that changes its routes in a loop would
// otherwise grow the list of replaced plans without end).
constexpr size_t kMaxCachedPlans = 4096;

}  // namespace

bp_status_t CallUncached(bp_context_t* ctx, const bp_op_t* op, const bp_value_t* args, int32_t num_args,
                         bp_tensor_t** out_results, int32_t num_results, int free_slot, Status* error) {
  if (free_slot == kNoSignature) {
    *error = CallOp(ctx, op, args, num_args, out_results, num_results, nullptr);
    return error->code();
  }
  bp_arg_signature_t sig[kMaxArgs];
  for (int32_t i = 0; i < num_args; ++i) SignatureOf(args[i], &sig[i]);
  std::unique_ptr<bp_call_plan_t> fresh;
  *error = PreparePlan(ctx, op, sig, num_args, &fresh);
  if (!error->ok()) return error->code();
  bp_call_plan_t* raw = fresh.get();
  bool cached = false;
  {
    std::lock_guard<std::mutex> lock(ctx->plans_mu);
    if (ctx->cached_plans.size() < kMaxCachedPlans) {
      ctx->cached_plans.push_back(raw);
      cached = true;
    }
  }
  if (cached) {
    fresh.release();  // the context's list owns it now
    bp_op_t* mop = const_cast<bp_op_t*>(op);
    if (free_slot < 0) {
      free_slot = static_cast<int>(mop->plan_cache_next.fetch_add(1, std::memory_order_relaxed) % kPlanCacheSlots);
    }
    mop->plan_cache[free_slot].store(raw, std::memory_order_release);
  }
  // An uncached plan serves this call only (`fresh` frees it).
  return RunPlan<false>(*raw, args, num_args, out_results, num_results, error);
}

__attribute__((noinline)) Status CheckFits(const bp_call_plan_t& plan, const bp_value_t* args, int32_t num_args) {
  const bp_op_t* op = plan.op;
  if (num_args != plan.num_args) {
    return Error(BP_STATUS_INVALID_ARGUMENT, op->name + ": the plan was prepared for " + std::to_string(plan.num_args) +
                                                 " arguments, got " + std::to_string(num_args));
  }
  if (num_args > 0 && args == nullptr) return Error(BP_STATUS_INVALID_ARGUMENT, op->name + ": args is NULL");
  for (int32_t i = 0; i < num_args; ++i) {
    uint64_t k;
    if (PackArg(args[i], &k) && k == plan.key[i]) continue;
    bp_arg_signature_t got;
    const bool valid = SignatureOf(args[i], &got);
    return Error(BP_STATUS_INVALID_ARGUMENT, op->name + ": argument '" + op->arg_names[i] +
                                                 "' does not fit the plan: expected " +
                                                 SignatureText(plan.ctx, plan.sig[i]) + ", got " +
                                                 (valid ? SignatureText(plan.ctx, got) : std::string("a NULL tensor")));
  }
  return Status::Ok();
}

namespace {

Status StaleError(const bp_call_plan_t& plan) {
  return Error(BP_STATUS_FAILED_PRECONDITION,
               plan.op->name +
                   ": the call plan is stale (a plugin was loaded or unloaded, or a kernel, "
                   "fallback, mask or strict mode changed, in its context since it was prepared); "
                   "prepare it again");
}

Status PrepareChecked(bp_context_t* ctx, const bp_op_t* op, const bp_arg_signature_t* sig, int32_t num_args,
                      bp_call_plan_t** out_plan) {
  BP_CHECK_ARG(ctx != nullptr && op != nullptr && out_plan != nullptr, "bp_op_prepare",
               "context, op and out_plan must not be NULL");
  ReadSection rs;
  std::unique_ptr<bp_call_plan_t> plan;
  BP_RETURN_IF_ERROR(PreparePlan(ctx, op, sig, num_args, &plan));
  plan->alive = ctx->alive;
  *out_plan = plan.release();
  return Status::Ok();
}

}  // namespace

}  // namespace bp::core

using namespace bp::core;

extern "C" {

// Every call goes through a plan: the operator's cached one for the call's
// signature, or one prepared now (CallCached).
BP_API bp_status_t bp_op_call(bp_context_t* context, const bp_op_t* op, const bp_value_t* args, int32_t num_args,
                              bp_tensor_t** out_results, int32_t num_results) {
  if (context == nullptr || op == nullptr) {
    return SetLastError(BP_STATUS_INVALID_ARGUMENT, "bp_op_call: context and op must not be NULL");
  }
  if (ContextForked(context)) return SetLastError(ForkedContextError(context, "bp_op_call"));
  try {
    ReadSection rs;
    Status error;
    const bp_status_t rc = CallCached(context, op, args, num_args, out_results, num_results, &error);
    return __builtin_expect(rc == BP_STATUS_OK, 1) ? BP_STATUS_OK : SetLastError(error);
  } catch (...) {
    return ApiException("bp_op_call");
  }
}

BP_API bp_status_t bp_op_prepare(bp_context_t* context, const bp_op_t* op, const bp_call_signature_t* signature,
                                 bp_call_plan_t** out_plan) {
  return ApiCall("bp_op_prepare", [&]() -> Status {
    BP_CHECK_ARG(signature != nullptr, "bp_op_prepare", "signature is NULL");
    if (signature->struct_size < sizeof(bp_call_signature_t)) {
      return Error(BP_STATUS_INVALID_ARGUMENT, "bp_op_prepare: signature->struct_size is " +
                                                   std::to_string(signature->struct_size) + "; expected at least " +
                                                   std::to_string(sizeof(bp_call_signature_t)));
    }
    return PrepareChecked(context, op, signature->args, signature->num_args, out_plan);
  });
}

BP_API bp_status_t bp_op_prepare_for_args(bp_context_t* context, const bp_op_t* op, const bp_value_t* args,
                                          int32_t num_args, bp_call_plan_t** out_plan) {
  return ApiCall("bp_op_prepare_for_args", [&]() -> Status {
    BP_CHECK_ARG(context != nullptr && op != nullptr, "bp_op_prepare_for_args", "context and op must not be NULL");
    if (num_args < 0 || num_args > kMaxArgs || (num_args > 0 && args == nullptr)) {
      return Error(BP_STATUS_INVALID_ARGUMENT,
                   op->name + ": bp_op_prepare_for_args: bad args/num_args (" + std::to_string(num_args) + ")");
    }
    bp_arg_signature_t sig[kMaxArgs];
    for (int32_t i = 0; i < num_args; ++i) {
      if (!SignatureOf(args[i], &sig[i])) {
        return Error(BP_STATUS_INVALID_ARGUMENT,
                     op->name + ": argument " + std::to_string(i) + " holds a NULL tensor or a bad tensor list");
      }
    }
    return PrepareChecked(context, op, sig, num_args, out_plan);
  });
}

BP_API bp_status_t bp_plan_call(bp_call_plan_t* plan, const bp_value_t* args, int32_t num_args,
                                bp_tensor_t** out_results, int32_t num_results) {
  if (plan == nullptr) return SetLastError(BP_STATUS_INVALID_ARGUMENT, "bp_plan_call: plan is NULL");
  try {
    if (plan->alive && !plan->alive->load(std::memory_order_acquire)) {
      return SetLastError(BP_STATUS_FAILED_PRECONDITION,
                          "bp_plan_call: the plan's context was destroyed; release the plan");
    }
    if (ContextForked(plan->ctx)) return SetLastError(ForkedContextError(plan->ctx, "bp_plan_call"));
    ReadSection rs;
    Status error;
    if (plan->generation != plan->ctx->route_generation.load(std::memory_order_seq_cst) ||
        plan->op->removed.load(std::memory_order_acquire)) {
      return SetLastError(StaleError(*plan));
    }
    const bp_status_t rc = RunPlan<true>(*plan, args, num_args, out_results, num_results, &error);
    return __builtin_expect(rc == BP_STATUS_OK, 1) ? BP_STATUS_OK : SetLastError(error);
  } catch (...) {
    return ApiException("bp_plan_call");
  }
}

BP_API void bp_plan_release(bp_call_plan_t* plan) { delete plan; }

BP_API bp_status_t bp_plan_info(const bp_call_plan_t* plan, bp_plan_info_t* out_info) {
  return ApiCall("bp_plan_info", [&]() -> Status {
    BP_CHECK_ARG(plan != nullptr && out_info != nullptr, "bp_plan_info", "plan and out_info must not be NULL");
    const size_t need = offsetof(bp_plan_info_t, route) + sizeof(int32_t);
    if (out_info->struct_size < need) {
      return Error(BP_STATUS_INVALID_ARGUMENT, "bp_plan_info: out_info->struct_size is " +
                                                   std::to_string(out_info->struct_size) + "; expected at least " +
                                                   std::to_string(need));
    }
    bp_plan_info_t info{};
    info.struct_size = out_info->struct_size;
    info.route = plan->route_kind;
    info.status = plan->route_kind == BP_PLAN_ROUTE_ERROR ? plan->route_status.code() : BP_STATUS_OK;
    info.message = plan->route_kind == BP_PLAN_ROUTE_ERROR ? plan->route_status.message().c_str() : "";
    info.device = plan->device;
    const bool dead = plan->alive && !plan->alive->load(std::memory_order_acquire);
    if (dead || plan->generation != plan->ctx->route_generation.load(std::memory_order_seq_cst)) {
      info.route = BP_PLAN_ROUTE_STALE;
    }
    const size_t n = out_info->struct_size < sizeof(info) ? out_info->struct_size : sizeof(info);
    std::memcpy(out_info, &info, n);
    return Status::Ok();
  });
}

}  // extern "C"
