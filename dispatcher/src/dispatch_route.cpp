// Executing a route past its first kernel: kernel errors, a declined call
// handed to the next route (the host fallback itself: host_route.cpp).
#include <string>

#include "graph.h"
#include "dispatch.h"
#include "dispatch_internal.h"

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
      if (bp_stream_handle_t* h = CapturingStream(dev)) BP_RETURN_IF_ERROR(RecordKernelCall(h, route.kernel.fn, *call));
      const_cast<bp_op_t*>(op)->fallback_count.Add(backend);
      return Status::Ok();
    }
  }
}

}  // namespace bp::core
