// Status values inside the OpenCL plugin and the translation of OpenCL error
// codes into Backplane statuses whose messages carry the CL error name and
// the call that failed ("clCreateBuffer: CL_OUT_OF_RESOURCES").
#pragma once

#include <CL/cl.h>

#include <string>
#include <utility>

#include "backplane/types.h"

namespace bpcl {

class Status {
 public:
  Status() = default;
  Status(bp_status_t code, std::string message) : code_(code), message_(std::move(message)) {}
  bool ok() const { return code_ == BP_STATUS_OK; }
  bp_status_t code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  bp_status_t code_ = BP_STATUS_OK;
  std::string message_;
};

inline Status Ok() { return Status(); }

// "CL_OUT_OF_RESOURCES" for -5; "CL_UNKNOWN_ERROR(<n>)" for codes we do not know.
std::string ClErrorName(cl_int err);

// Maps an OpenCL error to a status code: allocation failures become
// OUT_OF_MEMORY, invalid values INVALID_ARGUMENT, the rest INTERNAL.
bp_status_t ClErrorToStatus(cl_int err);

// "<call>: <CL name>" as an error status; OK when err == CL_SUCCESS.
Status ClCheck(cl_int err, const char* call);

// `st` with its message prefixed "opencl <fn>: " (a slot's name); OK stays OK.
inline Status Prefixed(const char* fn, Status st) {
  if (st.ok()) return st;
  return Status(st.code(), std::string("opencl ") + fn + ": " + st.message());
}

}  // namespace bpcl

#define BPCL_RETURN_IF_ERROR(expr)      \
  do {                                  \
    ::bpcl::Status bpcl_st_ = (expr);   \
    if (!bpcl_st_.ok()) return bpcl_st_; \
  } while (0)

// Checks an OpenCL call and returns a Status naming it on failure.
#define BPCL_CL(call_expr, name) BPCL_RETURN_IF_ERROR(::bpcl::ClCheck((call_expr), name))
