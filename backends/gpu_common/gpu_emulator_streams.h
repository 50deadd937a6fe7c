// The device, stream and event part of the emulated runtime (gpu_emulator.h),
// so tests/gpu_streams_emulated_test.cpp can run the plugin's own device.cpp
// and stream.cpp without a GPU.
//
// Work runs synchronously when it is enqueued, so by default every record
// completes at once with a host timestamp. To observe "not finished yet",
// a test pauses the device (Pause): records then stay pending, per stream
// and in order, until something waits for them (stream or event
// synchronize, which also drain the streams an earlier wait made this one
// depend on) or the test resumes the device (Resume). Destroying a stream
// does not wait, like the real runtimes: its pending events finish on Resume.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <vector>

// Included from gpu_emulator.h after gpuError_t and the error codes.

namespace bp_gpu_emu {

struct EmuEvent;

struct EmuStream {
  std::vector<EmuEvent*> pending;  // records not yet complete, in record order
  std::vector<EmuStream*> after;   // streams whose pending work an event_wait put before ours
};

struct EmuEvent {
  bool timing = true;
  bool recorded = false;
  bool complete = false;
  EmuStream* on = nullptr;  // while pending
  std::chrono::steady_clock::time_point at;
};

struct EmuState {
  std::mutex mu;
  bool paused = false;
  int device_count = 1;
  gpuError_t next_stream_create_error = 0;
  std::set<EmuStream*> streams;
  EmuStream legacy;                // the NULL stream
  std::vector<EmuEvent*> orphans;  // pending on streams destroyed before they finished
};

inline EmuState& State() {
  static EmuState s;
  return s;
}

inline EmuStream* StreamOf(void* s) { return s ? static_cast<EmuStream*>(s) : &State().legacy; }

inline void Complete(EmuEvent* e) {
  e->complete = true;
  e->on = nullptr;
  e->at = std::chrono::steady_clock::now();
}

// Completes s's pending records, after those of the streams it waits for.
// Callers hold State().mu.
inline void Drain(EmuStream* s) {
  std::vector<EmuStream*> after;
  after.swap(s->after);  // swapped first: a cycle of waits ends here
  for (EmuStream* u : after) Drain(u);
  for (EmuEvent* e : s->pending) Complete(e);
  s->pending.clear();
}

// Forgets the waits on streams that have nothing pending (one level deep:
// enough for the tests, and a stale entry only delays completion to the
// next synchronize). Callers hold State().mu.
inline void PruneIdle(EmuStream* s) {
  auto idle = [](EmuStream* u) { return u->pending.empty() && u->after.empty(); };
  s->after.erase(std::remove_if(s->after.begin(), s->after.end(), idle), s->after.end());
}

inline void Unlink(EmuEvent* e) {
  if (e->complete || !e->recorded) return;
  EmuState& st = State();
  auto& list = e->on ? e->on->pending : st.orphans;
  list.erase(std::remove(list.begin(), list.end(), e), list.end());
}

// Test hooks.
inline void Pause() {
  std::lock_guard<std::mutex> lock(State().mu);
  State().paused = true;
}
inline void Resume() {
  EmuState& st = State();
  std::lock_guard<std::mutex> lock(st.mu);
  st.paused = false;
  for (EmuStream* s : st.streams) Drain(s);
  Drain(&st.legacy);
  for (EmuEvent* e : st.orphans) Complete(e);
  st.orphans.clear();
}
inline void SetDeviceCount(int n) { State().device_count = n; }
inline void FailNextStreamCreate(gpuError_t e) { State().next_stream_create_error = e; }
inline size_t LiveStreams() {
  std::lock_guard<std::mutex> lock(State().mu);
  return State().streams.size();
}

}  // namespace bp_gpu_emu

// ---- Devices ----
struct gpuDeviceProp_t {
  char name[256];
  size_t totalGlobalMem;
  int multiProcessorCount;
  int major, minor;
};
constexpr int gpuDevAttrMultiProcessorCount = 16;
inline gpuError_t gpuGetDeviceCount(int* n) {
  *n = ::bp_gpu_emu::State().device_count;
  return gpuSuccess;
}
inline gpuError_t gpuDeviceGetAttribute(int* value, int, int) {
  *value = 4;
  return gpuSuccess;
}
inline gpuError_t gpuGetDeviceProperties(gpuDeviceProp_t* p, int) {
  std::memset(p, 0, sizeof *p);
  std::strcpy(p->name, "emulated device");
  p->totalGlobalMem = size_t{1} << 30;
  p->multiProcessorCount = 4;
  return gpuSuccess;
}
inline gpuError_t gpuDriverGetVersion(int* v) {
  *v = 0;
  return gpuSuccess;
}
inline gpuError_t gpuRuntimeGetVersion(int* v) {
  *v = 0;
  return gpuSuccess;
}

