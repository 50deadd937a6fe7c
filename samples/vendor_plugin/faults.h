// Device faults on demand, so a host (and the core) can be tested against
// what real chips do: run out of memory, fail a copy, want a stricter
// alignment than the host's, complete work late, run kernels for a while.
// Read once at init from the environment; every fault is off by default. A
// real plugin has no use for this file.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace vendor_sim {

struct Faults {
  // BP_VENDOR_SIM_OOM_AFTER_BYTES: allocate() fails with OUT_OF_MEMORY once the
  // live allocated bytes would pass this (0: only the arena's size limits).
  size_t memory_limit_bytes = 0;
  // BP_VENDOR_SIM_FAIL_COPIES=N: every Nth copy (of any direction) fails with
  // INTERNAL (1: every copy; 0: none).
  uint64_t fail_copy_every = 0;
  // BP_VENDOR_SIM_ALIGNMENT: allocation alignment in bytes, a power of two of
  // at least 256 (the default) and at most 1 MiB.
  size_t alignment = 256;
  // BP_VENDOR_SIM_LATENCY_US: stream_synchronize() waits this long, as a
  // device whose queued work completes late.
  uint32_t latency_us = 0;
  // BP_VENDOR_SIM_LAUNCH_US: with BP_VENDOR_SIM_ASYNC=1, the device thread
  // starts each kernel or copy this long after it reaches the queue's head.
  uint32_t launch_us = 0;
  // BP_VENDOR_SIM_KERNEL_US: with BP_VENDOR_SIM_ASYNC=1, each kernel keeps its
  // stream's device thread busy this long after it ran (a kernel duration;
  // copies and event markers take none), so a host can make work on one
  // stream still run while another stream goes on: races on demand.
  uint32_t kernel_us = 0;
  // BP_VENDOR_SIM_HOLD_KERNELS=<path>: TEST ONLY. With BP_VENDOR_SIM_ASYNC=1,
  // after running a kernel (and its kernel_us) its stream's device thread
  // stays busy while the file <path> exists, checked every millisecond. A
  // test creates the file, launches, observes what must hold while the
  // kernel is still running, then removes the file: the test, not the
  // clock, decides when a kernel ends. Empty: off.
  std::string hold_kernels_path;

  // BP_VENDOR_SIM_BROKEN: TEST ONLY. A device that breaks the ABI's event
  // rules on purpose, so the conformance suite's streams group can prove it
  // catches each breakage. Never set it for real work.
  enum class Broken {
    kNone,
    // "ignore_event_wait": event_wait returns OK and enqueues nothing, so the
    // waiting stream does not wait.
    kIgnoreEventWait,
    // "early_event": event_record marks the event complete at once, on the
    // host, before the work it captures has run (query, synchronize and wait
    // then pass too early; elapsed_time measures host time).
    kEarlyEvent,
    // "no_streams": stream_create, stream_destroy and every event slot NULL
    // (the default stream only), so the streams group skips what it cannot
    // run and its ctest must fail for an expected backend.
    kNoStreams,
  };
  Broken broken = Broken::kNone;

  // BP_VENDOR_SIM_FAULT_OP=<operator>: TEST ONLY. Every kernel of that
  // operator (its functional name, e.g. "relu") faults on the device: the
  // launch returns OK, and when the device runs it nothing is written, the
  // stream's queue keeps the fault (sticky, reported by stream_synchronize,
  // naming the operator) and the kernel's outputs are poisoned: copying from
  // them fails with the fault until they are freed. Empty: off.
  std::string fault_op;

  // Allocations written by faulted work (allocation handle -> the fault).
  void Poison(const void* allocation, const std::string& fault);
  // The fault that poisoned `allocation`, or "" when none did.
  std::string PoisonOf(const void* allocation);
  // Forgets `allocation`'s poison (it was freed; its memory may be reused).
  void Unpoison(const void* allocation);

  std::atomic<uint64_t> copies{0};
  std::atomic<bool> any_poison{false};  // so copies skip the lock while nothing faulted
  std::mutex poison_mu;
  std::unordered_map<const void*, std::string> poisoned;

  // The faults the environment asks for. Returns nullptr, or the value of
  // BP_VENDOR_SIM_BROKEN when it names no broken mode (init then fails).
  const char* ReadEnvironment();
  // Counts one copy; true when this one is to fail.
  bool NextCopyFails();
};

}  // namespace vendor_sim
