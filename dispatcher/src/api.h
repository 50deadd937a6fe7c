// The C API edge: every entry point runs its body through ApiCall, which maps
// a Status and any C++ exception to a bp_status_t plus the thread's last error.
#pragma once

#include <exception>
#include <new>
#include <string>

#include "status.h"

namespace bp::core {

// The exception being handled, as a status and the thread's last error
// naming `function`. Call only from inside a catch block.
inline bp_status_t ApiException(const char* function) noexcept {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return SetLastError(Status(BP_STATUS_OUT_OF_MEMORY, std::string(function) + ": out of host memory"));
  } catch (const std::exception& e) {
    return SetLastError(Status(BP_STATUS_INTERNAL, std::string(function) + ": internal error: " + e.what()));
  } catch (...) {
    return SetLastError(Status(BP_STATUS_INTERNAL, std::string(function) + ": unknown internal error"));
  }
}

template <typename F>
bp_status_t ApiCall(const char* function, F&& body) noexcept {
  try {
    Status status = body();
    if (status.ok()) return BP_STATUS_OK;
    return SetLastError(status);
  } catch (...) {
    return ApiException(function);
  }
}

}  // namespace bp::core

#define BP_CHECK_ARG(cond, fn, what)                                                      \
  do {                                                                                    \
    if (!(cond))                                                                          \
      return ::bp::core::Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": " + what); \
  } while (0)
