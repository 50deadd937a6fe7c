// Loaded plugins and the registrar handed to their init.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "context.h"
#include "schema.h"

struct PendingKernel {
  bp_op_t* op;
  bp_kernel_fn fn;
  void* data;
  uint32_t flags;
  uint32_t dtype_mask;  // DtypeBit() set; all ones without a mask
};

struct bp_plugin_t;

struct bp_registrar_t {
  bp_plugin_t* plugin = nullptr;
  bool in_init = false;
  std::thread::id init_thread;
  std::vector<PendingKernel> kernels;
  bool has_fallback = false;
  PendingKernel fallback{};
  // The first registration that must fail the whole load (a dtype mask with
  // unknown bits); CommitLocked refuses the plugin with it.
  std::string load_error;
};

struct bp_plugin_t {
  bp_context_t* ctx = nullptr;
  std::string path;
  dev_t file_dev = 0;  // the file's identity (a second load of it is refused)
  ino_t file_ino = 0;
  void* handle = nullptr;  // dlopen handle
  uint32_t abi_version = 0;
  int32_t backend = -1;
  bp_backend_t table{};
  // One reference for "loaded", one per storage on its devices. The library is
  // shut down and unmapped when the count reaches zero (after unload).
  std::atomic<int64_t> refs{1};
  bool loaded = false;
  bool finalized = false;
  std::vector<bp_registration_t*> registrations;
  std::vector<bp_op_t*> defined_ops;
  std::unordered_map<std::string, bp_op_t*> defined_by_name;  // defined_ops by name (O(1) lookups in init)
  // Handed to init and valid for the plugin's lifetime (log may be called
  // from kernels); registration through it is refused after init.
  bp_registrar_t registrar;
};

namespace bp::core {
void PluginRetain(bp_plugin_t* plugin);
// Drops a reference; the last one shuts the plugin down and unmaps it.
void PluginRelease(bp_plugin_t* plugin);
// The host API handed to every plugin's init (plugin_host_api.cpp).
void InitHostApi(bp_host_api_t* api);
// A plugin's string, at most `cap` bytes of it read (the caps in backend.h).
std::string Capped(const char* s, size_t cap);
// True when a plugin's name (backend or operator) is longer than BP_MAX_NAME_LENGTH.
bool NameTooLong(const char* name);
// PERMISSION_DENIED unless schema `s` is in the namespace `backend_name`: a
// plugin defines operators only as '<backend name>::...'.
Status CheckOwnNamespace(const char* backend_name, const Schema& s);
// Unloads every plugin (context destroy). Caller must not be in a read section.
void UnloadAllPlugins(bp_context_t* ctx);
// Builds the state of device `d` of the backend in `slot` whose table is `t`
// (its caching allocator over t's memory functions; host-addressable when
// the slot is the host's). Allocations only: nothing is published.
std::unique_ptr<DeviceState> MakeDevice(bp_context_t* ctx, BackendSlot* slot, const bp_backend_t& t, int32_t d);
// Loads the plugin at `path` (bp_plugin_load, discovery); caller holds ctx->mu.
// Transactional: on any error (a status, or out of memory) none of the
// plugin's registrations, operators or devices remain, and its library is
// closed (or, if undoing failed, kept mapped and unloaded).
Status LoadLocked(bp_context_t* ctx, const char* path, bp_plugin_t** out_plugin);
// Discovery rules for one plugin file (plugin_discovery.cpp): `path` resolved
// to an absolute path with no symbolic links (realpath), a regular file; unless
// BACKPLANE_ALLOW_INSECURE_PLUGINS=1, the file owned by root or the running
// user and not world-writable, and every directory and symbolic link the path
// passes through owned by root or the running user, no directory
// world-writable without the sticky bit. Fills *out_stat (the file's identity)
// when not NULL. Errors: NOT_FOUND (no such file), INVALID_ARGUMENT (not a
// regular file, a symbolic link loop), PERMISSION_DENIED (a failed check).
Status ResolvePluginFile(const char* path, std::string* resolved, struct stat* out_stat);
// Takes ctx->mu for the writer entry point `fn` (load, unload, discover,
// definitions, registrations). Refused with FAILED_PRECONDITION, naming the
// plugin, on the thread that is loading a plugin into ctx (the plugin's
// init calling back into the host): it holds ctx->mu and would deadlock.
Status LockWriter(bp_context_t* ctx, const char* fn, std::unique_lock<std::mutex>* lock);
// The check LockWriter makes, for entry points that lock later (destroy).
Status CheckNotLoading(bp_context_t* ctx, const char* fn);
}  // namespace bp::core
