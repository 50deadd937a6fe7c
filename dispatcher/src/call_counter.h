// The per-backend call counters of an operator (bp_native_count,
// bp_fallback_count), sharded by thread so that counting a call is a plain
// load and store rather than a locked read-modify-write: a `lock xadd` on a
// line every thread shares costs about as much as the rest of a one-element
// call. Each of the first kCounterShards - 1 threads (by RCU reader record,
// which is recycled when a thread exits) owns a shard and is its only writer;
// every other thread adds to the last shard atomically. A read sums the
// shards, so counts stay exact.
#pragma once

#include <atomic>
#include <cstdint>

#include "context.h"
#include "rcu.h"

namespace bp::core {

constexpr int32_t kCounterShards = 4;

struct CallCounter {
  std::atomic<uint64_t> shard[kCounterShards][kMaxBackends] = {};

  // Counts one call served on `backend`. Any thread; exact under concurrency.
  __attribute__((always_inline)) void Add(int32_t backend) {
    const ReaderRecord* r = tls_reader;
    const int32_t s = r != nullptr && r->index < kCounterShards - 1 ? r->index : kCounterShards - 1;
    std::atomic<uint64_t>& c = shard[s][backend];
    if (s < kCounterShards - 1) {
      c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // this thread's own shard
    } else {
      c.fetch_add(1, std::memory_order_relaxed);
    }
  }
  // The calls counted on `backend` so far.
  uint64_t Sum(int32_t backend) const {
    uint64_t n = 0;
    for (int32_t s = 0; s < kCounterShards; ++s) n += shard[s][backend].load(std::memory_order_relaxed);
    return n;
  }
  // Zeroes `backend`'s count. Only while no call can count on it.
  void Reset(int32_t backend) {
    for (int32_t s = 0; s < kCounterShards; ++s) shard[s][backend].store(0, std::memory_order_relaxed);
  }
};

}  // namespace bp::core
