// Internal status handling (IREE style): a cheap value type, a thread-local
// last error for the C API, and RETURN_IF_ERROR.
#pragma once

#include <string>
#include <utility>

#include "backplane/types.h"

namespace bp::core {

class Status {
 public:
  Status() = default;
  Status(bp_status_t code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return Status(); }
  bool ok() const { return code_ == BP_STATUS_OK; }
  bp_status_t code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  bp_status_t code_ = BP_STATUS_OK;
  std::string message_;
};

// Builds an error Status; `message` should name the operator or function, the
// argument, what was expected and what came.
inline Status Error(bp_status_t code, std::string message) { return Status(code, std::move(message)); }

// Records `status` as this thread's last error (OK clears it) and returns its code.
bp_status_t SetLastError(const Status& status);
bp_status_t SetLastError(bp_status_t code, const char* message);

}  // namespace bp::core

#define BP_RETURN_IF_ERROR(expr)                    \
  do {                                              \
    ::bp::core::Status bp_status_tmp_ = (expr);     \
    if (!bp_status_tmp_.ok()) return bp_status_tmp_; \
  } while (0)
