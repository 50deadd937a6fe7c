// What the CPU backend's oneDNN paths share: one CPU engine, a per-thread
// scratchpad for primitives created with a user scratchpad (so one cached
// primitive may run on several host threads at once), and the single-thread
// rule for small primitives.
#pragma once

#include <omp.h>

#include <cstddef>
#include <cstdint>
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
