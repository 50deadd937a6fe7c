// The plugin loader: dlopen, version negotiation, init with the host API,
// registration commit, discovery, and unload with deferred unmapping.
#include "plugin.h"

#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "api.h"
#include "rcu.h"
#include "registry.h"

namespace bp::core {
namespace {

std::string VersionString(uint32_t v) {
  return std::to_string(BP_ABI_VERSION_GET_MAJOR(v)) + "." + std::to_string(BP_ABI_VERSION_GET_MINOR(v));
}

bool ValidBackendName(const char* name) {
  if (name == nullptr || *name == '\0') return false;
  for (const char* p = name; *p; ++p) {
    if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_')) return false;
  }
  return true;
}

// ---- host API callbacks -------------------------------------------------------

bp_status_t HostSetError(bp_status_t code, const char* message) { return SetLastError(code, message); }

void HostLog(bp_registrar_t* registrar, int32_t level, const char* message) {
  if (registrar == nullptr || registrar->plugin == nullptr || message == nullptr) return;
  LogMessage(registrar->plugin->ctx, level, message);
}

Status CheckInInit(bp_registrar_t* r, const char* fn) {
  if (r == nullptr || r->plugin == nullptr) {
    return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": registrar is NULL");
  }
  if (!r->in_init || r->init_thread != std::this_thread::get_id()) {
    return Error(BP_STATUS_FAILED_PRECONDITION,
                 std::string(fn) + ": only valid during the plugin's init, on the thread that runs it");
  }
  return Status::Ok();
}

bp_status_t HostRegisterKernel(bp_registrar_t* r, const char* op_name, bp_kernel_fn kernel, void* data,
                               uint32_t flags) {
  return ApiCall("register_kernel", [&]() -> Status {
    BP_RETURN_IF_ERROR(CheckInInit(r, "register_kernel"));
    BP_CHECK_ARG(op_name != nullptr && kernel != nullptr, "register_kernel", "op_name and kernel must not be NULL");
    bp_op_t* op = FindOp(r->plugin->ctx, op_name);
    if (op == nullptr) {
      return Error(BP_STATUS_NOT_FOUND, std::string("register_kernel: unknown operator '") + op_name + "'");
    }
    op = op->functional;
    for (PendingKernel& k : r->kernels) {
      if (k.op == op) {
        if ((flags & BP_REGISTER_OVERRIDE) == 0) {
          return Error(BP_STATUS_ALREADY_EXISTS, "register_kernel: this plugin already registered a kernel for " +
                                                     op->name + "; pass BP_REGISTER_OVERRIDE to replace it");
        }
        k = PendingKernel{op, kernel, data, flags};
        return Status::Ok();
      }
    }
    r->kernels.push_back(PendingKernel{op, kernel, data, flags});
    return Status::Ok();
  });
}

bp_status_t HostRegisterFallback(bp_registrar_t* r, bp_kernel_fn fallback, void* data, uint32_t flags) {
  return ApiCall("register_fallback", [&]() -> Status {
    BP_RETURN_IF_ERROR(CheckInInit(r, "register_fallback"));
    BP_CHECK_ARG(fallback != nullptr, "register_fallback", "fallback is NULL");
    if (r->has_fallback && (flags & BP_REGISTER_OVERRIDE) == 0) {
      return Error(BP_STATUS_ALREADY_EXISTS, "register_fallback: this plugin already registered a fallback");
    }
    r->has_fallback = true;
    r->fallback = PendingKernel{nullptr, fallback, data, flags};
    return Status::Ok();
  });
}

bp_status_t HostDefineOp(bp_registrar_t* r, const char* schema, bp_kernel_fn cpu_kernel, void* cpu_data,
                         bp_meta_fn meta, void* meta_data) {
  return ApiCall("define_op", [&]() -> Status {
    BP_RETURN_IF_ERROR(CheckInInit(r, "define_op"));
    BP_CHECK_ARG(schema != nullptr && meta != nullptr, "define_op", "schema and meta must not be NULL");
    bp_context_t* ctx = r->plugin->ctx;  // ctx->mu is held by the loading thread
    bp_op_t* op = nullptr;
    BP_RETURN_IF_ERROR(DefineOpLocked(ctx, schema, meta, meta_data, r->plugin, &op));
    r->plugin->defined_ops.push_back(op);
    if (cpu_kernel != nullptr) {
      bp_registration_t* reg = nullptr;
      BP_RETURN_IF_ERROR(AddKernelLocked(ctx, op, 0, cpu_kernel, cpu_data, 0, r->plugin, &reg));
      r->plugin->registrations.push_back(reg);
    }
    return Status::Ok();
  });
}

// Removes everything a plugin registered or defined. Caller holds ctx->mu.
void UnregisterAllLocked(bp_plugin_t* p) {
  for (auto it = p->registrations.rbegin(); it != p->registrations.rend(); ++it) {
    RemoveRegistrationLocked(p->ctx, *it);
  }
  p->registrations.clear();
  for (bp_op_t* op : p->defined_ops) UndefineOpLocked(p->ctx, op);
  p->defined_ops.clear();
}

void Finalize(bp_plugin_t* p) {
  bp_context_t* ctx = p->ctx;
  if (p->backend > 0) {
    for (DeviceState* d : ctx->slots[p->backend].devices) d->allocator->EmptyCache();
  }
  if (p->table.shutdown != nullptr) p->table.shutdown(p->table.backend_data);
  if (p->handle != nullptr) dlclose(p->handle);
  p->handle = nullptr;
  // Publish last: a slot whose plugin is finalized may be reused by a later load.
  __atomic_store_n(&p->finalized, true, __ATOMIC_RELEASE);
}

Status LoadLocked(bp_context_t* ctx, const char* path, bp_plugin_t** out_plugin);

}  // namespace

