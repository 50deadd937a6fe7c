/* Streams of @NAME@. REPLACE with your driver's queues. As written: the
 * copies and kernels run synchronously, so the one stream is NULL and
 * synchronizing has nothing to wait for. */
#include "stream.h"

bp_status_t @NAME@_stream_get_default(void* bd, int32_t device, bp_stream_t* out_stream) {
  (void)bd;
  (void)device;
  *out_stream = NULL; /* one implicit in-order queue */
  return BP_STATUS_OK;
}

bp_status_t @NAME@_stream_synchronize(void* bd, int32_t device, bp_stream_t stream) {
  (void)bd;
  (void)device;
  (void)stream;
  return BP_STATUS_OK; /* everything finished when it returned */
}
