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

void CachingAllocator::DrainPendingLocked() {
  for (Pending& p : pending_) {
    for (bp_event_t e : p.events) {
      if (raw_.event_synchronize != nullptr) raw_.event_synchronize(raw_.backend_data, e);
      raw_.event_destroy(raw_.backend_data, e);
    }
    ReturnLocked(p.block);
  }
  pending_.clear();
}

CachingAllocator::~CachingAllocator() {
  std::lock_guard<SpinMutex> lock(mu_);
  DrainPendingLocked();  // EmptyCache did, before a plugin unload; the host's memory gets here
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

Status CachingAllocator::Allocate(size_t nbytes, bp_stream_t stream, Block** out_block, void** out_header) {
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
  if (__builtin_expect(!pending_.empty(), 0)) ProcessPendingLocked();
  Pool* pool = PoolLocked(stream);
  auto count_allocated = [&](Block* b) {
    for (bp_allocator_stats_t* st : {&stats_, &pool->stats}) {
      st->allocated_bytes += b->size;
      if (st->allocated_bytes > st->peak_allocated_bytes) st->peak_allocated_bytes = st->allocated_bytes;
    }
  };
  // Best fit: the smallest cached block that is big enough, but never one
  // more than twice the request (that would waste more than it saves).
  Block* hit = nullptr;
  if (!large) {
    hit = TakeSmallLocked(pool, size);
  } else {
    auto it = pool->large_free.lower_bound(size);
    if (it != pool->large_free.end() && it->first <= 2 * size) {
      hit = it->second;
      pool->large_free.erase(it);
    }
  }
  if (hit != nullptr) {
    HandOutLocked(pool, hit);
    count_allocated(hit);
    ++stats_.cache_hits;
    ++pool->stats.cache_hits;
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
  for (bp_allocator_stats_t* st : {&stats_, &pool->stats}) {
    ++st->device_allocations;
    st->reserved_bytes += size;
  }
  *out_block = new Block{ptr, size, large};
  HandOutLocked(pool, *out_block);
  count_allocated(*out_block);
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
  // Used on other streams: their work may still read it (record_stream).
  const bool deferred = block != nullptr && __builtin_expect(block->used_on != nullptr, 0) && DeferFree(block);
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
  if (block == nullptr || deferred) return;
  if (block->size == 0) {
    lock.unlock();
    delete block;
    return;
  }
  ReturnLocked(block);
}

void CachingAllocator::CacheLocked(Pool* pool, Block* block) {
  stats_.allocated_bytes -= block->size;
  pool->stats.allocated_bytes -= block->size;
  InsertCachedLocked(pool, block);
}

void CachingAllocator::InsertCachedLocked(Pool* pool, Block* block) {
  block->stream = pool->stream;
  block->home = pool;
  PoisonSlack(block, 0);  // a cached block is off limits until handed out again
  if (block->large) {
    pool->large_free.emplace(block->size, block);
    return;
  }
  const size_t c = block->size / kSmallRound;
  block->next = pool->small_free[c];
  pool->small_free[c] = block;
  pool->small_nonempty[c / 64] |= uint64_t(1) << (c % 64);
}

Block* CachingAllocator::TakeSmallLocked(Pool* pool, size_t size) {
  Block** small_free = pool->small_free;
  uint64_t* small_nonempty = pool->small_nonempty;
  // The first non-empty class from size's own up to twice the size.
  const size_t first = size / kSmallRound;
  if (Block* b = small_free[first]) {  // the common case: a block of exactly this class
    small_free[first] = b->next;
    if (b->next == nullptr) small_nonempty[first / 64] &= ~(uint64_t(1) << (first % 64));
    b->next = nullptr;
    return b;
  }
  size_t last = 2 * size / kSmallRound;
  if (last >= kSmallClasses) last = kSmallClasses - 1;
  for (size_t w = first / 64; w <= last / 64; ++w) {
    uint64_t bits = small_nonempty[w];
    if (w == first / 64) bits &= ~uint64_t(0) << (first % 64);
    if (bits == 0) continue;
    const size_t c = w * 64 + static_cast<size_t>(__builtin_ctzll(bits));
    if (c > last) return nullptr;
    Block* b = small_free[c];
    small_free[c] = b->next;
    if (b->next == nullptr) small_nonempty[w] &= ~(uint64_t(1) << (c % 64));
    b->next = nullptr;
    return b;
  }
  return nullptr;
}

void CachingAllocator::ReleasePoolLocked(Pool* pool) {
  auto release = [&](Block* b) {
    UnpoisonAll(b);
    raw_.deallocate(raw_.backend_data, raw_.device, b->ptr);
    stats_.reserved_bytes -= b->size;
    pool->stats.reserved_bytes -= b->size;
    delete b;
  };
  for (size_t c = 0; c < kSmallClasses; ++c) {
    while (Block* b = pool->small_free[c]) {
      pool->small_free[c] = b->next;
      release(b);
    }
  }
  for (uint64_t& w : pool->small_nonempty) w = 0;
  for (auto& [size, b] : pool->large_free) release(b);
  pool->large_free.clear();
}

void CachingAllocator::ReleaseCachedLocked() {
  ReleasePoolLocked(&default_pool_);
  for (auto& p : stream_pools_) ReleasePoolLocked(p.get());
  for (auto& p : other_pools_) ReleasePoolLocked(p.get());
}

void CachingAllocator::EmptyCache() {
  std::lock_guard<SpinMutex> lock(mu_);
  // Blocks waiting for other streams' work: wait for it (their events are
  // the plugin's, which may be about to unload), then release them too.
  DrainPendingLocked();
  ReleaseCachedLocked();
}

bp_allocator_stats_t CachingAllocator::Stats() {
  std::lock_guard<SpinMutex> lock(mu_);
  return stats_;
}

void CachingAllocator::ResetPeak() {
  std::lock_guard<SpinMutex> lock(mu_);
  stats_.peak_allocated_bytes = stats_.allocated_bytes;
}

}  // namespace bp::core
