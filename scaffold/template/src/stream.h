/* Streams of @NAME@: the default stream and synchronization (the stream
 * slots of bp_backend_t; the event_* slots stay NULL: no events). */
#ifndef BACKPLANE_PLUGIN_@NAME@_STREAM_H_
#define BACKPLANE_PLUGIN_@NAME@_STREAM_H_

#include "plugin.h"

bp_status_t @NAME@_stream_get_default(void* backend_data, int32_t device, bp_stream_t* out_stream);
bp_status_t @NAME@_stream_synchronize(void* backend_data, int32_t device, bp_stream_t stream);

#endif
