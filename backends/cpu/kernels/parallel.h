// The CPU kernels' only way into OpenMP: one parallel region, split by the
// caller into equal slices per thread.
//
// Why the annotations: Debian's libgomp is not built with ThreadSanitizer, so
// TSan cannot see the two edges its barriers create, the caller's writes
// before a region happening before the workers' reads (fork), and the
// workers' writes happening before the caller's reads after it (join). TSan
// then reports every region as a race. ParallelRegion states exactly those
// two edges (as LLVM's Archer does for libomp), on two separate addresses so
// that workers never synchronize with each other: a race between two
// workers' slices is still reported. Without TSan the annotations are empty.
#pragma once

#include <omp.h>

#include <cstdint>

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define BP_CPU_TSAN_RELEASE(addr) __tsan_release(addr)
#define BP_CPU_TSAN_ACQUIRE(addr) __tsan_acquire(addr)
#define BP_CPU_NO_TSAN __attribute__((no_sanitize_thread))
#else
#define BP_CPU_TSAN_RELEASE(addr) ((void)(addr))
#define BP_CPU_TSAN_ACQUIRE(addr) ((void)(addr))
#define BP_CPU_NO_TSAN
#endif

namespace bp_cpu {

// Work below this many elements stays on the calling thread.
constexpr int64_t kParallelGrain = 65536;

// One slice of a region, kept out of line so that the body (the kernel's
// code) is instrumented even though ParallelRegion is not.
template <typename F>
__attribute__((noinline)) void RunSlice(F* body, int64_t t, int64_t nt) {
  (*body)(t, nt);
}

// Runs body(t, nt) once on each of the nt threads of one OpenMP region
// (t = 0 .. nt-1), and returns when all have finished.
// Not instrumented itself: the compiler writes the region's shared-variable
// block after the fork annotation and the workers read it before theirs,
// both inside this function, so TSan would report that handoff (libgomp's
// own) on every region after the first. Everything the body touches is
// instrumented (RunSlice).
template <typename F>
BP_CPU_NO_TSAN inline void ParallelRegion(F&& body) {
  char fork_edge = 0, join_edge = 0;  // only their addresses matter
  F* const b = &body;
  BP_CPU_TSAN_RELEASE(&fork_edge);
#pragma omp parallel
  {
    BP_CPU_TSAN_ACQUIRE(&fork_edge);
    RunSlice(b, static_cast<int64_t>(omp_get_thread_num()), static_cast<int64_t>(omp_get_num_threads()));
    BP_CPU_TSAN_RELEASE(&join_edge);
  }
  BP_CPU_TSAN_ACQUIRE(&join_edge);
}

// Runs f(lo, hi) over [0, n) (n units such as rows or channels), split
// across threads in equal slices when `work` (total elements) is large.
template <typename F>
inline void ParallelFor(int64_t n, int64_t work, F f) {
  if (work < kParallelGrain || n < 2 || omp_get_max_threads() == 1) {
    f(int64_t{0}, n);
    return;
  }
  ParallelRegion([&](int64_t t, int64_t nt) { f(n * t / nt, n * (t + 1) / nt); });
}

}  // namespace bp_cpu
