// The plugin loader: dlopen, version negotiation, init with the host API,
// registration commit, discovery, and unload with deferred unmapping.
#include "plugin.h"

#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
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
  if (name == nullptr || *name == '\0' || NameTooLong(name)) return false;
  for (const char* p = name; *p; ++p) {
    if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_')) return false;
  }
  return true;
}

// Removes everything a plugin registered or defined. Caller holds ctx->mu.
void UnregisterAllLocked(bp_plugin_t* p) {
  for (auto it = p->registrations.rbegin(); it != p->registrations.rend(); ++it) {
    RemoveRegistrationLocked(p->ctx, *it);
  }
  p->registrations.clear();
  UndefineOpsLocked(p->ctx, p->defined_ops);
  p->defined_ops.clear();
  p->defined_by_name.clear();
}

void Finalize(bp_plugin_t* p) {
  bp_context_t* ctx = p->ctx;
  if (p->backend > 0) {
    for (DeviceState* d : ctx->slots[p->backend].devices) {
      d->allocator->EmptyCache();
      d->pinned->EmptyCache();  // the plugin's host_deallocate, while it is loaded
    }
  }
  if (p->table.shutdown != nullptr) p->table.shutdown(p->table.backend_data);
  if (p->handle != nullptr) dlclose(p->handle);
  p->handle = nullptr;
  // Publish last: a slot whose plugin is finalized may be reused by a later load.
  __atomic_store_n(&p->finalized, true, __ATOMIC_RELEASE);
}

}  // namespace

void PluginRetain(bp_plugin_t* plugin) { plugin->refs.fetch_add(1, std::memory_order_relaxed); }

void PluginRelease(bp_plugin_t* plugin) {
  if (plugin->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) Finalize(plugin);
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
      return Error(BP_STATUS_ALREADY_EXISTS,
                   "a backend named '" + name + "' is already loaded (from '" + s.path + "')");
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

// Frees what earlier loads and unloads left for no one (item: a load/unload
// cycle must not grow the context): plugin objects whose library is shut
// down, and the device states of the slot about to be reused. Caller holds
// ctx->mu; nothing reachable by a reader is freed (a finalized plugin has no
// storage left, and its slot is unloaded since before SynchronizeReaders).
void ReclaimFinalizedLocked(bp_context_t* ctx, int32_t reused_slot) {
  if (reused_slot > 0) {
    BackendSlot& slot = ctx->slots[reused_slot];
    auto& states = ctx->device_states;
    states.erase(std::remove_if(states.begin(), states.end(),
                                [&](const std::unique_ptr<DeviceState>& d) { return d->slot == &slot; }),
                 states.end());
    slot.devices.clear();
    RoutesChanged(ctx);
  }
  auto& plugins = ctx->plugins;
  for (auto it = plugins.begin(); it != plugins.end();) {
    bp_plugin_t* q = it->get();
    if (q->loaded || !__atomic_load_n(&q->finalized, __ATOMIC_ACQUIRE)) {
      ++it;
      continue;
    }
    for (BackendSlot& slot : ctx->slots) {
      if (slot.plugin == q) slot.plugin = nullptr;
    }
    it = plugins.erase(it);
  }
}

// Undoes a load that failed after init ran: its registrations, definitions
// and library. Returns `st`. When undoing itself fails (out of memory while
// republishing a table), the plugin and its library are kept, unloaded but
// mapped, so nothing is left pointing at freed memory.
Status FailLoad(bp_plugin_t* p, bool init_ran, Status st) {
  bp_context_t* ctx = p->ctx;
  p->registrar.in_init = false;
  p->loaded = false;
  try {
    UnregisterAllLocked(p);
  } catch (...) {
    LogMessage(ctx, BP_LOG_ERROR,
               "plugin load of '" + p->path + "' failed and could not be fully undone (" + st.message() +
                   "); the library stays mapped");
    return st;
  }
  if (init_ran && p->table.shutdown != nullptr) p->table.shutdown(p->table.backend_data);
  dlclose(p->handle);
  p->handle = nullptr;
  auto& regs = ctx->registrations;  // inactive now; nothing else refers to them
  regs.erase(std::remove_if(regs.begin(), regs.end(),
                            [&](const std::unique_ptr<bp_registration_t>& r) { return r->owner == p; }),
             regs.end());
  auto& plugins = ctx->plugins;
  plugins.erase(std::remove_if(plugins.begin(), plugins.end(),
                               [&](const std::unique_ptr<bp_plugin_t>& q) { return q.get() == p; }),
                plugins.end());
  return st;
}

}  // namespace

