#include "route.h"

#include "dispatch_internal.h"

namespace bp::core {
namespace {

// Whether the host fallback can serve `op` for `backend`, ignoring strict mode.
bool HostCanServe(bp_context_t* ctx, const bp_op_t* op, int32_t backend) {
  const int32_t host = ctx->host_backend;
  return backend != host && KernelFor(op, host).fn != nullptr;
}

// Why the backend's own kernel does not serve the call, for the messages.
std::string MaskedNote(const bp_op_t* op, int32_t backend, uint32_t dtypes) {
  if (KernelMasked(op, backend)) return " (masked by bp_op_set_kernel_masked)";
  const KernelEntry& k = KernelFor(op, backend);
  if (k.fn == nullptr || KernelTakes(k, dtypes)) return "";
  return " for compute dtype " + detail::DtypeList(dtypes & ~k.dtype_mask) + " (its kernel takes " +
         detail::DtypeList(k.dtype_mask) + ")";
}

// The host fallback, or strict mode's refusal, or the end of the line.
Status HostOrError(bp_context_t* ctx, const bp_op_t* op, int32_t backend, uint32_t dtypes,
                   const std::string& declined_msg, bool declined, Route* out) {
  const std::string& name = op->functional->name;
  const BackendSlot& slot = ctx->slots[backend];
  if (HostCanServe(ctx, op, backend)) {
    if (ctx->strict.load(std::memory_order_relaxed)) {
      return Error(BP_STATUS_FAILED_PRECONDITION,
                   "strict mode: " + name + " has no kernel on backend '" + slot.name + "'" +
                       MaskedNote(op, backend, dtypes) +
                       (declined ? " for this call (" + declined_msg + ")" : std::string()) +
                       " and the CPU fallback is disabled");
    }
    out->kind = RouteKind::kHostFallback;
    out->kernel = KernelEntry{};
    return Status::Ok();
  }
  if (declined) {
    return Error(BP_STATUS_UNIMPLEMENTED, declined_msg.empty()
                                              ? name + ": the kernel on backend '" + slot.name + "' declined the call"
                                              : declined_msg);
  }
  const bool is_host = backend == ctx->host_backend;
  return Error(BP_STATUS_UNIMPLEMENTED, name + ": not implemented for backend '" + slot.name + "'" +
                                            MaskedNote(op, backend, dtypes) +
                                            (is_host ? " (no kernel registered; is the cpu plugin loaded?)"
                                                     : " (no kernel, no backend fallback, no CPU kernel)"));
}

}  // namespace

Status DecideRoute(bp_context_t* ctx, const bp_op_t* op, int32_t backend, uint32_t dtypes, Route* out) {
  const KernelEntry& k = KernelFor(op, backend);
  if (k.fn != nullptr && KernelTakes(k, dtypes)) {
    out->kind = RouteKind::kNative;
    out->kernel = k;
    return Status::Ok();
  }
  const KernelEntry* fb = ctx->slots[backend].fallback.load(std::memory_order_acquire);
  if (fb != nullptr) {
    out->kind = RouteKind::kBackendFallback;
    out->kernel = *fb;
    return Status::Ok();
  }
  return HostOrError(ctx, op, backend, dtypes, std::string(), false, out);
}

Status NextRoute(bp_context_t* ctx, const bp_op_t* op, int32_t backend, const Route& declined,
                 const std::string& declined_msg, Route* out) {
  if (declined.kind == RouteKind::kNative) {
    const KernelEntry* fb = ctx->slots[backend].fallback.load(std::memory_order_acquire);
    if (fb != nullptr) {
      out->kind = RouteKind::kBackendFallback;
      out->kernel = *fb;
      return Status::Ok();
    }
  }
  return HostOrError(ctx, op, backend, 0, declined_msg, true, out);
}

int32_t DispatchKindOf(bp_context_t* ctx, const bp_op_t* op, int32_t backend) {
  const BackendSlot& slot = ctx->slots[backend];
  if (op->removed.load() || !slot.loaded.load(std::memory_order_acquire)) return BP_DISPATCH_NONE;
  if (op->kind == OpKind::kView || op->kind == OpKind::kComposite) return BP_DISPATCH_CORE;
  // copy_ without a kernel: the core moves the data itself.
  if (op->kind == OpKind::kCopy && KernelFor(op, backend).fn == nullptr) return BP_DISPATCH_CORE;
  Route route;
  if (!DecideRoute(ctx, op, backend, 0, &route).ok()) return BP_DISPATCH_NONE;
  switch (route.kind) {
    case RouteKind::kNative: return BP_DISPATCH_NATIVE;
    case RouteKind::kBackendFallback: return BP_DISPATCH_BACKEND_FALLBACK;
    case RouteKind::kHostFallback: return BP_DISPATCH_CPU_FALLBACK;
  }
  return BP_DISPATCH_NONE;
}

}  // namespace bp::core