void PluginRetain(bp_plugin_t* plugin) { plugin->refs.fetch_add(1, std::memory_order_relaxed); }

void PluginRelease(bp_plugin_t* plugin) {
  if (plugin->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) Finalize(plugin);
}

void InitHostApi(bp_host_api_t* api) {
  api->struct_size = sizeof(*api);
  api->abi_version = BP_ABI_VERSION;
  api->set_error = HostSetError;
  api->log = HostLog;
  api->register_kernel = HostRegisterKernel;
  api->register_fallback = HostRegisterFallback;
  api->define_op = HostDefineOp;
}

namespace {

// Picks the backend slot for a new plugin backend: a free slot of the same
// name (its previous plugin fully finalized) or a new one.
Status PickSlotLocked(bp_context_t* ctx, const std::string& name, int32_t* out) {
  int32_t n = ctx->num_backends.load(std::memory_order_relaxed);
  for (int32_t b = 1; b < n; ++b) {
    BackendSlot& s = ctx->slots[b];
    if (s.name != name) continue;
    if (s.loaded.load(std::memory_order_relaxed)) {
      return Error(BP_STATUS_ALREADY_EXISTS, "a backend named '" + name + "' is already loaded (from '" + s.path + "')");
    }
    if (s.plugin == nullptr || __atomic_load_n(&s.plugin->finalized, __ATOMIC_ACQUIRE)) {
      *out = b;
      return Status::Ok();
    }
  }
  if (n >= kMaxBackends) {
    return Error(BP_STATUS_OUT_OF_RANGE, "too many backend slots (" + std::to_string(kMaxBackends) + ")");
  }
  *out = n;
  return Status::Ok();
}

Status FailInit(bp_plugin_t* p, bp_registrar_t* r, Status st) {
  r->in_init = false;
  UnregisterAllLocked(p);
  return st;
}

Status LoadLocked(bp_context_t* ctx, const char* path, bp_plugin_t** out_plugin) {
  const std::string fn = std::string("bp_plugin_load('") + path + "')";
  struct stat sb;
  if (stat(path, &sb) != 0) return Error(BP_STATUS_NOT_FOUND, fn + ": no such file");
  if (!S_ISREG(sb.st_mode)) return Error(BP_STATUS_INVALID_ARGUMENT, fn + ": not a regular file");
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    return Error(BP_STATUS_INVALID_ARGUMENT, fn + ": not a loadable shared library: " + (err ? err : "dlopen failed"));
  }
  auto close_on_error = [&](Status st) {
    dlclose(handle);
    return st;
  };
  dlerror();
  void* sym = dlsym(handle, BP_PLUGIN_ENTRY_SYMBOL);
  if (sym == nullptr) {
    return close_on_error(Error(BP_STATUS_INVALID_ARGUMENT, fn + ": no symbol '" BP_PLUGIN_ENTRY_SYMBOL
                                                                 "' (not a Backplane plugin)"));
  }
  auto entry_fn = reinterpret_cast<bp_plugin_entry_fn>(sym);
  const bp_plugin_entry_t* entry = entry_fn();
  if (entry == nullptr || entry->struct_size < sizeof(bp_plugin_entry_t) || entry->negotiate == nullptr ||
      entry->init == nullptr) {
    return close_on_error(Error(BP_STATUS_INVALID_ARGUMENT,
                                fn + ": " BP_PLUGIN_ENTRY_SYMBOL "() returned an incomplete entry table"));
  }
  if (BP_ABI_VERSION_GET_MAJOR(entry->abi_version) != BP_ABI_VERSION_MAJOR) {
    return close_on_error(Error(BP_STATUS_INCOMPATIBLE_VERSION,
                                fn + ": plugin was built for ABI " + VersionString(entry->abi_version) +
                                    "; this libbackplane implements ABI " + VersionString(BP_ABI_VERSION) +
                                    " (the major versions must match)"));
  }
  uint32_t version = BP_ABI_VERSION;
  bp_status_t rc = entry->negotiate(&version);
  if (rc != BP_STATUS_OK || BP_ABI_VERSION_GET_MAJOR(version) != BP_ABI_VERSION_MAJOR || version > BP_ABI_VERSION) {
    return close_on_error(Error(BP_STATUS_INCOMPATIBLE_VERSION,
                                fn + ": ABI negotiation failed: host offered " + VersionString(BP_ABI_VERSION) +
                                    ", plugin answered " + VersionString(version) + " with status " +
                                    bp_status_name(rc)));
  }

