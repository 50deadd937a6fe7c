// The CPU backend's trivial streams (the CPU runs every kernel synchronously
// on the calling thread).
#include "stream.h"

namespace bp_cpu {

bp_status_t StreamGetDefault(void*, int32_t, bp_stream_t* out_stream) {
  *out_stream = nullptr;
  return BP_STATUS_OK;
}

bp_status_t StreamSynchronize(void*, int32_t, bp_stream_t) { return BP_STATUS_OK; }

}  // namespace bp_cpu
