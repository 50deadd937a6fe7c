// The packed-weights cache (packed_weights.h): an LRU list of (key, memory)
// under one mutex. The reorder runs outside the lock, so two threads may
// pack the same weights at once; the first to insert wins and the other's
// copy is dropped.
#include "packed_weights.h"

#include <cstdlib>
#include <cstring>
#include <functional>
#include <list>
#include <mutex>
#include <unordered_map>

namespace bp_cpu {
namespace {

struct Key {
  uint64_t id;
  dnnl::memory::desc user, want;
  uintptr_t address;  // of the view's first element: the storage base (fixed while `id` lives) + byte_offset
  bool operator==(const Key& o) const { return id == o.id && address == o.address && user == o.user && want == o.want; }
};

struct Entry {
  Key key;
  dnnl::memory packed;
  int64_t bytes;
};

class Cache {
 public:
  Cache() {
    const char* mb = std::getenv("BP_CPU_PACKED_WEIGHTS_MB");
    budget_ = (mb != nullptr ? std::atoll(mb) : 512) * (int64_t{1} << 20);
  }

  // `plain` makes the weights in key.user's layout, only on a miss.
  dnnl::memory Get(const Key& key, const std::function<dnnl::memory()>& plain_fn, const dnnl::engine& engine,
                   dnnl::stream& stream) {
    const int64_t bytes = static_cast<int64_t>(key.want.get_size());
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto range = index_.equal_range(key.id);
      for (auto it = range.first; it != range.second; ++it) {
        if (it->second->key == key) {
          lru_.splice(lru_.begin(), lru_, it->second);  // most recently used first
          ++hits_;
          return it->second->packed;
        }
      }
      ++misses_;
    }
    dnnl::memory plain = plain_fn();
    dnnl::memory packed(key.want, engine);
    dnnl::reorder(plain, packed).execute(stream, plain, packed);
    stream.wait();
    if (bytes > budget_) return packed;  // too large to keep: this call only
    std::lock_guard<std::mutex> lock(mu_);
    auto range = index_.equal_range(key.id);
    for (auto it = range.first; it != range.second; ++it) {
      if (it->second->key == key) return it->second->packed;  // another thread was first
    }
    while (!lru_.empty() && held_ + bytes > budget_) Evict();
    lru_.push_front(Entry{key, packed, bytes});
    index_.emplace(key.id, lru_.begin());
    held_ += bytes;
    return packed;
  }

  bool CanKeep(int64_t bytes) const { return bytes <= budget_; }

  PackedWeightsStats Stats() {
    std::lock_guard<std::mutex> lock(mu_);
    return PackedWeightsStats{static_cast<int64_t>(lru_.size()), held_, hits_, misses_};
  }

 private:
  void Evict() {
    auto last = std::prev(lru_.end());
    auto range = index_.equal_range(last->key.id);
    for (auto it = range.first; it != range.second; ++it) {
      if (it->second == last) {
        index_.erase(it);
        break;
      }
    }
    held_ -= last->bytes;
    lru_.pop_back();
  }

  std::mutex mu_;
  std::list<Entry> lru_;
  std::unordered_multimap<uint64_t, std::list<Entry>::iterator> index_;
  int64_t budget_ = 0, held_ = 0, hits_ = 0, misses_ = 0;
};

// Destroyed when the plugin is unloaded (its kernels are gone by then).
Cache& TheCache() {
  static Cache cache;
  return cache;
}

}  // namespace

dnnl::memory PackedWeights(uint64_t id, const dnnl::memory::desc& user, void* data, const dnnl::memory::desc& want,
                           const dnnl::engine& engine, dnnl::stream& stream) {
  return TheCache().Get(
      Key{id, user, want, reinterpret_cast<uintptr_t>(data)}, [&] { return dnnl::memory(user, engine, data); }, engine,
      stream);
}

dnnl::memory PackedWeightsFrom(uint64_t id, const void* address, const dnnl::memory::desc& source,
                               const dnnl::memory::desc& want, const std::function<dnnl::memory()>& plain,
                               const dnnl::engine& engine, dnnl::stream& stream) {
  return TheCache().Get(Key{id, source, want, reinterpret_cast<uintptr_t>(address)}, plain, engine, stream);
}

bool PackedWeightsCanKeep(int64_t bytes) { return TheCache().CanKeep(bytes); }

PackedWeightsStats PackedWeightsStatsNow() { return TheCache().Stats(); }

}  // namespace bp_cpu
