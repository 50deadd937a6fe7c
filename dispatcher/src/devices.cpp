// Backends, devices and the allocator queries of the C API.
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "api.h"
#include "context.h"
#include "plugin.h"
#include "rcu.h"
#include "tensor.h"

using namespace bp::core;

extern "C" {

BP_API bp_status_t bp_backend_count(bp_context_t* context, int32_t* out_count) {
  return ApiCall("bp_backend_count", [&]() -> Status {
    BP_CHECK_ARG(context != nullptr && out_count != nullptr, "bp_backend_count", "context and out_count must not be NULL");
    *out_count = context->num_backends.load(std::memory_order_acquire);
    return Status::Ok();
  });
}

BP_API bp_status_t bp_backend_info(bp_context_t* context, int32_t backend, bp_backend_info_t* out_info) {
  return ApiCall("bp_backend_info", [&]() -> Status {
    const char* fn = "bp_backend_info";
    BP_CHECK_ARG(context != nullptr && out_info != nullptr, fn, "context and out_info must not be NULL");
    BP_CHECK_ARG(out_info->struct_size >= sizeof(bp_backend_info_t), fn, "out_info->struct_size is too small");
    BP_RETURN_IF_ERROR(CheckBackendId(context, backend, fn));
    std::lock_guard<std::mutex> lock(context->mu);
    const BackendSlot& s = context->slots[backend];
    bp_backend_info_t info{};
    info.name = s.name.c_str();
    info.version = s.version.c_str();
    info.plugin_path = s.path.c_str();
    info.no_device_reason = s.has_no_device_reason ? s.no_device_reason.c_str() : nullptr;
    info.abi_version = s.abi_version;
    info.device_type = s.device_type;
    info.device_count = s.device_count;
    info.backend = backend;
    info.loaded = s.loaded.load() ? 1 : 0;
    info.struct_size = out_info->struct_size;  // the caller's size stays (docs/abi.md); a longer tail is not touched
    *out_info = info;
    return Status::Ok();
  });
}

BP_API bp_status_t bp_backend_find(bp_context_t* context, const char* name, int32_t* out_backend) {
  return ApiCall("bp_backend_find", [&]() -> Status {
    BP_CHECK_ARG(context != nullptr && name != nullptr && out_backend != nullptr, "bp_backend_find",
                 "context, name and out_backend must not be NULL");
    std::lock_guard<std::mutex> lock(context->mu);
    int32_t n = context->num_backends.load(std::memory_order_acquire);
    for (int32_t b = 0; b < n; ++b) {
      if (context->slots[b].loaded.load() && context->slots[b].name == name) {
        *out_backend = b;
        return Status::Ok();
      }
    }
    return Error(BP_STATUS_NOT_FOUND, std::string("bp_backend_find: no loaded backend named '") + name + "'");
  });
}

BP_API bp_status_t bp_device_parse(bp_context_t* context, const char* spec, bp_device_t* out_device) {
  return ApiCall("bp_device_parse", [&]() -> Status {
    const char* fn = "bp_device_parse";
    BP_CHECK_ARG(context != nullptr && spec != nullptr && out_device != nullptr, fn,
                 "context, spec and out_device must not be NULL");
    std::string s = spec;
    std::string name = s;
    int32_t index = 0;
    size_t colon = s.find(':');
    if (colon != std::string::npos) {
      name = s.substr(0, colon);
      std::string num = s.substr(colon + 1);
      char* end = nullptr;
      long v = num.empty() ? -1 : std::strtol(num.c_str(), &end, 10);
      if (num.empty() || *end != '\0' || v < 0 || v > 1 << 20) {
        return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": '" + s +
                                                     "' is not a device (expected 'name' or 'name:index')");
      }
      index = static_cast<int32_t>(v);
    }
    int32_t backend = -1;
    {
      std::lock_guard<std::mutex> lock(context->mu);
      int32_t n = context->num_backends.load(std::memory_order_acquire);
      for (int32_t b = 0; b < n; ++b) {
        if (context->slots[b].loaded.load() && context->slots[b].name == name) backend = b;
      }
      if (backend < 0) {
        return Error(BP_STATUS_NOT_FOUND, std::string(fn) + ": no loaded backend named '" + name + "'");
      }
      if (index >= static_cast<int32_t>(context->slots[backend].devices.size())) {
        return Error(BP_STATUS_NOT_FOUND, std::string(fn) + ": backend '" + name + "' has " +
                                              std::to_string(context->slots[backend].devices.size()) +
                                              " device(s); '" + s + "' does not exist");
      }
    }
    *out_device = bp_device_t{backend, index};
    return Status::Ok();
  });
}

