#include "load_probe.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <thread>
#include <vector>

#include "backplane/backplane.h"
#include "child_process.h"

namespace bpc {

LoadProbe probe_plugin_load(const std::string& path, double timeout_s) {
  LoadProbe out;
  // The child execs bp-conformance afresh (--probe-load) rather than loading
  // in the forked copy: the parent may already run plugin threads, and a
  // lock one of them held at fork() (malloc's, the sanitizer's, the dynamic
  // loader's) would hang the copy's dlopen and blame a good plugin.
  const std::string exe = self_exe();
  std::vector<std::string> args = {exe, path.empty() ? "--probe-discover" : "--probe-load"};
  if (!path.empty()) args.push_back(path);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(&a[0]);
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    out.verdict = LoadProbe::kProbeFailed;
    out.detail = std::string("fork failed: ") + std::strerror(errno);
    return out;
  }
  if (pid == 0) {
    execv(exe.c_str(), argv.data());
    _exit(102);  // exec failed: reported as an exit, not blamed on the plugin's load
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

int run_load_probe(const std::string& path) {
  // Exit codes 0 (loaded) and 101 (a load error, which the parent's load
  // will report); nothing is printed (the parent's own load logs).
  bp_context_options_t o{};
  o.struct_size = sizeof(o);
  o.min_log_level = BP_LOG_ERROR + 1;
  bp_context_t* ctx = nullptr;
  if (bp_context_create(&o, &ctx) != BP_STATUS_OK) return 101;
  const bp_status_t st = path.empty() ? bp_plugin_discover(ctx, nullptr) : bp_plugin_load(ctx, path.c_str(), nullptr);
  return st == BP_STATUS_OK ? 0 : 101;
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
