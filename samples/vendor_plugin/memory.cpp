// Device memory through the simulated driver (arena.h): allocation, free and
// copies with byte offsets. A real plugin calls its driver's allocation and
// DMA functions here.
#include "memory.h"

#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "device.h"
#include "stream.h"

namespace vendor_sim {

bp_status_t Allocate(void* bd, int32_t device, size_t nbytes, void** out_ptr) {
  if (CheckDevice(StateOf(bd), device, "allocate") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  if (nbytes == 0) {
    *out_ptr = nullptr;
    return BP_STATUS_OK;
  }
  const size_t limit = StateOf(bd)->faults.memory_limit_bytes;
  if (limit != 0 && StateOf(bd)->arena.live_bytes() + nbytes > limit) {
    char what[160];
    std::snprintf(what, sizeof what, "out of device memory allocating %zu bytes (BP_VENDOR_SIM_OOM_AFTER_BYTES=%zu)",
                  nbytes, limit);
    return Fail(StateOf(bd), BP_STATUS_OUT_OF_MEMORY, "allocate", what);
  }
  if (!StateOf(bd)->arena.Allocate(nbytes, out_ptr)) {
    char what[128];
    std::snprintf(what, sizeof what, "out of device memory allocating %zu bytes", nbytes);
    return Fail(StateOf(bd), BP_STATUS_OUT_OF_MEMORY, "allocate", what);
  }
  return BP_STATUS_OK;
}

bp_status_t Deallocate(void* bd, int32_t device, void* ptr) {
  if (CheckDevice(StateOf(bd), device, "deallocate") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  if (ptr == nullptr) return BP_STATUS_OK;
  // Queued work on any stream may still use the block: wait for it, as a
  // driver's free does.
  StateOf(bd)->streams.DrainAll();
  StateOf(bd)->faults.Unpoison(ptr);  // freed: its memory is handed out afresh
  if (!StateOf(bd)->arena.Free(ptr))
    return Fail(StateOf(bd), BP_STATUS_INVALID_ARGUMENT, "deallocate", "not a live vendor_sim allocation");
  return BP_STATUS_OK;
}

// Each copy checks its range now and moves the bytes on its stream's queue
// (stream_table.h): at once on the synchronous device, later in async mode,
// where the host buffer of copy_host_to_device must stay valid until the
// stream is synchronized, and copy_device_to_host waits for its bytes, that
// is for its stream (backend.h).

namespace {

// INTERNAL naming the fault when `allocation` was written by work that
// faulted on the device (faults.h, BP_VENDOR_SIM_FAULT_OP): its bytes are
// not a result, so reading them back must not return OK.
bp_status_t CheckNotPoisoned(State* s, const char* fn, const void* allocation) {
  const std::string fault = s->faults.PoisonOf(allocation);
  if (fault.empty()) return BP_STATUS_OK;
  const std::string what = "the source was written by work that faulted: " + fault;
  return Fail(s, BP_STATUS_INTERNAL, fn, what.c_str());
}

// Submits a copy of nbytes from src to dst on `q`; OUT_OF_MEMORY if it cannot be queued.
bp_status_t SubmitCopy(State* s, Queue* q, const char* fn, char* dst, const char* src, size_t nbytes) {
  if (!q->TrySubmit([dst, src, nbytes] { std::memmove(dst, src, nbytes); }, ItemKind::kCopy))
    return Fail(s, BP_STATUS_OUT_OF_MEMORY, fn, "cannot queue the copy");
  return BP_STATUS_OK;
}

}  // namespace

bp_status_t CopyHostToDevice(void* bd, int32_t device, const void* src, void* dst, size_t dst_offset, size_t nbytes,
                             bp_stream_t stream) {
  if (CheckDevice(StateOf(bd), device, "copy_host_to_device") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  Queue* q = QueueOf(StateOf(bd), stream, "copy_host_to_device");
  if (q == nullptr) return BP_STATUS_INVALID_ARGUMENT;
  if (nbytes == 0) return BP_STATUS_OK;
  if (StateOf(bd)->faults.NextCopyFails())
    return Fail(StateOf(bd), BP_STATUS_INTERNAL, "copy_host_to_device",
                "injected copy failure (BP_VENDOR_SIM_FAIL_COPIES)");
  char* d = StateOf(bd)->arena.Resolve(dst, dst_offset, nbytes);
  if (d == nullptr || src == nullptr)
    return Fail(StateOf(bd), BP_STATUS_INVALID_ARGUMENT, "copy_host_to_device",
                "destination range outside its allocation");
  return SubmitCopy(StateOf(bd), q, "copy_host_to_device", d, static_cast<const char*>(src), nbytes);
}

bp_status_t CopyDeviceToHost(void* bd, int32_t device, const void* src, size_t src_offset, void* dst, size_t nbytes,
                             bp_stream_t stream) {
  if (CheckDevice(StateOf(bd), device, "copy_device_to_host") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  Queue* q = QueueOf(StateOf(bd), stream, "copy_device_to_host");
  if (q == nullptr) return BP_STATUS_INVALID_ARGUMENT;
  if (nbytes == 0) return BP_STATUS_OK;
  if (StateOf(bd)->faults.NextCopyFails())
    return Fail(StateOf(bd), BP_STATUS_INTERNAL, "copy_device_to_host",
                "injected copy failure (BP_VENDOR_SIM_FAIL_COPIES)");
  const char* s = StateOf(bd)->arena.Resolve(src, src_offset, nbytes);
  if (s == nullptr || dst == nullptr)
    return Fail(StateOf(bd), BP_STATUS_INVALID_ARGUMENT, "copy_device_to_host", "source range outside its allocation");
  const bp_status_t st = SubmitCopy(StateOf(bd), q, "copy_device_to_host", static_cast<char*>(dst), s, nbytes);
  // The one synchronous copy (backend.h): it returns with the bytes in dst.
  if (st == BP_STATUS_OK) q->Drain();
  if (st == BP_STATUS_OK) return CheckNotPoisoned(StateOf(bd), "copy_device_to_host", src);
  return st;
}

bp_status_t CopyDeviceToHostAsync(void* bd, int32_t device, const void* src, size_t src_offset, void* dst,
                                  size_t nbytes, bp_stream_t stream) {
  // Everything that can fail is checked here, before the copy is queued: the
  // device thread only moves bytes.
  if (CheckDevice(StateOf(bd), device, "copy_device_to_host_async") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  Queue* q = QueueOf(StateOf(bd), stream, "copy_device_to_host_async");
  if (q == nullptr) return BP_STATUS_INVALID_ARGUMENT;
  if (nbytes == 0) return BP_STATUS_OK;
  if (StateOf(bd)->faults.NextCopyFails())
    return Fail(StateOf(bd), BP_STATUS_INTERNAL, "copy_device_to_host_async",
                "injected copy failure (BP_VENDOR_SIM_FAIL_COPIES)");
  if (dst == nullptr)
    return Fail(StateOf(bd), BP_STATUS_INVALID_ARGUMENT, "copy_device_to_host_async", "'dst' is NULL");
  const char* s = StateOf(bd)->arena.Resolve(src, src_offset, nbytes);
  if (s == nullptr)
    return Fail(StateOf(bd), BP_STATUS_INVALID_ARGUMENT, "copy_device_to_host_async",
                "source range outside its allocation");
  // Work already known to have faulted; a fault still queued is reported by
  // the stream's synchronize.
  if (CheckNotPoisoned(StateOf(bd), "copy_device_to_host_async", src) != BP_STATUS_OK) return BP_STATUS_INTERNAL;
  // No Drain: dst holds the bytes once the stream gets past the copy.
  return SubmitCopy(StateOf(bd), q, "copy_device_to_host_async", static_cast<char*>(dst), s, nbytes);
}

bp_status_t HostAllocate(void* bd, int32_t device, size_t nbytes, void** out_ptr) {
  State* st = StateOf(bd);
  if (CheckDevice(st, device, "host_allocate") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  if (out_ptr == nullptr) return Fail(st, BP_STATUS_INVALID_ARGUMENT, "host_allocate", "'out_ptr' is NULL");
  *out_ptr = nullptr;
  if (nbytes == 0) return BP_STATUS_OK;
  // Simulated page-locked memory: page-aligned host memory (a real driver
  // would pin it, cudaHostAlloc-style, so its DMA engine reads it directly).
  void* p = ::operator new(nbytes, std::align_val_t(kHostAlignment), std::nothrow);
  if (p == nullptr) {
    char what[128];
    std::snprintf(what, sizeof what, "out of host memory allocating %zu pinned bytes", nbytes);
    return Fail(st, BP_STATUS_OUT_OF_MEMORY, "host_allocate", what);
  }
  try {
    std::lock_guard<std::mutex> lock(st->host_mu);
    st->host_blocks.emplace(p, nbytes);
  } catch (...) {
    ::operator delete(p, std::align_val_t(kHostAlignment));
    return Fail(st, BP_STATUS_OUT_OF_MEMORY, "host_allocate", "out of host memory");
  }
  *out_ptr = p;
  return BP_STATUS_OK;
}

bp_status_t HostDeallocate(void* bd, int32_t device, void* ptr) {
  State* st = StateOf(bd);
  if (CheckDevice(st, device, "host_deallocate") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  if (ptr == nullptr) return BP_STATUS_OK;
  {
    std::lock_guard<std::mutex> lock(st->host_mu);
    if (st->host_blocks.find(ptr) == st->host_blocks.end())
      return Fail(st, BP_STATUS_INVALID_ARGUMENT, "host_deallocate", "not a live vendor_sim host allocation");
  }
  // A queued copy_device_to_host_async may still write into the block: wait
  // for every stream first, as a driver's free does.
  st->streams.DrainAll();
  {
    std::lock_guard<std::mutex> lock(st->host_mu);
    if (st->host_blocks.erase(ptr) == 0)
      return Fail(st, BP_STATUS_INVALID_ARGUMENT, "host_deallocate", "not a live vendor_sim host allocation");
  }
  ::operator delete(ptr, std::align_val_t(kHostAlignment));
  return BP_STATUS_OK;
}

void ReleaseHostBlocks(State* st) {
  std::lock_guard<std::mutex> lock(st->host_mu);
  for (auto& block : st->host_blocks) ::operator delete(block.first, std::align_val_t(kHostAlignment));
  st->host_blocks.clear();
}

bp_status_t CopyDeviceToDevice(void* bd, int32_t device, const void* src, size_t src_offset, void* dst,
                               size_t dst_offset, size_t nbytes, bp_stream_t stream) {
  if (CheckDevice(StateOf(bd), device, "copy_device_to_device") != BP_STATUS_OK) return BP_STATUS_OUT_OF_RANGE;
  Queue* q = QueueOf(StateOf(bd), stream, "copy_device_to_device");
  if (q == nullptr) return BP_STATUS_INVALID_ARGUMENT;
  if (nbytes == 0) return BP_STATUS_OK;
  if (StateOf(bd)->faults.NextCopyFails())
    return Fail(StateOf(bd), BP_STATUS_INTERNAL, "copy_device_to_device",
                "injected copy failure (BP_VENDOR_SIM_FAIL_COPIES)");
  const char* s = StateOf(bd)->arena.Resolve(src, src_offset, nbytes);
  char* d = StateOf(bd)->arena.Resolve(dst, dst_offset, nbytes);
  if (s == nullptr || d == nullptr)
    return Fail(StateOf(bd), BP_STATUS_INVALID_ARGUMENT, "copy_device_to_device", "range outside its allocation");
  return SubmitCopy(StateOf(bd), q, "copy_device_to_device", d, s, nbytes);
}

}  // namespace vendor_sim
