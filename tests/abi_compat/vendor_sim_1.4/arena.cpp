#include "arena.h"

#include <cstdlib>

namespace vendor_sim {

bool Arena::Init(size_t capacity, size_t alignment, bool unified) {
  // Unified handles are addresses, so the base itself must be aligned.
  base_ = static_cast<char*>(unified ? std::aligned_alloc(alignment, (capacity + alignment - 1) / alignment * alignment)
                                     : std::malloc(capacity));
  if (base_ == nullptr) return false;
  tag_ = unified ? reinterpret_cast<uint64_t>(base_) : kHandleTag;
  capacity_ = capacity;
  alignment_ = alignment;
  live_ = 0;
  free_.clear();
  used_.clear();
  free_[0] = capacity;
  return true;
}

void Arena::Release() {
  std::free(base_);
  base_ = nullptr;
  tag_ = kHandleTag;
  capacity_ = 0;
  free_.clear();
  used_.clear();
}

bool Arena::Allocate(size_t nbytes, void** out_handle) {
  const size_t size = (nbytes + alignment_ - 1) / alignment_ * alignment_;
  if (size == 0 || size < nbytes) return false;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < size) continue;
    const size_t offset = it->first, left = it->second - size;
    free_.erase(it);
    if (left > 0) free_[offset + size] = left;
    used_[offset] = size;
    live_ += size;
    *out_handle = reinterpret_cast<void*>(tag_ + offset);
    return true;
  }
  return false;
}

bool Arena::Free(void* handle) {
  const uint64_t h = reinterpret_cast<uint64_t>(handle);
  if (h < tag_) return false;
  const size_t offset = static_cast<size_t>(h - tag_);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = used_.find(offset);
  if (it == used_.end()) return false;
  size_t start = offset, size = it->second;
  used_.erase(it);
  live_ -= size;
  // Coalesce with the free neighbours.
  auto next = free_.lower_bound(start);
  if (next != free_.end() && next->first == start + size) {
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      start = prev->first;
      size += prev->second;
      free_.erase(prev);
    }
  }
  free_[start] = size;
  return true;
}

size_t Arena::live_bytes() {
  std::lock_guard<std::mutex> lock(mu_);
  return live_;
}

char* Arena::Resolve(const void* handle, size_t offset, size_t nbytes) {
  const uint64_t h = reinterpret_cast<uint64_t>(handle);
  if (h < tag_) return nullptr;
  const size_t block = static_cast<size_t>(h - tag_);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = used_.find(block);
  if (it == used_.end() || offset > it->second || nbytes > it->second - offset) return nullptr;
  return base_ + block + offset;
}

}  // namespace vendor_sim
