#include "allocator.h"

#include <string>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define BP_ASAN_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define BP_ASAN_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define BP_ASAN_POISON(p, n) ((void)(p), (void)(n))
#define BP_ASAN_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace bp::core {

void CachingAllocator::PoisonSlack(const Block* b, size_t used) const {
  // Guard mode writes and reads the slack itself (its canary).
  if (!raw_.host_addressable || b->ptr == nullptr || guard_) return;
  char* p = static_cast<char*>(b->ptr);
  BP_ASAN_UNPOISON(p, used);
  BP_ASAN_POISON(p + used, b->size - used);
}

void CachingAllocator::UnpoisonAll(const Block* b) const {
  if (!raw_.host_addressable || b->ptr == nullptr) return;
  BP_ASAN_UNPOISON(b->ptr, b->size);
}

CachingAllocator::~CachingAllocator() {
  std::lock_guard<SpinMutex> lock(mu_);
  ReleaseCachedLocked();
  while (void* h = headers_) {
    headers_ = *static_cast<void**>(h);
    ::operator delete(h);
  }
}

size_t CachingAllocator::RoundSize(size_t nbytes) {
  if (nbytes == 0) return 0;
  if (nbytes < kSmallLimit) return (nbytes + kSmallRound - 1) / kSmallRound * kSmallRound;
  return (nbytes + kLargeRound - 1) / kLargeRound * kLargeRound;
}

Status CachingAllocator::Allocate(size_t nbytes, Block** out_block, void** out_header) {
  // Guard mode: room for the canary past the size asked for.
  const size_t want = guard_ && nbytes != 0 && nbytes + kGuardBytes > nbytes ? nbytes + kGuardBytes : nbytes;
  size_t size = RoundSize(want);
  if (size < want) {
    return Error(BP_STATUS_OUT_OF_MEMORY, std::string("allocator(") + raw_.name + "): request of " +
                                              std::to_string(nbytes) + " bytes is too large");
  }
  bool large = size >= kSmallLimit;
  std::unique_lock<SpinMutex> lock(mu_);
  // Called under the lock once the call is known to succeed.
  auto take_header = [&]() {
    if (out_header == nullptr) return;
    ++live_pairs_;
    *out_header = headers_;
    if (headers_ != nullptr) {
      headers_ = *static_cast<void**>(headers_);
      --num_headers_;
    }
  };
  if (size == 0) {
    take_header();
    lock.unlock();
    *out_block = new Block{nullptr, 0, false};
    return Status::Ok();
  }
  // Best fit: the smallest cached block that is big enough, but never one
  // more than twice the request (that would waste more than it saves).
  Block* hit = nullptr;
  if (!large) {
    hit = TakeSmallLocked(size);
  } else {
    auto it = large_free_.lower_bound(size);
    if (it != large_free_.end() && it->first <= 2 * size) {
      hit = it->second;
      large_free_.erase(it);
    }
  }
  if (hit != nullptr) {
    stats_.allocated_bytes += hit->size;
    if (stats_.allocated_bytes > stats_.peak_allocated_bytes) stats_.peak_allocated_bytes = stats_.allocated_bytes;
    ++stats_.cache_hits;
    PoisonSlack(hit, nbytes);
    ArmGuardLocked(hit, nbytes);
    *out_block = hit;
    take_header();
    return Status::Ok();
  }
  void* ptr = nullptr;
  const uint64_t serial = g_last_error_serial;
  bp_status_t rc = raw_.allocate(raw_.backend_data, raw_.device, size, &ptr);
  if (rc == BP_STATUS_OUT_OF_MEMORY) {
    // Give the cached blocks back and try once more.
    ReleaseCachedLocked();
    ptr = nullptr;
    rc = raw_.allocate(raw_.backend_data, raw_.device, size, &ptr);
  }
  if (rc != BP_STATUS_OK) {
    const std::string what = std::string("allocator(") + raw_.name + ":" + std::to_string(raw_.device) +
                             "): allocating " + std::to_string(size) + " bytes" +
                             (rc == BP_STATUS_OUT_OF_MEMORY ? " (after emptying the cache)" : "");
    return PluginFailure(what, rc, serial);
  }
  ++stats_.device_allocations;
  stats_.reserved_bytes += size;
  stats_.allocated_bytes += size;
  if (stats_.allocated_bytes > stats_.peak_allocated_bytes) stats_.peak_allocated_bytes = stats_.allocated_bytes;
  *out_block = new Block{ptr, size, large};
  PoisonSlack(*out_block, nbytes);
  ArmGuardLocked(*out_block, nbytes);
  take_header();
  return Status::Ok();
}

