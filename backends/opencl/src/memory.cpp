// Device memory (cl_mem buffers: the pointer allocate() returns IS the
// cl_mem), copies with byte offsets in every direction, streams (one in-order
// queue per device) and cl_event based events.
#include "memory.h"

#include <algorithm>

namespace bpcl {
namespace {

Backend* B(void* data) { return static_cast<Backend*>(data); }

Status GetDevice(Backend* b, int32_t index, Device** out) {
  *out = b->device(index);
  if (*out == nullptr)
    return Status(BP_STATUS_OUT_OF_RANGE, "opencl: device " + std::to_string(index) + " out of range (" +
                                              std::to_string(b->devices.size()) + " devices)");
  return Ok();
}

cl_command_queue Queue(Device* d, bp_stream_t stream) {
  return stream != nullptr ? static_cast<cl_command_queue>(stream) : d->queue;
}

template <typename F>
bp_status_t Guard(void* data, F&& f) {
  try {
    Status st = f();
    return st.ok() ? BP_STATUS_OK : B(data)->Report(st);
  } catch (...) {
    return B(data)->Report(Status(BP_STATUS_INTERNAL, "opencl: unexpected exception"));
  }
}

Status Prefixed(const char* fn, Status st) {
  if (st.ok()) return st;
  return Status(st.code(), std::string("opencl ") + fn + ": " + st.message());
}

struct Event {
  cl_event ev = nullptr;   // last recorded marker; nullptr before the first record
  Device* dev = nullptr;   // its device: a NULL stream means this device's default queue
};

}  // namespace

bp_status_t Allocate(void* data, int32_t device, size_t nbytes, void** out_ptr) {
  return Guard(data, [&]() -> Status {
    Device* d = nullptr;
    BPCL_RETURN_IF_ERROR(GetDevice(B(data), device, &d));
    if (out_ptr == nullptr) return Status(BP_STATUS_INVALID_ARGUMENT, "opencl allocate: out_ptr is NULL");
    *out_ptr = nullptr;
    if (nbytes == 0) return Ok();
    if (d->max_alloc_bytes != 0 && nbytes > d->max_alloc_bytes) {
      return Status(BP_STATUS_OUT_OF_MEMORY, "opencl allocate: " + std::to_string(nbytes) +
                                                 " bytes exceed CL_DEVICE_MAX_MEM_ALLOC_SIZE (" +
                                                 std::to_string(d->max_alloc_bytes) + ") of device '" + d->name + "'");
    }
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(d->context, CL_MEM_READ_WRITE, nbytes, nullptr, &err);
    if (err != CL_SUCCESS) {
      return Prefixed("allocate", Status(ClErrorToStatus(err), "clCreateBuffer(" + std::to_string(nbytes) +
                                                                   " bytes): " + ClErrorName(err)));
    }
    *out_ptr = m;
    return Ok();
  });
}

bp_status_t Deallocate(void* data, int32_t device, void* ptr) {
  return Guard(data, [&]() -> Status {
    Device* d = nullptr;
    BPCL_RETURN_IF_ERROR(GetDevice(B(data), device, &d));
    if (ptr == nullptr) return Ok();
    // Kernels still queued keep the buffer alive: OpenCL frees it after them.
    return Prefixed("deallocate", ClCheck(clReleaseMemObject(static_cast<cl_mem>(ptr)), "clReleaseMemObject"));
  });
}

bp_status_t CopyHostToDevice(void* data, int32_t device, const void* src, void* dst, size_t dst_offset,
                             size_t nbytes, bp_stream_t stream) {
  return Guard(data, [&]() -> Status {
    Device* d = nullptr;
    BPCL_RETURN_IF_ERROR(GetDevice(B(data), device, &d));
    if (nbytes == 0) return Ok();
    if (src == nullptr || dst == nullptr)
      return Status(BP_STATUS_INVALID_ARGUMENT, "opencl copy_host_to_device: NULL src or dst");
    // Blocking: the caller may reuse its host buffer as soon as we return.
    return Prefixed("copy_host_to_device",
                    ClCheck(clEnqueueWriteBuffer(Queue(d, stream), static_cast<cl_mem>(dst), CL_TRUE, dst_offset,
                                                 nbytes, src, 0, nullptr, nullptr),
                            "clEnqueueWriteBuffer"));
  });
}

bp_status_t CopyDeviceToHost(void* data, int32_t device, const void* src, size_t src_offset, void* dst,
                             size_t nbytes, bp_stream_t stream) {
  return Guard(data, [&]() -> Status {
    Device* d = nullptr;
    BPCL_RETURN_IF_ERROR(GetDevice(B(data), device, &d));
    if (nbytes == 0) return Ok();
    if (src == nullptr || dst == nullptr)
      return Status(BP_STATUS_INVALID_ARGUMENT, "opencl copy_device_to_host: NULL src or dst");
    cl_mem m = static_cast<cl_mem>(const_cast<void*>(src));
    return Prefixed("copy_device_to_host",
                    ClCheck(clEnqueueReadBuffer(Queue(d, stream), m, CL_TRUE, src_offset, nbytes, dst, 0, nullptr,
                                                nullptr),
                            "clEnqueueReadBuffer"));
  });
}

bp_status_t CopyDeviceToDevice(void* data, int32_t device, const void* src, size_t src_offset, void* dst,
                               size_t dst_offset, size_t nbytes, bp_stream_t stream) {
  return Guard(data, [&]() -> Status {
    Device* d = nullptr;
    BPCL_RETURN_IF_ERROR(GetDevice(B(data), device, &d));
    if (nbytes == 0) return Ok();
    if (src == nullptr || dst == nullptr)
      return Status(BP_STATUS_INVALID_ARGUMENT, "opencl copy_device_to_device: NULL src or dst");
    cl_mem s = static_cast<cl_mem>(const_cast<void*>(src));
    cl_mem t = static_cast<cl_mem>(dst);
    cl_command_queue q = Queue(d, stream);
    const bool overlap = s == t && src_offset < dst_offset + nbytes && dst_offset < src_offset + nbytes;
    if (!overlap) {
      return Prefixed("copy_device_to_device",
                      ClCheck(clEnqueueCopyBuffer(q, s, t, src_offset, dst_offset, nbytes, 0, nullptr, nullptr),
                              "clEnqueueCopyBuffer"));
    }
    if (src_offset == dst_offset) return Ok();
    // Overlapping regions (CL_MEM_COPY_OVERLAP): go through a temporary.
    cl_int err = CL_SUCCESS;
    cl_mem tmp = clCreateBuffer(d->context, CL_MEM_READ_WRITE, nbytes, nullptr, &err);
    BPCL_RETURN_IF_ERROR(Prefixed("copy_device_to_device", ClCheck(err, "clCreateBuffer")));
    Status st = ClCheck(clEnqueueCopyBuffer(q, s, tmp, src_offset, 0, nbytes, 0, nullptr, nullptr), "clEnqueueCopyBuffer");
    if (st.ok())
      st = ClCheck(clEnqueueCopyBuffer(q, tmp, t, 0, dst_offset, nbytes, 0, nullptr, nullptr), "clEnqueueCopyBuffer");
    clReleaseMemObject(tmp);
    return Prefixed("copy_device_to_device", st);
  });
}

bp_status_t StreamGetDefault(void* data, int32_t device, bp_stream_t* out_stream) {
  return Guard(data, [&]() -> Status {
    Device* d = nullptr;
    BPCL_RETURN_IF_ERROR(GetDevice(B(data), device, &d));
    if (out_stream == nullptr) return Status(BP_STATUS_INVALID_ARGUMENT, "opencl stream_get_default: NULL out_stream");
    *out_stream = d->queue;
    return Ok();
  });
}

bp_status_t StreamSynchronize(void* data, int32_t device, bp_stream_t stream) {
  return Guard(data, [&]() -> Status {
    Device* d = nullptr;
    BPCL_RETURN_IF_ERROR(GetDevice(B(data), device, &d));
    return Prefixed("stream_synchronize", ClCheck(clFinish(Queue(d, stream)), "clFinish"));
  });
}

bp_status_t EventCreate(void* data, int32_t device, bp_event_t* out_event) {
  return Guard(data, [&]() -> Status {
    Device* d = nullptr;
    BPCL_RETURN_IF_ERROR(GetDevice(B(data), device, &d));
    if (out_event == nullptr) return Status(BP_STATUS_INVALID_ARGUMENT, "opencl event_create: NULL out_event");
    auto* e = new Event();
    e->dev = d;
    *out_event = e;
    return Ok();
  });
}

bp_status_t EventRecord(void* data, bp_event_t event, bp_stream_t stream) {
  return Guard(data, [&]() -> Status {
    auto* e = static_cast<Event*>(event);
    if (e == nullptr) return Status(BP_STATUS_INVALID_ARGUMENT, "opencl event_record: NULL event");
    cl_event ev = nullptr;
    BPCL_RETURN_IF_ERROR(Prefixed("event_record", ClCheck(clEnqueueMarkerWithWaitList(Queue(e->dev, stream), 0, nullptr, &ev),
                                                          "clEnqueueMarkerWithWaitList")));
    if (e->ev != nullptr) clReleaseEvent(e->ev);
    e->ev = ev;
    return Ok();
  });
}

bp_status_t EventWait(void* data, bp_event_t event, bp_stream_t stream) {
  return Guard(data, [&]() -> Status {
    auto* e = static_cast<Event*>(event);
    if (e == nullptr) return Status(BP_STATUS_INVALID_ARGUMENT, "opencl event_wait: NULL event");
    if (e->ev == nullptr) return Ok();  // never recorded: nothing to wait for
    return Prefixed("event_wait", ClCheck(clEnqueueBarrierWithWaitList(Queue(e->dev, stream), 1, &e->ev, nullptr),
                                          "clEnqueueBarrierWithWaitList"));
  });
}

bp_status_t EventSynchronize(void* data, bp_event_t event) {
  return Guard(data, [&]() -> Status {
    auto* e = static_cast<Event*>(event);
    if (e == nullptr) return Status(BP_STATUS_INVALID_ARGUMENT, "opencl event_synchronize: NULL event");
    if (e->ev == nullptr) return Ok();
    return Prefixed("event_synchronize", ClCheck(clWaitForEvents(1, &e->ev), "clWaitForEvents"));
  });
}

bp_status_t EventDestroy(void* data, bp_event_t event) {
  return Guard(data, [&]() -> Status {
    auto* e = static_cast<Event*>(event);
    if (e == nullptr) return Ok();
    if (e->ev != nullptr) clReleaseEvent(e->ev);
    delete e;
    return Ok();
  });
}

}  // namespace bpcl