  // A plugin built against a newer minor runs at this host's version: it must
  // not use what the newer minor added (its struct_size checks tell it). Say so.
  if (entry->abi_version > BP_ABI_VERSION) {
    LogMessage(ctx, BP_LOG_WARNING,
               fn + ": plugin built for ABI " + VersionString(entry->abi_version) +
                   ", newer than this libbackplane's ABI " + VersionString(BP_ABI_VERSION) + "; running it at ABI " +
                   VersionString(version) + " (what the newer minor added is not available)");
  }
  auto plugin = std::make_unique<bp_plugin_t>();
  bp_plugin_t* p = plugin.get();
  p->ctx = ctx;
  p->path = path;
  p->handle = handle;
  p->abi_version = version;
  p->table.struct_size = sizeof(bp_backend_t);
  bp_registrar_t& registrar = p->registrar;
  registrar.plugin = p;
  registrar.in_init = true;
  registrar.init_thread = std::this_thread::get_id();
  bp_plugin_init_args_t args{};
  args.struct_size = sizeof(args);
  args.abi_version = version;
  args.host = &ctx->host_api;
  args.registrar = &registrar;
  args.backend = &p->table;
  SetLastError(BP_STATUS_OK, "");
  rc = entry->init(&args);
  if (rc != BP_STATUS_OK) {
    std::string msg = bp_last_error_message();
    Status st = FailInit(p, &registrar,
                         Error(rc, fn + ": plugin init failed with " + bp_status_name(rc) +
                                       (msg.empty() ? std::string() : ": " + msg)));
    return close_on_error(st);
  }
  registrar.in_init = false;
  const std::vector<PendingKernel> pending = std::move(registrar.kernels);
  registrar.kernels.clear();
  const bp_backend_t& t = p->table;
  auto fail_after_init = [&](Status st) {
    UnregisterAllLocked(p);
    if (t.shutdown != nullptr) t.shutdown(t.backend_data);
    return close_on_error(st);
  };
  if (!ValidBackendName(t.name)) {
    return fail_after_init(Error(BP_STATUS_INVALID_ARGUMENT, fn + ": backend name must match [a-z0-9_]+, got '" +
                                                                 std::string(t.name ? t.name : "(null)") + "'"));
  }
  std::string name = t.name;
  if (t.device_count == nullptr || t.device_properties == nullptr) {
    return fail_after_init(Error(BP_STATUS_INVALID_ARGUMENT,
                                 fn + ": backend '" + name + "' lacks device_count or device_properties"));
  }
  // A plugin whose memory is host memory (a kDLCPU backend leaving allocate
  // to the core: the cpu plugin) attaches its kernels to the host slot, the
  // one every fallback runs on; any other backend gets a slot of its own.
  const bool is_host = t.device_type == kDLCPU && t.allocate == nullptr;
  if (!is_host && (t.allocate == nullptr || t.deallocate == nullptr || t.copy_host_to_device == nullptr ||
                  t.copy_device_to_host == nullptr)) {
    return fail_after_init(Error(BP_STATUS_INVALID_ARGUMENT,
                                 fn + ": backend '" + name + "' must provide allocate, deallocate and copies"));
  }
  int32_t count = 0;
  if (t.device_count(t.backend_data, &count) != BP_STATUS_OK || count < 0) count = 0;

