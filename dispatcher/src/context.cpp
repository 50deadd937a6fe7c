// Context creation and destruction, logging, and backend 0 (host memory).
#include "context.h"
#include "host_streams.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_set>

#include "api.h"
#include "call_plan.h"
#include "plugin.h"
#include "registry.h"
#include "struct_size.h"

namespace bp::core {
namespace {

bp_status_t HostAllocate(void*, int32_t, size_t nbytes, void** out_ptr) {
  size_t rounded = (nbytes + 63) / 64 * 64;
  if (rounded < nbytes) return SetLastError(BP_STATUS_OUT_OF_MEMORY, "cpu: allocation size overflows");
  void* p = rounded == 0 ? nullptr : std::aligned_alloc(64, rounded);
  if (p == nullptr && rounded != 0) {
    return SetLastError(BP_STATUS_OUT_OF_MEMORY,
                        ("cpu: out of host memory allocating " + std::to_string(nbytes) + " bytes").c_str());
  }
  *out_ptr = p;
  return BP_STATUS_OK;
}
bp_status_t HostDeallocate(void*, int32_t, void* ptr) {
  std::free(ptr);
  return BP_STATUS_OK;
}
bp_status_t HostH2D(void*, int32_t, const void* src, void* dst, size_t off, size_t n, bp_stream_t) {
  if (n) std::memcpy(static_cast<char*>(dst) + off, src, n);
  return BP_STATUS_OK;
}
bp_status_t HostD2H(void*, int32_t, const void* src, size_t off, void* dst, size_t n, bp_stream_t) {
  if (n) std::memcpy(dst, static_cast<const char*>(src) + off, n);
  return BP_STATUS_OK;
}
bp_status_t HostD2D(void*, int32_t, const void* src, size_t soff, void* dst, size_t doff, size_t n, bp_stream_t) {
  if (n) std::memmove(static_cast<char*>(dst) + doff, static_cast<const char*>(src) + soff, n);
  return BP_STATUS_OK;
}
bp_status_t HostStream(void*, int32_t, bp_stream_t* out) {
  *out = nullptr;
  return BP_STATUS_OK;
}
bp_status_t HostSync(void*, int32_t, bp_stream_t) { return BP_STATUS_OK; }
bp_status_t HostDeviceCount(void*, int32_t* out) {
  *out = 1;
  return BP_STATUS_OK;
}
bp_status_t HostProperties(void*, int32_t, bp_device_properties_t* p) {
  std::snprintf(p->name, sizeof(p->name), "host cpu");
  std::snprintf(p->vendor, sizeof(p->vendor), "host");
  std::snprintf(p->driver_version, sizeof(p->driver_version), "%s", BACKPLANE_VERSION_STRING);
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  p->total_memory_bytes = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
  p->capabilities = BP_DEVICE_CAP_FP64 | BP_DEVICE_CAP_FP16 | BP_DEVICE_CAP_BF16 | BP_DEVICE_CAP_UNIFIED;
  p->alignment_bytes = 64;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  p->compute_units = n > 0 ? static_cast<int32_t>(n) : 0;
  p->extensions[0] = '\0';
  return BP_STATUS_OK;
}

// The built-in host backend's table: the same bp_backend_t a CPU plugin
// fills, so the slot is described by one set of fields, as a plugin's is.
bp_backend_t HostTable() {
  bp_backend_t t{};
  t.struct_size = sizeof(t);
  t.name = "cpu";
  t.version = BACKPLANE_VERSION_STRING;
  t.device_type = kDLCPU;
  t.device_count = HostDeviceCount;
  t.device_properties = HostProperties;
  t.allocate = HostAllocate;
  t.deallocate = HostDeallocate;
  t.copy_host_to_device = HostH2D;
  t.copy_device_to_host = HostD2H;
  t.copy_device_to_device = HostD2D;
  t.stream_get_default = HostStream;
  t.stream_synchronize = HostSync;
  FillHostStreams(&t);
  return t;
}

// The live contexts (CheckContext). Never destroyed: usable at exit.
std::mutex& LiveMu() {
  static std::mutex* mu = new std::mutex();
  return *mu;
}
std::unordered_set<const bp_context_t*>& Live() {
  static auto* live = new std::unordered_set<const bp_context_t*>();
  return *live;
}

}  // namespace

Status CheckContext(bp_context_t* ctx, const char* fn) {
  if (ctx == nullptr) return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": context is NULL");
  std::lock_guard<std::mutex> lock(LiveMu());
  if (Live().count(ctx) == 0) {
    return Error(
        BP_STATUS_INVALID_ARGUMENT,
        std::string(fn) + ": context is not a live context (destroyed, or never created by bp_context_create)");
  }
  return CheckNotForked(ctx, fn);
}

