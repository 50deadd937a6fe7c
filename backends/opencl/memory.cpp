// Device memory (cl_mem buffers: the pointer allocate() returns IS the
// cl_mem) and copies with byte offsets in every direction.
#include "memory.h"

#include <algorithm>
#include <mutex>
#include <new>
#include <string>

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

bp_status_t CopyDeviceToHostAsync(void* data, int32_t device, const void* src, size_t src_offset, void* dst,
                                  size_t nbytes, bp_stream_t stream) {
  return Guard(data, [&]() -> Status {
    Device* d = nullptr;
    BPCL_RETURN_IF_ERROR(GetDevice(B(data), device, &d));
    // Everything is checked before the read is queued: a failure is this
    // call's, never a surprise at synchronize time.
    // The default stream is the device's own queue (stream_get_default), not one of stream_create's.
    if (stream != nullptr && static_cast<cl_command_queue>(stream) != d->queue) {
      std::lock_guard<std::mutex> lock(d->streams_mutex);
      if (d->streams.count(static_cast<cl_command_queue>(stream)) == 0)
        return Status(BP_STATUS_INVALID_ARGUMENT, "opencl copy_device_to_host_async: stream handle was not made by "
                                                  "stream_create on device " +
                                                      std::to_string(device) + " (or is already destroyed)");
    }
    if (nbytes == 0) return Ok();
    if (src == nullptr || dst == nullptr)
      return Status(BP_STATUS_INVALID_ARGUMENT, "opencl copy_device_to_host_async: NULL src or dst");
    cl_mem m = static_cast<cl_mem>(const_cast<void*>(src));
    size_t size = 0;
    BPCL_RETURN_IF_ERROR(Prefixed("copy_device_to_host_async",
                                  ClCheck(clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof size, &size, nullptr),
                                          "clGetMemObjectInfo(CL_MEM_SIZE)")));
    if (src_offset > size || nbytes > size - src_offset) {
      return Status(BP_STATUS_INVALID_ARGUMENT, "opencl copy_device_to_host_async: bytes [" +
                                                    std::to_string(src_offset) + ", " +
                                                    std::to_string(src_offset + nbytes) + ") outside the " +
                                                    std::to_string(size) + "-byte buffer");
    }
    cl_command_queue q = Queue(d, stream);
    // Non-blocking: dst holds the bytes once the queue has run past the read.
    BPCL_RETURN_IF_ERROR(Prefixed(
        "copy_device_to_host_async",
        ClCheck(clEnqueueReadBuffer(q, m, CL_FALSE, src_offset, nbytes, dst, 0, nullptr, nullptr),
                "clEnqueueReadBuffer")));
    // Submit it now, so it progresses without a later synchronize.
    return Prefixed("copy_device_to_host_async", ClCheck(clFlush(q), "clFlush"));
  });
}

bp_status_t HostAllocate(void* data, int32_t device, size_t nbytes, void** out_ptr) {
  return Guard(data, [&]() -> Status {
    Device* d = nullptr;
    BPCL_RETURN_IF_ERROR(GetDevice(B(data), device, &d));
    if (out_ptr == nullptr) return Status(BP_STATUS_INVALID_ARGUMENT, "opencl host_allocate: out_ptr is NULL");
    *out_ptr = nullptr;
    if (nbytes == 0) return Ok();
    void* p = ::operator new(nbytes, std::align_val_t(kHostAlignment), std::nothrow);
    if (p == nullptr) {
      return Status(BP_STATUS_OUT_OF_MEMORY,
                    "opencl host_allocate: out of host memory allocating " + std::to_string(nbytes) + " bytes");
    }
    try {
      std::lock_guard<std::mutex> lock(B(data)->host_mutex);
      B(data)->host_blocks.emplace(p, device);
    } catch (...) {
      ::operator delete(p, std::align_val_t(kHostAlignment));
      return Status(BP_STATUS_OUT_OF_MEMORY, "opencl host_allocate: out of host memory");
    }
    *out_ptr = p;
    return Ok();
  });
}

bp_status_t HostDeallocate(void* data, int32_t device, void* ptr) {
  return Guard(data, [&]() -> Status {
    Device* d = nullptr;
    BPCL_RETURN_IF_ERROR(GetDevice(B(data), device, &d));
    if (ptr == nullptr) return Ok();
    Backend* b = B(data);
    int32_t owner = -1;
    {
      std::lock_guard<std::mutex> lock(b->host_mutex);
      auto it = b->host_blocks.find(ptr);
      if (it == b->host_blocks.end())
        return Status(BP_STATUS_INVALID_ARGUMENT,
                      "opencl host_deallocate: not a live block from host_allocate (or already freed)");
      owner = it->second;
    }
    // A queued copy_device_to_host_async may still write into the block:
    // finish the queues of the device it was allocated for.
    Device* od = b->device(owner);
    if (od != nullptr) {
      BPCL_RETURN_IF_ERROR(Prefixed("host_deallocate", ClCheck(clFinish(od->queue), "clFinish")));
      std::lock_guard<std::mutex> lock(od->streams_mutex);
      for (cl_command_queue q : od->streams)
        BPCL_RETURN_IF_ERROR(Prefixed("host_deallocate", ClCheck(clFinish(q), "clFinish")));
    }
    {
      std::lock_guard<std::mutex> lock(b->host_mutex);
      if (b->host_blocks.erase(ptr) == 0)
        return Status(BP_STATUS_INVALID_ARGUMENT,
                      "opencl host_deallocate: not a live block from host_allocate (or already freed)");
    }
    ::operator delete(ptr, std::align_val_t(kHostAlignment));
    return Ok();
  });
}

void ReleaseHostBlocks(Backend* b) {
  std::lock_guard<std::mutex> lock(b->host_mutex);
  for (auto& block : b->host_blocks) ::operator delete(block.first, std::align_val_t(kHostAlignment));
  b->host_blocks.clear();
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
