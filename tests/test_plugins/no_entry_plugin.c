/* A shared library without bp_plugin_entry. */
#include "backplane/types.h"

BP_PLUGIN_EXPORT int not_the_entry_symbol(void) { return 42; }
