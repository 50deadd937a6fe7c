// Thread-local last error, status names, and the library version queries.
#include "status.h"

#include <cstring>
#include <string>

#include "backplane/backend.h"
#include "backplane/backplane.h"

namespace bp::core {
namespace {
struct LastError {
  bp_status_t code = BP_STATUS_OK;
  std::string message;
};
LastError& Last() {
  static thread_local LastError last;
  return last;
}
}  // namespace

bp_status_t SetLastError(const Status& status) {
  ++g_last_error_serial;
  LastError& last = Last();
  last.code = status.code();
  last.message = status.message();
  return status.code();
}

bp_status_t SetLastError(bp_status_t code, const char* message) {
  ++g_last_error_serial;
  LastError& last = Last();
  last.code = PluginStatus(code);
  if (message != nullptr) {
    last.message.assign(message, strnlen(message, BP_KERNEL_ERROR_MAX_MESSAGE));
  } else {
    last.message.clear();
  }
  return last.code;
}

bp_status_t PluginStatus(bp_status_t rc) {
  const int v = static_cast<int>(rc);
  return v >= BP_STATUS_OK && v <= BP_STATUS_INCOMPATIBLE_VERSION ? rc : BP_STATUS_INTERNAL;
}

std::string PluginMessageSince(uint64_t serial) {
  if (g_last_error_serial == serial) return std::string();
  return Last().message;
}

Status PluginFailure(const std::string& what, bp_status_t rc, uint64_t serial) {
  std::string msg = PluginMessageSince(serial);
  bp_status_t code = PluginStatus(rc);
  if (msg.empty()) {
    std::string got = code == rc ? std::string(bp_status_name(rc)) : "status " + std::to_string(static_cast<int>(rc)) +
                                                                          " (not a bp_status_t; reported as INTERNAL)";
    return Error(code, what + " failed with " + got + " (the plugin gave no message)");
  }
  return Error(code, what + " failed with " + bp_status_name(code) + ": " + msg);
}

}  // namespace bp::core

extern "C" {

BP_API uint32_t bp_abi_version(void) { return BP_ABI_VERSION; }

BP_API const char* bp_version_string(void) { return BACKPLANE_VERSION_STRING; }

BP_API bp_status_t bp_last_error_status(void) { return bp::core::Last().code; }

BP_API const char* bp_last_error_message(void) { return bp::core::Last().message.c_str(); }

BP_API const char* bp_status_name(bp_status_t status) {
  switch (status) {
    case BP_STATUS_OK: return "OK";
    case BP_STATUS_CANCELLED: return "CANCELLED";
    case BP_STATUS_UNKNOWN: return "UNKNOWN";
    case BP_STATUS_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case BP_STATUS_DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case BP_STATUS_NOT_FOUND: return "NOT_FOUND";
    case BP_STATUS_ALREADY_EXISTS: return "ALREADY_EXISTS";
    case BP_STATUS_PERMISSION_DENIED: return "PERMISSION_DENIED";
    case BP_STATUS_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    case BP_STATUS_FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case BP_STATUS_ABORTED: return "ABORTED";
    case BP_STATUS_OUT_OF_RANGE: return "OUT_OF_RANGE";
    case BP_STATUS_UNIMPLEMENTED: return "UNIMPLEMENTED";
    case BP_STATUS_INTERNAL: return "INTERNAL";
    case BP_STATUS_UNAVAILABLE: return "UNAVAILABLE";
    case BP_STATUS_DATA_LOSS: return "DATA_LOSS";
    case BP_STATUS_INCOMPATIBLE_VERSION: return "INCOMPATIBLE_VERSION";
    default: return "UNKNOWN_STATUS";
  }
}

}  // extern "C"
