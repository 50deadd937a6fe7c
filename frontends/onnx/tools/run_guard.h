// bp-run's limits on a hostile or broken model or plugin: a watchdog for
// --timeout (a kernel or a plugin init that never returns) and the memory
// limit every host-side buffer sized by the model is checked against before
// it is allocated (--max-memory).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace bprun {

/// bp-run's exit code when --timeout runs out.
constexpr int kExitTimeout = 4;

/// --timeout: after `seconds` (<= 0: never) prints one line naming what was
/// running ("bp-run: timed out after 5 s (--timeout) while running node #3
/// 'conv1' (Conv)") and ends the process with kExitTimeout, without
/// unwinding (a kernel stuck in a device call cannot be interrupted).
class Watchdog {
 public:
  explicit Watchdog(double seconds);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  /// What the process is doing now ("loading the model"), for the line.
  void set_phase(const std::string& what);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::string phase_ = "starting";
  bool done_ = false;
  std::thread thread_;
};

/// The default of --max-memory: the machine's physical memory.
uint64_t default_memory_limit();

/// Bytes of a tensor of `sizes` x `itemsize`; false with *err ("input x:
/// shape [1099511627776] of float32 needs 4398046511104 bytes, more than
/// --max-memory 16 GiB") when it overflows or exceeds `limit`.
bool check_tensor_bytes(const std::string& what, const std::vector<int64_t>& sizes, size_t itemsize, const char* dtype,
                        uint64_t limit, uint64_t* bytes, std::string* err);

/// The most --timeout takes: a year. The watchdog adds it to the clock's
/// now; 1e20 s overflowed that and the watchdog spun.
constexpr double kMaxTimeoutSeconds = 31536000.0;

/// --timeout's text: a finite number of seconds in [0, kMaxTimeoutSeconds]
/// (0: no limit); false with *err naming the option and the value (nan,
/// inf, negative, too large, not a number).
bool parse_timeout(const std::string& text, double* seconds, std::string* err);

/// --max-memory's text: a positive byte count with an optional unit (4GiB,
/// 512MB, 1000); false with *err naming the option and the value (negative,
/// zero, not a size, over 2^64).
bool parse_memory(const std::string& text, uint64_t* bytes, std::string* err);

/// "16 GiB", "512 MiB", "1000 B".
std::string human_bytes(uint64_t b);

}  // namespace bprun
