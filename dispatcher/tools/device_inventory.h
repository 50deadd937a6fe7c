// The inventory bp-info prints and every bp-conformance log opens with: the
// Backplane version and ABI, the plugins loaded (name, version, ABI, path) and
// failures to load, and every device (name, DLPack device type, index,
// memory, capabilities) or why a backend has none. Public C API only.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "backplane/backplane.h"

// The DLPack device type's name ("kDLCPU", "kDLOpenCL", ...; "other" for a
// type not listed). Static storage.
const char* device_type_name(int32_t device_type);
// The BP_DEVICE_CAP_* bits of `capabilities` as "fp64,fp16,bf16,unified"
// (in that order; "-" when none is set).
std::string capability_names(uint64_t capabilities);

// Writes the inventory of `ctx` (plugins already loaded) to `out`.
// `load_errors` are messages of plugins that failed to load, printed as such.
void print_device_inventory(std::FILE* out, bp_context_t* ctx, const std::vector<std::string>& load_errors);
