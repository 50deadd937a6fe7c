// Pinned host memory (bp_host_alloc / bp_host_free) and the asynchronous
// copies into and out of it (bp_tensor_to_host_async / from_host_async).
// The memory comes from each device's second caching allocator, over the
// backend's host_allocate (page-locked memory where it has it); an async
// copy records its stream on the block, so a freed block is reused only once
// those streams have passed the copy (the record_stream rule).
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "api.h"
#include "copy.h"
#include "dtype.h"
#include "graph.h"
#include "host_pinned.h"
#include "tensor.h"

namespace bp::core {
namespace {

bp_status_t AlignedHostAllocate(void*, int32_t, size_t nbytes, void** out_ptr) {
  const size_t rounded = (nbytes + 4095) / 4096 * 4096;
  void* p = rounded == 0 ? nullptr : std::aligned_alloc(4096, rounded);
  if (p == nullptr && rounded != 0) {
    return SetLastError(BP_STATUS_OUT_OF_MEMORY,
                        ("bp_host_alloc: out of host memory allocating " + std::to_string(nbytes) + " bytes").c_str());
  }
  *out_ptr = p;
  return BP_STATUS_OK;
}

bp_status_t AlignedHostDeallocate(void*, int32_t, void* ptr) {
  std::free(ptr);
  return BP_STATUS_OK;
}

// The view's first element, in bytes from its storage's base.
size_t ByteOffset(const Geometry& g) {
  return static_cast<size_t>(g.offset) * DtypeItemSize(DtypeFromDL(g.dtype));
}

std::string DeviceName(const DeviceState* dev) { return dev->slot->name + ":" + std::to_string(dev->index); }

// The bp_host_alloc block holding [p, p + n) for `dev`, else an error naming `fn`.
Status FindPinned(bp_context_t* ctx, DeviceState* dev, const void* p, size_t n, const char* fn, const char* arg,
                  PinnedBlock* out) {
  const auto at = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(ctx->pinned_mu);
  auto it = ctx->pinned.upper_bound(at);
  if (it != ctx->pinned.begin()) {
    --it;
    const PinnedBlock& b = it->second;
    if (at >= it->first && at - it->first <= b.nbytes && n <= b.nbytes - (at - it->first)) {
      if (b.dev != dev) {
        return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": '" + arg + "' is host memory of device " +
                                                     DeviceName(b.dev) + "; the tensor is on device " +
                                                     DeviceName(dev));
      }
      *out = b;
      return Status::Ok();
    }
  }
  return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": '" + arg + "' (" + std::to_string(n) +
                                               " bytes) is not inside a block from bp_host_alloc (asynchronous "
                                               "copies need memory that outlives the call; use " +
                                               (std::string(fn).find("to_host") != std::string::npos
                                                    ? "bp_tensor_to_host"
                                                    : "bp_tensor_from_host") +
                                               " for any other memory)");
}

// The checks both async copies make; fills *dev and the pinned block.
Status CheckAsyncCopy(const bp_tensor_t* tensor, const void* host, size_t nbytes, const char* fn, const char* arg,
                      DeviceState** dev, PinnedBlock* block) {
  BP_CHECK_ARG(tensor != nullptr && host != nullptr, fn, std::string("tensor and '") + arg + "' must not be NULL");
  if (!CheckLiveTensor(tensor, fn)) return Status(BP_STATUS_INVALID_ARGUMENT, bp_last_error_message());
  const Geometry& g = tensor->geo;
  if (!g.is_contiguous()) {
    return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": the tensor is not contiguous; copy it to a "
                                                               "contiguous tensor first (or use the synchronous copy)");
  }
  const size_t want = ContiguousBytes(g);
  if (nbytes != want) {
    return Error(BP_STATUS_INVALID_ARGUMENT, std::string(fn) + ": nbytes is " + std::to_string(nbytes) +
                                                 "; the tensor holds " + std::to_string(want) +
                                                 " bytes (numel * itemsize)");
  }
  *dev = tensor->storage->dev;
  BP_RETURN_IF_ERROR(FindPinned(tensor->storage->ctx, *dev, host, nbytes, fn, arg, block));
  return RefuseDuringCapture(*dev, fn);
}

}  // namespace

RawMemory PinnedMemory(const bp_backend_t& t, const RawMemory& device_memory, DeviceState* dev) {
  RawMemory raw = device_memory;
  const bool own = t.host_allocate != nullptr && t.host_deallocate != nullptr;
  raw.allocate = own ? t.host_allocate : AlignedHostAllocate;
  raw.deallocate = own ? t.host_deallocate : AlignedHostDeallocate;
  raw.host_addressable = true;
  raw.copy_host_to_device = nullptr;  // guard mode writes canaries with memcpy here
  raw.copy_device_to_host = nullptr;
  raw.stream = &dev->pinned_tag;  // no stream has this value
  return raw;
}

}  // namespace bp::core

