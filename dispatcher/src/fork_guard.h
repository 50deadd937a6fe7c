// fork() after a device was used (issue 42 item 13). A forked child has one
// thread: the device threads, driver queues and locks of the parent's
// contexts are copies without owners, so the first synchronize would wait
// forever. As torch refuses CUDA after fork, a context created before fork()
// refuses every device operation in the child with FAILED_PRECONDITION; a
// context the child creates itself works.
//
// Cost on the hot path: a pthread_atfork child handler bumps a process-wide
// epoch; every context remembers the epoch it was created in, so the check
// is one relaxed load and one compare (no getpid() per call).
#pragma once

#include <atomic>
#include <cstdint>

#include "status.h"

struct bp_context_t;

namespace bp::core {

// Bumped in the child of every fork() once a context was ever created.
inline std::atomic<uint32_t> g_fork_epoch{0};

// Installs the pthread_atfork child handler (once per process) and returns
// the current epoch for a context being created.
uint32_t ForkEpochForNewContext();

// The FAILED_PRECONDITION for `fn` on a context created before fork() (cold).
Status ForkedContextError(const bp_context_t* ctx, const char* fn);

}  // namespace bp::core
