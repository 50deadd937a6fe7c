// The parent side of the collectives group: W ranks as child processes of
// this executable, one file store per run, a time limit on the whole run.
#include "groups/collectives_group.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

namespace bpc {

void add_collectives_options(CLI::App& app, CollectivesCli* cli) {
  app.add_option("--world-sizes", cli->world_sizes, "collectives group: process counts to run (default 2 4)")
      ->delimiter(',');
  app.add_option("--collectives-timeout-ms", cli->timeout_ms,
                 "collectives group: each communicator's timeout in ms (default 3000)");
  app.add_option("--collectives-rank", cli->rank)->group("");
  app.add_option("--collectives-world", cli->world)->group("");
  app.add_option("--collectives-store", cli->store_dir)->group("");
}

bool is_collectives_worker(const CollectivesCli& cli) { return cli.rank >= 0; }

namespace {

struct RankRun {
  pid_t pid = -1;
  std::string log;
  int status = 0;
  bool done = false;
};

// Starts the ranks, waits for them (kills them all past `limit_s`) and
// returns per case the ranks that failed it, with the first reason.
bool RunWorld(const Target& t, const std::vector<std::string>& base_argv, const CollectivesCli& cli, int world,
              std::ostream& out, int* passed_cases, int* failed_cases) {
  char tmpl[] = "/tmp/bp_collectives_XXXXXX";
  const char* dir = mkdtemp(tmpl);
  if (dir == nullptr) {
    out << "  " << t.device_label << " W=" << world << ": cannot make a temporary directory\n";
    ++*failed_cases;
    return false;
  }
  const std::string store = std::string(dir) + "/store";
  std::vector<RankRun> ranks(static_cast<size_t>(world));
  for (int r = 0; r < world; ++r) {
    RankRun& rr = ranks[static_cast<size_t>(r)];
    rr.log = std::string(dir) + "/rank" + std::to_string(r) + ".log";
    std::vector<std::string> argv = base_argv;
    for (const std::string& a :
         {std::string("--worker-backend"), t.backend_name, std::string("--worker-device"), std::to_string(t.device),
          std::string("--collectives-rank"), std::to_string(r), std::string("--collectives-world"),
          std::to_string(world), std::string("--collectives-store"), store, std::string("--collectives-timeout-ms"),
          std::to_string(cli.timeout_ms)}) {
      argv.push_back(a);
    }
    rr.pid = fork();
    if (rr.pid == 0) {
      const int fd = open(rr.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
      }
      std::vector<char*> cargv;
      for (std::string& a : argv) cargv.push_back(&a[0]);
      cargv.push_back(nullptr);
      execv(cargv[0], cargv.data());
      _exit(127);
    }
  }
  // Every case waits at most a few timeouts; the whole run gets a generous
  // bound that grows with a raised timeout (sanitizer builds raise it).
  const int64_t limit_ms = std::max<int64_t>(240000, 40 * cli.timeout_ms);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(limit_ms);
  bool timed_out = false;
  for (;;) {
    bool all = true;
    for (RankRun& rr : ranks) {
      if (rr.done || rr.pid <= 0) continue;
      if (waitpid(rr.pid, &rr.status, WNOHANG) == rr.pid) {
        rr.done = true;
      } else {
        all = false;
      }
    }
    if (all) break;
    if (std::chrono::steady_clock::now() > deadline) {
      timed_out = true;
      for (RankRun& rr : ranks) {
        if (!rr.done && rr.pid > 0) {
          kill(rr.pid, SIGKILL);
          waitpid(rr.pid, &rr.status, 0);
          rr.done = true;
        }
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // Merge: a case passes when every rank reported it ok.
  std::map<std::string, int> ok_count;
  std::map<std::string, std::string> failure;
  std::vector<std::string> order;
  std::set<std::string> seen;
  std::string engine = "?";
  bool all_ok = !timed_out;
  for (int r = 0; r < world; ++r) {
    RankRun& rr = ranks[static_cast<size_t>(r)];
    std::ifstream in(rr.log);
    std::string line;
    bool killed_line = false;
    while (std::getline(in, line)) {
      if (line.rfind("engine ", 0) == 0) engine = line.substr(7);
      if (line == kKilledLine) killed_line = true;
      std::string name;
      bool ok = false;
      if (line.rfind("ok ", 0) == 0) {
        name = line.substr(3);
        ok = true;
      } else if (line.rfind("FAIL ", 0) == 0) {
        const size_t colon = line.find(": ", 5);
        name = line.substr(5, colon == std::string::npos ? std::string::npos : colon - 5);
        if (!failure.count(name)) failure[name] = "rank " + std::to_string(r) + ": " + line.substr(5);
      } else {
        continue;
      }
      if (seen.insert(name).second) order.push_back(name);
      if (ok) ++ok_count[name];
    }
    const bool exited = WIFEXITED(rr.status);
    // The last rank kills itself on purpose (after printing kKilledLine).
    const bool killed_on_purpose = r == world - 1 && !exited && !timed_out && WIFSIGNALED(rr.status) &&
                                   WTERMSIG(rr.status) == SIGKILL && killed_line;
    if (killed_on_purpose) continue;
    if (!exited || WEXITSTATUS(rr.status) != 0) all_ok = false;
    if (!exited) {
      out << "  " << t.device_label << " W=" << world << " rank " << r << ": "
          << (timed_out ? "killed after 240 s (hung)" : "crashed (signal " + std::to_string(WTERMSIG(rr.status)) + ")")
          << "; log " << rr.log << "\n";
    }
  }
  int pass = 0, fail = 0;
  for (const std::string& name : order) {
    // Some cases run on some ranks only (the rank that leaves skips the
    // checks after it): a case passes when no rank failed it; a rank that
    // died before reporting fails the run through its exit status.
    const bool ok = ok_count[name] > 0 && !failure.count(name);
    if (ok) {
      ++pass;
    } else {
      ++fail;
      const std::string why = failure.count(name) ? failure[name] : "not reported by every rank";
      out << "  FAIL " << t.device_label << " W=" << world << " " << name << " -- " << why << "\n";
    }
  }
  out << "  " << t.device_label << " W=" << world << " (engine " << engine << "): " << pass << " pass, " << fail
      << " fail\n";
  *passed_cases += pass;
  *failed_cases += fail;
  if (fail == 0 && all_ok) {
    std::string cmd = "rm -rf '" + std::string(dir) + "'";
    if (std::system(cmd.c_str()) != 0) out << "  (could not remove " << dir << ")\n";
  } else {
    out << "  logs: " << dir << "\n";
  }
  return fail == 0 && all_ok;
}

}  // namespace

bool run_collectives_group(const std::vector<Target>& targets, const std::vector<std::string>& base_argv,
                           const CollectivesCli& cli, std::ostream& out) {
  out << "\n== collectives group (ranks as processes, file store, timeout " << cli.timeout_ms << " ms)\n";
  bool all = true;
  std::vector<std::string> verdicts;
  for (const Target& t : targets) {
    int pass = 0, fail = 0;
    bool ok = true;
    for (int w : cli.world_sizes) ok = RunWorld(t, base_argv, cli, w, out, &pass, &fail) && ok;
    std::ostringstream v;
    std::string sizes;
    for (int w : cli.world_sizes) sizes += (sizes.empty() ? "" : ",") + std::to_string(w);
    v << t.device_label << ": " << (ok ? "CONFORMANT" : "NOT CONFORMANT") << ": collectives group " << pass << " pass, "
      << fail << " fail (" << sizes << " ranks)";
    verdicts.push_back(v.str());
    all = all && ok;
  }
  out << "\nVerdicts:\n";
  for (const std::string& v : verdicts) out << "  " << v << "\n";
  return all;
}

}  // namespace bpc
