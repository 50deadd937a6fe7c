// Loaded plugins and the registrar handed to their init.
#pragma once

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "context.h"

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
};

struct PendingKernel {
  bp_op_t* op;
  bp_kernel_fn fn;
  void* data;
  uint32_t flags;
};

struct bp_registrar_t {
  bp_plugin_t* plugin = nullptr;
  bool in_init = false;
  std::thread::id init_thread;
  std::vector<PendingKernel> kernels;
  bool has_fallback = false;
  PendingKernel fallback{};
};

namespace bp::core {
void PluginRetain(bp_plugin_t* plugin);
// Drops a reference; the last one shuts the plugin down and unmaps it.
void PluginRelease(bp_plugin_t* plugin);
void InitHostApi(bp_host_api_t* api);
// Unloads every plugin (context destroy). Caller must not be in a read section.
void UnloadAllPlugins(bp_context_t* ctx);
}  // namespace bp::core
