// The simulated device's work queue: one per stream (stream_table.h). By
// default the device is synchronous: Submit runs the work at once, on the
// caller's thread. With BP_VENDOR_SIM_ASYNC=1 it behaves as a real
// accelerator: Submit returns at once and the queue's own device thread runs
// the work later, in submission order; kernels and copies start
// BP_VENDOR_SIM_LAUNCH_US microseconds after reaching the head (a launch
// latency, default 0) and a kernel keeps the thread busy
// BP_VENDOR_SIM_KERNEL_US more after it ran (a kernel duration), and, for
// tests, as long as the file BP_VENDOR_SIM_HOLD_KERNELS names exists. Two streams
// are two threads, so their work overlaps unless an event orders it. A host
// that reads device memory without synchronizing the stream then reads stale
// bytes, which is what the async mode exists to catch. A real plugin hands
// the work to its driver's queue instead.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace vendor_sim {

// What an item costs the device thread beyond running it (async mode only).
enum class ItemKind {
  kCopy,    // the launch latency
  kKernel,  // the launch latency, then the kernel duration
  kMarker,  // an event record or wait: nothing (it is not a launch)
};

class Queue {
 public:
  Queue() = default;
  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;
  ~Queue() { Stop(); }

  // Starts the device thread when `async`; launch_us delays each kernel and
  // copy, kernel_us keeps the thread busy after each kernel, and so does a
  // file at `hold_path` (not NULL or empty: test only, see faults.h) for as
  // long as it exists; `hold_path` must outlive the queue. Returns false if
  // the thread cannot be started (the queue stays synchronous).
  bool Start(bool async, uint32_t launch_us, uint32_t kernel_us = 0, const char* hold_path = nullptr);
  // Runs what is queued, then stops the device thread. Idempotent.
  void Stop();
  bool async() const { return async_; }

  // Runs `work` after everything submitted before it: now when synchronous,
  // on the device thread when async. `work` must not fail: everything that
  // can fail (arguments, handles) is checked before it is submitted, so an
  // error still reaches the caller of the kernel or copy.
  void Submit(std::function<void()> work, ItemKind kind = ItemKind::kCopy);
  // Submit, with an allocation failure reported as false rather than thrown
  // (no exception may cross the C ABI). Nothing is queued then.
  template <typename F>
  bool TrySubmit(F&& work, ItemKind kind = ItemKind::kCopy) noexcept {
    try {
      Submit(std::function<void()>(std::forward<F>(work)), kind);
      return true;
    } catch (...) {
      return false;
    }
  }
  // Blocks until every item submitted so far has run (stream_synchronize).
  void Drain();
  // A fault of work this queue ran (faults.h, BP_VENDOR_SIM_FAULT_OP): kept,
  // like CUDA's sticky errors, for the queue's life; the first one wins.
  // Fault() is "" while none happened. Thread-safe (the device thread sets it).
  void SetFault(const std::string& fault);
  std::string Fault();

 private:
  struct Item {
    std::function<void()> work;
    ItemKind kind;
  };
  void Run();

  bool async_ = false;
  uint32_t launch_us_ = 0;
  uint32_t kernel_us_ = 0;
  const char* hold_path_ = nullptr;
  std::mutex mu_;
  std::condition_variable wake_;  // work arrived, or stop
  std::condition_variable idle_;  // an item finished
  std::deque<Item> items_;
  uint64_t submitted_ = 0, finished_ = 0;
  bool stop_ = false;
  std::string fault_;  // guarded by mu_
  std::thread device_;
};

}  // namespace vendor_sim
