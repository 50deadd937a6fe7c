// The OpenCL plugin's entry table (negotiate + init) and the bp_backend_t it
// fills. entry.cpp exports it as bp_plugin_entry.
#pragma once

#include "backplane/backend.h"

namespace bpcl {

// The static entry table; never NULL.
const bp_plugin_entry_t* PluginEntry();

}  // namespace bpcl
