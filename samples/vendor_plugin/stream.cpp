// Streams of the simulated device: everything runs synchronously, so the
// default stream is NULL and synchronizing has nothing to wait for. A real
// plugin returns its driver's queue and waits on it here.
#include "stream.h"

namespace vendor_sim {

bp_status_t StreamGetDefault(void*, int32_t, bp_stream_t* out_stream) {
  *out_stream = nullptr;  // one implicit in-order queue
  return BP_STATUS_OK;
}

bp_status_t StreamSynchronize(void*, int32_t, bp_stream_t) { return BP_STATUS_OK; }

}  // namespace vendor_sim
