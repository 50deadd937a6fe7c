// Which backends a bp-conformance run covers: --backend arguments resolved
// to backend ids of the context (a path is loaded with bp_plugin_load, a
// name is looked up after discovery). Discovery always runs, after the paths
// (a given path wins over a discovered plugin of the same name): the CPU
// fallback needs the CPU backend's kernels.
//
// Containment: the parent probes every load in a child first (load_probe.h),
// discovery included, one file at a time, so a plugin whose load crashes or
// hangs is named in its own verdict line and the others run. Workers never
// discover: they load exactly the files their parent loaded (--plugin-file).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "backplane/backplane.h"

namespace bpc {

struct SelectOptions {
  // > 0: every load (each path, each discovered file) is tried first in a
  // child with this time limit.
  double load_timeout_s = 0;
  // Non-null (workers): "discovery" loads exactly these files, unprobed.
  const std::vector<std::string>* worker_files = nullptr;
};

struct SelectResult {
  int load_failures = 0;                   // files with a LOAD CRASHED/EXITED/TIMEOUT line
  std::vector<std::string> skipped_paths;  // --backend paths among them
  std::vector<std::string> loaded_files;   // every plugin file loaded (resolved), for the workers
};

// The files bp_plugin_discover would try, in its documented order
// (BACKPLANE_PLUGINS, the lib*.so of each BACKPLANE_PLUGIN_PATH directory,
// <libdir>/backplane/plugins beside libbackplane), each file once.
std::vector<std::string> discovery_candidates();

// Appends (backend id, the argument that named it or "") to *out; false
// with a message on stderr when a path does not load or a name is unknown.
// A file whose probe crashed, exited or hung gets a "LOAD CRASHED  <file>:
// ..." / "LOAD EXITED" / "LOAD TIMEOUT" line on stdout, is skipped and
// counted in result->load_failures; the run goes on with the others.
bool select_backends(bp_context_t* ctx, const std::vector<std::string>& args, const SelectOptions& opt,
                     std::vector<std::pair<int32_t, std::string>>* out, SelectResult* result);

}  // namespace bpc
