// Backplane's caching allocator as torch's PrivateUse1 allocator, with the
// statistics torch.accelerator's memory API reads (memory_allocated,
// max_memory_allocated, memory_reserved, reset_peak_memory_stats,
// empty_cache), and Backplane's pinned host memory as pin_memory()'s.
#include <c10/core/CachingDeviceAllocator.h>

#include <cstring>
#include <map>
#include <mutex>

#include "bridge.h"

namespace bptorch {
namespace {

void Noop(void*) {}

void SetStat(c10::CachingDeviceAllocator::StatArray& a, uint64_t current, uint64_t peak) {
  auto& s = a[static_cast<size_t>(c10::CachingDeviceAllocator::StatType::AGGREGATE)];
  s.current = static_cast<int64_t>(current);
  s.peak = static_cast<int64_t>(peak);
}

// Device memory is a one-dimensional uint8 Backplane tensor from the device's
// caching allocator; the DataPtr's context holds its reference, so freeing
// returns the block to the cache.
class DeviceAllocatorImpl final : public c10::DeviceAllocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override {
    const c10::Device device(c10::DeviceType::PrivateUse1, CurrentDevice());
    if (nbytes == 0) return {nullptr, nullptr, &Noop, device};
    const int64_t n = static_cast<int64_t>(nbytes);
    bp_tensor_t* block = nullptr;
    Check(bp_tensor_empty(Get().ctx, DeviceOf(device), 1, &n, DLDataType{kDLUInt, 8, 1}, &block),
          "allocation of " + std::to_string(nbytes) + " bytes on " + device.str());
    DLManagedTensor* m = nullptr;
    const bp_status_t st = bp_tensor_to_dlpack(block, &m);
    if (st != BP_STATUS_OK) bp_tensor_release(block);
    Check(st, "allocation on " + device.str());
    void* base = m->dl_tensor.data;
    const uint64_t off = m->dl_tensor.byte_offset;
    m->deleter(m);
    if (off != 0) bp_tensor_release(block);
    TORCH_CHECK(off == 0, "allocation on ", device.str(), ": the backend returned a block at byte offset ", off);
    return DeviceDataPtr(base, block, /*is_block=*/true, device);
  }
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
  // Raw byte copies (storage clones) only where the host addresses the
  // memory; a device's "pointer" may be a handle (an OpenCL buffer).
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    TORCH_CHECK(SlotOf(CurrentDevice()).unified, "copy_data: ", c10::get_privateuse1_backend(), ":",
                int(CurrentDevice()), " memory is not host-addressable; copy tensors instead");
    if (count != 0) std::memcpy(dest, src, count);
  }

  bool initialized() override { return Initialized(); }
  void emptyCache(c10::MempoolId_t /*pool*/) override {
    if (!Initialized()) return;
    for (const DeviceSlot& s : Get().devices) Check(bp_allocator_empty_cache(Get().ctx, s.device), "empty_cache");
  }
  void recordStream(const c10::DataPtr& data, c10::Stream stream) override {
    if (bp_tensor_t* block = BlockOf(data)) {
      Check(bp_tensor_record_stream(block, StreamHandle(stream)), "record_stream");
    }
  }
  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex index) override {
    bp_allocator_stats_t st{};
    st.struct_size = sizeof(st);
    Check(bp_allocator_stats(Get().ctx, SlotOf(index).device, &st), "memory stats");
    c10::CachingDeviceAllocator::DeviceStats out;
    SetStat(out.allocated_bytes, st.allocated_bytes, st.peak_allocated_bytes);
    SetStat(out.active_bytes, st.allocated_bytes, st.peak_allocated_bytes);
    SetStat(out.requested_bytes, st.allocated_bytes, st.peak_allocated_bytes);
    SetStat(out.reserved_bytes, st.reserved_bytes, st.reserved_bytes);
    out.num_device_alloc = static_cast<int64_t>(st.device_allocations);
    return out;
  }
  void resetAccumulatedStats(c10::DeviceIndex /*index*/) override {}
  void resetPeakStats(c10::DeviceIndex index) override {
    Check(bp_allocator_reset_peak_stats(Get().ctx, SlotOf(index).device), "reset_peak_memory_stats");
  }
};

// pin_memory(): bp_host_alloc blocks of device 0 (page-locked where the
// backend provides it). The live blocks are kept so is_pinned() can answer
// for any pointer inside one.
class PinnedAllocatorImpl final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override {
    if (nbytes == 0) return {nullptr, nullptr, &Noop, c10::Device(c10::kCPU)};
    void* p = nullptr;
    Check(bp_host_alloc(Get().ctx, SlotOf(0).device, nbytes, &p), "pin_memory of " + std::to_string(nbytes) + " bytes");
    {
      std::lock_guard<std::mutex> lock(mu_);
      live_[reinterpret_cast<uintptr_t>(p)] = nbytes;
    }
    return {p, p, &Free, c10::Device(c10::kCPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &Free; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    if (count != 0) std::memcpy(dest, src, count);
  }
  bool Contains(const void* ptr) {
    const auto a = reinterpret_cast<uintptr_t>(ptr);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = live_.upper_bound(a);
    if (it == live_.begin()) return false;
    --it;
    return a < it->first + it->second;
  }

 private:
  static void Free(void* p);
  std::mutex mu_;
  std::map<uintptr_t, size_t> live_;  // base -> bytes
};

PinnedAllocatorImpl& Pinned() {
  static auto* a = new PinnedAllocatorImpl();  // never destroyed: blocks may be freed at exit
  return *a;
}

void PinnedAllocatorImpl::Free(void* p) {
  {
    std::lock_guard<std::mutex> lock(Pinned().mu_);
    Pinned().live_.erase(reinterpret_cast<uintptr_t>(p));
  }
  if (Initialized()) bp_host_free(Get().ctx, p);
}

}  // namespace

c10::Allocator* DeviceAllocator() {
  static DeviceAllocatorImpl allocator;
  return &allocator;
}

c10::Allocator* PinnedAllocator() { return &Pinned(); }

bool IsPinned(const void* ptr) { return ptr != nullptr && Pinned().Contains(ptr); }

}  // namespace bptorch
