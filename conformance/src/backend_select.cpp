#include "backend_select.h"

#include <cstdlib>
#include <iostream>

#include "load_probe.h"

namespace bpc {

namespace {

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || (s.size() > 3 && s.compare(s.size() - 3, 3, ".so") == 0);
}

int32_t backend_count(bp_context_t* ctx) {
  int32_t n = 0;
  return bp_backend_count(ctx, &n) == BP_STATUS_OK ? n : 0;
}

bool backend_loaded(bp_context_t* ctx, int32_t b, bp_backend_info_t* info) {
  *info = bp_backend_info_t{};
  info->struct_size = sizeof *info;
  return bp_backend_info(ctx, b, info) == BP_STATUS_OK && info->loaded;
}

// Resolves --backend arguments to backend ids: a path is loaded with
// bp_plugin_load; a name is looked up after discovery. Discovery always runs
// (after the paths, so a given path wins over a discovered plugin of the same
// name): the CPU fallback needs the CPU backend's kernels.

// True when the load of `path` ("" for discovery) may run in this process:
// no probe asked for, or the probe's child survived it.
bool survives_load(const std::string& path, double timeout_s, std::vector<std::string>* skipped) {
  if (timeout_s <= 0) return true;
  const LoadProbe p = probe_plugin_load(path, timeout_s);
  const std::string line = load_verdict_line(p, path.empty() ? "plugin discovery" : path);
  if (line.empty()) return true;
  std::cout << line << "\n" << std::flush;
  if (skipped != nullptr) skipped->push_back(path);
  return false;
}

}  // namespace

bool select_backends(bp_context_t* ctx, const std::vector<std::string>& args,
                     std::vector<std::pair<int32_t, std::string>>* out, double load_timeout_s,
                     std::vector<std::string>* skipped) {
  bool discovered = false;
  auto discover = [&] {
    if (!discovered) {
      discovered = true;
      // A discovery that took the probe down is skipped here and, through the
      // environment, in the worker children this process starts later.
      if (std::getenv("BPC_SKIP_DISCOVERY") != nullptr) return;
      if (!survives_load("", load_timeout_s, skipped)) {
        setenv("BPC_SKIP_DISCOVERY", "1", 1);
        return;
      }
      int32_t loaded = 0;
      bp_plugin_discover(ctx, &loaded);
    }
  };
  if (args.empty()) {
    discover();
    bp_backend_info_t info;
    for (int32_t b = 0; b < backend_count(ctx); ++b) {
      if (backend_loaded(ctx, b, &info)) out->push_back({b, ""});
    }
    return true;
  }
  for (const std::string& a : args) {
    if (looks_like_path(a)) {
      if (!survives_load(a, load_timeout_s, skipped)) continue;
      const bp_status_t st = bp_plugin_load(ctx, a.c_str(), nullptr);
      if (st != BP_STATUS_OK) {
        std::cerr << "bp-conformance: cannot load plugin " << a << ": " << bp_status_name(st) << ": "
                  << bp_last_error_message() << "\n";
        return false;
      }
      // The backend of the plugin: the slot whose plugin_path is this file
      // (resolved by the loader). A host-memory plugin (the cpu plugin) takes
      // the existing cpu slot, so "a new slot" would find none.
      char* real = realpath(a.c_str(), nullptr);
      const std::string resolved = real != nullptr ? real : a;
      std::free(real);
      bp_backend_info_t info;
      for (int32_t b = 0; b < backend_count(ctx); ++b) {
        if (backend_loaded(ctx, b, &info) && info.plugin_path != nullptr && resolved == info.plugin_path) {
          out->push_back({b, a});
        }
      }
    }
  }
  for (const std::string& a : args) {
    if (looks_like_path(a)) continue;
    discover();
    int32_t b = -1;
    if (bp_backend_find(ctx, a.c_str(), &b) != BP_STATUS_OK) {
      std::cerr << "bp-conformance: no backend named '" << a << "' (" << bp_last_error_message()
                << "); loaded:";
      bp_backend_info_t info;
      for (int32_t k = 0; k < backend_count(ctx); ++k) {
        if (backend_loaded(ctx, k, &info)) std::cerr << " " << info.name;
      }
      std::cerr << "\n";
      return false;
    }
    out->push_back({b, a});
  }
  discover();
  return true;
}

}  // namespace bpc
