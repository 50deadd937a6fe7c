// One Backplane context with the build tree's plugins, shared by a benchmark binary.
#pragma once

#include <backplane/backplane.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace bp_bench {

inline bp_context_t* Context() {
  static bp_context_t* ctx = [] {
    bp_context_options_t opts{};
    opts.struct_size = sizeof(opts);
    opts.discover_plugins = 1;
    opts.min_log_level = BP_LOG_ERROR;
    bp_context_t* c = nullptr;
    if (bp_context_create(&opts, &c) != BP_STATUS_OK) {
      std::fprintf(stderr, "bp_context_create: %s\n", bp_last_error_message());
      std::abort();
    }
    return c;
  }();
  return ctx;
}

inline bp_op_t* Op(const char* name) {
  bp_op_t* op = nullptr;
  if (bp_op_find(Context(), name, &op) != BP_STATUS_OK) {
    std::fprintf(stderr, "bp_op_find(%s): %s\n", name, bp_last_error_message());
    std::abort();
  }
  return op;
}

inline DLDataType Float32() { return DLDataType{kDLFloat, 32, 1}; }

// A float32 tensor of `sizes` on `device` (of `ctx`, default Context()),
// filled with small values.
inline bp_tensor_t* Filled(bp_device_t device, std::vector<int64_t> sizes, bp_context_t* ctx = nullptr) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  std::vector<float> host(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) host[static_cast<size_t>(i)] = static_cast<float>(i % 13) * 0.25f;
  bp_tensor_t* t = nullptr;
  if (bp_tensor_from_host(ctx != nullptr ? ctx : Context(), device, static_cast<int32_t>(sizes.size()), sizes.data(),
                          Float32(), host.data(), host.size() * sizeof(float), &t) != BP_STATUS_OK) {
    std::fprintf(stderr, "bp_tensor_from_host: %s\n", bp_last_error_message());
    std::abort();
  }
  return t;
}

inline bp_value_t TensorValue(bp_tensor_t* t) {
  bp_value_t v{};
  v.kind = BP_VALUE_TENSOR;
  v.u.tensor = t;
  return v;
}

inline bool DeviceOf(const char* spec, bp_device_t* out) {
  return bp_device_parse(Context(), spec, out) == BP_STATUS_OK;
}

}  // namespace bp_bench
