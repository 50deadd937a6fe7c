// Pinned host memory for asynchronous copies (host_pinned.cpp).
#pragma once

#include "context.h"

namespace bp::core {

// The raw memory of a device's pinned-host allocator: the backend's
// host_allocate / host_deallocate, or aligned host memory when it has none;
// events from `device_memory` (record_stream on pinned blocks).
RawMemory PinnedMemory(const bp_backend_t& t, const RawMemory& device_memory, DeviceState* dev);

}  // namespace bp::core
