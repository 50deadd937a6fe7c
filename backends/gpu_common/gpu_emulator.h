// A host-thread emulator of the small CUDA/HIP subset the shared kernels use,
// so tests/gpu_kernels_emulated_test.cpp can run the very kernel sources of
// backends/gpu_common on a machine without a GPU.
//
// Each launch runs its blocks one after another; the threads of a block are
// real threads (so __syncthreads is a real barrier). __shared__ arrays become
// function statics, which is block-shared because blocks never overlap;
// dynamic shared memory is a per-launch buffer. Device memory is host memory.
// Semantics only: nothing here says anything about speed or about warp-level
// behaviour (the kernels use none).
#pragma once

#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __shared__ static
#define __align__(n) alignas(n)

struct dim3 {
  unsigned int x = 1, y = 1, z = 1;
  dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
};

namespace bp_gpu_emu {

class Barrier {
 public:
  explicit Barrier(unsigned int n) : n_(n) {}
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    const unsigned long gen = generation_;
    if (++waiting_ == n_) {
      waiting_ = 0;
      ++generation_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return gen != generation_; });
    }
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  unsigned int n_;
  unsigned int waiting_ = 0;
  unsigned long generation_ = 0;
};

struct ThreadContext {
  dim3 thread_idx, block_idx, block_dim, grid_dim;
  Barrier* barrier = nullptr;
  unsigned char* dynamic_shared = nullptr;
};

inline ThreadContext& Current() {
  static thread_local ThreadContext ctx;
  return ctx;
}
inline void* DynamicShared() { return Current().dynamic_shared; }

inline int& LastError() {
  static thread_local int e = 0;
  return e;
}

template <typename Body>
void Run(dim3 grid, dim3 block, size_t smem, Body body) {
  const unsigned int threads = block.x * block.y * block.z;
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || threads == 0 || threads > 1024) {
    LastError() = 1;  // invalid configuration
    return;
  }
  std::vector<unsigned char> shared(smem + 16);
  for (unsigned int bz = 0; bz < grid.z; ++bz) {
    for (unsigned int by = 0; by < grid.y; ++by) {
      for (unsigned int bx = 0; bx < grid.x; ++bx) {
        Barrier barrier(threads);
        std::vector<std::thread> pool;
        pool.reserve(threads);
        for (unsigned int t = 0; t < threads; ++t) {
          pool.emplace_back([&, t] {
            ThreadContext& c = Current();
            c.thread_idx = dim3(t % block.x, (t / block.x) % block.y, t / (block.x * block.y));
            c.block_idx = dim3(bx, by, bz);
            c.block_dim = block;
            c.grid_dim = grid;
            c.barrier = &barrier;
            c.dynamic_shared = shared.data();
            body();
          });
        }
        for (auto& th : pool) th.join();
      }
    }
  }
}

template <typename... P>
struct Launcher {
  void (*kernel)(P...);
  dim3 grid, block;
  size_t smem;
  template <typename... A>
  void operator()(A&&... args) const {
    auto k = kernel;
    // Convert once, as a real launch copies the parameters.
    auto bound = [k, params = std::make_tuple(static_cast<P>(args)...)]() {
      std::apply(k, params);
    };
    Run(grid, block, smem, bound);
  }
};

template <typename... P>
Launcher<P...> Launch(void (*kernel)(P...), dim3 grid, dim3 block, size_t smem) {
  return Launcher<P...>{kernel, grid, block, smem};
}

}  // namespace bp_gpu_emu

#define threadIdx (::bp_gpu_emu::Current().thread_idx)
#define blockIdx (::bp_gpu_emu::Current().block_idx)
#define blockDim (::bp_gpu_emu::Current().block_dim)
#define gridDim (::bp_gpu_emu::Current().grid_dim)
inline void __syncthreads() { ::bp_gpu_emu::Current().barrier->Wait(); }