namespace {

// The steps after a successful init, all of which may fail (a status or a
// thrown bad_alloc): checks, device states, the slot, registrations, and the
// operators the plugin defined. Nothing becomes visible to readers until the
// last lines: the slot's `loaded` flag and the operator lists.
Status CommitLocked(bp_context_t* ctx, bp_plugin_t* p, const std::string& fn) {
  bp_registrar_t& registrar = p->registrar;
  const bp_backend_t& t = p->table;
  if (!ValidBackendName(t.name)) {
    return Error(
        BP_STATUS_INVALID_ARGUMENT,
        fn + ": backend name must match [a-z0-9_]+, got '" +
            (t.name ? Capped(t.name, BP_MAX_NAME_LENGTH) + (NameTooLong(t.name) ? "..." : "") : std::string("(null)")) +
            "' (at most BP_MAX_NAME_LENGTH = " + std::to_string(BP_MAX_NAME_LENGTH) + " bytes)");
  }
  std::string name = t.name;
  if (!registrar.load_error.empty()) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 fn + ": plugin '" + p->path + "' (backend '" + name + "') is refused: " + registrar.load_error);
  }
  if (t.device_count == nullptr || t.device_properties == nullptr) {
    return Error(BP_STATUS_INVALID_ARGUMENT, fn + ": backend '" + name + "' lacks device_count or device_properties");
  }
  // A plugin whose memory is host memory (a kDLCPU backend leaving allocate
  // to the core: the cpu plugin) attaches its kernels to the host slot, the
  // one every fallback runs on; any other backend gets a slot of its own.
  const bool is_host = t.device_type == kDLCPU && t.allocate == nullptr;
  if (!is_host && (t.allocate == nullptr || t.deallocate == nullptr || t.copy_host_to_device == nullptr ||
                   t.copy_device_to_host == nullptr)) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 fn + ": backend '" + name + "' must provide allocate, deallocate and copies");
  }
  int32_t count = 0;
  const uint64_t serial = g_last_error_serial;
  bp_status_t rc = t.device_count(t.backend_data, &count);
  if (rc != BP_STATUS_OK) {
    LogMessage(
        ctx, BP_LOG_WARNING,
        PluginFailure(fn + ": backend '" + name + "' device_count", rc, serial).message() + "; loaded with no device");
    count = 0;
  } else if (count < 0 || count > BP_MAX_DEVICES) {
    return Error(BP_STATUS_INVALID_ARGUMENT, fn + ": backend '" + name + "' reports " + std::to_string(count) +
                                                 " devices; expected 0 to BP_MAX_DEVICES (" +
                                                 std::to_string(BP_MAX_DEVICES) + ")");
  }
  int32_t id = ctx->host_backend;
  if (is_host) {
    if (ctx->slots[id].plugin != nullptr) {
      return Error(BP_STATUS_ALREADY_EXISTS, fn + ": backend '" + name +
                                                 "' uses host memory, and a host-memory plugin is already loaded "
                                                 "(from '" +
                                                 ctx->slots[id].path + "')");
    }
  } else {
    Status st = PickSlotLocked(ctx, name, &id);
    if (!st.ok()) return Error(st.code(), fn + ": " + st.message());
  }
  BackendSlot& slot = ctx->slots[id];
  ReclaimFinalizedLocked(ctx, !is_host && id < ctx->num_backends.load(std::memory_order_relaxed) ? id : -1);
  // Everything that allocates, before anything is published.
  std::vector<std::unique_ptr<DeviceState>> devices;
  if (!is_host) {
    devices.reserve(static_cast<size_t>(count));
    for (int32_t d = 0; d < count; ++d) devices.push_back(MakeDevice(ctx, &slot, t, d));
    ctx->device_states.reserve(ctx->device_states.size() + devices.size());
  }
  const std::string version = Capped(t.version, BP_KERNEL_ERROR_MAX_MESSAGE);
  const std::string reason = Capped(t.no_device_reason, BP_KERNEL_ERROR_MAX_MESSAGE);
  for (const bp_op_t* op : p->defined_ops) {
    Status st = CheckOwnNamespace(t.name, op->schema);
    if (!st.ok()) return Error(st.code(), fn + ": " + st.message());
  }
  // Registrations: kernels are reachable only through listed operators and
  // loaded slots, so publishing them before the slot is loaded is invisible.
  const std::vector<PendingKernel> pending = std::move(registrar.kernels);
  registrar.kernels.clear();
  for (const PendingKernel& k : pending) {
    bp_registration_t* reg = nullptr;
    Status st = AddKernelLocked(ctx, k.op, id, k.fn, k.data, k.flags, p, &reg, k.dtype_mask);
    if (!st.ok()) return Error(st.code(), fn + ": " + st.message());
    p->registrations.push_back(reg);
  }
  if (registrar.has_fallback) {
    bp_registration_t* reg = nullptr;
    Status st =
        AddFallbackLocked(ctx, id, registrar.fallback.fn, registrar.fallback.data, registrar.fallback.flags, p, &reg);
    if (!st.ok()) return Error(st.code(), fn + ": " + st.message());
    p->registrations.push_back(reg);
  }
  for (bp_op_t* op : p->defined_ops) ListOpLocked(ctx, op);
  // Publish the slot: from here nothing fails but the snapshot's allocation,
  // done first.
  p->backend = id;
  if (is_host) {
    slot.path = p->path;
    slot.version = version;
    slot.abi_version = p->abi_version;
    PublishBackendInfoLocked(ctx, slot);
    slot.plugin = p;
    slot.props_table = t;
    slot.has_no_device_reason = false;
  } else {
    slot.id = id;
    slot.host_memory = false;
    // A reused slot already has this name (PickSlotLocked matched it).
    if (slot.name != name) slot.name = name;
    slot.version = version;
    slot.path = p->path;
    slot.abi_version = p->abi_version;
    slot.device_type = t.device_type;
    slot.device_count = count;
    slot.has_no_device_reason = t.no_device_reason != nullptr;
    slot.no_device_reason = reason;
    PublishBackendInfoLocked(ctx, slot);
    slot.table = t;
    slot.props_table = t;
    slot.plugin = p;
    slot.devices.clear();
    for (auto& dev : devices) {
      slot.devices.push_back(dev.get());
      ctx->device_states.push_back(std::move(dev));  // capacity reserved above
    }
    slot.loaded.store(true, std::memory_order_release);
    RoutesChanged(ctx);
    if (id == ctx->num_backends.load(std::memory_order_relaxed)) {
      ctx->num_backends.store(id + 1, std::memory_order_release);
    }
  }
  p->loaded = true;
  return Status::Ok();
}

}  // namespace

