// The operator call path (bp_op_call) and the core's own operations used by
// it: copy_ across devices, casts, composites.
#pragma once

#include "context.h"
#include "graph.h"
#include "copy.h"
#include "kernel_error.h"
#include "registry.h"
#include "route.h"
#include "tensor.h"

namespace bp::core {

// Runs `op` with boxed arguments: binds them, checks them, routes the call
// (`plan`'s route when it was decided for the call's device; `plan` may be
// nullptr) and runs it. Caller is inside a ReadSection.
// fresh_on (the host fallback's zero-copy route): a unified device on which
// a kernel operator's fresh outputs are allocated, the kernel writing them
// through host views (HostViews); nullptr: on the call's own device.
Status CallOp(bp_context_t* ctx, const bp_op_t* op, const bp_value_t* args, int32_t num_args, bp_tensor_t** out_results,
              int32_t num_results, const bp_call_plan_t* plan, DeviceState* fresh_on = nullptr);

// Host tensors over the memory of `tensors` (on `dev`, a unified device),
// after synchronizing its stream: views[i] aliases tensors[i] (and holds its
// storage); views of one storage share one host storage. Nothing is copied.
Status HostViews(bp_context_t* ctx, DeviceState* dev, bp_tensor_t* const* tensors, int32_t n, bp_tensor_t** views);

// A DLTensor describing `geo` over `data` on a device of DLPack type
// `device_type` (shape/strides point into geo); the one filler of every
// path. Backplane's dtypes are whole bytes.
inline void FillDLTensor(void* data, int32_t device_type, const Geometry& geo, DLTensor* out) {
  out->data = data;
  out->device.device_type = static_cast<DLDeviceType>(device_type);
  out->device.device_id = geo.device.index;
  out->ndim = geo.ndim;
  out->dtype = geo.dtype;
  out->shape = const_cast<int64_t*>(geo.sizes);
  out->strides = const_cast<int64_t*>(geo.strides);
  out->byte_offset = static_cast<uint64_t>(geo.offset) * (geo.dtype.bits / 8u);
}
inline void FillDLTensor(const Storage* storage, const Geometry& geo, DLTensor* out) {
  FillDLTensor(storage->data, storage->dev->slot->device_type, geo, out);
}

// The one place a kernel call is assembled, for every path (generic, fast,
// custom operators, copy_). The route fills kernel_data and backend_data.
// Every field is written, none zeroed first: zeroing the struct compiles to
// a `rep stos`, whose start-up cost showed on every call.
static_assert(sizeof(bp_kernel_call_t) == 11 * sizeof(void*), "MakeKernelCall must write every field");
static_assert(kMaxOutputs <= CallError::kOutputs, "AttachCallError records every output a call has");
inline bp_kernel_call_t MakeKernelCall(const bp_op_t* op, const DeviceState* dev, const bp_kernel_arg_t* args,
                                       int32_t num_args, DLTensor* const* outputs, int32_t num_outputs) {
  bp_kernel_call_t call;
  call.struct_size = sizeof(call);
  call.op_name = op->functional->name.c_str();
  call.args = args;
  call.num_args = num_args;
  call.num_outputs = num_outputs;
  call.outputs = outputs;
  call.stream = CurrentStream(dev);
  call.device_index = dev->index;
  call.reserved0 = 0;
  call.kernel_data = nullptr;
  call.backend_data = nullptr;
  call.fail = nullptr;
  call.error_state = nullptr;
  return call;
}

// Runs the operator on the host (fallback/host_fallback.h: one copy per
// tensor each way, none on a unified device), for a call whose route is
// kHostFallback: counts it and warns once per (operator, backend). `args` are
// the caller's. In host_route.cpp.
Status RunHostFallback(bp_context_t* ctx, const bp_op_t* op, const bp_value_t* args, int32_t num_args,
                       DeviceState* dev, bp_tensor_t** out_results, int32_t num_results);

// Guard mode: records `op` as the last writer of each output's block (so an
// overrun found later names the operator).
void NoteKernelOutputs(DeviceState* dev, const bp_op_t* op, const bp_kernel_call_t& call);

// ExecuteRoute's work after the route's kernel returned `rc` != OK: a kernel
// error, or the next route (the backend fallback runs here; the host fallback
// is left to the caller through *to_host).
Status ExecuteAfterFailure(bp_context_t* ctx, const bp_op_t* op, DeviceState* dev, Route route,
                           bp_kernel_call_t* call, bp_status_t rc, bool* to_host);

// Runs the route's kernel (kNative or kBackendFallback) for the built call
// and counts it: true when it ran. False when the next route must serve the
// call or it failed: the kernel declined it (UNIMPLEMENTED, nothing
// written) and the backend fallback failed too, *error says why; or the
// host fallback is next, *to_host is set (*error untouched) and the caller
// runs RunHostFallback from its original arguments.
// `cast`: the core cast arguments or results for this native kernel, so a
// call it serves counts as the cast route (its bytes: CountCastBytes).
// Inline: the common case (the kernel runs) is on the path of every call and
// makes no Status.
__attribute__((always_inline)) inline bool RunRouteKernel(bp_context_t* ctx, const bp_op_t* op, DeviceState* dev,
                                                          const Route& route, bp_kernel_call_t* call, bool* to_host,
                                                          Status* error, bool cast = false) {
  const int32_t backend = dev->slot->id;
  call->backend_data = dev->slot->props_table.backend_data;
  call->kernel_data = route.kernel.data;
  CallError slot;  // where the kernel's `fail` message lands (ABI 1.2)
  AttachCallError(call, &slot);
  if (__builtin_expect(dev->allocator->guarded(), 0)) NoteKernelOutputs(dev, op, *call);
  bp_status_t rc = route.kernel.fn(call);
  if (__builtin_expect(rc != BP_STATUS_OK, 0)) {
    *error = ExecuteAfterFailure(ctx, op, dev, route, call, rc, to_host);
    return error->ok() && !*to_host;  // the backend fallback served it
  }
  if (__builtin_expect(!OutputsKept(*call), 0)) {
    *error = OutputsReplaced(*call, op->name, dev->slot->name);
    return false;
  }
  if (__builtin_expect(t_num_current_streams != 0, 0)) {  // graph capture (graph.h)
    if (bp_stream_handle_t* h = CapturingStream(dev)) {
      *error = RecordKernelCall(h, route.kernel.fn, *call);
      if (!error->ok()) return false;
    }
  }
  bp_op_t* counted = const_cast<bp_op_t*>(op);
  if (__builtin_expect(cast, 0)) {
    counted->cast_count[backend].fetch_add(1, std::memory_order_relaxed);
    dev->slot->transfers.cast_count.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  (route.kind == RouteKind::kNative ? counted->native_count : counted->fallback_count).Add(backend);
  return true;
}

// RunRouteKernel as a Status: OK when the kernel ran or the host fallback
// is next (*to_host).
__attribute__((always_inline)) inline Status ExecuteRoute(bp_context_t* ctx, const bp_op_t* op, DeviceState* dev,
                                                          const Route& route, bp_kernel_call_t* call, bool* to_host,
                                                          bool cast = false) {
  Status error;
  if (RunRouteKernel(ctx, op, dev, route, call, to_host, &error, cast)) return Status::Ok();
  return error;
}

// Adds the host<->device bytes a cast-route call's casts moved to the
// operator's and the backend's cast counters.
inline void CountCastBytes(const bp_op_t* op, DeviceState* dev, uint64_t bytes) {
  const_cast<bp_op_t*>(op)->cast_bytes[dev->slot->id].fetch_add(bytes, std::memory_order_relaxed);
  dev->slot->transfers.cast_bytes.fetch_add(bytes, std::memory_order_relaxed);
}

}  // namespace bp::core
