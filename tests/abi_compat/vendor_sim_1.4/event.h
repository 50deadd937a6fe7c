// The simulated device's events: a generation counter per event. Each
// event_record captures a new generation (`recorded`) and queues a marker
// that, when the stream reaches it, marks that generation done and stamps
// the time. The event is complete when its latest generation is done, so a
// never-recorded event is complete and a re-record replaces the capture (as
// CUDA's events). A waiter captures the generation it waits for when it is
// queued and waits for that very generation: records on two streams finish
// out of order, so a later generation being done says nothing of an earlier
// one. Events are shared_ptr-owned: a marker or a wait queued on a stream
// keeps its event alive after event_destroy. A real plugin wraps its
// driver's events (cudaEvent_t, cl_event) instead.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>

#include "backplane/backend.h"

namespace vendor_sim {

class Event {
 public:
  using Clock = std::chrono::steady_clock;

  // Host side of a record: the new generation it captures, or 0 when out of
  // host memory (nothing recorded then).
  uint64_t BeginRecord() noexcept;
  // Device side: the work before generation `gen` has run. Stamps the time
  // when `gen` is still the latest capture.
  void Complete(uint64_t gen);
  // The generation the latest record captured (0: never recorded).
  uint64_t recorded();
  // Generation `gen` is done (never blocks; 0, never recorded, is done).
  bool IsDone(uint64_t gen);
  // The latest generation is done (never blocks).
  bool IsComplete();
  // Blocks until generation `gen` is done (a stream's wait item, or
  // event_synchronize with the generation recorded at the call).
  void WaitFor(uint64_t gen);
  // The completion time of the latest record: false when never recorded or
  // not complete yet.
  bool CompletionTime(Clock::time_point* out);

 private:
  bool Done(uint64_t gen) const { return pending_.count(gen) == 0; }

  std::mutex mu_;
  std::condition_variable done_;  // a generation got done
  uint64_t recorded_ = 0;
  std::set<uint64_t> pending_;  // generations recorded and not done yet
  Clock::time_point stamp_{};   // when generation recorded_ got done
};

// The live events of the plugin: a bp_event_t is its Event's address; Find
// checks it, so a destroyed or foreign event value is an error, not a crash.
class EventTable {
 public:
  // A new event: OK or OUT_OF_MEMORY.
  bp_status_t Create(bp_event_t* out_event);
  // The event behind `e`, or nullptr when it is not a live event.
  std::shared_ptr<Event> Find(bp_event_t e);
  // Forgets `e`; work queued with it keeps it alive. False if not live.
  bool Destroy(bp_event_t e);
  // Forgets every event (shutdown, after the streams stopped).
  void Clear();

 private:
  std::mutex mu_;
  std::unordered_map<const void*, std::shared_ptr<Event>> live_;
};

}  // namespace vendor_sim