namespace {

// The load this thread is running (LoadLocked), from the first line to the
// last: any plugin code it runs (constructors at dlopen, entry, negotiate,
// init, shutdown on failure) runs with ctx->mu held, so a call back into a
// writer entry point of the same context would deadlock (LockWriter).
struct LoadScope {
  bp_context_t* ctx;
  const std::string* path;
  LoadScope* prev;
};
thread_local LoadScope* t_load = nullptr;

class EnterLoad {
 public:
  EnterLoad(bp_context_t* ctx, const std::string* path) : scope_{ctx, path, t_load} { t_load = &scope_; }
  ~EnterLoad() { t_load = scope_.prev; }
  EnterLoad(const EnterLoad&) = delete;
  EnterLoad& operator=(const EnterLoad&) = delete;

 private:
  LoadScope scope_;
};

// The loaded plugin of this context that is the file `sb` names (same device
// and inode: the same path, a symbolic or hard link), or NULL. An unloaded
// plugin does not count: reloading after an unload is supported.
const bp_plugin_t* SameFileLocked(bp_context_t* ctx, const struct stat& sb) {
  for (const auto& q : ctx->plugins) {
    if (q->loaded && q->file_dev == sb.st_dev && q->file_ino == sb.st_ino) return q.get();
  }
  return nullptr;
}

}  // namespace

Status CheckNotLoading(bp_context_t* ctx, const char* fn) {
  for (const LoadScope* s = t_load; s != nullptr; s = s->prev) {
    if (s->ctx != ctx) continue;
    return Error(BP_STATUS_FAILED_PRECONDITION,
                 std::string(fn) + ": called while plugin '" + *s->path +
                     "' is being loaded into this context, from the loading thread (its init, entry point or a "
                     "library constructor); that would wait forever for the load to finish. A plugin registers "
                     "through its registrar during init and cannot load plugins or define host operators there");
  }
  return Status::Ok();
}

