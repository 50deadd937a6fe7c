// The streams of the simulated device: the default stream (bp_stream_t NULL,
// as stream_get_default has always answered) and those stream_create made,
// each its own in-order Queue (queue.h) with the device's async, launch and
// kernel-duration settings. A created stream's bp_stream_t is its Queue's
// address; Find checks it against the live ones, so a stale or foreign
// stream value is an error message, not a crash. A real plugin's streams are
// its driver's queues (cudaStream_t, cl_command_queue).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "backplane/backend.h"
#include "queue.h"

namespace vendor_sim {

class StreamTable {
 public:
  // Starts the default stream's queue; false if its thread cannot start.
  // `hold_path` (test only, Queue::Start) must outlive the table.
  bool Start(bool async, uint32_t launch_us, uint32_t kernel_us, const char* hold_path = nullptr);
  // Runs what every stream has queued, stops their threads and frees the
  // created streams (shutdown).
  void StopAll();

  // The queue of `stream`: the default one for NULL, nullptr for a value that
  // is not a live stream of this device.
  Queue* Find(bp_stream_t stream);
  Queue& default_queue() { return default_; }

  // A new stream with the default one's settings: OK, OUT_OF_MEMORY, or
  // UNAVAILABLE (its device thread cannot start).
  bp_status_t Create(bp_stream_t* out_stream);
  // Drains a created stream (nothing queued is lost), then frees it. False
  // for NULL (the default stream) or a value that is not a live stream.
  bool Destroy(bp_stream_t stream);
  // Blocks until every stream has run what it was given so far (a driver's
  // free waits for the whole device: the block may be in use on any stream).
  void DrainAll();

 private:
  bool async_ = false;
  uint32_t launch_us_ = 0, kernel_us_ = 0;
  const char* hold_path_ = nullptr;
  Queue default_;
  std::mutex mu_;  // guards created_
  std::unordered_map<const void*, std::unique_ptr<Queue>> created_;
};

}  // namespace vendor_sim