#define BP_GPU_LAUNCH(kernel, grid, block, smem, stream) \
  ::bp_gpu_emu::Launch(kernel, grid, block, smem)

// The runtime API subset (device memory is host memory here).
#define BP_GPU_PREFIX "emu"
using gpuError_t = int;
using gpuStream_t = void*;
using gpuEvent_t = void*;
constexpr int gpuSuccess = 0;
constexpr int gpuMemcpyDeviceToDevice = 3;
inline gpuError_t gpuGetLastError() {
  const int e = ::bp_gpu_emu::LastError();
  ::bp_gpu_emu::LastError() = 0;
  return e;
}
// Error codes as CUDA numbers them (the ones the plugin distinguishes).
constexpr int gpuErrorMemoryAllocation = 2;
constexpr int gpuErrorInvalidResourceHandle = 400;
constexpr int gpuErrorNotReady = 600;
inline const char* gpuGetErrorString(gpuError_t e) {
  switch (e) {
    case gpuSuccess:
      return "no error";
    case gpuErrorMemoryAllocation:
      return "out of memory";
    case gpuErrorInvalidResourceHandle:
      return "invalid resource handle";
    case gpuErrorNotReady:
      return "device not ready";
    default:
      return "invalid configuration";
  }
}
inline const char* gpuGetErrorName(gpuError_t e) {
  switch (e) {
    case gpuSuccess:
      return "emuSuccess";
    case gpuErrorMemoryAllocation:
      return "emuErrorMemoryAllocation";
    case gpuErrorInvalidResourceHandle:
      return "emuErrorInvalidResourceHandle";
    case gpuErrorNotReady:
      return "emuErrorNotReady";
    default:
      return "emuErrorInvalidConfiguration";
  }
}
inline gpuError_t gpuSetDevice(int) { return gpuSuccess; }
// Copies run at the call (the stream only orders records, gpu_emulator_streams.h).
constexpr int gpuMemcpyHostToDevice = 1;
constexpr int gpuMemcpyDeviceToHost = 2;
inline gpuError_t gpuMemcpyAsync(void* dst, const void* src, size_t n, int, gpuStream_t) {
  std::memmove(dst, src, n);
  return gpuSuccess;
}

// Device and pinned host memory: plain host memory (pinned blocks 4096-byte
// aligned, like the page-locked pages of the real runtimes). A test makes the
// next allocation fail with FailNextAlloc.
namespace bp_gpu_emu {
inline int& NextAllocError() {
  static int e = 0;
  return e;
}
inline void FailNextAlloc(int e) { NextAllocError() = e; }
inline int TakeAllocError() {
  const int e = NextAllocError();
  NextAllocError() = 0;
  return e;
}
}  // namespace bp_gpu_emu
inline gpuError_t gpuMalloc(void** p, size_t n) {
  if (const int e = ::bp_gpu_emu::TakeAllocError()) return e;
  *p = ::operator new(n, std::align_val_t(256));
  return gpuSuccess;
}
inline gpuError_t gpuFree(void* p) {
  ::operator delete(p, std::align_val_t(256));
  return gpuSuccess;
}
inline gpuError_t gpuHostAlloc(void** p, size_t n) {
  if (const int e = ::bp_gpu_emu::TakeAllocError()) return e;
  *p = ::operator new(n, std::align_val_t(4096));
  return gpuSuccess;
}
inline gpuError_t gpuFreeHost(void* p) {
  ::operator delete(p, std::align_val_t(4096));
  return gpuSuccess;
}

// Devices, streams and events (the plugin glue's subset).
#include "gpu_emulator_streams.h"

// Float overloads of the math functions the kernels call unqualified.
using std::copysign;
using std::cos;
using std::erf;
using std::exp;
using std::fabs;
using std::floor;
using std::fmod;
using std::log;
using std::pow;
using std::sin;
using std::sqrt;
using std::tanh;
using std::trunc;
