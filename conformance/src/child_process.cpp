#include "child_process.h"

#include <algorithm>
#include <cerrno>
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
    out->last_test = s.value("test", "");
    const std::string what = s.value("what", "");
    out->last_started = out->last_test + (what.empty() ? "" : " (" + what + ")");
    out->has_last_case = s.contains("case") && s["case"].is_object();
    if (out->has_last_case) out->last_case = case_from_json(s["case"]);
  } else if (j.contains("case")) {
    out->cases.push_back(case_from_json(j["case"]));
    out->last_started.clear();
    out->has_last_case = false;
  } else if (j.contains("end")) {
    out->ended_tests.insert(j["end"].value("test", ""));
    out->last_started.clear();
    out->last_test.clear();
    out->has_last_case = false;
  } else if (j.contains("record")) {
    out->records.push_back(j["record"]);
    out->last_started.clear();
  }
}

}  // namespace

std::string self_exe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "bp-conformance";
  buf[n] = 0;
  return buf;
}

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
    // Child: its own process group (a timeout kills everything it started);
    // stdout becomes the pipe; stderr stays the terminal's.
    setpgid(0, 0);
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
  if (timed_out) {
    kill(-pid, SIGKILL);  // the group, grandchildren included
    kill(pid, SIGKILL);   // in case setpgid had not run yet
  }
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

// One line per record, flushed: if the child dies next, the parent has it.
void emit_line(const nlohmann::json& j) {
  const std::string s = j.dump() + "\n";
  fwrite(s.data(), 1, s.size(), stdout);
  fflush(stdout);
}

void emit_start(const std::string& test_id, const std::string& what, const CaseResult* pending) {
  nlohmann::json start = {{"test", test_id}, {"what", what}};
  if (pending != nullptr) start["case"] = case_to_json(*pending);
  emit_line({{"start", start}});
}

void emit_case(const CaseResult& c) { emit_line({{"case", case_to_json(c)}}); }

void emit_test_end(const std::string& test_id) { emit_line({{"end", {{"test", test_id}}}}); }

}  // namespace bpc
