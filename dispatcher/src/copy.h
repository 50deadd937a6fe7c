// Data movement done by the core, all in copy.cpp: host-side strided
// gather/scatter with dtype conversion (float16/bfloat16 included), staging
// device views through the host (counted in the slot's transfer counters),
// and copy_ (CopyInto), which every tensor move, cast and fallback uses.
// Works for backends whose memory the host cannot address.
#pragma once

#include "context.h"
#include "meta/meta.h"
#include "status.h"

namespace bp::core {

// Element-wise copy with conversion between host buffers. `src` and `dst`
// have the same sizes (src may have zero strides to broadcast). Geometries
// carry dtype, strides and offset (elements) relative to the base pointers.
void HostConvert(const void* src_base, const Geometry& src, void* dst_base, const Geometry& dst);

// Reads the view `view` of device memory `base` (on `dev`) into a contiguous
// host buffer of dtype `dst_dtype`.
Status ReadView(DeviceState* dev, const void* base, const Geometry& view, DLDataType dst_dtype,
                void* host_dst);
// Writes the contiguous host buffer `host_src` (dtype src_dtype, view's sizes)
// into the view `view` of device memory `base`. Synchronizes the stream.
Status WriteView(DeviceState* dev, void* base, const Geometry& view, const void* host_src,
                 DLDataType src_dtype);

// Geometry of a contiguous tensor of `like`'s sizes with dtype `dtype`.
Geometry ContiguousLike(const Geometry& like, DLDataType dtype);

// Byte size of a contiguous buffer of geo's sizes and dtype.
size_t ContiguousBytes(const Geometry& geo);

// dst.copy_(src): any device to any device, with dtype conversion and
// broadcasting of src to dst's sizes; the backend's copy_ kernel when both
// are on one device and it has one.
Status CopyInto(bp_context_t* ctx, bp_tensor_t* dst, bp_tensor_t* src);

// Enqueues a copy of `nbytes` between the device's memory at base + offset
// and host memory on the calling thread's current stream of `dev`, without
// waiting (bp_tensor_to_host_async / from_host_async): the backend's
// copy_device_to_host_async, or its synchronous copy when it has none.
// Counted as the core's other copies are. A backend error names the device.
Status CopyToHostAsync(DeviceState* dev, const void* base, size_t src_offset, void* dst, size_t nbytes);
Status CopyFromHostAsync(DeviceState* dev, const void* src, void* base, size_t dst_offset, size_t nbytes);

// Waits for the work queued on the calling thread's current stream of `dev`
// (before the host reads or writes a unified device's memory). A backend
// error is reported naming the device.
Status SynchronizeDevice(DeviceState* dev);

// Host<->device bytes the core's copies moved on the calling thread so far;
// the difference around a sequence of copies is what they moved (the cast
// route's bytes).
uint64_t StagedBytesOnThread();

float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);
float BFloat16ToFloat(uint16_t b);
uint16_t FloatToBFloat16(float f);

}  // namespace bp::core
