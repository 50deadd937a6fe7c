// Internal status handling (IREE style): a cheap value type, a thread-local
// last error for the C API, and RETURN_IF_ERROR.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "backplane/types.h"

namespace bp::core {

// The message lives on the heap and only errors carry one: an OK Status is a
// code and a null pointer, so creating, moving and destroying one on the
// success path of every call costs a few instructions (no string work).
class Status {
 public:
  Status() = default;
  Status(bp_status_t code, std::string message)
      : code_(code), message_(new std::string(std::move(message))) {}
  Status(const Status& o) : code_(o.code_), message_(o.message_ ? new std::string(*o.message_) : nullptr) {}
  Status(Status&& o) noexcept : code_(o.code_), message_(std::move(o.message_)) { o.code_ = BP_STATUS_OK; }
  Status& operator=(const Status& o) {
    if (this != &o) {
      code_ = o.code_;
      message_.reset(o.message_ ? new std::string(*o.message_) : nullptr);
    }
    return *this;
  }
  Status& operator=(Status&& o) noexcept {
    code_ = o.code_;
    message_ = std::move(o.message_);
    o.code_ = BP_STATUS_OK;
    return *this;
  }
  static Status Ok() { return Status(); }
  bool ok() const { return code_ == BP_STATUS_OK; }
  bp_status_t code() const { return code_; }
  const std::string& message() const { return message_ ? *message_ : EmptyMessage(); }

 private:
  static const std::string& EmptyMessage() {
    static const std::string* empty = new std::string();  // never destroyed: usable at exit
    return *empty;
  }
  bp_status_t code_ = BP_STATUS_OK;
  std::unique_ptr<std::string> message_;
};

// Builds an error Status; `message` should name the operator or function, the
// argument, what was expected and what came.
inline Status Error(bp_status_t code, std::string message) { return Status(code, std::move(message)); }

// Records `status` as this thread's last error (OK clears it) and returns its code.
bp_status_t SetLastError(const Status& status);
// The same from a C string (host->set_error): at most
// BP_KERNEL_ERROR_MAX_MESSAGE bytes of `message` are read and kept, and a code
// the ABI does not define is recorded (and returned) as INTERNAL.
bp_status_t SetLastError(bp_status_t code, const char* message);

// Plugin-reported errors (host->set_error, call->fail, a status a plugin
// function returned) as the core reports them:
// A status a plugin returned, as the core reports it: a code the ABI defines
// stays; any other value (a plugin returning 42 or -1) becomes INTERNAL.
bp_status_t PluginStatus(bp_status_t rc);
// The message this thread's last error holds if it was set after `serial`
// (g_last_error_serial read just before the plugin was called), else "": a
// plugin that failed without a message never inherits an earlier, unrelated
// error's text. Messages are capped at BP_KERNEL_ERROR_MAX_MESSAGE bytes by
// SetLastError(code, const char*), the entry point plugins reach.
std::string PluginMessageSince(uint64_t serial);
// The Status of plugin function `what` (e.g. "copy from host to device
// testdev:0") that returned `rc`: "<what> failed with <STATUS>: <message>", or, when the
// plugin left none, "<what> failed with <STATUS> (the plugin gave no message)".
Status PluginFailure(const std::string& what, bp_status_t rc, uint64_t serial);

// Counts this thread's SetLastError calls: a caller that remembers the value
// can tell whether the last error was set after that point (kernel_error.h).
// Reading it is one thread-local load: initial-exec, constant-initialized,
// so no TLS wrapper or __tls_get_addr call on the path of every kernel call.
inline thread_local uint64_t g_last_error_serial __attribute__((tls_model("initial-exec"))) = 0;

}  // namespace bp::core

#define BP_RETURN_IF_ERROR(expr)                    \
  do {                                              \
    ::bp::core::Status bp_status_tmp_ = (expr);     \
    if (!bp_status_tmp_.ok()) return bp_status_tmp_; \
  } while (0)
