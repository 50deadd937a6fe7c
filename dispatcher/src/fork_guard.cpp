// The pthread_atfork child handler and the error of a context used after
// fork() (fork_guard.h).
#include "fork_guard.h"

#include <pthread.h>
#include <unistd.h>

#include <mutex>
#include <string>

#include "context.h"

namespace bp::core {
namespace {

// Async-signal-safe: runs in the child right after fork().
void OnForkChild() { g_fork_epoch.fetch_add(1, std::memory_order_relaxed); }

}  // namespace

uint32_t ForkEpochForNewContext() {
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(nullptr, nullptr, OnForkChild); });
  return g_fork_epoch.load(std::memory_order_relaxed);
}

Status ForkedContextError(const bp_context_t* ctx, const char* fn) {
  return Error(BP_STATUS_FAILED_PRECONDITION,
               std::string(fn) + ": backplane: the context was created in process " +
                   std::to_string(static_cast<long>(ctx->creator_pid)) + " and cannot be used after fork() (this is " +
                   "process " + std::to_string(static_cast<long>(getpid())) +
                   "); create a new context in the child, or fork before using a device");
}

}  // namespace bp::core