Status LockWriter(bp_context_t* ctx, const char* fn, std::unique_lock<std::mutex>* lock) {
  BP_RETURN_IF_ERROR(CheckNotLoading(ctx, fn));
  *lock = std::unique_lock<std::mutex>(ctx->mu);
  return Status::Ok();
}

Status LoadLocked(bp_context_t* ctx, const char* path, bp_plugin_t** out_plugin) {
  std::string resolved;
  struct stat sb {};
  BP_RETURN_IF_ERROR(ResolvePluginFile(path, &resolved, &sb));
  const std::string fn = std::string("bp_plugin_load('") + path + "')";
  // Before dlopen: dlopen of a file already mapped returns the live copy, and
  // its constructors, init and (when the load then fails) shutdown would run
  // on the state of the backend in use.
  if (const bp_plugin_t* q = SameFileLocked(ctx, sb)) {
    return Error(BP_STATUS_ALREADY_EXISTS, fn + ": '" + resolved +
                                               "' is the same file (same device and inode) as the plugin '" + q->path +
                                               "', already loaded; a plugin file is loaded once per context");
  }
  EnterLoad scope(ctx, &resolved);
  // An absolute, resolved path: dlopen never searches the library path.
  void* handle = dlopen(resolved.c_str(), RTLD_NOW | RTLD_LOCAL);
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
    return close_on_error(
        Error(BP_STATUS_INVALID_ARGUMENT, fn + ": no symbol '" BP_PLUGIN_ENTRY_SYMBOL "' (not a Backplane plugin)"));
  }
  auto entry_fn = reinterpret_cast<bp_plugin_entry_fn>(sym);
  const bp_plugin_entry_t* entry = entry_fn();
  if (entry == nullptr || entry->struct_size < sizeof(bp_plugin_entry_t) || entry->negotiate == nullptr ||
      entry->init == nullptr) {
    return close_on_error(
        Error(BP_STATUS_INVALID_ARGUMENT, fn + ": " BP_PLUGIN_ENTRY_SYMBOL "() returned an incomplete entry table"));
  }
  if (BP_ABI_VERSION_GET_MAJOR(entry->abi_version) != BP_ABI_VERSION_MAJOR) {
    return close_on_error(
        Error(BP_STATUS_INCOMPATIBLE_VERSION, fn + ": plugin was built for ABI " + VersionString(entry->abi_version) +
                                                  "; this libbackplane implements ABI " +
                                                  VersionString(BP_ABI_VERSION) + " (the major versions must match)"));
  }
  uint32_t version = BP_ABI_VERSION;
  bp_status_t rc = entry->negotiate(&version);
  if (rc != BP_STATUS_OK || BP_ABI_VERSION_GET_MAJOR(version) != BP_ABI_VERSION_MAJOR || version > BP_ABI_VERSION) {
    return close_on_error(Error(BP_STATUS_INCOMPATIBLE_VERSION,
                                fn + ": ABI negotiation failed: host offered " + VersionString(BP_ABI_VERSION) +
                                    ", plugin answered " + VersionString(version) + " with status " +
                                    bp_status_name(PluginStatus(rc))));
  }

  // A plugin built against a newer minor runs at this host's version: it must
  // not use what the newer minor added (its struct_size checks tell it). Say so.
  if (entry->abi_version > BP_ABI_VERSION) {
    LogMessage(ctx, BP_LOG_WARNING,
               fn + ": plugin built for ABI " + VersionString(entry->abi_version) +
                   ", newer than this libbackplane's ABI " + VersionString(BP_ABI_VERSION) + "; running it at ABI " +
                   VersionString(version) + " (what the newer minor added is not available)");
  }
  // The context owns the plugin object from here; FailLoad takes it back out.
  bp_plugin_t* p = nullptr;
  try {
    ctx->plugins.push_back(std::make_unique<bp_plugin_t>());
    p = ctx->plugins.back().get();
    p->path = resolved;
    p->file_dev = sb.st_dev;
    p->file_ino = sb.st_ino;
  } catch (...) {
    if (p != nullptr) ctx->plugins.pop_back();
    dlclose(handle);
    throw;
  }
  p->ctx = ctx;
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
  const uint64_t serial = g_last_error_serial;
  rc = entry->init(&args);
  registrar.in_init = false;
  if (rc != BP_STATUS_OK) {
    Status st = PluginFailure(fn + ": plugin init", rc, serial);
    return FailLoad(p, /*init_ran=*/false, std::move(st));
  }
  Status st;
  try {
    st = CommitLocked(ctx, p, fn);
  } catch (const std::bad_alloc&) {
    st = Error(BP_STATUS_OUT_OF_MEMORY, fn + ": out of host memory while registering the plugin");
  } catch (const std::exception& e) {
    st = Error(BP_STATUS_INTERNAL, fn + ": internal error while registering the plugin: " + e.what());
  }
  if (!st.ok()) return FailLoad(p, /*init_ran=*/true, std::move(st));
  if (out_plugin != nullptr) *out_plugin = p;
  return Status::Ok();
}

