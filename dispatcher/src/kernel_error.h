// How a failed kernel's message reaches the caller (ABI 1.2 per-call errors).
//
// Every kernel call carries a host-owned error slot: bp_kernel_call_t.fail
// writes into it and error_state points at it. When a kernel (or a backend
// fallback, or the CPU kernel of the CPU fallback) returns an error, the
// dispatcher builds the operator's Status from, in this order:
//   1. the message the kernel attached to the call with `fail` (ABI >= 1.2);
//   2. the thread-local message the kernel set with host->set_error during
//      this call (plugins negotiated at 1.0/1.1, or ones that still use it);
//      a message set before the call, by anything else, is never taken;
//   3. a generic "<op>: kernel on backend '<name>' failed with <STATUS>".
// Call sites: Attach before the kernel runs (Rearm before the same call
// struct runs another kernel), then KernelMessage / KernelFailure on error.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "backplane/backend.h"
#include "status.h"

namespace bp::core {

// The error slot of one kernel call. Lives on the dispatcher's stack for the
// duration of the call; the first `fail` wins (claimed), so a kernel's
// worker threads may report concurrently.
struct CallError {
  std::atomic<bool> claimed{false};
  bp_status_t code = BP_STATUS_OK;
  // Allocated only when a kernel fails with a message: an empty std::string
  // here cost stores on the success path of every operator call.
  std::unique_ptr<std::string> message;
  uint64_t tls_serial = 0;  // g_last_error_serial when (re)armed
  // Where each output lives, as handed to the kernel (the first kOutputs).
  // The DLTensors are writable through bp_kernel_call_t.outputs: a kernel
  // that repoints one (at a buffer of its own, at another device's memory)
  // and returns OK has written nowhere the caller sees. OutputsKept checks.
  static constexpr int32_t kOutputs = 4;
  struct Where {
    void* data;
    uint64_t byte_offset;
    DLDevice device;
  };
  Where outputs[kOutputs];
  int32_t num_outputs = 0;
};

// bp_kernel_call_t.fail as the host hands it to plugins.
bp_status_t CallFail(const bp_kernel_call_t* call, bp_status_t code, const char* message);

// Points call->fail / call->error_state at `slot` and arms it. Inline: runs
// on every operator call (two stores and one thread-local load).
inline void AttachCallError(bp_kernel_call_t* call, CallError* slot) {
  call->fail = CallFail;
  call->error_state = slot;
  slot->tls_serial = g_last_error_serial;
  const int32_t n = call->num_outputs < CallError::kOutputs ? call->num_outputs : CallError::kOutputs;
  for (int32_t k = 0; k < n; ++k) {
    const DLTensor* t = call->outputs[k];
    slot->outputs[k] = CallError::Where{t->data, t->byte_offset, t->device};
  }
  slot->num_outputs = n;
}

// True when the kernel left every output DLTensor's data, byte_offset and
// device as AttachCallError found them. Inline: runs after every kernel.
inline bool OutputsKept(const bp_kernel_call_t& call) {
  const auto* slot = static_cast<const CallError*>(call.error_state);
  for (int32_t k = 0; k < slot->num_outputs; ++k) {
    const DLTensor* t = call.outputs[k];
    const CallError::Where& w = slot->outputs[k];
    if (t->data != w.data || t->byte_offset != w.byte_offset || t->device.device_type != w.device.device_type ||
        t->device.device_id != w.device.device_id) {
      return false;
    }
  }
  return true;
}

// The error for a kernel that returned OK but repointed an output (!OutputsKept):
// INTERNAL naming the operator, the backend, the output and what changed.
Status OutputsReplaced(const bp_kernel_call_t& call, const std::string& op_name, const std::string& backend);

// Clears the call's slot before the same call struct (or a copy of it) runs
// another kernel, so an earlier kernel's message is not taken for the next
// one's. No-op for a call without a slot.
void RearmCallError(bp_kernel_call_t* call);

// The message a failed kernel left for `call` (rules 1 and 2 above), or ""
// when it left none. A call without a slot (error_state NULL) falls back to
// this thread's last error message.
std::string KernelMessage(const bp_kernel_call_t& call);

// The Status of a kernel that returned `rc` != OK for `call`: its message,
// or "<op_name>: kernel on backend '<backend>' failed with <STATUS>".
Status KernelFailure(const bp_kernel_call_t& call, const std::string& op_name, const std::string& backend,
                     bp_status_t rc);

}  // namespace bp::core
