// The context and its backend slots: everything a bp_context_t owns.
//
// Concurrency: writers (plugin load/unload, registration, op definition) take
// `mu`. Readers (operator calls, tensor functions) never lock: they read
// immutable snapshots through atomic pointers inside a ReadSection (rcu.h), and
// a backend slot is only reinitialized after SynchronizeReaders().
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "allocator.h"
#include "fork_guard.h"
#include "stream_handle.h"
#include "backplane/backplane.h"
#include "status.h"

struct bp_plugin_t;
struct bp_op_t;
struct bp_registration_t;
struct bp_call_plan_t;

namespace bp::core {

constexpr int32_t kMaxBackends = 32;

// Bumped (RoutesChanged) whenever what a call's route resolves to may change
// in `ctx`: a kernel table published, a backend slot loaded or unloaded. Call
// plans (call_plan.h) remember the generation they were prepared at and are
// stale once it moves; per context, so one context's plugin load leaves
// another's plans alone. Writers call it after publishing, before
// SynchronizeReaders.
void RoutesChanged(bp_context_t* ctx);

struct KernelEntry {
  bp_kernel_fn fn = nullptr;
  void* data = nullptr;
  // DtypeBit() of each compute dtype the kernel runs (register_kernel_dtypes,
  // ABI 1.3); every dtype when registered without a mask.
  uint32_t dtype_mask = 0xffffffffu;
};
// Immutable once published; one per operator (functional entry), indexed by backend id.
struct KernelTable {
  KernelEntry kernels[kMaxBackends];
};

struct BackendSlot;

// Data moved between host and a backend's devices by the core, per direction
// (read by bp_transfer_stats). Relaxed counters: totals, not an ordering.
struct TransferCounters {
  std::atomic<uint64_t> h2d_count{0}, h2d_bytes{0};
  std::atomic<uint64_t> d2h_count{0}, d2h_bytes{0};
  std::atomic<uint64_t> d2d_count{0}, d2d_bytes{0};
  // Calls served by the cast route and the host<->device bytes their casts moved.
  std::atomic<uint64_t> cast_count{0}, cast_bytes{0};
  void Reset() {
    for (auto* c : {&h2d_count, &h2d_bytes, &d2h_count, &d2h_bytes, &d2d_count, &d2d_bytes, &cast_count, &cast_bytes}) {
      c->store(0, std::memory_order_relaxed);
    }
  }
};

// One device of a backend: its default stream and caching allocator.
struct DeviceState {
  BackendSlot* slot = nullptr;
  int32_t index = 0;
  bp_stream_t stream = nullptr;  // the default stream (the backend's value)
  std::unique_ptr<CachingAllocator> allocator;
  // The device reports BP_DEVICE_CAP_UNIFIED (the host can address its
  // memory): the host fallback runs on its memory through host views.
  bool unified = false;
  // The default stream's handle (bp_stream_get_default) and the streams
  // bp_stream_create made (bp_device_synchronize waits for each).
  bp_stream_handle_t default_stream;
  std::mutex streams_mu;
  std::vector<bp_stream_handle_t*> streams;
  // Events bp_event_create made and bp_event_destroy has not freed (each
  // holds a backend event: bp_plugin_unload refuses while any lives).
  std::atomic<int64_t> live_events{0};
  // bp_host_alloc's caching allocator over the backend's host_allocate
  // (host_pinned.cpp). Its blocks' "stream" is the address of pinned_tag,
  // which no stream has: every stream an async copy uses is recorded.
  std::unique_ptr<CachingAllocator> pinned;
  char pinned_tag = 0;
};

// A block bp_host_alloc handed out.
struct PinnedBlock {
  DeviceState* dev = nullptr;
  Block* block = nullptr;
  size_t nbytes = 0;  // as asked for
};

// The backend stream work on `dev` goes to: the calling thread's current
// stream (bp_set_current_stream), else the device's default stream.
inline bp_stream_t CurrentStream(const DeviceState* dev) {
  if (__builtin_expect(t_num_current_streams == 0, 1)) return dev->stream;
  bp_stream_handle_t* h = CurrentStreamHandle(dev);
  return h != nullptr ? h->raw : dev->stream;
}

// What bp_backend_info, bp_backend_find and bp_device_parse read: an
// immutable copy of a slot's description, published by the loader (under
// ctx->mu) and read without the lock, so a query never waits on a plugin's
// init. A replaced snapshot is retired and freed after the next unload's
// SynchronizeReaders (its strings are borrowed "while the backend is loaded").
struct BackendInfoSnapshot {
  std::string name, version, path, no_device_reason;
  bool has_no_device_reason = false;
  uint32_t abi_version = 0;
  int32_t device_type = kDLCPU;
  int32_t device_count = 0;
};

struct BackendSlot {
  int32_t id = 0;
  std::atomic<bool> loaded{false};
  // Memory is host memory provided by the core: the slot a host-memory
  // plugin (the cpu plugin) attaches to, and the one every fallback runs on.
  bool host_memory = false;
  std::string name, version, path, no_device_reason;
  bool has_no_device_reason = false;
  uint32_t abi_version = 0;
  int32_t device_type = kDLCPU;
  int32_t device_count = 0;
  bp_backend_t table{};             // memory, copies, streams (backend 0: the core's)
  bp_backend_t props_table{};       // device_count/properties source (backend 0: plugin's if attached)
  bp_plugin_t* plugin = nullptr;    // plugin owning the slot; nullptr when free
  std::vector<DeviceState*> devices;  // owned by Context::device_states
  std::atomic<const KernelEntry*> fallback{nullptr};  // backend-wide fallback snapshot
  std::vector<bp_registration_t*> fallback_stack;     // writers only
  TransferCounters transfers;
  std::atomic<const BackendInfoSnapshot*> info{nullptr};  // read with a ReadSection
};

// Publishes a fresh snapshot of `slot`'s description; the old one is retired
// (ctx->retired_infos). Caller holds ctx->mu.
void PublishBackendInfoLocked(bp_context_t* ctx, BackendSlot& slot);

void LogMessage(bp_context_t* ctx, int32_t level, const std::string& message);
// Sends an allocator's warnings (guard mode) to ctx's log.
void SetAllocatorLog(bp_context_t* ctx, RawMemory* raw);
// INVALID_ARGUMENT naming `fn` when `ctx` is NULL or not a live context (never
// created, or already destroyed): a set of live contexts is consulted, so a
// destroyed context is never dereferenced. Used by the entry points that are
// not on the operator hot path (plugins, backends, devices, destroy); a
// context created later at the same address is indistinguishable.
Status CheckContext(bp_context_t* ctx, const char* fn);
// OUT_OF_RANGE naming `fn` unless 0 <= backend < the context's backend count.
Status CheckBackendId(bp_context_t* ctx, int32_t backend, const char* fn);

}  // namespace bp::core