namespace {

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
    PublishBackendInfoLocked(ctx, slot);
  } else {
    slot.loaded.store(false, std::memory_order_release);
  }
  RoutesChanged(ctx);
}

bool IsLoadedPlugin(bp_context_t* ctx, bp_plugin_t* p) {
  for (auto& q : ctx->plugins) {
    if (q.get() == p) return p->loaded;
  }
  return false;
}

// Snapshots and registrations no reader can reach once the read sections
// active now have ended: taken out of the context under ctx->mu, freed after
// SynchronizeReaders (so a load/unload cycle does not grow the context).
struct Retired {
  std::vector<const KernelTable*> tables;
  std::vector<const KernelEntry*> fallbacks;
  std::vector<const BackendInfoSnapshot*> infos;
  std::vector<std::unique_ptr<bp_registration_t>> registrations;
  ~Retired() {
    for (const auto* t : tables) delete t;
    for (const auto* f : fallbacks) delete f;
    for (const auto* i : infos) delete i;
  }
};

void TakeRetiredLocked(bp_context_t* ctx, bp_plugin_t* p, Retired* out) {
  out->tables.swap(ctx->retired_tables);
  out->fallbacks.swap(ctx->retired_fallbacks);
  out->infos.swap(ctx->retired_infos);
  // The plugin's registrations are inactive now; users never hold handles to them.
  auto& regs = ctx->registrations;
  for (auto it = regs.begin(); it != regs.end();) {
    if ((*it)->owner == p && !(*it)->active) {
      out->registrations.push_back(std::move(*it));
      it = regs.erase(it);
    } else {
      ++it;
    }
  }
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
    BP_RETURN_IF_ERROR(CheckContext(context, "bp_plugin_load"));
    BP_CHECK_ARG(path != nullptr, "bp_plugin_load", "path is NULL");
    std::unique_lock<std::mutex> lock;
    BP_RETURN_IF_ERROR(LockWriter(context, "bp_plugin_load", &lock));
    return LoadLocked(context, path, out_plugin);
  });
}

BP_API bp_status_t bp_plugin_unload(bp_context_t* context, bp_plugin_t* plugin) {
  return ApiCall("bp_plugin_unload", [&]() -> Status {
    BP_RETURN_IF_ERROR(CheckContext(context, "bp_plugin_unload"));
    BP_CHECK_ARG(plugin != nullptr, "bp_plugin_unload", "plugin is NULL");
    if (InReadSection()) {
      return Error(BP_STATUS_FAILED_PRECONDITION, "bp_plugin_unload: cannot unload from inside an operator call");
    }
    Retired retired;
    {
      std::unique_lock<std::mutex> lock;
      BP_RETURN_IF_ERROR(LockWriter(context, "bp_plugin_unload", &lock));
      if (!IsLoadedPlugin(context, plugin)) {
        return Error(BP_STATUS_INVALID_ARGUMENT,
                     "bp_plugin_unload: plugin is not loaded in this context (unloaded twice?)");
      }
      // Streams, events, pinned blocks and communicators call the plugin's
      // code: they must go first.
      if (plugin->backend >= 0) {
        BP_RETURN_IF_ERROR(CheckNothingLiveOn(context, context->slots[plugin->backend], "bp_plugin_unload"));
      }
      DetachLocked(plugin);
      TakeRetiredLocked(context, plugin, &retired);
    }
    // No in-flight call may still run the plugin's code when its last
    // reference goes: wait for the calls that started before the detach.
    SynchronizeReaders();
    PluginRelease(plugin);
    return Status::Ok();
  });
}

}  // extern "C"
