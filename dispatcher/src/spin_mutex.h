// A mutex for critical sections of a few dozen instructions on the operator
// call path (the caching allocator's free lists). Uncontended, lock is one
// atomic exchange and unlock a plain release store: half the locked
// instructions of a pthread mutex, whose unlock must also be an atomic
// read-modify-write to find sleepers. A waiter spins briefly, then yields
// its time slice, so a holder that is descheduled, or one that calls into a
// plugin's allocate (rare: a cache miss), is not starved. Meets BasicLockable
// (std::lock_guard, std::unique_lock).
#pragma once

#include <sched.h>

#include <atomic>

namespace bp::core {

class SpinMutex {
 public:
  void lock() {
    int spins = 0;
    while (locked_.exchange(true, std::memory_order_acquire)) {
      // Read-only wait: the line stays shared until the holder's store.
      while (locked_.load(std::memory_order_relaxed)) {
        if (spins < 64) {
          ++spins;
          CpuRelax();
        } else {
          sched_yield();
        }
      }
    }
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  static void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  std::atomic<bool> locked_{false};
};

}  // namespace bp::core