  int32_t id = ctx->host_backend;
  if (is_host) {
    if (ctx->slots[id].plugin != nullptr) {
      return fail_after_init(Error(BP_STATUS_ALREADY_EXISTS, fn + ": backend '" + name +
                                                                 "' uses host memory, and a host-memory plugin is "
                                                                 "already loaded (from '" +
                                                                 ctx->slots[id].path + "')"));
    }
  } else {
    Status st = PickSlotLocked(ctx, name, &id);
    if (!st.ok()) return fail_after_init(Error(st.code(), fn + ": " + st.message()));
  }
  BackendSlot& slot = ctx->slots[id];
  // Commit the registrations on the slot.
  for (const PendingKernel& k : pending) {
    bp_registration_t* reg = nullptr;
    Status st = AddKernelLocked(ctx, k.op, id, k.fn, k.data, k.flags, p, &reg);
    if (!st.ok()) return fail_after_init(Error(st.code(), fn + ": " + st.message()));
    p->registrations.push_back(reg);
  }
  if (registrar.has_fallback) {
    bp_registration_t* reg = nullptr;
    Status st = AddFallbackLocked(ctx, id, registrar.fallback.fn, registrar.fallback.data, registrar.fallback.flags,
                                  p, &reg);
    if (!st.ok()) return fail_after_init(Error(st.code(), fn + ": " + st.message()));
    p->registrations.push_back(reg);
  }
  p->backend = id;
  p->loaded = true;
  if (is_host) {
    slot.plugin = p;
    slot.path = path;
    slot.version = t.version != nullptr ? t.version : "";
    slot.abi_version = version;
    slot.props_table = t;
    slot.has_no_device_reason = false;
  } else {
    slot.id = id;
    slot.host_memory = false;
    // A reused slot already has this name (PickSlotLocked matched it), and
    // callers may be reading it without the lock to word an "unloaded"
    // error: write it only into a fresh slot, not yet published.
    if (slot.name != name) slot.name = name;
    slot.version = t.version != nullptr ? t.version : "";
    slot.path = path;
    slot.abi_version = version;
    slot.device_type = t.device_type;
    slot.device_count = count;
    slot.has_no_device_reason = t.no_device_reason != nullptr;
    slot.no_device_reason = t.no_device_reason != nullptr ? t.no_device_reason : "";
    slot.table = t;
    slot.props_table = t;
    slot.plugin = p;
    slot.devices.clear();
    for (int32_t d = 0; d < count; ++d) {
      auto dev = std::make_unique<DeviceState>();
      dev->slot = &slot;
      dev->index = d;
      if (t.stream_get_default != nullptr) t.stream_get_default(t.backend_data, d, &dev->stream);
      RawMemory raw;
      raw.backend_data = t.backend_data;
      raw.device = d;
      raw.allocate = t.allocate;
      raw.deallocate = t.deallocate;
      raw.name = t.name;
      dev->allocator = std::make_unique<CachingAllocator>(raw);
      slot.devices.push_back(dev.get());
      ctx->device_states.push_back(std::move(dev));
    }
    slot.loaded.store(true, std::memory_order_release);
    if (id == ctx->num_backends.load(std::memory_order_relaxed)) {
      ctx->num_backends.store(id + 1, std::memory_order_release);
    }
  }
  ctx->plugins.push_back(std::move(plugin));
  if (out_plugin != nullptr) *out_plugin = p;
  return Status::Ok();
}

// Unload, phase 1 (under ctx->mu): unregister and mark the backend unloaded.
void DetachLocked(bp_plugin_t* p) {
  bp_context_t* ctx = p->ctx;
  UnregisterAllLocked(p);
  p->loaded = false;
  BackendSlot& slot = ctx->slots[p->backend];
  if (p->backend == ctx->host_backend) {
    slot.plugin = nullptr;
    slot.path = "";
    slot.version = BACKPLANE_VERSION_STRING;
    slot.props_table = slot.table;
  } else {
    slot.loaded.store(false, std::memory_order_release);
  }
}

bool IsLoadedPlugin(bp_context_t* ctx, bp_plugin_t* p) {
  for (auto& q : ctx->plugins) {
    if (q.get() == p) return p->loaded;
  }
  return false;
}

std::vector<std::string> SplitColon(const char* s) {
  std::vector<std::string> out;
  if (s == nullptr) return out;
  std::string cur;
  for (const char* c = s;; ++c) {
    if (*c == ':' || *c == '\0') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
      if (*c == '\0') break;
    } else {
      cur += *c;
    }
  }
  return out;
}

