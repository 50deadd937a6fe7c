// Loaded plugins and the registrar handed to their init.
#pragma once

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "context.h"

struct PendingKernel {
  bp_op_t* op;
  bp_kernel_fn fn;
  void* data;
  uint32_t flags;
};

struct bp_plugin_t;

struct bp_registrar_t {
  bp_plugin_t* plugin = nullptr;
  bool in_init = false;
  std::thread::id init_thread;
  std::vector<PendingKernel> kernels;
  bool has_fallback = false;
  PendingKernel fallback{};
};

struct bp_plugin_t {
  bp_context_t* ctx = nullptr;
  std::string path;
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
  // Handed to init and valid for the plugin's lifetime (log may be called
  // from kernels); registration through it is refused after init.
  bp_registrar_t registrar;
};

namespace bp::core {
void PluginRetain(bp_plugin_t* plugin);
// Drops a reference; the last one shuts the plugin down and unmaps it.
void PluginRelease(bp_plugin_t* plugin);
void InitHostApi(bp_host_api_t* api);
// Unloads every plugin (context destroy). Caller must not be in a read section.
void UnloadAllPlugins(bp_context_t* ctx);
// Loads the plugin at `path` (bp_plugin_load, discovery); caller holds ctx->mu.
// Transactional: on any error (a status, or out of memory) none of the
// plugin's registrations, operators or devices remain, and its library is
// closed (or, if undoing failed, kept mapped and unloaded).
Status LoadLocked(bp_context_t* ctx, const char* path, bp_plugin_t** out_plugin);
// Discovery rules for one plugin file (plugin_discovery.cpp): `path` resolved
// to an absolute path with no symbolic links (realpath), a regular file,
// neither it nor its directory world-writable unless
// BACKPLANE_ALLOW_INSECURE_PLUGINS=1. Errors: NOT_FOUND (no such file),
// INVALID_ARGUMENT (not a regular file, a symbolic link loop),
// PERMISSION_DENIED (world-writable).
Status ResolvePluginFile(const char* path, std::string* resolved);
}  // namespace bp::core
