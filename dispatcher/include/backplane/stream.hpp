// bp::Stream, bp::Event and bp::StreamGuard: thin RAII over the streams and
// events of backplane/streams.h (docs/streams.md). Included at the end of
// backplane.hpp. Semantics as torch.cuda.Stream / Event / torch.cuda.stream().
#pragma once

#include <memory>
#include <utility>

#include "backplane/backplane.hpp"

namespace bp {

/// A stream of one device (move-only). Owned streams (Stream::create) are
/// destroyed with the object, after their work finishes; the default stream
/// (Stream::default_of) and current() are borrowed from the context. The
/// Context must outlive every Stream.
class Stream {
 public:
  Stream() = default;
  /// A new stream on `device`. Throws bp::Error (UNIMPLEMENTED when the
  /// backend has only its default stream).
  static Stream create(const Context& ctx, Device device) {
    bp_stream_handle_t* s = nullptr;
    check(bp_stream_create(ctx.get(), device.c(), &s));
    return Stream(s, true);
  }
  /// The device's default stream (borrowed). Throws bp::Error.
  static Stream default_of(const Context& ctx, Device device) {
    bp_stream_handle_t* s = nullptr;
    check(bp_stream_get_default(ctx.get(), device.c(), &s));
    return Stream(s, false);
  }
  /// The calling thread's current stream of `device` (borrowed). Throws bp::Error.
  static Stream current(const Context& ctx, Device device) {
    bp_stream_handle_t* s = nullptr;
    check(bp_get_current_stream(ctx.get(), device.c(), &s));
    return Stream(s, false);
  }
  ~Stream() {
    if (owned_) bp_stream_destroy(s_);  // waits for the stream's work
  }
  Stream(Stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)), owned_(std::exchange(o.owned_, false)) {}
  Stream& operator=(Stream&& o) noexcept {
    Stream tmp(std::move(o));
    std::swap(s_, tmp.s_);
    std::swap(owned_, tmp.owned_);
    return *this;
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  /// The C handle, borrowed.
  bp_stream_handle_t* get() const { return s_; }
  /// The stream's device. Throws bp::Error.
  Device device() const {
    bp_device_t d{};
    check(bp_stream_device(s_, &d));
    return Device::from_c(d);
  }
  /// Blocks until the stream's work has finished. Throws bp::Error.
  void synchronize() const { check(bp_stream_synchronize(s_)); }
  /// Work enqueued here afterwards waits for `event`'s captured work.
  void wait(const class Event& event) const;
  /// The counters of the caching allocator's blocks owned by this stream.
  bp_allocator_stats_t allocator_stats() const {
    bp_allocator_stats_t st{};
    st.struct_size = sizeof(st);
    check(bp_stream_allocator_stats(s_, &st));
    return st;
  }

 private:
  Stream(bp_stream_handle_t* s, bool owned) : s_(s), owned_(owned) {}
  bp_stream_handle_t* s_ = nullptr;
  bool owned_ = false;
};

/// An event of one device (move-only; destroyed with the object).
class Event {
 public:
  Event() = default;
  /// A new, unrecorded event on `device`. Throws bp::Error.
  Event(const Context& ctx, Device device) { check(bp_event_create(ctx.get(), device.c(), &e_)); }
  ~Event() { bp_event_destroy(e_); }
  Event(Event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  Event& operator=(Event&& o) noexcept {
    std::swap(e_, o.e_);
    return *this;
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  bp_event_handle_t* get() const { return e_; }
  /// Captures the work enqueued on `stream` so far. Throws bp::Error.
  void record(const Stream& stream) { check(bp_event_record(e_, stream.get())); }
  /// Blocks until the captured work has finished.
  void synchronize() const { check(bp_event_synchronize(e_)); }
  /// True when the captured work has finished (never blocks on ABI 1.4 plugins).
  bool query() const {
    int32_t done = 0;
    check(bp_event_query(e_, &done));
    return done != 0;
  }
  /// Milliseconds from this event's completion to `end`'s. Throws bp::Error.
  float elapsed_ms(const Event& end) const {
    float ms = 0;
    check(bp_event_elapsed_time(e_, end.e_, &ms));
    return ms;
  }

 private:
  bp_event_handle_t* e_ = nullptr;
};

inline void Stream::wait(const Event& event) const { check(bp_stream_wait_event(s_, event.get())); }

/// Makes `stream` the calling thread's current stream of its device for the
/// guard's scope, then restores the previous one (as torch.cuda.stream(s)).
class StreamGuard {
 public:
  /// Throws bp::Error.
  StreamGuard(const Context& ctx, const Stream& stream) {
    bp_device_t d{};
    check(bp_stream_device(stream.get(), &d));
    check(bp_get_current_stream(ctx.get(), d, &prev_));
    check(bp_set_current_stream(stream.get()));
  }
  ~StreamGuard() { bp_set_current_stream(prev_); }
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  bp_stream_handle_t* prev_ = nullptr;
};

/// Marks `tensor` as used on `stream` (Tensor.record_stream). Throws bp::Error.
inline void record_stream(const Tensor& tensor, const Stream& stream) {
  check(bp_tensor_record_stream(tensor.get(), stream.get()));
}

}  // namespace bp
