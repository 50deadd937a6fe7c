// The simulated device's work queue. By default the device is synchronous:
// Submit runs the work at once, on the caller's thread. With
// BP_VENDOR_SIM_ASYNC=1 it behaves as a real accelerator: Submit returns at
// once and a device thread runs the work later, in submission order, each
// item after BP_VENDOR_SIM_LAUNCH_US microseconds (a launch latency, default
// 0). A host that reads device memory without synchronizing the stream then
// reads stale bytes, which is what the async mode exists to catch. A real
// plugin hands the work to its driver's queue instead.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace vendor_sim {

class Queue {
 public:
  // Starts the device thread when `async`; launch_us delays each item.
  // Returns false if the thread cannot be started (the queue stays synchronous).
  bool Start(bool async, uint32_t launch_us);
  // Runs what is queued, then stops the device thread. Idempotent.
  void Stop();
  bool async() const { return async_; }

  // Runs `work` after everything submitted before it: now when synchronous,
  // on the device thread when async. `work` must not fail: everything that
  // can fail (arguments, handles) is checked before it is submitted, so an
  // error still reaches the caller of the kernel or copy.
  void Submit(std::function<void()> work);
  // Submit, with an allocation failure reported as false rather than thrown
  // (no exception may cross the C ABI). Nothing is queued then.
  template <typename F>
  bool TrySubmit(F&& work) noexcept {
    try {
      Submit(std::function<void()>(std::forward<F>(work)));
      return true;
    } catch (...) {
      return false;
    }
  }
  // Blocks until every item submitted so far has run (stream_synchronize).
  void Drain();

 private:
  void Run();

  bool async_ = false;
  uint32_t launch_us_ = 0;
  std::mutex mu_;
  std::condition_variable wake_;  // work arrived, or stop
  std::condition_variable idle_;  // an item finished
  std::deque<std::function<void()>> items_;
  uint64_t submitted_ = 0, finished_ = 0;
  bool stop_ = false;
  std::thread device_;
};

}  // namespace vendor_sim
