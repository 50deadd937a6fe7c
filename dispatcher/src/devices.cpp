// Backends, devices and the allocator queries of the C API.
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "api.h"
#include "context.h"
#include "graph.h"
#include "host_pinned.h"
#include "plugin.h"
#include "rcu.h"
#include "struct_size.h"
#include "tensor.h"

using namespace bp::core;

// A loaded backend's device state: its default stream, caching allocators
// (device memory and pinned host memory) and the capabilities read once.
std::unique_ptr<DeviceState> bp::core::MakeDevice(bp_context_t* ctx, BackendSlot* slot, const bp_backend_t& t, int32_t d) {
  auto dev = std::make_unique<DeviceState>();
  dev->slot = slot;
  dev->index = d;
  if (t.stream_get_default != nullptr) t.stream_get_default(t.backend_data, d, &dev->stream);
  // Read once at load: a device whose properties fail to answer is not unified.
  bp_device_properties_t props{};
  props.struct_size = sizeof(props);
  dev->unified = t.device_properties(t.backend_data, d, &props) == BP_STATUS_OK &&
                 (props.capabilities & BP_DEVICE_CAP_UNIFIED) != 0;
  RawMemory raw;
  raw.backend_data = t.backend_data;
  raw.device = d;
  raw.allocate = t.allocate;
  raw.deallocate = t.deallocate;
  raw.name = t.name;
  raw.copy_host_to_device = t.copy_host_to_device;
  raw.copy_device_to_host = t.copy_device_to_host;
  raw.stream = dev->stream;
  raw.event_create = t.event_create;
  raw.event_record = t.event_record;
  raw.event_query = t.event_query;
  raw.event_synchronize = t.event_synchronize;
  raw.event_destroy = t.event_destroy;
  raw.stream_synchronize = t.stream_synchronize;
  dev->default_stream.ctx = ctx;
  dev->default_stream.dev = dev.get();
  dev->default_stream.raw = dev->stream;
  dev->default_stream.is_default = true;
  dev->default_stream.id = StreamTable().Add(&dev->default_stream);
  dev->pinned = std::make_unique<CachingAllocator>(PinnedMemory(t, raw, dev.get()));
  raw.host_addressable = slot->host_memory;
  SetAllocatorLog(ctx, &raw);
  dev->allocator = std::make_unique<CachingAllocator>(raw);
  return dev;
}

namespace {
// The device entry points' last common step: under a ReadSection, `device`
// of `context` resolved for the entry point `fn`, then body(dev).
template <typename F>
Status OnDevice(bp_context_t* context, bp_device_t device, const char* fn, F&& body) {
  ReadSection rs;
  DeviceState* dev = nullptr;
  BP_RETURN_IF_ERROR(ResolveDevice(context, device, fn, &dev));
  return body(dev);
}

// The entry points that fill a caller's struct `out` (the struct_size rule,
// struct_size.h): `context` and `out` (named `out_name`) checked, then body().
template <typename T, typename F>
bp_status_t StructQuery(const char* fn, bp_context_t* context, T* out, const char* out_name, F&& body) {
  return ApiCall(fn, [&]() -> Status {
    BP_CHECK_ARG(context != nullptr && out != nullptr, fn,
                 std::string("context and ") + out_name + " must not be NULL");
    BP_RETURN_IF_ERROR(CheckStructSize(out, fn, out_name));
    return body();
  });
}
}  // namespace

