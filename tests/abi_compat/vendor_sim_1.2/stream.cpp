// Streams of the simulated device: everything runs synchronously, so the
// default stream is NULL and synchronizing has nothing to wait for, except
// the delay the BP_VENDOR_SIM_LATENCY_US fault adds. A real plugin returns
// its driver's queue and waits on it here.
#include "stream.h"

#include <chrono>
#include <thread>

namespace vendor_sim {

bp_status_t StreamGetDefault(void*, int32_t, bp_stream_t* out_stream) {
  *out_stream = nullptr;  // one implicit in-order queue
  return BP_STATUS_OK;
}

bp_status_t StreamSynchronize(void* bd, int32_t, bp_stream_t) {
  // Work completes when it is enqueued, unless BP_VENDOR_SIM_LATENCY_US says
  // the device is late.
  const uint32_t latency_us = StateOf(bd)->faults.latency_us;
  if (latency_us != 0) std::this_thread::sleep_for(std::chrono::microseconds(latency_us));
  return BP_STATUS_OK;
}

}  // namespace vendor_sim
