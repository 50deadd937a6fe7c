#include "run_guard.h"

#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>

namespace bprun {

Watchdog::Watchdog(double seconds) {
  if (seconds <= 0) return;
  thread_ = std::thread([this, seconds] {
    std::unique_lock<std::mutex> lock(mu_);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    if (cv_.wait_until(lock, deadline, [this] { return done_; })) return;
    std::fprintf(stderr, "bp-run: timed out after %g s (--timeout) while %s\n", seconds, phase_.c_str());
    std::fflush(stdout);
    // _exit: the stuck thread holds whatever it holds; destructors would wait on it.
    _exit(kExitTimeout);
  });
}

Watchdog::~Watchdog() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Watchdog::set_phase(const std::string& what) {
  std::lock_guard<std::mutex> lock(mu_);
  phase_ = what;
}

uint64_t default_memory_limit() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return uint64_t{16} << 30;  // unknown: 16 GiB
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

bool parse_timeout(const std::string& text, double* seconds, std::string* err) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  // !(v <= max) also refuses nan; strtod's ERANGE catches 1e400.
  if (text.empty() || end == text.c_str() || *end != '\0' || errno == ERANGE || !std::isfinite(v) || v < 0 ||
      !(v <= kMaxTimeoutSeconds)) {
    char max[32];
    std::snprintf(max, sizeof max, "%.0f", kMaxTimeoutSeconds);
    *err = "--timeout " + text + ": expected a number of seconds from 0 (no limit) to " + max + " (a year)";
    return false;
  }
  *seconds = v;
  return true;
}

bool parse_memory(const std::string& text, uint64_t* bytes, std::string* err) {
  *err = "--max-memory " + text + ": expected a positive size in bytes, e.g. 4GiB, 512MB or 1000";
  // CLI11's size parser reads "-5" as 2^64 - 5: the sign is refused here.
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  std::string value = text;
  try {
    if (!CLI::AsSizeValue(false)(value).empty()) return false;
    size_t used = 0;
    const unsigned long long v = std::stoull(value, &used);
    if (used != value.size() || v == 0) return false;
    *bytes = v;
  } catch (const std::exception&) {  // out of range, not a number
    return false;
  }
  err->clear();
  return true;
}

std::string human_bytes(uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  double v = static_cast<double>(b);
  while (v >= 1024.0 && u < 6) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

bool check_tensor_bytes(const std::string& what, const std::vector<int64_t>& sizes, size_t itemsize, const char* dtype,
                        uint64_t limit, uint64_t* bytes, std::string* err) {
  std::string shape = "[";
  for (size_t k = 0; k < sizes.size(); ++k) shape += (k ? ", " : "") + std::to_string(sizes[k]);
  shape += "]";
  uint64_t n = itemsize;
  bool overflow = false;
  for (int64_t s : sizes) {
    if (s < 0) {
      *err = what + ": shape " + shape + " has a negative dimension";
      return false;
    }
    if (s != 0 && n > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(s)) overflow = true;
    n = overflow ? 0 : n * static_cast<uint64_t>(s);
  }
  if (overflow || n > limit) {
    *err = what + ": shape " + shape + " of " + dtype + " needs " +
           (overflow ? std::string("more than 2^64 bytes") : std::to_string(n) + " bytes (" + human_bytes(n) + ")") +
           ", more than the memory limit of " + human_bytes(limit) + " (--max-memory)";
    return false;
  }
  *bytes = n;
  return true;
}

}  // namespace bprun