extern "C" {

BP_API bp_status_t bp_backend_count(bp_context_t* context, int32_t* out_count) {
  return ApiCall("bp_backend_count", [&]() -> Status {
    BP_RETURN_IF_ERROR(CheckContext(context, "bp_backend_count"));
    BP_CHECK_ARG(out_count != nullptr, "bp_backend_count", "out_count is NULL");
    *out_count = context->num_backends.load(std::memory_order_acquire);
    return Status::Ok();
  });
}

// The read-only queries below never take context->mu (a plugin's init runs
// under it, and may hang): they read the published snapshots (context.h).

BP_API bp_status_t bp_backend_info(bp_context_t* context, int32_t backend, bp_backend_info_t* out_info) {
  return ApiCall("bp_backend_info", [&]() -> Status {
    const char* fn = "bp_backend_info";
    BP_RETURN_IF_ERROR(CheckContext(context, fn));
    BP_CHECK_ARG(out_info != nullptr, fn, "out_info is NULL");
    BP_RETURN_IF_ERROR(CheckStructSize(out_info, fn, "out_info"));
    BP_RETURN_IF_ERROR(CheckBackendId(context, backend, fn));
    ReadSection rs;
    const BackendSlot& s = context->slots[backend];
    const BackendInfoSnapshot* snap = s.info.load(std::memory_order_acquire);
    if (snap == nullptr) {
      return Error(BP_STATUS_UNAVAILABLE, std::string(fn) + ": backend " + std::to_string(backend) + " is loading");
    }
    bp_backend_info_t info{};
    info.name = snap->name.c_str();
    info.version = snap->version.c_str();
    info.plugin_path = snap->path.c_str();
    info.no_device_reason = snap->has_no_device_reason ? snap->no_device_reason.c_str() : nullptr;
    info.abi_version = snap->abi_version;
    info.device_type = snap->device_type;
    info.device_count = snap->device_count;
    info.backend = backend;
    info.loaded = s.loaded.load(std::memory_order_acquire) ? 1 : 0;
    CopyOutFitting(info, out_info);
    return Status::Ok();
  });
}

namespace {
// The loaded backend named `name` (-1 if none) and its device count; the
// caller holds a ReadSection.
int32_t FindLoadedBackend(bp_context_t* ctx, const std::string& name, int32_t* out_devices) {
  int32_t n = ctx->num_backends.load(std::memory_order_acquire);
  for (int32_t b = 0; b < n; ++b) {
    const BackendSlot& s = ctx->slots[b];
    if (!s.loaded.load(std::memory_order_acquire)) continue;
    const BackendInfoSnapshot* snap = s.info.load(std::memory_order_acquire);
    if (snap != nullptr && snap->name == name) {
      if (out_devices != nullptr) *out_devices = snap->device_count;
      return b;
    }
  }
  return -1;
}
}  // namespace

BP_API bp_status_t bp_backend_find(bp_context_t* context, const char* name, int32_t* out_backend) {
  return ApiCall("bp_backend_find", [&]() -> Status {
    BP_RETURN_IF_ERROR(CheckContext(context, "bp_backend_find"));
    BP_CHECK_ARG(name != nullptr && out_backend != nullptr, "bp_backend_find",
                 "name and out_backend must not be NULL");
    ReadSection rs;
    const int32_t b = FindLoadedBackend(context, name, nullptr);
    if (b < 0) return Error(BP_STATUS_NOT_FOUND, std::string("bp_backend_find: no loaded backend named '") + name + "'");
    *out_backend = b;
    return Status::Ok();
  });
}

BP_API bp_status_t bp_device_parse(bp_context_t* context, const char* spec, bp_device_t* out_device) {
  return ApiCall("bp_device_parse", [&]() -> Status {
    const char* fn = "bp_device_parse";
    BP_RETURN_IF_ERROR(CheckContext(context, fn));
    BP_CHECK_ARG(spec != nullptr && out_device != nullptr, fn, "spec and out_device must not be NULL");
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
    ReadSection rs;
    int32_t devices = 0;
    const int32_t backend = FindLoadedBackend(context, name, &devices);
    if (backend < 0) {
      return Error(BP_STATUS_NOT_FOUND, std::string(fn) + ": no loaded backend named '" + name + "'");
    }
    if (index >= devices) {
      return Error(BP_STATUS_NOT_FOUND, std::string(fn) + ": backend '" + name + "' has " + std::to_string(devices) +
                                            " device(s); '" + s + "' does not exist");
    }
    *out_device = bp_device_t{backend, index};
    return Status::Ok();
  });
}

BP_API bp_status_t bp_device_properties(bp_context_t* context, bp_device_t device,
                                        bp_device_properties_t* out_properties) {
  const char* fn = "bp_device_properties";
  return StructQuery(fn, context, out_properties, "out_properties", [&]() -> Status {
    ReadSection rs;
    DeviceState* dev = nullptr;
    Status st = ResolveDevice(context, device, fn, &dev);
    if (!st.ok()) return Error(st.code() == BP_STATUS_NOT_FOUND ? BP_STATUS_OUT_OF_RANGE : st.code(), st.message());
    bp_device_properties_t p{};
    p.struct_size = sizeof(p);
    const bp_backend_t& t = dev->slot->props_table;
    const uint64_t serial = g_last_error_serial;
    bp_status_t rc = t.device_properties(t.backend_data, device.index, &p);
    if (rc != BP_STATUS_OK) {
      return PluginFailure(std::string(fn) + ": backend '" + dev->slot->name + "' device_properties", rc, serial);
    }
    p.name[sizeof(p.name) - 1] = '\0';
    p.vendor[sizeof(p.vendor) - 1] = '\0';
    p.driver_version[sizeof(p.driver_version) - 1] = '\0';
    p.extensions[sizeof(p.extensions) - 1] = '\0';
    CopyOutFitting(p, out_properties);
    return Status::Ok();
  });
}

BP_API bp_status_t bp_device_synchronize(bp_context_t* context, bp_device_t device) {
  return ApiCall("bp_device_synchronize", [&]() -> Status {
    const char* fn = "bp_device_synchronize";
    BP_CHECK_ARG(context != nullptr, fn, "context is NULL");
    return OnDevice(context, device, fn, [&](DeviceState* dev) -> Status {
      const bp_backend_t& t = dev->slot->table;
      if (t.stream_synchronize != nullptr) {
        // Every stream: the default one, then those bp_stream_create made.
        std::vector<bp_stream_t> streams{dev->stream};
        {
          std::lock_guard<std::mutex> lock(dev->streams_mu);
          for (const bp_stream_handle_t* s : dev->streams) {
            if (s->capture.load(std::memory_order_acquire) != nullptr) {
              // As CUDA: a device-wide wait during a capture is illegal and
              // invalidates it (bp_graph_end_capture then names this call).
              const std::string why = std::string(fn) + " while a stream of device " + dev->slot->name + ":" +
                                      std::to_string(device.index) + " is being captured into a graph";
              InvalidateCapturesLocked(dev, why);
              return Error(BP_STATUS_FAILED_PRECONDITION, why + "; the capture is invalidated");
            }
            streams.push_back(s->raw);
          }
        }
        for (bp_stream_t s : streams) {
          const uint64_t serial = g_last_error_serial;
          bp_status_t rc = t.stream_synchronize(t.backend_data, device.index, s);
          if (rc != BP_STATUS_OK) {
            return PluginFailure(std::string(fn) + ": backend '" + dev->slot->name + "' stream_synchronize", rc, serial);
          }
        }
      }
      // Guard mode: every synchronize checks the canaries (an overrun is DATA_LOSS).
      Status st = dev->allocator->CheckGuards();
      if (!st.ok()) return Error(st.code(), std::string(fn) + ": " + st.message());
      return Status::Ok();
    });
  });
}

BP_API bp_status_t bp_allocator_stats(bp_context_t* context, bp_device_t device, bp_allocator_stats_t* out_stats) {
  const char* fn = "bp_allocator_stats";
  return StructQuery(fn, context, out_stats, "out_stats", [&]() -> Status {
    return OnDevice(context, device, fn, [&](DeviceState* dev) {
      CopyOutFitting(dev->allocator->Stats(), out_stats);
      return Status::Ok();
    });
  });
}

BP_API bp_status_t bp_allocator_reset_peak_stats(bp_context_t* context, bp_device_t device) {
  return ApiCall("bp_allocator_reset_peak_stats", [&]() -> Status {
    const char* fn = "bp_allocator_reset_peak_stats";
    BP_CHECK_ARG(context != nullptr, fn, "context is NULL");
    return OnDevice(context, device, fn, [&](DeviceState* dev) {
      dev->allocator->ResetPeak();
      return Status::Ok();
    });
  });
}

BP_API bp_status_t bp_allocator_empty_cache(bp_context_t* context, bp_device_t device) {
  return ApiCall("bp_allocator_empty_cache", [&]() -> Status {
    const char* fn = "bp_allocator_empty_cache";
    BP_CHECK_ARG(context != nullptr, fn, "context is NULL");
    return OnDevice(context, device, fn, [&](DeviceState* dev) {
      dev->allocator->EmptyCache();
      return Status::Ok();
    });
  });
}

BP_API bp_status_t bp_transfer_stats(bp_context_t* context, int32_t backend, bp_transfer_stats_t* out_stats) {
  const char* fn = "bp_transfer_stats";
  return StructQuery(fn, context, out_stats, "out_stats", [&]() -> Status {
    BP_RETURN_IF_ERROR(CheckBackendId(context, backend, fn));
    const TransferCounters& c = context->slots[backend].transfers;
    bp_transfer_stats_t stats{};
    stats.host_to_device_count = c.h2d_count.load(std::memory_order_relaxed);
    stats.host_to_device_bytes = c.h2d_bytes.load(std::memory_order_relaxed);
    stats.device_to_host_count = c.d2h_count.load(std::memory_order_relaxed);
    stats.device_to_host_bytes = c.d2h_bytes.load(std::memory_order_relaxed);
    stats.device_to_device_count = c.d2d_count.load(std::memory_order_relaxed);
    stats.device_to_device_bytes = c.d2d_bytes.load(std::memory_order_relaxed);
    stats.cast_count = c.cast_count.load(std::memory_order_relaxed);
    stats.cast_bytes = c.cast_bytes.load(std::memory_order_relaxed);
    CopyOutFitting(stats, out_stats);
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
