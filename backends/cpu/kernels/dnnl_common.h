// What the CPU backend's oneDNN paths share: one CPU engine, a per-thread
// scratchpad for primitives created with a user scratchpad (so one cached
// primitive may run on several host threads at once), and the single-thread
// rule for small primitives.
#pragma once

#include <omp.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"

namespace bp_cpu {

inline dnnl::engine& Engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// This thread's scratchpad of at least `bytes`, grown on demand and reused:
// valid until this thread's next call (one primitive runs at a time per host
// thread).
inline void* ScratchpadBuffer(size_t bytes) {
  thread_local std::vector<char> buf;
  if (buf.size() < bytes) buf.resize(bytes);
  return buf.empty() ? nullptr : buf.data();
}

// The dnnl::memory of operand `slot` of the cached primitive `owner`, with
// descriptor `md`, pointing at `data`: made once per primitive, slot and host
// thread, then re-pointed (set_data_handle) at each call's data. Making four
// per call was a few percent of a small transformer's run, in allocations.
// The entry keeps `owner` alive, so its address is not reused by another
// primitive while the entry exists; at most 4096 entries per thread (then
// it starts over). Valid until this thread's next call with `owner` and
// `slot`.
inline dnnl::memory& OperandMemory(const std::shared_ptr<const void>& owner, int slot, const dnnl::memory::desc& md,
                                   void* data) {
  struct Entry {
    std::shared_ptr<const void> owner;
    dnnl::memory mem;
  };
  thread_local std::map<std::pair<const void*, int>, Entry> entries;
  const std::pair<const void*, int> key(owner.get(), slot);
  auto it = entries.find(key);
  if (it != entries.end()) {
    it->second.mem.set_data_handle(data);
    return it->second.mem;
  }
  if (entries.size() >= 4096) entries.clear();
  return entries.emplace(key, Entry{owner, dnnl::memory(md, Engine(), data)}).first->second.mem;
}

// Primitives of one kind by a key of everything that shapes them: oneDNN's
// own cache still pays for the primitive descriptor; this makes a repeated
// shape a map lookup. At most 512 entries (then it starts over).
// Thread-safe. Make each with `new` and never delete it: no destructor runs
// at exit while another thread may still be in a kernel.
template <typename T>
class PrimitiveCache {
 public:
  std::shared_ptr<T> Find(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    return it != map_.end() ? it->second : nullptr;
  }
  void Insert(const std::string& key, std::shared_ptr<T> value) {
    std::lock_guard<std::mutex> lock(mu_);
    if (map_.size() > 512) map_.clear();
    map_.emplace(key, std::move(value));
  }

 private:
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<T>> map_;
};

// Below this many multiply-adds (OpenBLAS's threshold for threads, 4 x
// 65536) a oneDNN matmul or convolution runs on the calling thread: an
// OpenMP fork and join costs more than it saves there. The TransformerEncoder
// of docs/benchmarks.md ("Real models beside torch"), whose products are all
// smaller, went from 1.09x torch to 0.80x with two threads.
constexpr int64_t kDnnlParallelMacs = int64_t{4} * 65536;

// Sets this thread's OpenMP team size to 1 for a scope (oneDNN reads it when
// it creates a primitive and when it runs one), then restores it.
class SingleThreadScope {
 public:
  explicit SingleThreadScope(bool on) : saved_(on ? omp_get_max_threads() : 0) {
    if (saved_ > 1) omp_set_num_threads(1);
  }
  ~SingleThreadScope() {
    if (saved_ > 1) omp_set_num_threads(saved_);
  }
  SingleThreadScope(const SingleThreadScope&) = delete;
  SingleThreadScope& operator=(const SingleThreadScope&) = delete;

 private:
  int saved_;
};

}  // namespace bp_cpu
