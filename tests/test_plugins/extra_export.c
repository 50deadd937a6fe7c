/* Linked into bp_leaky beside bringup_plugin.c: a symbol the plugin exports
 * besides bp_plugin_entry, as a plugin built without hidden visibility or an
 * export map does (bp-conformance's ABI group must say how to fix it). */
__attribute__((visibility("default"))) int bp_test_leaked_helper(void);
__attribute__((visibility("default"))) int bp_test_leaked_helper(void) { return 42; }
