// Runs a check in a fork()ed child and waits for it with a deadline
// (fork_after_use_test.cpp, opencl_fork_test.cpp): the child's exit code is
// its verdict; a child still running at the deadline is killed and reported,
// so a hang fails the test instead of blocking ctest.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <thread>

#include "backplane/backplane.h"

namespace bptest {

// The child's exit code (0: every check held), or -1 after killing a child
// that outlived `deadline`, or -2 for a child killed by a signal.
inline int RunInForkedChild(const std::function<int()>& child, std::chrono::milliseconds deadline) {
  const pid_t pid = fork();
  if (pid < 0) return -3;
  if (pid == 0) _exit(child());
  const auto until = std::chrono::steady_clock::now() + deadline;
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (std::chrono::steady_clock::now() >= until) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    // Polling the child's exit, not synchronizing with it: the deadline decides.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!WIFEXITED(status)) return -2;
  return WEXITSTATUS(status);
}

// In the child: 0 when `rc` is FAILED_PRECONDITION with the after-fork
// message, else `bit` (and the reason on stderr, which ctest shows).
inline int ExpectForkRefusal(bp_status_t rc, const char* what, int bit) {
  const char* msg = bp_last_error_message();
  if (rc == BP_STATUS_FAILED_PRECONDITION && std::strstr(msg, "cannot be used after fork()") != nullptr) return 0;
  fprintf(stderr, "child: %s returned %s: %s\n", what, bp_status_name(rc), msg);
  return bit;
}

}  // namespace bptest
