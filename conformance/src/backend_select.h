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
bool select_backends(bp_context_t* ctx, const std::vector<std::string>& args,
                     std::vector<std::pair<int32_t, std::string>>* out);

}  // namespace bpc
