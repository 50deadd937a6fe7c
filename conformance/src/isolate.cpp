#include "isolate.h"

#include <array>
#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report.h"

namespace bpc {

namespace {

void handle_line(const std::string& line, ChildOutcome* out) {
  if (line.empty()) return;
  nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return;  // stray output from a plugin: ignore
  if (j.contains("start")) {
    const auto& s = j["start"];
    out->last_started = s.value("dtype", "") + " sample " + std::to_string(s.value("sample", -1));
  } else if (j.contains("case")) {
    out->cases.push_back(case_from_json(j["case"]));
    out->last_started.clear();
  }
}

}  // namespace

ChildOutcome run_child(const std::vector<std::string>& argv, double timeout_s) {
  ChildOutcome out;
  int fds[2];
  if (pipe(fds) != 0) {
    out.status = ChildOutcome::kSpawnFailed;
    out.message = std::string("pipe: ") + std::strerror(errno);
    return out;
  }
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    out.status = ChildOutcome::kSpawnFailed;
    out.message = std::string("fork: ") + std::strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return out;
  }
  if (pid == 0) {
    // Child: stdout becomes the pipe; stderr stays the terminal's.
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  close(fds[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  std::string buffer;
  bool timed_out = false;
  char chunk[65536];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int r = poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) continue;
    const ssize_t n = read(fds[0], chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child exited or closed stdout
    buffer.append(chunk, static_cast<size_t>(n));
    size_t nl;
    while ((nl = buffer.find('\n')) != std::string::npos) {
      handle_line(buffer.substr(0, nl), &out);
      buffer.erase(0, nl + 1);
    }
  }
  if (timed_out) kill(pid, SIGKILL);
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  handle_line(buffer, &out);
  if (timed_out) {
    out.status = ChildOutcome::kTimeout;
    out.message = "ran past the time limit of " + std::to_string(static_cast<int>(timeout_s)) + " s";
  } else if (WIFSIGNALED(status)) {
    out.status = ChildOutcome::kCrashed;
    out.signal = WTERMSIG(status);
    out.message = std::string("child killed by signal ") + std::to_string(out.signal) + " (" + strsignal(out.signal) + ")";
  } else {
    out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (out.exit_code == 127 && out.cases.empty()) {
      out.status = ChildOutcome::kSpawnFailed;
      out.message = "could not run " + argv[0];
    } else if (out.exit_code != 0) {
      // A worker exits 0 once it streamed every case; anything else is an abnormal end.
      out.status = ChildOutcome::kCrashed;
      out.message = "child exited with status " + std::to_string(out.exit_code);
    }
  }
  if (!out.last_started.empty() && out.status != ChildOutcome::kExited) {
    out.message += " while running " + out.last_started;
  }
  return out;
}

void emit_start(const std::string& dtype, int sample) {
  nlohmann::json j;
  j["start"] = {{"dtype", dtype}, {"sample", sample}};
  const std::string s = j.dump() + "\n";
  fwrite(s.data(), 1, s.size(), stdout);
  fflush(stdout);
}

void emit_case(const CaseResult& c) {
  nlohmann::json j;
  j["case"] = case_to_json(c);
  const std::string s = j.dump() + "\n";
  fwrite(s.data(), 1, s.size(), stdout);
  fflush(stdout);
}

}  // namespace bpc

namespace bpc {

DeviceReport run_device_isolated(Runner& runner, int32_t backend, int32_t device_index, const RunOptions& opt,
                                 const std::vector<std::string>& worker_argv, double timeout_s) {
  uint64_t caps = 0;
  DeviceReport report = runner.empty_report(backend, device_index, &caps);
  for (const OpEntry& op : runner.ops()) {
    if (!glob_match(opt.op_glob, op.name)) continue;
    report.ops.push_back(op.name);
    auto& cells = report.cells[op.name];
    if (op.claim == nullptr) continue;
    bool any = false;
    for (int k = 0; k < kNumDTypes; ++k) {
      any = any || (op.claim->claims(dtype_at(k)) && (!opt.has_dtype || opt.dtype == dtype_at(k)));
    }
    if (!any) continue;
    std::vector<std::string> argv = worker_argv;
    argv.insert(argv.end(), {"--worker-device", std::to_string(device_index), "--op", op.name});
    ChildOutcome child = run_child(argv, timeout_s);
    std::array<bool, kNumDTypes> seen{};
    for (CaseResult& c : child.cases) {
      DType d;
      if (!dtype_from_name(c.dtype, &d)) continue;
      seen[static_cast<size_t>(d)] = true;
      fold_case(&cells[static_cast<size_t>(d)], c);
      report.cases.push_back(std::move(c));
    }
    if (child.status == ChildOutcome::kExited) continue;
    const Outcome o = child.status == ChildOutcome::kTimeout ? Outcome::kTimeout : Outcome::kCrashed;
    // The case that was running gets the crash; claimed dtypes that never
    // started are reported too, so no cell silently passes.
    std::string running_dtype = child.last_started.substr(0, child.last_started.find(' '));
    for (int k = 0; k < kNumDTypes; ++k) {
      const DType d = dtype_at(k);
      if (!op.claim->claims(d) || (opt.has_dtype && opt.dtype != d)) continue;
      const bool running = running_dtype == dtype_name(d);
      if (seen[static_cast<size_t>(k)] && !running) continue;
      CaseResult r;
      r.backend = report.backend;
      r.device = report.device;
      r.op = op.name;
      r.dtype = dtype_name(d);
      r.seed = opt.seed;
      r.sample = -1;
      if (running) {
        const size_t sp = child.last_started.rfind(' ');
        r.sample = std::atoi(child.last_started.c_str() + sp + 1);
      }
      r.outcome = child.status == ChildOutcome::kSpawnFailed ? Outcome::kFail : o;
      r.message = running ? child.message : child.message + " (this dtype had not run yet)";
      if (r.sample >= 0) {
        r.repro = "bp-conformance --backend " + (opt.backend_arg.empty() ? r.backend : opt.backend_arg) +
                  " --op " + op.name + " --dtype " + r.dtype + " --sample " + std::to_string(r.sample) +
                  " --seed " + std::to_string(opt.seed) + " --no-isolate";
      }
      fold_case(&cells[static_cast<size_t>(k)], r);
      report.cases.push_back(r);
    }
  }
  return report;
}

}  // namespace bpc
