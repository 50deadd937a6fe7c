// The host fallback route, the core's side of it: what the dispatcher knows
// about a call routed to the host (fallback::HostSignature), the core
// routines fallback/ runs on (fallback::CoreHooks: copies, host views of a
// unified device's memory, the host call), and RunHostFallback's policy
// (warn once, count).
#include <string>
#include <utility>
#include <vector>

#include "graph.h"
#include "copy.h"
#include "dispatch.h"
#include "dispatch_internal.h"
#include "host_fallback.h"

namespace bp::core {
namespace {
using detail::SameDevice;

bp_status_t Report(const Status& st, std::string* message) {
  if (st.ok()) return BP_STATUS_OK;
  *message = st.message();
  return st.code();
}

// A host storage over `device_storage`'s memory, holding a reference to it.
Storage* NewHostAlias(bp_context_t* ctx, DeviceState* host, Storage* device_storage) {
  auto* s = new Storage();
  ctx->live_storages.fetch_add(1, std::memory_order_relaxed);
  s->ctx = ctx;
  s->device = bp_device_t{host->slot->id, host->index};
  s->dev = host;
  s->data = device_storage->data;
  s->nbytes = device_storage->nbytes;
  StorageRetain(device_storage);
  s->aliased = device_storage;
  return s;
}

bp_status_t CloneTo(bp_context_t* ctx, bp_tensor_t* t, bp_device_t device, bool write_only, bp_tensor_t** out,
                    std::string* message) {
  const Geometry& g = t->geo;
  bp_tensor_t* r = nullptr;
  Status st = EmptyTensor(ctx, device, g.ndim, g.sizes, g.dtype, "CPU fallback", &r);
  if (st.ok() && !write_only) {
    st = CopyInto(ctx, r, t);
    if (!st.ok()) TensorRelease(r);
  }
  if (st.ok()) *out = r;
  return Report(st, message);
}

bp_status_t CopyIntoHook(bp_context_t* ctx, bp_tensor_t* dst, bp_tensor_t* src, std::string* message) {
  return Report(CopyInto(ctx, dst, src), message);
}

bp_status_t HostViewsHook(bp_context_t* ctx, bp_device_t device, bp_tensor_t* const* tensors, int32_t n,
                          bp_tensor_t** views, std::string* message) {
  DeviceState* dev = nullptr;
  Status st = ResolveDevice(ctx, device, "CPU fallback", &dev);
  if (st.ok()) st = HostViews(ctx, dev, tensors, n, views);
  return Report(st, message);
}

bp_status_t RunHook(bp_context_t* ctx, const bp_op_t* op, const bp_value_t* args, int32_t num_args,
                    bp_tensor_t** results, int32_t num_results, bp_device_t fresh_on, std::string* message) {
  DeviceState* fresh = nullptr;
  if (fresh_on.backend != ctx->host_backend) {
    Status st = ResolveDevice(ctx, fresh_on, op->name.c_str(), &fresh);
    if (!st.ok()) return Report(st, message);
  }
  return Report(CallOp(ctx, op, args, num_args, results, num_results, nullptr, fresh), message);
}

const fallback::CoreHooks kHooks = {CloneTo, CopyIntoHook, HostViewsHook, RunHook};

// What the dispatcher knows of this call's signature, for PrepareHostFallback.
fallback::HostSignature SignatureOf(bp_context_t* ctx, const bp_op_t* op, const bp_value_t* args, int32_t num_args,
                                    DeviceState* dev) {
  fallback::HostSignature sig;
  sig.context = ctx;
  sig.op = op;
  sig.op_name = op->name.c_str();
  sig.hooks = &kHooks;
  sig.num_args = num_args;
  sig.num_returns = op->num_returns;
  sig.device = bp_device_t{dev->slot->id, dev->index};
  sig.host = bp_device_t{ctx->host_backend, 0};
  for (int32_t i = 0; i < num_args && i < fallback::kMaxFallbackArgs; ++i) {
    const bp_value_t& v = args[i];
    if (v.kind == BP_VALUE_TENSOR && v.u.tensor != nullptr && SameDevice(v.u.tensor->geo.device, sig.device)) {
      sig.device_args |= 1u << i;
    }
  }
  if (op->variant == OpVariant::kOut) {
    // out= tensors trail the functional arguments, one per result; their
    // data is never read.
    for (int32_t i = op->num_meta_args; i < op->num_args && i < fallback::kMaxFallbackArgs; ++i) {
      sig.write_only_args |= 1u << i;
      const int32_t k = i - op->num_meta_args;
      if (k < fallback::kMaxFallbackResults) sig.written_arg[k] = i;
    }
  } else if (op->mutated_arg >= 0) {
    sig.written_arg[0] = op->mutated_arg;
  }
  // Zero-copy needs outputs the core allocates on the device and a kernel
  // that writes into them: kernel operators with a meta function.
  sig.unified = dev->unified && op->kind == OpKind::kKernel && op->meta != nullptr;
  return sig;
}

}  // namespace

Status HostViews(bp_context_t* ctx, DeviceState* dev, bp_tensor_t* const* tensors, int32_t n, bp_tensor_t** views) {
  DeviceState* host = nullptr;
  BP_RETURN_IF_ERROR(ResolveDevice(ctx, bp_device_t{ctx->host_backend, 0}, "CPU fallback", &host));
  // Work queued on the device must be done before the host reads or writes.
  BP_RETURN_IF_ERROR(SynchronizeDevice(dev));
  for (int32_t i = 0; i < n; ++i) {
    // Views of one storage share one host storage, so the core's alias and
    // overlap checks (which compare storages) see them as they are.
    Storage* shared = nullptr;
    for (int32_t j = 0; j < i && shared == nullptr; ++j) {
      if (tensors[j]->storage == tensors[i]->storage) shared = views[j]->storage;
    }
    Geometry g = tensors[i]->geo;
    g.device = bp_device_t{host->slot->id, host->index};
    if (shared != nullptr) {
      views[i] = WrapStorage(ctx, shared, g);
    } else {
      Storage* s = NewHostAlias(ctx, host, tensors[i]->storage);
      views[i] = WrapStorage(ctx, s, g);
      StorageRelease(s);  // the view holds it
    }
  }
  return Status::Ok();
}

Status RunHostFallback(bp_context_t* ctx, const bp_op_t* op, const bp_value_t* args, int32_t num_args, DeviceState* dev,
                       bp_tensor_t** out_results, int32_t num_results) {
  if (bp_stream_handle_t* h = CapturingStream(dev)) {  // a graph's host node (graph.h)
    return CaptureHostFallback(ctx, h, op, args, num_args, dev, out_results, num_results);
  }
  const int32_t backend = dev->slot->id;
  bp_op_t* f = op->functional;
  // One warning per kernel (functional op): its variants share it, and the message names it.
  if (!f->fallback_warned[backend].exchange(true, std::memory_order_relaxed)) {
    LogMessage(ctx, BP_LOG_WARNING,
               "CPU fallback: " + f->name + " has no kernel on backend '" + dev->slot->name +
                   "'; running the CPU kernel " + (dev->unified ? "on the device's memory" : "with copies") +
                   " (reported once per operator and backend)");
  }
  fallback::HostFallbackPlan plan;
  std::string message;
  bp_status_t rc = fallback::PrepareHostFallback(SignatureOf(ctx, op, args, num_args, dev), &plan, &message);
  if (rc == BP_STATUS_OK) rc = fallback::RunHostFallbackPlan(plan, args, out_results, num_results, &message);
  if (rc != BP_STATUS_OK) return Error(rc, std::move(message));
  const_cast<bp_op_t*>(op)->fallback_count.Add(backend);
  return Status::Ok();
}

}  // namespace bp::core
