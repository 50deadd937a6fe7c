// Device memory (cl_mem buffers: the pointer allocate() returns IS the
// cl_mem) and copies with byte offsets in every direction.
#include "memory.h"

#include <algorithm>

#include "plugin.h"
#include "stream.h"

namespace bpcl {

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

}  // namespace bpcl
