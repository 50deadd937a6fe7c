// Per-call kernel errors (ABI 1.2) with the thread-local fallback for older plugins.
#include "kernel_error.h"

#include <cstdio>
#include <cstring>

#include "backplane/backplane.h"

namespace bp::core {

bp_status_t CallFail(const bp_kernel_call_t* call, bp_status_t code, const char* message) {
  if (code == BP_STATUS_OK) return code;
  if (call == nullptr || call->error_state == nullptr) return SetLastError(code, message);
  auto* slot = static_cast<CallError*>(call->error_state);
  if (slot->claimed.exchange(true, std::memory_order_acq_rel)) return code;  // the first message wins
  slot->code = PluginStatus(code);
  if (message != nullptr) {
    slot->message = std::make_unique<std::string>(message, strnlen(message, BP_KERNEL_ERROR_MAX_MESSAGE));
  }
  return code;
}

void RearmCallError(bp_kernel_call_t* call) {
  auto* slot = static_cast<CallError*>(call->error_state);
  if (slot == nullptr) return;
  // The next kernel gets the outputs as the first one was handed them.
  for (int32_t k = 0; k < slot->num_outputs; ++k) {
    call->outputs[k]->data = slot->outputs[k].data;
    call->outputs[k]->byte_offset = slot->outputs[k].byte_offset;
    call->outputs[k]->device = slot->outputs[k].device;
  }
  slot->claimed.store(false, std::memory_order_relaxed);
  slot->code = BP_STATUS_OK;
  slot->message.reset();
  slot->tls_serial = g_last_error_serial;
}

std::string KernelMessage(const bp_kernel_call_t& call) {
  const auto* slot = static_cast<const CallError*>(call.error_state);
  if (slot == nullptr) return bp_last_error_message();
  // The kernel returned, and a kernel returns only after the threads it
  // reported from are done: the slot is complete.
  if (slot->claimed.load(std::memory_order_acquire) && slot->message && !slot->message->empty()) {
    return *slot->message;
  }
  if (g_last_error_serial != slot->tls_serial) return bp_last_error_message();
  return std::string();
}

Status KernelFailure(const bp_kernel_call_t& call, const std::string& op_name, const std::string& backend,
                     bp_status_t rc) {
  std::string msg = KernelMessage(call);
  const bp_status_t code = PluginStatus(rc);
  if (msg.empty()) {
    msg = op_name + ": kernel on backend '" + backend + "' failed with " +
          (code == rc ? std::string(bp_status_name(rc))
                      : "status " + std::to_string(static_cast<int>(rc)) + " (not a bp_status_t; reported as INTERNAL)");
  }
  return Error(code, std::move(msg));
}

Status OutputsReplaced(const bp_kernel_call_t& call, const std::string& op_name, const std::string& backend) {
  const auto* slot = static_cast<const CallError*>(call.error_state);
  std::string what = "its outputs";
  for (int32_t k = 0; k < slot->num_outputs; ++k) {
    const DLTensor* t = call.outputs[k];
    const CallError::Where& w = slot->outputs[k];
    auto where = [](const void* data, uint64_t offset, DLDevice d) {
      char buf[128];
      std::snprintf(buf, sizeof(buf), "data %p + %llu bytes on device type %d index %d", data,
                    static_cast<unsigned long long>(offset), static_cast<int>(d.device_type), d.device_id);
      return std::string(buf);
    };
    const std::string before = where(w.data, w.byte_offset, w.device);
    const std::string after = where(t->data, t->byte_offset, t->device);
    if (before != after) {
      what = "outputs[" + std::to_string(k) + "] from " + before + " to " + after;
      break;
    }
  }
  return Error(BP_STATUS_INTERNAL,
               op_name + ": kernel on backend '" + backend + "' returned OK but changed " + what +
                   "; a kernel must write into the outputs it is handed and never repoint them, so the result "
                   "was not written (the backend's kernel is at fault)");
}

}  // namespace bp::core
