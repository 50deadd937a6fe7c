// The simulated device's memory: one private host buffer (the "device
// DRAM") carved up by a first-fit allocator. By default the host never sees
// addresses inside it: allocate() hands out opaque handles (a tag plus the
// block's offset, deliberately not a dereferenceable pointer), and only this
// plugin turns a handle back into an address. The unified option
// (BP_VENDOR_SIM_UNIFIED=1) simulates a device whose memory the host can
// address instead: handles are the blocks' addresses. A real accelerator plugin would call
// its driver here instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

namespace vendor_sim {

class Arena {
 public:
  // Reserves `capacity` bytes, handed out in multiples of `alignment` (a power
  // of two). With `unified`, handles are the blocks' host addresses (a device
  // whose memory the host can address, BP_DEVICE_CAP_UNIFIED); otherwise
  // opaque tagged offsets. Returns false if the host is out of memory.
  bool Init(size_t capacity, size_t alignment = kAlignment, bool unified = false);
  void Release();
  size_t capacity() const { return capacity_; }
  size_t alignment() const { return alignment_; }
  bool unified() const { return tag_ != kHandleTag; }
  // Bytes in live allocations (rounded sizes).
  size_t live_bytes();

  // Allocates `nbytes` (rounded up to the alignment); false when full.
  bool Allocate(size_t nbytes, void** out_handle);
  // Frees a handle from Allocate; false if it is not a live allocation.
  bool Free(void* handle);
  // The address of bytes [offset, offset + nbytes) of the allocation
  // `handle`, or nullptr if the handle is unknown or the range leaves it.
  char* Resolve(const void* handle, size_t offset, size_t nbytes);

  static constexpr size_t kAlignment = 256;  // the default alignment
  // High bits that make a handle a non-canonical x86-64 address: a host that
  // dereferences one crashes at once instead of reading device memory.
  static constexpr uint64_t kHandleTag = 0x7e57000000000000ull;

 private:
  std::mutex mu_;
  char* base_ = nullptr;
  uint64_t tag_ = kHandleTag;  // handle = tag_ + offset (tag_ is base_ when unified)
  size_t capacity_ = 0;
  size_t alignment_ = kAlignment;
  size_t live_ = 0;
  std::map<size_t, size_t> free_;  // offset -> size, coalesced
  std::map<size_t, size_t> used_;  // offset -> size
};

}  // namespace vendor_sim
