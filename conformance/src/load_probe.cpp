#include "load_probe.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <thread>

#include "backplane/backplane.h"

namespace bpc {

LoadProbe probe_plugin_load(const std::string& path, double timeout_s) {
  LoadProbe out;
  const pid_t pid = fork();
  if (pid < 0) {
    out.verdict = LoadProbe::kProbeFailed;
    out.detail = std::string("fork failed: ") + std::strerror(errno);
    return out;
  }
  if (pid == 0) {
    // The child: nothing of the parent's state is touched; exit codes 0
    // (loaded) and 101 (a load error, which the parent's load will report).
    bp_context_options_t o{};
    o.struct_size = sizeof(o);
    o.min_log_level = BP_LOG_ERROR + 1;  // the parent's own load logs
    bp_context_t* ctx = nullptr;
    if (bp_context_create(&o, &ctx) != BP_STATUS_OK) _exit(101);
    const bp_status_t st = path.empty() ? bp_plugin_discover(ctx, nullptr) : bp_plugin_load(ctx, path.c_str(), nullptr);
    _exit(st == BP_STATUS_OK ? 0 : 101);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) {
      out.verdict = LoadProbe::kProbeFailed;
      out.detail = std::string("waitpid failed: ") + std::strerror(errno);
      return out;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      out.verdict = LoadProbe::kTimeout;
      out.detail = "no answer in " + std::to_string(static_cast<int>(timeout_s)) + " s (--timeout)";
      return out;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (WIFSIGNALED(status)) {
    out.verdict = LoadProbe::kCrashed;
    out.detail = "signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 101) {
    out.verdict = LoadProbe::kLoadError;
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    // Under AddressSanitizer a crash is an exit with ASan's code; either way
    // the plugin ended the process.
    out.verdict = LoadProbe::kExited;
    out.detail = "the process exited with code " + std::to_string(WEXITSTATUS(status));
  }
  return out;
}

std::string load_verdict_line(const LoadProbe& p, const std::string& what) {
  switch (p.verdict) {
    case LoadProbe::kCrashed: return "LOAD CRASHED  " + what + ": " + p.detail;
    case LoadProbe::kExited: return "LOAD EXITED   " + what + ": " + p.detail;
    case LoadProbe::kTimeout: return "LOAD TIMEOUT  " + what + ": " + p.detail;
    case LoadProbe::kProbeFailed: return "LOAD UNTESTED " + what + ": " + p.detail;
    default: return "";
  }
}

}  // namespace bpc