using namespace bp::core;

extern "C" {

BP_API bp_status_t bp_host_alloc(bp_context_t* context, bp_device_t device, size_t nbytes, void** out_ptr) {
  const char* fn = "bp_host_alloc";
  return ApiCall(fn, [&]() -> Status {
    BP_CHECK_ARG(context != nullptr && out_ptr != nullptr, fn, "context and out_ptr must not be NULL");
    DeviceState* dev = nullptr;
    BP_RETURN_IF_ERROR(ResolveDevice(context, device, fn, &dev));
    if (nbytes == 0) {
      *out_ptr = nullptr;
      return Status::Ok();
    }
    Block* block = nullptr;
    Status st = dev->pinned->Allocate(nbytes, &dev->pinned_tag, &block);
    if (!st.ok()) return Error(st.code(), std::string(fn) + ": " + st.message());
    {
      std::lock_guard<std::mutex> lock(context->pinned_mu);
      context->pinned[reinterpret_cast<uintptr_t>(block->ptr)] = PinnedBlock{dev, block, nbytes};
    }
    *out_ptr = block->ptr;
    return Status::Ok();
  });
}

BP_API bp_status_t bp_host_free(bp_context_t* context, void* ptr) {
  const char* fn = "bp_host_free";
  if (ptr == nullptr) return BP_STATUS_OK;
  return ApiCall(fn, [&]() -> Status {
    BP_CHECK_ARG(context != nullptr, fn, "context is NULL");
    PinnedBlock b;
    {
      std::lock_guard<std::mutex> lock(context->pinned_mu);
      auto it = context->pinned.find(reinterpret_cast<uintptr_t>(ptr));
      if (it == context->pinned.end()) {
        return Error(BP_STATUS_INVALID_ARGUMENT,
                     std::string(fn) + ": ptr was not returned by bp_host_alloc (or was freed already)");
      }
      b = it->second;
      context->pinned.erase(it);
    }
    b.dev->pinned->Free(b.block);  // waits (without blocking) for the streams its copies used
    return Status::Ok();
  });
}

BP_API bp_status_t bp_tensor_to_host_async(const bp_tensor_t* tensor, void* dst, size_t nbytes) {
  const char* fn = "bp_tensor_to_host_async";
  return ApiCall(fn, [&]() -> Status {
    DeviceState* dev = nullptr;
    PinnedBlock pinned;
    BP_RETURN_IF_ERROR(CheckAsyncCopy(tensor, dst, nbytes, fn, "dst", &dev, &pinned));
    if (nbytes == 0) return Status::Ok();
    const Storage* s = tensor->storage;
    const size_t offset = ByteOffset(tensor->geo);
    if (dev->slot->host_memory) {  // host kernels are done when their call returns
      std::memcpy(dst, static_cast<const char*>(s->data) + offset, nbytes);
      return Status::Ok();
    }
    dev->pinned->RecordStream(pinned.block, CurrentStream(dev));
    Status st = CopyToHostAsync(dev, s->data, offset, dst, nbytes);
    if (!st.ok()) return Error(st.code(), std::string(fn) + ": " + st.message());
    return Status::Ok();
  });
}

BP_API bp_status_t bp_tensor_from_host_async(bp_tensor_t* tensor, const void* src, size_t nbytes) {
  const char* fn = "bp_tensor_from_host_async";
  return ApiCall(fn, [&]() -> Status {
    DeviceState* dev = nullptr;
    PinnedBlock pinned;
    BP_RETURN_IF_ERROR(CheckAsyncCopy(tensor, src, nbytes, fn, "src", &dev, &pinned));
    BP_RETURN_IF_ERROR(CheckNotConstant(tensor, fn, "tensor"));
    if (nbytes == 0) return Status::Ok();
    Storage* s = tensor->storage;
    const size_t offset = ByteOffset(tensor->geo);
    if (dev->slot->host_memory) {
      std::memcpy(static_cast<char*>(s->data) + offset, src, nbytes);
      return Status::Ok();
    }
    dev->pinned->RecordStream(pinned.block, CurrentStream(dev));
    Status st = CopyFromHostAsync(dev, src, s->data, offset, nbytes);
    if (!st.ok()) return Error(st.code(), std::string(fn) + ": " + st.message());
    return Status::Ok();
  });
}

}  // extern "C"
