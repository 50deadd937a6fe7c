// The host's stream and event handles (backplane/streams.h) and the calling
// thread's current stream per device, which every kernel call, copy and
// allocation reads (streams.cpp has the C API).
#pragma once

#include <atomic>
#include <cstdint>

#include "backplane/backplane.h"
#include "handle_table.h"
#include "status.h"

namespace bp::core {
struct DeviceState;
struct BackendSlot;
struct Capture;
constexpr uint64_t kStreamMagic = 0x53545245414d5f31ull;  // "STREAM_1"
constexpr uint64_t kEventMagic = 0x4556454e545f5f31ull;   // "EVENT__1"
}  // namespace bp::core

// The objects behind the handles: a caller holds the value `id` (a
// generation-checked entry of StreamTable / EventTable, handle_table.h),
// never the address; the C API resolves it before any dereference.
struct bp_stream_handle_t {
  bp_stream_handle_t() = default;
  bp_stream_handle_t(const bp_stream_handle_t&) = delete;
  bp_stream_handle_t& operator=(const bp_stream_handle_t&) = delete;
  ~bp_stream_handle_t();  // takes `id` out of the table (streams.cpp)
  uintptr_t id = 0;       // what the caller holds; 0: not published
  uint64_t magic = bp::core::kStreamMagic;
  bp_context_t* ctx = nullptr;
  bp::core::DeviceState* dev = nullptr;
  bp_stream_t raw = nullptr;  // the backend's stream
  bool is_default = false;    // the device's own (owned by the context)
  // Threads whose current stream this is: destroying it then is refused.
  std::atomic<int32_t> current_on{0};
  // Set while the stream is captured into a graph (graph.h); read by the
  // threads whose current stream this is, on every kernel call.
  std::atomic<bp::core::Capture*> capture{nullptr};
};

struct bp_event_handle_t {
  uintptr_t id = 0;  // what the caller holds (EventTable)
  uint64_t magic = bp::core::kEventMagic;
  bp_context_t* ctx = nullptr;
  bp::core::DeviceState* dev = nullptr;
  bp_event_t raw = nullptr;  // the backend's event
};

namespace bp::core {

// The process-wide handle tables (streams.cpp); never destroyed.
HandleTable<bp_stream_handle_t>& StreamTable();
HandleTable<bp_event_handle_t>& EventTable();
// The handle value a caller gets for `s` (its id, set when it was made).
inline bp_stream_handle_t* PublicHandle(const bp_stream_handle_t* s) {
  return reinterpret_cast<bp_stream_handle_t*>(s->id);
}

// FAILED_PRECONDITION, for `fn` (bp_plugin_unload), naming how many of each
// kind of object of `slot`'s plugin still live: streams from
// bp_stream_create, events, pinned host blocks, communicators
// (plugin_live.cpp); Ok when none does. The host memory slot's are the
// core's own and never count.
Status CheckNothingLiveOn(bp_context_t* ctx, const BackendSlot& slot, const char* fn);

// The calling thread's current streams other than the defaults: a few
// entries, scanned linearly (a thread rarely switches more than one or two
// devices). Plain thread_local data with the initial-exec model, so the
// check on every kernel call is a load and a compare.
struct CurrentStreamEntry {
  const DeviceState* dev;
  bp_stream_handle_t* stream;
};
constexpr int kMaxCurrentStreams = 16;
inline thread_local CurrentStreamEntry t_current_streams[kMaxCurrentStreams] __attribute__((tls_model("initial-exec")));
inline thread_local int t_num_current_streams __attribute__((tls_model("initial-exec"))) = 0;
// Nonzero while this thread replays or records a graph's host node (a CPU
// fallback): its own copies and synchronizes are part of that node.
inline thread_local int t_capture_suspended __attribute__((tls_model("initial-exec"))) = 0;

// The handle of the calling thread's current stream on `dev`; NULL: its default.
inline bp_stream_handle_t* CurrentStreamHandle(const DeviceState* dev) {
  for (int i = 0; i < t_num_current_streams; ++i) {
    if (t_current_streams[i].dev == dev) return t_current_streams[i].stream;
  }
  return nullptr;
}

// The calling thread's current stream of `dev` when it is being captured
// (graph.h), else NULL. One load and compare while no thread-local current
// stream is set.
inline bp_stream_handle_t* CapturingStream(const DeviceState* dev) {
  if (__builtin_expect(t_num_current_streams == 0, 1) || t_capture_suspended != 0) return nullptr;
  bp_stream_handle_t* h = CurrentStreamHandle(dev);
  return h != nullptr && h->capture.load(std::memory_order_acquire) != nullptr ? h : nullptr;
}

}  // namespace bp::core