std::vector<std::string> ListPlugins(const std::string& dir) {
  std::vector<std::string> files;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return files;
  while (struct dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 6 && n.compare(0, 3, "lib") == 0 && n.compare(n.size() - 3, 3, ".so") == 0) {
      files.push_back(dir + "/" + n);
    }
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

void UnloadAllPlugins(bp_context_t* ctx) {
  std::vector<bp_plugin_t*> detached;
  {
    std::lock_guard<std::mutex> lock(ctx->mu);
    for (auto it = ctx->plugins.rbegin(); it != ctx->plugins.rend(); ++it) {
      if ((*it)->loaded) {
        DetachLocked(it->get());
        detached.push_back(it->get());
      }
    }
  }
  SynchronizeReaders();
  for (bp_plugin_t* p : detached) PluginRelease(p);
}

}  // namespace bp::core

using namespace bp::core;

extern "C" {

BP_API bp_status_t bp_plugin_load(bp_context_t* context, const char* path, bp_plugin_t** out_plugin) {
  return ApiCall("bp_plugin_load", [&]() -> Status {
    BP_CHECK_ARG(context != nullptr && path != nullptr, "bp_plugin_load", "context and path must not be NULL");
    std::lock_guard<std::mutex> lock(context->mu);
    return LoadLocked(context, path, out_plugin);
  });
}

BP_API bp_status_t bp_plugin_unload(bp_context_t* context, bp_plugin_t* plugin) {
  return ApiCall("bp_plugin_unload", [&]() -> Status {
    BP_CHECK_ARG(context != nullptr && plugin != nullptr, "bp_plugin_unload", "context and plugin must not be NULL");
    if (InReadSection()) {
      return Error(BP_STATUS_FAILED_PRECONDITION, "bp_plugin_unload: cannot unload from inside an operator call");
    }
    {
      std::lock_guard<std::mutex> lock(context->mu);
      if (!IsLoadedPlugin(context, plugin)) {
        return Error(BP_STATUS_INVALID_ARGUMENT,
                     "bp_plugin_unload: plugin is not loaded in this context (unloaded twice?)");
      }
      DetachLocked(plugin);
    }
    // No in-flight call may still run the plugin's code when its last
    // reference goes: wait for the calls that started before the detach.
    SynchronizeReaders();
    PluginRelease(plugin);
    return Status::Ok();
  });
}

BP_API bp_status_t bp_plugin_discover(bp_context_t* context, int32_t* out_loaded) {
  return ApiCall("bp_plugin_discover", [&]() -> Status {
    BP_CHECK_ARG(context != nullptr, "bp_plugin_discover", "context is NULL");
    std::vector<std::string> candidates;
    for (const std::string& f : SplitColon(secure_getenv("BACKPLANE_PLUGINS"))) candidates.push_back(f);
    for (const std::string& d : SplitColon(secure_getenv("BACKPLANE_PLUGIN_PATH"))) {
      for (const std::string& f : ListPlugins(d)) candidates.push_back(f);
    }
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&bp_plugin_discover), &info) != 0 && info.dli_fname != nullptr) {
      std::string lib = info.dli_fname;
      size_t slash = lib.rfind('/');
      std::string dir = slash == std::string::npos ? "." : lib.substr(0, slash);
      for (const std::string& f : ListPlugins(dir + "/backplane/plugins")) candidates.push_back(f);
    }
    int32_t loaded = 0;
    std::lock_guard<std::mutex> lock(context->mu);
    std::vector<std::string> seen;
    for (const std::string& f : candidates) {
      char* real = realpath(f.c_str(), nullptr);
      std::string key = real != nullptr ? real : f;
      std::free(real);
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
      seen.push_back(key);
      bool already = false;
      for (auto& p : context->plugins) {
        if (!p->loaded) continue;
        char* rp = realpath(p->path.c_str(), nullptr);
        if (rp != nullptr && key == rp) already = true;
        std::free(rp);
      }
      if (already) continue;
      Status st = LoadLocked(context, f.c_str(), nullptr);
      if (st.ok()) {
        ++loaded;
      } else if (st.code() == BP_STATUS_ALREADY_EXISTS) {
        LogMessage(context, BP_LOG_DEBUG, "plugin discovery: skipped " + st.message());
      } else {
        LogMessage(context, BP_LOG_WARNING, "plugin discovery: " + st.message());
      }
    }
    if (out_loaded != nullptr) *out_loaded = loaded;
    return Status::Ok();
  });
}

}  // extern "C"
