// Streams of the simulated device: each an in-order queue (stream_table.h),
// the default one NULL. Synchronizing waits for that one queue to drain
// (nothing to wait for on the synchronous device), plus the delay the
// BP_VENDOR_SIM_LATENCY_US fault adds. A real plugin returns and creates its
// driver's queues and waits on them here.
#include "stream.h"

#include <chrono>
#include <string>
#include <thread>

#include "device.h"

namespace vendor_sim {

const char kNotAStream[] =
    "'stream' is not a stream of this device (from stream_get_default or stream_create, not destroyed)";

Queue* QueueOf(State* s, bp_stream_t stream, const char* fn) {
  Queue* q = s->streams.Find(stream);
  if (q == nullptr) Fail(s, BP_STATUS_INVALID_ARGUMENT, fn, kNotAStream);
  return q;
}

bp_status_t StreamGetDefault(void* bd, int32_t device, bp_stream_t* out_stream) {
  if (CheckDevice(StateOf(bd), device, "stream_get_default") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  *out_stream = nullptr;  // StreamTable's default queue
  return BP_STATUS_OK;
}

bp_status_t StreamSynchronize(void* bd, int32_t device, bp_stream_t stream) {
  if (CheckDevice(StateOf(bd), device, "stream_synchronize") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  Queue* q = QueueOf(StateOf(bd), stream, "stream_synchronize");
  if (q == nullptr) return BP_STATUS_INVALID_ARGUMENT;
  q->Drain();  // this stream only: the others keep running
  const uint32_t latency_us = StateOf(bd)->faults.latency_us;
  if (latency_us != 0) std::this_thread::sleep_for(std::chrono::microseconds(latency_us));
  // A fault of work on this stream is sticky (faults.h): every synchronize
  // reports it, naming the operator. The stream can still be destroyed.
  const std::string fault = q->Fault();
  if (!fault.empty()) return Fail(StateOf(bd), BP_STATUS_INTERNAL, "stream_synchronize", fault.c_str());
  return BP_STATUS_OK;
}

bp_status_t StreamCreate(void* bd, int32_t device, bp_stream_t* out_stream) {
  State* s = StateOf(bd);
  if (CheckDevice(s, device, "stream_create") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  if (out_stream == nullptr) return Fail(s, BP_STATUS_INVALID_ARGUMENT, "stream_create", "'out_stream' is NULL");
  const bp_status_t st = s->streams.Create(out_stream);
  if (st == BP_STATUS_OUT_OF_MEMORY) return Fail(s, st, "stream_create", "out of host memory for a new stream");
  if (st != BP_STATUS_OK) return Fail(s, st, "stream_create", "cannot start the new stream's device thread");
  return BP_STATUS_OK;
}

bp_status_t StreamDestroy(void* bd, int32_t device, bp_stream_t stream) {
  State* s = StateOf(bd);
  if (CheckDevice(s, device, "stream_destroy") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  if (stream == nullptr)
    return Fail(s, BP_STATUS_INVALID_ARGUMENT, "stream_destroy",
                "'stream' is the default stream (it is never destroyed)");
  // Drains first: the host synchronizes before destroying, but work queued
  // meanwhile must not be lost either.
  if (!s->streams.Destroy(stream))
    return Fail(s, BP_STATUS_INVALID_ARGUMENT, "stream_destroy", "'stream' is not a stream made by stream_create");
  return BP_STATUS_OK;
}

}  // namespace vendor_sim
