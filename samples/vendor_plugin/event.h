// The simulated device's events: a generation counter per event. Each
// event_record captures a new generation (`recorded`) and queues a marker
// that, when the stream reaches it, sets `completed` to that generation and
// stamps the time; the event is complete when completed >= recorded, so a
// never-recorded event is complete and a re-record replaces the capture (as
// CUDA's events). A waiter captures the generation it waits for when it is
// queued, which is what makes event_wait order only the work before that
// record. Events are shared_ptr-owned: a marker or a wait queued on a stream
// keeps its event alive after event_destroy. A real plugin wraps its
// driver's events (cudaEvent_t, cl_event) instead.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "backplane/backend.h"

namespace vendor_sim {

class Event {
 public:
  using Clock = std::chrono::steady_clock;

  // Host side of a record: the new generation it captures.
  uint64_t BeginRecord();
  // Device side: the work before generation `gen` has run. Stamps the time
  // unless a later generation already completed (records on two streams
  // may finish out of order; the latest capture wins).
  void Complete(uint64_t gen);
  // The generation the latest record captured (0: never recorded).
  uint64_t recorded();
  // completed >= recorded (never blocks).
  bool IsComplete();
  // Blocks until generation `gen` has completed (a stream's wait item, or
  // event_synchronize with the generation recorded at the call).
  void WaitFor(uint64_t gen);
  // The completion time of the latest record: false when never recorded or
  // not complete yet.
  bool CompletionTime(Clock::time_point* out);

 private:
  std::mutex mu_;
  std::condition_variable done_;  // completed_ grew
  uint64_t recorded_ = 0, completed_ = 0;
  Clock::time_point stamp_{};
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