void InitHostBackend(bp_context_t* ctx) {
  ctx->host_backend = 0;
  BackendSlot& s = ctx->slots[ctx->host_backend];
  const bp_backend_t& t = s.table = HostTable();
  s.id = ctx->host_backend;
  s.host_memory = true;
  s.name = t.name;
  s.version = t.version;
  s.device_type = t.device_type;
  s.abi_version = BP_ABI_VERSION;
  s.device_count = 1;
  s.props_table = t;
  std::unique_ptr<DeviceState> dev = MakeDevice(ctx, &s, t, 0);
  s.devices.push_back(dev.get());
  ctx->device_states.push_back(std::move(dev));
  PublishBackendInfoLocked(ctx, s);
  s.loaded.store(true, std::memory_order_release);
  RoutesChanged(ctx);
  ctx->num_backends.store(1, std::memory_order_release);
}

void RoutesChanged(bp_context_t* ctx) { ctx->route_generation.fetch_add(1, std::memory_order_seq_cst); }

void PublishBackendInfoLocked(bp_context_t* ctx, BackendSlot& slot) {
  auto fresh = std::make_unique<BackendInfoSnapshot>();
  fresh->name = slot.name;
  fresh->version = slot.version;
  fresh->path = slot.path;
  fresh->no_device_reason = slot.no_device_reason;
  fresh->has_no_device_reason = slot.has_no_device_reason;
  fresh->abi_version = slot.abi_version;
  fresh->device_type = slot.device_type;
  fresh->device_count = slot.device_count;
  ctx->retired_infos.reserve(ctx->retired_infos.size() + 1);  // the exchange below cannot fail halfway
  const BackendInfoSnapshot* old = slot.info.exchange(fresh.release(), std::memory_order_acq_rel);
  if (old != nullptr) ctx->retired_infos.push_back(old);
}

void SetAllocatorLog(bp_context_t* ctx, RawMemory* raw) {
  raw->log_user = ctx;
  raw->log = [](void* user, const std::string& message) {
    LogMessage(static_cast<bp_context_t*>(user), BP_LOG_WARNING, message);
  };
}

Status CheckBackendId(bp_context_t* ctx, int32_t backend, const char* fn) {
  int32_t n = ctx->num_backends.load(std::memory_order_acquire);
  if (backend < 0 || backend >= n) {
    return Error(BP_STATUS_OUT_OF_RANGE, std::string(fn) + ": backend id " + std::to_string(backend) +
                                             " is out of range [0, " + std::to_string(n) + ")");
  }
  return Status::Ok();
}

void LogMessage(bp_context_t* ctx, int32_t level, const std::string& message) {
  if (level < ctx->min_log_level) return;
  if (ctx->log_fn != nullptr) {
    ctx->log_fn(ctx->log_user_data, level, message.c_str());
    return;
  }
  static const char* kNames[] = {"debug", "info", "warning", "error"};
  const char* name = level >= 0 && level <= 3 ? kNames[level] : "log";
  std::fprintf(stderr, "[backplane %s] %s\n", name, message.c_str());
}

}  // namespace bp::core

bp_context_t::~bp_context_t() {
  for (const auto* t : retired_tables) delete t;
  for (auto* op : ops) (void)op;
  for (auto& op : all_ops) {
    delete op->table.load(std::memory_order_relaxed);
  }
  for (const auto* f : retired_fallbacks) delete f;
  for (auto& slot : slots) delete slot.fallback.load(std::memory_order_relaxed);
  for (const auto* i : retired_infos) delete i;
  for (auto& slot : slots) delete slot.info.load(std::memory_order_relaxed);
  bp::core::FreeCachedPlans(this);
}

using namespace bp::core;

