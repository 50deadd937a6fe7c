// The one exported symbol of libbackplane_opencl.so.
#include "backplane/backend.h"
#include "plugin.h"

extern "C" BP_PLUGIN_EXPORT const bp_plugin_entry_t* bp_plugin_entry(void) { return bpcl::PluginEntry(); }
