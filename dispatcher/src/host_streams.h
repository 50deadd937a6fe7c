// Streams and events of the built-in host memory backend (host_streams.cpp).
#pragma once

#include "backplane/backend.h"

namespace bp::core {

// Fills the stream_create/destroy and event slots of the host table.
void FillHostStreams(bp_backend_t* t);

}  // namespace bp::core