struct bp_context_t {
  std::atomic<bool> strict{false};
  bp_log_fn log_fn = nullptr;
  void* log_user_data = nullptr;
  int32_t min_log_level = BP_LOG_WARNING;

  std::mutex mu;  // writers: load/unload, registrations, definitions
  bp::core::BackendSlot slots[bp::core::kMaxBackends];
  std::atomic<int32_t> num_backends{0};
  // The slot whose memory is host memory (set once at context creation): the
  // dispatch key of host tensors and the backend the fallback runs on.
  int32_t host_backend = 0;

  // Operators: the list and name map change only under ops_mu (exclusive);
  // bp_op_t objects live until the context is destroyed.
  std::shared_mutex ops_mu;
  std::vector<bp_op_t*> ops;
  std::unordered_map<std::string, bp_op_t*> op_by_name;
  std::vector<std::unique_ptr<bp_op_t>> all_ops;
  // Custom operators ever defined, by name (removed ones included), so a
  // definition finds one to revive without scanning all_ops (which made
  // defining n operators quadratic). Written under mu.
  std::unordered_multimap<std::string, bp_op_t*> custom_by_name;
  bp_op_t* copy_op = nullptr;  // "copy_", used by casts and composites

  std::vector<std::unique_ptr<bp_plugin_t>> plugins;
  std::vector<std::unique_ptr<bp_registration_t>> registrations;
  std::vector<std::unique_ptr<bp::core::DeviceState>> device_states;
  std::vector<const bp::core::KernelTable*> retired_tables;  // freed at destroy
  std::vector<const bp::core::KernelEntry*> retired_fallbacks;
  std::vector<const bp::core::BackendInfoSnapshot*> retired_infos;

  bp_host_api_t host_api{};
  std::atomic<int64_t> live_tensors{0};
  std::atomic<int64_t> live_storages{0};  // includes storages held only by DLPack exports
  // TensorBlocks (tensor.h) are counted in neither field above but by their
  // device's allocator (CachingAllocator::LivePairs), under the lock it takes
  // anyway: a fresh tensor costs no atomic update here.

  // Call plans (call_plan.h): the route generation (RoutesChanged), whether
  // the context is alive (shared with explicit plans, which may outlive it),
  // the plans the operators' caches ever held (freed at destroy; a replaced
  // one may still be read by a call in flight), and how many were built.
  std::atomic<uint64_t> route_generation{1};
  std::shared_ptr<std::atomic<bool>> alive = std::make_shared<std::atomic<bool>>(true);
  std::mutex plans_mu;
  std::vector<bp_call_plan_t*> cached_plans;
  std::atomic<uint64_t> plan_builds{0};

  // bp_host_alloc's blocks by start address (host_pinned.cpp).
  std::mutex pinned_mu;
  std::map<uintptr_t, bp::core::PinnedBlock> pinned;

  // fork_guard.h: the fork epoch and process the context was created in.
  uint32_t fork_epoch = 0;
  long creator_pid = 0;

  ~bp_context_t();
};

namespace bp::core {
// True when `ctx` was created before a fork() of this process (fork_guard.h):
// one relaxed load and a compare, cheap enough for every operator call.
inline bool ContextForked(const bp_context_t* ctx) {
  return __builtin_expect(ctx->fork_epoch != g_fork_epoch.load(std::memory_order_relaxed), 0);
}
// FAILED_PRECONDITION naming `fn` when `ctx` was created before fork().
inline Status CheckNotForked(const bp_context_t* ctx, const char* fn) {
  return ContextForked(ctx) ? ForkedContextError(ctx, fn) : Status::Ok();
}
}  // namespace bp::core
