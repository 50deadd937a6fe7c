// The host fallback (PyTorch's boxed cpu_fallback, as a library every backend
// shares): runs an operator that a device's backend cannot run on host
// tensors, with one transfer per tensor each way.
//
// This layer sees only the public C API (backplane/backplane.h): it moves
// tensors and calls the operator like any host application would. The
// dispatcher decides *when* it runs (route.h: no kernel, no backend fallback,
// not strict mode) and keeps the policy state (counters, warn-once); this
// layer decides *how*.
#pragma once

#include <string>

#include "backplane/backplane.h"

namespace bp::fallback {

// One operator call the dispatcher routed to the host. Everything is
// borrowed for the duration of RunOnHost.
struct HostCall {
  bp_context_t* context = nullptr;
  const bp_op_t* op = nullptr;        // the operator as called (functional, in-place or out= variant)
  const bp_value_t* args = nullptr;   // as passed to bp_op_call
  int32_t num_args = 0;
  // Bit i: argument i is an out= tensor whose data the operator never reads;
  // it gets an empty host twin of its sizes and dtype instead of a copy.
  uint32_t write_only_args = 0;
  bp_device_t device{};               // the device the call was dispatched to
  bp_device_t host{};                 // the host device the operator runs on
  bp_tensor_t** out_results = nullptr;  // as bp_op_call's; results land on `device`
  int32_t num_results = 0;
};

// Runs `call` on the host:
//   1. each tensor argument on `device` is copied to the host once (0-dim
//      host tensors, scalars and None stay as they are; an out= tensor gets a
//      fresh host tensor of its sizes and dtype, no copy);
//   2. the operator runs on the host through bp_op_call, so its meta function,
//      casts, broadcasting and kernel all run there;
//   3. each result is copied to `device` once: a result that is the host
//      twin of a device argument (in-place self, out=) is copied into that
//      argument, which is returned; any other becomes a fresh device tensor.
// Nothing on `device` is written unless the host call succeeded. Returns
// BP_STATUS_OK, or the failing call's status with *message set (naming the
// operator). Thread-safe as bp_op_call is.
bp_status_t RunOnHost(const HostCall& call, std::string* message);

}  // namespace bp::fallback
