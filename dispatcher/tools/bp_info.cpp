// bp-info: what Backplane sees on this machine. Lists the plugins discovery
// found (path, ABI version, backend name and version, or why loading failed),
// every device (name, DLPack device type, index, memory, capabilities, or why
// a backend has none), and with --ops the operator x backend dispatch table.
// Uses only the public C API.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "backplane/backplane.h"
#include "device_inventory.h"

namespace {

std::vector<std::string> g_log;    // discovery's warnings: plugins that failed to load
std::vector<std::string>* g_sink = &g_log;

void Log(void*, int32_t level, const char* message) {
  if (level >= BP_LOG_WARNING) g_sink->push_back(message);
}

const char* KindName(int32_t k) {
  switch (k) {
    case BP_DISPATCH_NATIVE: return "native";
    case BP_DISPATCH_CORE: return "core";
    case BP_DISPATCH_BACKEND_FALLBACK: return "backend-fb";
    case BP_DISPATCH_CPU_FALLBACK: return "fallback";
    default: return "none";
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bp-info: Backplane plugins, devices and operator dispatch table"};
  bool show_ops = false;
  bool no_discover = false;
  std::vector<std::string> plugins;
  app.add_flag("--ops", show_ops, "print the operator x backend table (native / core / fallback / none)");
  app.add_option("--plugin", plugins, "load this plugin file (repeatable); exit 1 if it does not load");
  app.add_flag("--no-discover", no_discover, "do not run plugin discovery");
  CLI11_PARSE(app, argc, argv);

  bp_context_options_t o{};
  o.struct_size = sizeof(o);
  o.log_callback = Log;
  o.min_log_level = BP_LOG_WARNING;
  bp_context_t* ctx = nullptr;
  if (bp_context_create(&o, &ctx) != BP_STATUS_OK) {
    std::fprintf(stderr, "bp-info: %s\n", bp_last_error_message());
    return 1;
  }
  // A plugin named on the command line must load: a vendor checking a fresh
  // build wants a failing exit status and the loader's reason, not a listing.
  // What the loader says about a plugin that did load (a newer ABI minor than
  // this host's, for one) is a note, not a failure.
  for (const std::string& p : plugins) {
    std::vector<std::string> notes;
    g_sink = &notes;
    const bp_status_t st = bp_plugin_load(ctx, p.c_str(), nullptr);
    g_sink = &g_log;
    if (st != BP_STATUS_OK) {
      std::fprintf(stderr, "bp-info: cannot load plugin %s: %s\n", p.c_str(), bp_last_error_message());
      bp_context_destroy(ctx);
      return 1;
    }
    for (const std::string& n : notes) std::fprintf(stderr, "bp-info: note: %s\n", n.c_str());
  }
  if (!no_discover) bp_plugin_discover(ctx, nullptr);

  print_device_inventory(stdout, ctx, g_log);
  int32_t nb = 0;
  bp_backend_count(ctx, &nb);

  if (show_ops) {
    std::printf("\nOperators (native = backend kernel, core = done by the core, fallback = CPU fallback):\n");
    std::printf("  %-28s", "operator");
    std::vector<int32_t> backends;
    for (int32_t b = 0; b < nb; ++b) {
      bp_backend_info_t info{};
      info.struct_size = sizeof(info);
      if (bp_backend_info(ctx, b, &info) == BP_STATUS_OK && info.loaded) {
        backends.push_back(b);
        std::printf(" %-11s", info.name);
      }
    }
    std::printf("\n");
    int32_t n = 0;
    bp_op_count(ctx, &n);
    for (int32_t i = 0; i < n; ++i) {
      bp_op_t* op = nullptr;
      bp_op_info_t info{};
      info.struct_size = sizeof(info);
      if (bp_op_at(ctx, i, &op) != BP_STATUS_OK || bp_op_info(op, &info) != BP_STATUS_OK) continue;
      std::printf("  %-28s", info.name);
      for (int32_t b : backends) {
        int32_t k = BP_DISPATCH_NONE;
        bp_op_dispatch_kind(ctx, op, b, &k);
        std::printf(" %-11s", KindName(k));
      }
      std::printf("\n");
    }
  }
  bp_context_destroy(ctx);
  return 0;
}
