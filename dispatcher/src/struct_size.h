// The struct_size rule of docs/abi.md for the structs the C API reads or
// fills: a caller's older, smaller layout is accepted down to the first
// released layout of the struct, fields past the caller's struct_size are
// neither read nor written, and anything smaller is INVALID_ARGUMENT.
// Every query and every options struct goes through these, so the rule is
// decided here once.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "backplane/backplane.h"
#include "status.h"

namespace bp::core {

// Where a field ends: a struct that reaches this far has the field.
#define BP_END_OF(type, field) (offsetof(type, field) + sizeof(static_cast<type*>(nullptr)->field))

// The size of each struct's first released layout: the end of its last
// field in the ABI minor that introduced it. Fields appended later are not
// part of it, so this never changes.
template <typename T>
struct OldestLayout;
// One row per struct: its name and the last field of its first layout.
#define BP_OLDEST_LAYOUT(type, last_field)                       \
  template <>                                                    \
  struct OldestLayout<type> {                                    \
    static constexpr size_t kSize = BP_END_OF(type, last_field); \
  }
BP_OLDEST_LAYOUT(bp_context_options_t, min_log_level);          // ABI 1.0
BP_OLDEST_LAYOUT(bp_backend_info_t, loaded);                    // ABI 1.0
BP_OLDEST_LAYOUT(bp_device_properties_t, extensions);           // ABI 1.0
BP_OLDEST_LAYOUT(bp_allocator_stats_t, cache_hits);             // ABI 1.0
BP_OLDEST_LAYOUT(bp_op_info_t, num_returns);                    // ABI 1.0
BP_OLDEST_LAYOUT(bp_transfer_stats_t, device_to_device_bytes);  // ABI 1.2
BP_OLDEST_LAYOUT(bp_graph_info_t, num_host_nodes);              // ABI 1.4
#undef BP_OLDEST_LAYOUT

// OK when `s` (not NULL) is at least the struct's first released layout;
// otherwise INVALID_ARGUMENT naming the function, the argument, the size
// that came and the smallest accepted.
template <typename T>
Status CheckStructSize(const T* s, const char* fn, const char* arg) {
  if (s->struct_size >= OldestLayout<T>::kSize) return Status::Ok();
  return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": " + arg + "->struct_size is " +
                                               std::to_string(s->struct_size) + "; expected at least " +
                                               std::to_string(OldestLayout<T>::kSize) +
                                               " (the oldest layout of the struct)");
}

// Writes the fields of `value` that fit inside the caller's `out` (whose
// struct_size passed CheckStructSize); out->struct_size stays the caller's,
// and nothing past it is touched.
template <typename T>
void CopyOutFitting(const T& value, T* out) {
  const size_t caller_size = out->struct_size;
  std::memcpy(static_cast<void*>(out), &value, std::min(caller_size, sizeof(T)));
  out->struct_size = caller_size;
}

// The caller's struct `in` (checked) read into a value-initialized current
// layout: fields the caller's layout lacks keep their defaults.
template <typename T>
T CopyInFitting(const T& in) {
  T value{};
  std::memcpy(static_cast<void*>(&value), &in, std::min(in.struct_size, sizeof(T)));
  value.struct_size = sizeof(T);
  return value;
}

}  // namespace bp::core