// ---- Streams ----
constexpr unsigned gpuStreamNonBlocking = 1;
inline gpuError_t gpuStreamCreateWithFlags(gpuStream_t* s, unsigned) {
  ::bp_gpu_emu::EmuState& st = ::bp_gpu_emu::State();
  std::lock_guard<std::mutex> lock(st.mu);
  if (const gpuError_t e = st.next_stream_create_error) {
    st.next_stream_create_error = 0;
    return e;
  }
  auto* stream = new ::bp_gpu_emu::EmuStream();
  st.streams.insert(stream);
  *s = stream;
  return gpuSuccess;
}
inline gpuError_t gpuStreamDestroy(gpuStream_t s) {
  ::bp_gpu_emu::EmuState& st = ::bp_gpu_emu::State();
  std::lock_guard<std::mutex> lock(st.mu);
  auto* stream = static_cast<::bp_gpu_emu::EmuStream*>(s);
  if (!stream || st.streams.erase(stream) == 0) return gpuErrorInvalidResourceHandle;
  for (::bp_gpu_emu::EmuEvent* e : stream->pending) {
    e->on = nullptr;
    st.orphans.push_back(e);
  }
  for (::bp_gpu_emu::EmuStream* other : st.streams) {
    auto& a = other->after;
    a.erase(std::remove(a.begin(), a.end(), stream), a.end());
  }
  delete stream;
  return gpuSuccess;
}
inline gpuError_t gpuStreamSynchronize(gpuStream_t s) {
  std::lock_guard<std::mutex> lock(::bp_gpu_emu::State().mu);
  ::bp_gpu_emu::Drain(::bp_gpu_emu::StreamOf(s));
  return gpuSuccess;
}

// ---- Events ----
constexpr unsigned gpuEventDefault = 0;
constexpr unsigned gpuEventDisableTiming = 2;
inline gpuError_t gpuEventCreateWithFlags(gpuEvent_t* e, unsigned flags) {
  auto* ev = new ::bp_gpu_emu::EmuEvent();
  ev->timing = (flags & gpuEventDisableTiming) == 0;
  *e = ev;
  return gpuSuccess;
}
inline gpuError_t gpuEventDestroy(gpuEvent_t e) {
  if (!e) return gpuErrorInvalidResourceHandle;
  auto* ev = static_cast<::bp_gpu_emu::EmuEvent*>(e);
  {
    std::lock_guard<std::mutex> lock(::bp_gpu_emu::State().mu);
    ::bp_gpu_emu::Unlink(ev);
  }
  delete ev;
  return gpuSuccess;
}
inline gpuError_t gpuEventRecord(gpuEvent_t e, gpuStream_t s) {
  if (!e) return gpuErrorInvalidResourceHandle;
  ::bp_gpu_emu::EmuState& st = ::bp_gpu_emu::State();
  std::lock_guard<std::mutex> lock(st.mu);
  auto* ev = static_cast<::bp_gpu_emu::EmuEvent*>(e);
  ::bp_gpu_emu::Unlink(ev);  // a re-record replaces the pending one
  ev->recorded = true;
  ::bp_gpu_emu::EmuStream* stream = ::bp_gpu_emu::StreamOf(s);
  ::bp_gpu_emu::PruneIdle(stream);
  if (st.paused || !stream->pending.empty() || !stream->after.empty()) {
    ev->complete = false;
    ev->on = stream;
    stream->pending.push_back(ev);
  } else {
    ::bp_gpu_emu::Complete(ev);
  }
  return gpuSuccess;
}
inline gpuError_t gpuStreamWaitEvent(gpuStream_t s, gpuEvent_t e, unsigned) {
  if (!e) return gpuErrorInvalidResourceHandle;
  std::lock_guard<std::mutex> lock(::bp_gpu_emu::State().mu);
  auto* ev = static_cast<::bp_gpu_emu::EmuEvent*>(e);
  ::bp_gpu_emu::EmuStream* stream = ::bp_gpu_emu::StreamOf(s);
  // Never blocks: later records on `stream` now depend on the event's stream.
  if (ev->recorded && !ev->complete && ev->on && ev->on != stream) stream->after.push_back(ev->on);
  return gpuSuccess;
}
inline gpuError_t gpuEventQuery(gpuEvent_t e) {
  if (!e) return gpuErrorInvalidResourceHandle;
  std::lock_guard<std::mutex> lock(::bp_gpu_emu::State().mu);
  auto* ev = static_cast<::bp_gpu_emu::EmuEvent*>(e);
  return !ev->recorded || ev->complete ? gpuSuccess : gpuErrorNotReady;
}
inline gpuError_t gpuEventSynchronize(gpuEvent_t e) {
  if (!e) return gpuErrorInvalidResourceHandle;
  ::bp_gpu_emu::EmuState& st = ::bp_gpu_emu::State();
  std::lock_guard<std::mutex> lock(st.mu);
  auto* ev = static_cast<::bp_gpu_emu::EmuEvent*>(e);
  if (ev->recorded && !ev->complete) {
    if (ev->on) {
      ::bp_gpu_emu::Drain(ev->on);
    } else {
      ::bp_gpu_emu::Unlink(ev);
      ::bp_gpu_emu::Complete(ev);
    }
  }
  return gpuSuccess;
}
// As CUDA: both recorded and complete, both with timing, else an error.
inline gpuError_t gpuEventElapsedTime(float* ms, gpuEvent_t start, gpuEvent_t end) {
  if (!start || !end) return gpuErrorInvalidResourceHandle;
  std::lock_guard<std::mutex> lock(::bp_gpu_emu::State().mu);
  auto* a = static_cast<::bp_gpu_emu::EmuEvent*>(start);
  auto* b = static_cast<::bp_gpu_emu::EmuEvent*>(end);
  if (!a->recorded || !b->recorded || !a->timing || !b->timing) return gpuErrorInvalidResourceHandle;
  if (!a->complete || !b->complete) return gpuErrorNotReady;
  *ms = std::chrono::duration<float, std::milli>(b->at - a->at).count();
  return gpuSuccess;
}
