// vendor_sim's native collectives (bp_backend_t.collectives, ABI 1.6,
// backplane/collectives.h): a SIMULATOR of a device interconnect. The ranks
// are processes on one machine; they exchange tensors through one POSIX
// shared-memory segment (shm_comm.h) instead of a fabric, copying each
// tensor from the simulated device memory (the arena) into their slot and
// the result back. A real plugin calls its collective library (NCCL,
// RCCL, oneCCL...) here instead; the checks, the messages and the failure
// rules (a timeout breaks the communicator) are what it must keep.
//
// Streams: collective() first synchronizes args->stream (its queue, so the
// inputs earlier kernels wrote are complete), then runs the whole
// collective on the calling thread and returns with the output written.
// That is the simplest correct choice for the ABI ("enqueue, or run before
// returning"): nothing is left on the stream for the host to wait for, and
// no error can surface later (so there is no comm_async_error).
#pragma once

#include "plugin.h"

namespace vendor_sim {

// The table to install for the BP_VENDOR_SIM_COLLECTIVES value `mode`:
// unset, empty or "1": the real collectives; "0": none (NULL: the host's Gloo
// engine serves vendor_sim); "wrong" (test only): an all_reduce that adds
// one to element 0 of rank 0's result, so conformance can show it catches a
// bad plugin. Sets *out and returns true, or returns false for any other
// value.
bool CollectivesFor(const char* mode, const bp_collectives_t** out);

}  // namespace vendor_sim
