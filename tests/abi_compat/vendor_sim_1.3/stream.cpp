// Streams of the simulated device: one in-order queue (queue.h), so the
// default stream is NULL and synchronizing waits for that queue to drain
// (nothing to wait for on the synchronous device), plus the delay the
// BP_VENDOR_SIM_LATENCY_US fault adds. A real plugin returns its driver's
// queue and waits on it here.
#include "stream.h"

#include <chrono>
#include <thread>

namespace vendor_sim {

bp_status_t StreamGetDefault(void*, int32_t, bp_stream_t* out_stream) {
  *out_stream = nullptr;  // one implicit in-order queue
  return BP_STATUS_OK;
}

bp_status_t StreamSynchronize(void* bd, int32_t, bp_stream_t) {
  StateOf(bd)->queue.Drain();
  const uint32_t latency_us = StateOf(bd)->faults.latency_us;
  if (latency_us != 0) std::this_thread::sleep_for(std::chrono::microseconds(latency_us));
  return BP_STATUS_OK;
}

}  // namespace vendor_sim
