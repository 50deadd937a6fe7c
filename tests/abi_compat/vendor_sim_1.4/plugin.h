// The state of one vendor_sim plugin instance (bp_backend_t.backend_data and
// every kernel's kernel_data) and the error helpers every file uses.
#pragma once

#include <cstddef>
#include <mutex>
#include <unordered_map>

#include "arena.h"
#include "backplane/backend.h"
#include "backplane/op_args.h"     // BP_OP_* names, BP_ARG_* argument indices
#include "backplane/plugin_kit.h"  // negotiation, struct_size checks, bp_kit_fail
#include "event.h"
#include "faults.h"
#include "stream_table.h"

namespace vendor_sim {

struct State {
  const bp_host_api_t* host = nullptr;
  Arena arena;
  Faults faults;  // device faults on demand (faults.h), off by default
  // Where kernels and copies run: one queue per stream (stream_table.h),
  // now or on the stream's device thread.
  StreamTable streams;
  EventTable events;  // event.h
  // Pinned host memory (host_allocate, memory.h): 4096-byte aligned host
  // blocks, address -> size, so host_deallocate refuses unknown pointers.
  std::mutex host_mu;
  std::unordered_map<void*, size_t> host_blocks;
};

// The State behind a bp_backend_t function's backend_data.
inline State* StateOf(void* backend_data) { return static_cast<State*>(backend_data); }

// Reports an error through the host ("vendor_sim: <op>: <what>") and returns code.
bp_status_t Fail(const State* state, bp_status_t code, const char* op, const char* what);

// A kernel's error ("vendor_sim: <call->op_name>: <what>"), attached to the
// call itself (ABI >= 1.2; host->set_error on an older host). Returns code.
bp_status_t KernelFail(const bp_kernel_call_t* call, bp_status_t code, const char* what);

}  // namespace vendor_sim
