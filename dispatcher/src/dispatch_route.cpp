// Executing a route past its first kernel: kernel errors, a declined call
// handed to the next route, and the host fallback's hook into fallback/.
#include <string>

#include "dispatch.h"
#include "dispatch_internal.h"
#include "host_fallback.h"

namespace bp::core {

void NoteKernelOutputs(DeviceState* dev, const bp_op_t* op, const bp_kernel_call_t& call) {
  for (int32_t i = 0; i < call.num_outputs; ++i) {
    if (call.outputs[i] != nullptr) dev->allocator->NoteWriter(call.outputs[i]->data, op->name.c_str());
  }
}

Status ExecuteAfterFailure(bp_context_t* ctx, const bp_op_t* op, DeviceState* dev, Route route,
                           bp_kernel_call_t* call, bp_status_t rc, bool* to_host) {
  const int32_t backend = dev->slot->id;
  while (true) {
    if (rc != BP_STATUS_UNIMPLEMENTED) return KernelFailure(*call, op->name, dev->slot->name, rc);
    // The kernel declined this call before writing anything.
    const std::string declined_msg = KernelMessage(*call);
    Route next;
    BP_RETURN_IF_ERROR(NextRoute(ctx, op, backend, route, declined_msg, &next));
    if (next.kind == RouteKind::kHostFallback) {
      *to_host = true;
      return Status::Ok();
    }
    route = next;
    call->kernel_data = route.kernel.data;
    RearmCallError(call);
    rc = route.kernel.fn(call);
    if (rc == BP_STATUS_OK) {
      if (!OutputsKept(*call)) return OutputsReplaced(*call, op->name, dev->slot->name);
      const_cast<bp_op_t*>(op)->fallback_count[backend].fetch_add(1, std::memory_order_relaxed);
      return Status::Ok();
    }
  }
}

Status RunHostFallback(bp_context_t* ctx, const bp_op_t* op, const bp_value_t* args, int32_t num_args,
                       DeviceState* dev, bp_tensor_t** out_results, int32_t num_results) {
  const int32_t backend = dev->slot->id;
  bp_op_t* f = op->functional;
  // One warning per kernel (functional op): its variants share it, and the message names it.
  if (!f->fallback_warned[backend].exchange(true, std::memory_order_relaxed)) {
    LogMessage(ctx, BP_LOG_WARNING,
               "CPU fallback: " + f->name + " has no kernel on backend '" + dev->slot->name +
                   "'; running the CPU kernel with copies (reported once per operator and backend)");
  }
  fallback::HostCall call;
  call.context = ctx;
  call.op = op;
  call.args = args;
  call.num_args = num_args;
  if (op->variant == OpVariant::kOut) {
    // out= tensors trail the functional arguments; their data is never read.
    for (int32_t i = op->num_meta_args; i < op->num_args && i < 32; ++i) call.write_only_args |= 1u << i;
  }
  call.device = bp_device_t{backend, dev->index};
  call.host = bp_device_t{ctx->host_backend, 0};
  call.out_results = out_results;
  call.num_results = num_results;
  std::string message;
  bp_status_t rc = fallback::RunOnHost(call, &message);
  if (rc != BP_STATUS_OK) return Error(rc, message);
  const_cast<bp_op_t*>(op)->fallback_count[backend].fetch_add(1, std::memory_order_relaxed);
  return Status::Ok();
}

}  // namespace bp::core