BP_API bp_status_t bp_device_properties(bp_context_t* context, bp_device_t device,
                                        bp_device_properties_t* out_properties) {
  return ApiCall("bp_device_properties", [&]() -> Status {
    const char* fn = "bp_device_properties";
    BP_CHECK_ARG(context != nullptr && out_properties != nullptr, fn, "context and out_properties must not be NULL");
    BP_CHECK_ARG(out_properties->struct_size >= sizeof(bp_device_properties_t), fn,
                 "out_properties->struct_size is " + std::to_string(out_properties->struct_size) + "; expected at least " +
                     std::to_string(sizeof(bp_device_properties_t)));
    ReadSection rs;
    DeviceState* dev = nullptr;
    Status st = ResolveDevice(context, device, fn, &dev);
    if (!st.ok()) return Error(st.code() == BP_STATUS_NOT_FOUND ? BP_STATUS_OUT_OF_RANGE : st.code(), st.message());
    bp_device_properties_t p{};
    p.struct_size = sizeof(p);
    const bp_backend_t& t = dev->slot->props_table;
    bp_status_t rc = t.device_properties(t.backend_data, device.index, &p);
    if (rc != BP_STATUS_OK) {
      return Error(rc, std::string(fn) + ": backend '" + dev->slot->name + "' failed: " + bp_last_error_message());
    }
    p.name[sizeof(p.name) - 1] = '\0';
    p.vendor[sizeof(p.vendor) - 1] = '\0';
    p.driver_version[sizeof(p.driver_version) - 1] = '\0';
    p.extensions[sizeof(p.extensions) - 1] = '\0';
    p.struct_size = out_properties->struct_size;  // the caller's size stays; a longer tail is not touched
    *out_properties = p;
    return Status::Ok();
  });
}

BP_API bp_status_t bp_device_synchronize(bp_context_t* context, bp_device_t device) {
  return ApiCall("bp_device_synchronize", [&]() -> Status {
    const char* fn = "bp_device_synchronize";
    BP_CHECK_ARG(context != nullptr, fn, "context is NULL");
    ReadSection rs;
    DeviceState* dev = nullptr;
    BP_RETURN_IF_ERROR(ResolveDevice(context, device, fn, &dev));
    const bp_backend_t& t = dev->slot->table;
    if (t.stream_synchronize == nullptr) return Status::Ok();
    bp_status_t rc = t.stream_synchronize(t.backend_data, device.index, dev->stream);
    if (rc != BP_STATUS_OK) {
      return Error(rc, std::string(fn) + ": backend '" + dev->slot->name + "' failed: " + bp_last_error_message());
    }
    return Status::Ok();
  });
}

BP_API bp_status_t bp_allocator_stats(bp_context_t* context, bp_device_t device, bp_allocator_stats_t* out_stats) {
  return ApiCall("bp_allocator_stats", [&]() -> Status {
    const char* fn = "bp_allocator_stats";
    BP_CHECK_ARG(context != nullptr && out_stats != nullptr, fn, "context and out_stats must not be NULL");
    BP_CHECK_ARG(out_stats->struct_size >= sizeof(bp_allocator_stats_t), fn, "out_stats->struct_size is too small");
    ReadSection rs;
    DeviceState* dev = nullptr;
    BP_RETURN_IF_ERROR(ResolveDevice(context, device, fn, &dev));
    bp_allocator_stats_t stats = dev->allocator->Stats();
    stats.struct_size = out_stats->struct_size;  // the caller's size stays; a longer tail is not touched
    *out_stats = stats;
    return Status::Ok();
  });
}

BP_API bp_status_t bp_allocator_empty_cache(bp_context_t* context, bp_device_t device) {
  return ApiCall("bp_allocator_empty_cache", [&]() -> Status {
    const char* fn = "bp_allocator_empty_cache";
    BP_CHECK_ARG(context != nullptr, fn, "context is NULL");
    ReadSection rs;
    DeviceState* dev = nullptr;
    BP_RETURN_IF_ERROR(ResolveDevice(context, device, fn, &dev));
    dev->allocator->EmptyCache();
    return Status::Ok();
  });
}

BP_API bp_status_t bp_transfer_stats(bp_context_t* context, int32_t backend, bp_transfer_stats_t* out_stats) {
  return ApiCall("bp_transfer_stats", [&]() -> Status {
    const char* fn = "bp_transfer_stats";
    BP_CHECK_ARG(context != nullptr && out_stats != nullptr, fn, "context and out_stats must not be NULL");
    BP_CHECK_ARG(out_stats->struct_size >= sizeof(bp_transfer_stats_t), fn,
                 "out_stats->struct_size is " + std::to_string(out_stats->struct_size) + "; expected at least " +
                     std::to_string(sizeof(bp_transfer_stats_t)));
    BP_RETURN_IF_ERROR(CheckBackendId(context, backend, fn));
    const TransferCounters& c = context->slots[backend].transfers;
    bp_transfer_stats_t stats{};
    stats.struct_size = out_stats->struct_size;  // the caller's size stays; a longer tail is not touched
    stats.host_to_device_count = c.h2d_count.load(std::memory_order_relaxed);
    stats.host_to_device_bytes = c.h2d_bytes.load(std::memory_order_relaxed);
    stats.device_to_host_count = c.d2h_count.load(std::memory_order_relaxed);
    stats.device_to_host_bytes = c.d2h_bytes.load(std::memory_order_relaxed);
    stats.device_to_device_count = c.d2d_count.load(std::memory_order_relaxed);
    stats.device_to_device_bytes = c.d2d_bytes.load(std::memory_order_relaxed);
    *out_stats = stats;
    return Status::Ok();
  });
}

BP_API bp_status_t bp_transfer_stats_reset(bp_context_t* context, int32_t backend) {
  return ApiCall("bp_transfer_stats_reset", [&]() -> Status {
    BP_CHECK_ARG(context != nullptr, "bp_transfer_stats_reset", "context is NULL");
    BP_RETURN_IF_ERROR(CheckBackendId(context, backend, "bp_transfer_stats_reset"));
    context->slots[backend].transfers.Reset();
    return Status::Ok();
  });
}

}  // extern "C"
