// What the CPU backend's oneDNN paths share: one CPU engine and a per-thread
// scratchpad for primitives created with a user scratchpad (so one cached
// primitive may run on several host threads at once).
#pragma once

#include <cstddef>
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

}  // namespace bp_cpu