void CachingAllocator::DropPair() {
  std::lock_guard<SpinMutex> lock(mu_);
  --live_pairs_;
}

int64_t CachingAllocator::LivePairs() {
  std::lock_guard<SpinMutex> lock(mu_);
  return live_pairs_;
}

void CachingAllocator::Free(Block* block, void* header) {
  if (block == nullptr && header == nullptr) return;
  if (guard_ && block != nullptr && block->size != 0) ReleaseGuard(block);
  std::unique_lock<SpinMutex> lock(mu_);
  if (header != nullptr) {
    --live_pairs_;
    if (num_headers_ < kMaxHeaders) {
      *static_cast<void**>(header) = headers_;
      headers_ = header;
      ++num_headers_;
    } else {
      lock.unlock();
      ::operator delete(header);
      lock.lock();
    }
  }
  if (block == nullptr) return;
  if (block->size == 0) {
    lock.unlock();
    delete block;
    return;
  }
  stats_.allocated_bytes -= block->size;
  PoisonSlack(block, 0);  // a cached block is off limits until handed out again
  if (block->large) {
    large_free_.emplace(block->size, block);
    return;
  }
  const size_t c = block->size / kSmallRound;
  block->next = small_free_[c];
  small_free_[c] = block;
  small_nonempty_[c / 64] |= uint64_t(1) << (c % 64);
}

Block* CachingAllocator::TakeSmallLocked(size_t size) {
  // The first non-empty class from size's own up to twice the size.
  const size_t first = size / kSmallRound;
  if (Block* b = small_free_[first]) {  // the common case: a block of exactly this class
    small_free_[first] = b->next;
    if (b->next == nullptr) small_nonempty_[first / 64] &= ~(uint64_t(1) << (first % 64));
    b->next = nullptr;
    return b;
  }
  size_t last = 2 * size / kSmallRound;
  if (last >= kSmallClasses) last = kSmallClasses - 1;
  for (size_t w = first / 64; w <= last / 64; ++w) {
    uint64_t bits = small_nonempty_[w];
    if (w == first / 64) bits &= ~uint64_t(0) << (first % 64);
    if (bits == 0) continue;
    const size_t c = w * 64 + static_cast<size_t>(__builtin_ctzll(bits));
    if (c > last) return nullptr;
    Block* b = small_free_[c];
    small_free_[c] = b->next;
    if (b->next == nullptr) small_nonempty_[w] &= ~(uint64_t(1) << (c % 64));
    b->next = nullptr;
    return b;
  }
  return nullptr;
}

void CachingAllocator::ReleaseCachedLocked() {
  for (size_t c = 0; c < kSmallClasses; ++c) {
    while (Block* b = small_free_[c]) {
      small_free_[c] = b->next;
      UnpoisonAll(b);
      raw_.deallocate(raw_.backend_data, raw_.device, b->ptr);
      stats_.reserved_bytes -= b->size;
      delete b;
    }
  }
  for (uint64_t& w : small_nonempty_) w = 0;
  for (auto& [size, b] : large_free_) {
    UnpoisonAll(b);
    raw_.deallocate(raw_.backend_data, raw_.device, b->ptr);
    stats_.reserved_bytes -= b->size;
    delete b;
  }
  large_free_.clear();
}

void CachingAllocator::EmptyCache() {
  std::lock_guard<SpinMutex> lock(mu_);
  ReleaseCachedLocked();
}

bp_allocator_stats_t CachingAllocator::Stats() {
  std::lock_guard<SpinMutex> lock(mu_);
  return stats_;
}

}  // namespace bp::core
