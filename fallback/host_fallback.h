// The host fallback (PyTorch's boxed cpu_fallback, as a library every backend
// shares): runs an operator that a device's backend cannot run on the host,
// with one transfer per tensor each way, or none at all on a device whose
// memory the host can address (BP_DEVICE_CAP_UNIFIED).
//
// This layer sees only the public C API types (backplane/backplane.h) and
// what the dispatcher hands it in CoreHooks: it never re-enters the public
// API for its own bookkeeping. The dispatcher decides *when* it runs (route.h:
// no kernel, no backend fallback, not strict mode) and keeps the policy state
// (counters, warn-once); this layer decides *how*.
//
// Prepare once, run many: PrepareHostFallback resolves from the call's
// signature what is the same for every call of it (which arguments go to the
// host, which are written back, whether the device is unified);
// RunHostFallbackPlan binds one call's tensors and runs it.
#pragma once

#include <cstdint>
#include <string>

#include "backplane/backplane.h"

namespace bp::fallback {

// The core routines the fallback runs on (the dispatcher's, handed in, since
// fallback/ does not include dispatcher internals). Each returns a status
// and, on error, sets *message (naming the operator or the tensor); no
// thread-local error state is read or written.
struct CoreHooks {
  // A new tensor on `device` of t's sizes and dtype, holding a copy of t
  // (write_only: left uninitialized). *out is owned by the caller.
  bp_status_t (*clone_to)(bp_context_t* ctx, bp_tensor_t* t, bp_device_t device, bool write_only, bp_tensor_t** out,
                          std::string* message);
  // dst.copy_(src) across devices (the core's copy routine, not an operator call).
  bp_status_t (*copy_into)(bp_context_t* ctx, bp_tensor_t* dst, bp_tensor_t* src, std::string* message);
  // Host tensors over the same memory as `tensors` (all on `device`, whose
  // memory the host can address), after synchronizing its stream: views[i]
  // aliases tensors[i]; views of one storage share one host storage.
  bp_status_t (*host_views)(bp_context_t* ctx, bp_device_t device, bp_tensor_t* const* tensors, int32_t n,
                            bp_tensor_t** views, std::string* message);
  // Runs `op` on host tensors (its meta function, casts and the CPU kernel).
  // Fresh outputs are allocated on `fresh_on`: the host, or a unified device
  // whose memory the CPU kernel then writes through host views.
  bp_status_t (*run)(bp_context_t* ctx, const bp_op_t* op, const bp_value_t* args, int32_t num_args,
                     bp_tensor_t** results, int32_t num_results, bp_device_t fresh_on, std::string* message);
};

constexpr int32_t kMaxFallbackArgs = 32;
constexpr int32_t kMaxFallbackResults = 8;

// What the dispatcher knows about one call signature routed to the host.
struct HostSignature {
  bp_context_t* context = nullptr;
  const bp_op_t* op = nullptr;  // the operator as called (functional, in-place or out= variant)
  const char* op_name = "";     // for messages; borrowed for the plan's life
  const CoreHooks* hooks = nullptr;
  int32_t num_args = 0;
  int32_t num_returns = 0;
  // Bit i: argument i is a tensor on `device` (0-dim host tensors, scalars
  // and None stay as they are; tensor lists are looked at per call).
  uint32_t device_args = 0;
  // Bit i: argument i is an out= tensor whose data the operator never reads;
  // it gets an empty host twin instead of a copy.
  uint32_t write_only_args = 0;
  // written_arg[k]: the argument result k is written into (in-place self,
  // out=), or -1 for a fresh result.
  int32_t written_arg[kMaxFallbackResults] = {-1, -1, -1, -1, -1, -1, -1, -1};
  bp_device_t device{};  // the device the call was dispatched to
  bp_device_t host{};    // the host device the operator runs on
  // The host can address the device's memory and the operator can write
  // into outputs the core allocates (kernel operators with a meta function):
  // the zero-copy route.
  bool unified = false;
};

// A call signature's prepared host route (what a call plan stores).
struct HostFallbackPlan {
  HostSignature sig;
};

// Fills *plan from `sig`. Returns INVALID_ARGUMENT (with *message) when the
// signature is beyond what the fallback handles (too many arguments).
bp_status_t PrepareHostFallback(const HostSignature& sig, HostFallbackPlan* plan, std::string* message);

// Runs one call of the plan's signature on the host.
// Copying route:
//   1. each tensor argument on the device is copied to the host once (an
//      out= tensor gets an empty host twin instead);
//   2. the operator runs on the host (CoreHooks::run);
//   3. each result is copied to the device once: a result written into an
//      argument (in-place self, out=) is copied into that argument, which is
//      returned; any other becomes a fresh device tensor.
// Unified route: the device's tensors are wrapped as host views (its stream
// synchronized first), the CPU kernel reads and writes the device's memory
// through them, fresh outputs are allocated on the device; nothing is copied.
// Either way nothing on the device is written unless the host call's checks
// passed: the copying route writes back only after the call succeeded; the
// unified route relies on the kernel contract (a kernel checks its runtime
// values before writing, ops.yaml), as torch does. Returns BP_STATUS_OK, or
// the failing step's status with *message set (naming the operator).
// Thread-safe as bp_op_call is.
bp_status_t RunHostFallbackPlan(const HostFallbackPlan& plan, const bp_value_t* args, bp_tensor_t** out_results,
                                int32_t num_results, std::string* message);

}  // namespace bp::fallback