extern "C" {

BP_API bp_status_t bp_context_create(const bp_context_options_t* options, bp_context_t** out_context) {
  return ApiCall("bp_context_create", [&]() -> Status {
    BP_CHECK_ARG(out_context != nullptr, "bp_context_create", "out_context is NULL");
    bp_context_options_t opts{};  // the caller's fields, defaults past its struct_size
    if (options != nullptr) {
      BP_RETURN_IF_ERROR(CheckStructSize(options, "bp_context_create", "options"));
      opts = CopyInFitting(*options);
      options = &opts;
    }
    auto ctx = std::make_unique<bp_context_t>();
    ctx->fork_epoch = ForkEpochForNewContext();
    ctx->creator_pid = static_cast<long>(getpid());
    if (options != nullptr) {
      ctx->strict.store(options->strict_fallback != 0);
      ctx->log_fn = options->log_callback;
      ctx->log_user_data = options->log_user_data;
      ctx->min_log_level = options->min_log_level;
    }
    const char* env = secure_getenv("BACKPLANE_STRICT");
    if (env != nullptr && std::strcmp(env, "1") == 0) ctx->strict.store(true);
    InitHostBackend(ctx.get());
    InitHostApi(&ctx->host_api);
    BP_RETURN_IF_ERROR(BuildCoreOps(ctx.get()));
    bp_context_t* raw = ctx.release();
    {
      std::lock_guard<std::mutex> lock(LiveMu());
      Live().insert(raw);
    }
    if (options != nullptr && options->discover_plugins) {
      int32_t loaded = 0;
      if (bp_plugin_discover(raw, &loaded) != BP_STATUS_OK) {
        LogMessage(raw, BP_LOG_WARNING, std::string("plugin discovery failed: ") + bp_last_error_message());
      }
    }
    *out_context = raw;
    return Status::Ok();
  });
}

BP_API void bp_context_destroy(bp_context_t* context) {
  if (context == nullptr) return;
  try {
    // Liveness first: anything else would read a context that may be freed.
    {
      std::lock_guard<std::mutex> lock(LiveMu());
      if (Live().count(context) == 0) {
        // Destroyed twice, or never created: touching it would read freed memory.
        SetLastError(BP_STATUS_INVALID_ARGUMENT,
                     "bp_context_destroy: not a live context (destroyed twice, or never created)");
        std::fprintf(stderr, "backplane: bp_context_destroy(%p): not a live context (destroyed twice?); ignored\n",
                     static_cast<void*>(context));
        return;
      }
      if (ContextForked(context)) {
        // A child of fork(): the plugins' threads and queues are the parent's;
        // tearing them down here would wait on threads that do not exist. The
        // copy is left to the process's exit (forgotten, never freed).
        Live().erase(context);
        SetLastError(ForkedContextError(context, "bp_context_destroy"));
        return;
      }
    }
    if (Status st = CheckNotLoading(context, "bp_context_destroy"); !st.ok()) {
      SetLastError(st);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(LiveMu());
      Live().erase(context);
    }
    context->alive->store(false, std::memory_order_release);  // explicit plans stop here
    UnloadAllPlugins(context);
    int64_t pairs = 0;
    for (const auto& dev : context->device_states) pairs += dev->allocator->LivePairs();
    int64_t live = context->live_tensors.load() + pairs;
    int64_t storages = context->live_storages.load() + pairs;
    if (live != 0 || storages != 0) {
      // Tensors still reference the context: leak it rather than free memory
      // in use, and say so through the log callback (stderr without one).
      LogMessage(context, BP_LOG_WARNING,
                 "bp_context_destroy: " + std::to_string(live) + " tensor(s) and " + std::to_string(storages) +
                     " storage(s) still alive (not released by the caller, or DLPack exports not yet deleted); "
                     "the context's memory is kept for them and leaks");
      return;
    }
    delete context;
  } catch (...) {
  }
}

BP_API bp_status_t bp_context_set_strict_fallback(bp_context_t* context, int32_t strict) {
  return ApiCall("bp_context_set_strict_fallback", [&]() -> Status {
    BP_CHECK_ARG(context != nullptr, "bp_context_set_strict_fallback", "context is NULL");
    context->strict.store(strict != 0);
    RoutesChanged(context);  // the host fallback route becomes an error, or back
    return Status::Ok();
  });
}

}  // extern "C"
