// Shared state of the vendor_sim plugin.
#pragma once

#include "arena.h"
#include "backplane/backend.h"

namespace vendor_sim {

struct State {
  const bp_host_api_t* host = nullptr;
  Arena arena;
};

// Reports an error through the host ("vendor_sim: <op>: <what>") and returns code.
bp_status_t Fail(const State* state, bp_status_t code, const char* op, const char* what);

// Registers the native kernels (add.Tensor, relu). Returns the first error.
bp_status_t RegisterKernels(const bp_plugin_init_args_t* args, State* state);

}  // namespace vendor_sim
