// Which backends a bp-conformance run covers: --backend arguments resolved
// to backend ids of the context (a path is loaded with bp_plugin_load, a
// name is looked up after discovery). Discovery always runs, after the paths
// (a given path wins over a discovered plugin of the same name): the CPU
// fallback needs the CPU backend's kernels.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "backplane/backplane.h"

namespace bpc {

// Appends (backend id, the argument that named it or "") to *out; false
// with a message on stderr when a path does not load or a name is unknown.
// With load_timeout_s > 0 every load (each path, and discovery) is tried
// first in a child (load_probe.h): a plugin that crashes, exits or hangs
// there gets a "LOAD CRASHED" / "LOAD EXITED" / "LOAD TIMEOUT" line on
// stdout, is skipped (for discovery: no discovery), and is appended to
// *skipped (may be NULL; "" for discovery) so workers are not given it; the
// run goes on with the others.
bool select_backends(bp_context_t* ctx, const std::vector<std::string>& args,
                     std::vector<std::pair<int32_t, std::string>>* out, double load_timeout_s = 0,
                     std::vector<std::string>* skipped = nullptr);

}  // namespace bpc
