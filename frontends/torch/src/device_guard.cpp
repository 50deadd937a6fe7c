// torch's device guard for PrivateUse1: the current device index per thread,
// and Backplane's streams and events (backplane/streams.h) behind torch's
// c10::Stream / c10::Event / c10::StreamGuard on privateuseone. Stream id 0
// is a device's default stream; ids 1.. name the streams of a per-device
// pool, made on first use as torch's CUDA stream pool does, and the streams
// torch.Stream(...) makes (getNewStream), kept for the process.
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <deque>
#include <mutex>
#include <vector>

#include "bridge.h"

namespace bptorch {
namespace {

thread_local c10::DeviceIndex t_current = 0;

constexpr size_t kPoolSize = 4;  // streams getStreamFromGlobalPool hands out round robin

// The stream handles of every device: index id - 1 (id 0 is the default).
struct StreamIds {
  std::mutex mu;
  std::deque<std::vector<bp_stream_handle_t*>> by_device;  // grows with the device index
  std::deque<size_t> next;
};
StreamIds& Ids() {
  static auto* ids = new StreamIds();  // never destroyed: usable at exit
  return *ids;
}

std::vector<bp_stream_handle_t*>& ListOf(StreamIds& ids, c10::DeviceIndex d) {
  while (ids.by_device.size() <= static_cast<size_t>(d)) {
    ids.by_device.emplace_back();
    ids.next.push_back(0);
  }
  return ids.by_device[static_cast<size_t>(d)];
}

bp_stream_handle_t* HandleOf(const c10::Stream& s) {
  const bp_device_t dev = DeviceOf(s.device());
  if (s.id() == 0) {
    bp_stream_handle_t* h = nullptr;
    Check(bp_stream_get_default(Get().ctx, dev, &h), "privateuseone default stream");
    return h;
  }
  StreamIds& ids = Ids();
  std::lock_guard<std::mutex> lock(ids.mu);
  const auto& list = ListOf(ids, s.device_index());
  TORCH_CHECK(s.id() > 0 && static_cast<size_t>(s.id()) <= list.size(), "privateuseone: stream id ", s.id(),
              " of device ", s.device_index(), " was not made by this bridge");
  return list[static_cast<size_t>(s.id() - 1)];
}

// The c10::Stream of a handle; a handle made outside the bridge gets the next id.
c10::Stream StreamOf(bp_stream_handle_t* h, c10::Device d) {
  bp_stream_handle_t* def = nullptr;
  if (bp_stream_get_default(Get().ctx, DeviceOf(d), &def) == BP_STATUS_OK && h == def) {
    return c10::Stream(c10::Stream::DEFAULT, d);
  }
  StreamIds& ids = Ids();
  std::lock_guard<std::mutex> lock(ids.mu);
  auto& list = ListOf(ids, d.index());
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i] == h) return c10::Stream(c10::Stream::UNSAFE, d, static_cast<c10::StreamId>(i + 1));
  }
  list.push_back(h);
  return c10::Stream(c10::Stream::UNSAFE, d, static_cast<c10::StreamId>(list.size()));
}

c10::Device DeviceOfIndex(c10::DeviceIndex i) { return {c10::DeviceType::PrivateUse1, i}; }

class DeviceGuardImpl final : public c10::impl::DeviceGuardImplInterface {
 public:
  c10::DeviceType type() const override { return c10::DeviceType::PrivateUse1; }
  c10::Device exchangeDevice(c10::Device d) const override {
    const c10::Device old = getDevice();
    setDevice(d);
    return old;
  }
  c10::Device getDevice() const override { return {c10::DeviceType::PrivateUse1, t_current}; }
  void setDevice(c10::Device d) const override {
    if (Initialized()) DeviceOf(d);  // raises for an index past the count
    t_current = d.has_index() ? d.index() : 0;
  }
  void uncheckedSetDevice(c10::Device d) const noexcept override { t_current = d.has_index() ? d.index() : 0; }
  c10::DeviceIndex deviceCount() const noexcept override {
    return Initialized() ? static_cast<c10::DeviceIndex>(Get().device_count) : 0;
  }

  // ---- Streams: the calling thread's current stream is Backplane's.
  c10::Stream getStream(c10::Device d) const noexcept override {
    const c10::Device dev = d.has_index() ? d : DeviceOfIndex(t_current);
    try {
      bp_stream_handle_t* h = nullptr;
      if (Initialized() && bp_get_current_stream(Get().ctx, DeviceOf(dev), &h) == BP_STATUS_OK) {
        return StreamOf(h, dev);
      }
    } catch (...) {
    }
    return c10::Stream(c10::Stream::DEFAULT, dev);
  }
  c10::Stream getDefaultStream(c10::Device d) const override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream getNewStream(c10::Device d, int /*priority*/) const override {
    const c10::Device dev = d.has_index() ? d : DeviceOfIndex(t_current);
    bp_stream_handle_t* h = nullptr;
    Check(bp_stream_create(Get().ctx, DeviceOf(dev), &h), "torch.Stream on " + dev.str());
    return StreamOf(h, dev);
  }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool /*isHighPriority*/) const override {
    const c10::Device dev = d.has_index() ? d : DeviceOfIndex(t_current);
    const bp_device_t bdev = DeviceOf(dev);
    StreamIds& ids = Ids();
    std::lock_guard<std::mutex> lock(ids.mu);
    auto& list = ListOf(ids, dev.index());
    if (list.size() < kPoolSize) {  // made on first use, kept for the process (as torch's pool)
      bp_stream_handle_t* h = nullptr;
      Check(bp_stream_create(Get().ctx, bdev, &h), "privateuseone getStreamFromPool");
      list.push_back(h);
      return c10::Stream(c10::Stream::UNSAFE, dev, static_cast<c10::StreamId>(list.size()));
    }
    size_t& next = ids.next[static_cast<size_t>(dev.index())];
    const size_t i = next++ % list.size();
    return c10::Stream(c10::Stream::UNSAFE, dev, static_cast<c10::StreamId>(i + 1));
  }
  c10::Stream exchangeStream(c10::Stream s) const noexcept override {
    const c10::Stream old = getStream(s.device());
    try {
      bp_set_current_stream(HandleOf(s));
    } catch (...) {
    }
    return old;
  }
  bool queryStream(const c10::Stream& s) const override {
    bp_event_handle_t* e = nullptr;
    Check(bp_event_create(Get().ctx, DeviceOf(s.device()), &e), "privateuseone queryStream");
    int32_t done = 0;
    bp_status_t st = bp_event_record(e, HandleOf(s));
    if (st == BP_STATUS_OK) st = bp_event_query(e, &done);
    bp_event_destroy(e);
    Check(st, "privateuseone queryStream");
    return done != 0;
  }
  void synchronizeStream(const c10::Stream& s) const override {
    if (Initialized()) Check(bp_stream_synchronize(HandleOf(s)), "privateuseone synchronize");
  }
  void synchronizeDevice(const c10::DeviceIndex index) const override {
    if (Initialized()) Check(bp_device_synchronize(Get().ctx, SlotOf(index).device), "synchronize");
  }
  void recordDataPtrOnStream(const c10::DataPtr& data, const c10::Stream& s) const override {
    if (bp_tensor_t* block = BlockOf(data)) Check(bp_tensor_record_stream(block, HandleOf(s)), "record_stream");
  }

  // ---- Events: a c10::Event's opaque pointer is a bp_event_handle_t.
  void record(void** event, const c10::Stream& s, const c10::DeviceIndex device_index,
              const c10::EventFlag /*flag*/) const override {
    TORCH_CHECK(device_index == -1 || device_index == s.device_index(), "privateuseone: event of device ",
                device_index, " recorded on a stream of device ", s.device_index());
    if (*event == nullptr) {
      bp_event_handle_t* e = nullptr;
      Check(bp_event_create(Get().ctx, DeviceOf(s.device()), &e), "privateuseone event");
      *event = e;
    }
    Check(bp_event_record(static_cast<bp_event_handle_t*>(*event), HandleOf(s)), "privateuseone event record");
  }
  void block(void* event, const c10::Stream& s) const override {
    if (event == nullptr) return;  // never recorded: nothing to wait for
    Check(bp_stream_wait_event(HandleOf(s), static_cast<bp_event_handle_t*>(event)), "privateuseone event block");
  }
  bool queryEvent(void* event) const override {
    if (event == nullptr) return true;
    int32_t done = 0;
    Check(bp_event_query(static_cast<bp_event_handle_t*>(event), &done), "privateuseone event query");
    return done != 0;
  }
  void synchronizeEvent(void* event) const override {
    if (event == nullptr) return;  // never recorded
    Check(bp_event_synchronize(static_cast<bp_event_handle_t*>(event)), "Event.synchronize");
  }
  double elapsedTime(void* start, void* end, const c10::DeviceIndex /*index*/) const override {
    TORCH_CHECK(start != nullptr && end != nullptr, "Event.elapsed_time: both events must be recorded first");
    float ms = 0;
    Check(bp_event_elapsed_time(static_cast<bp_event_handle_t*>(start), static_cast<bp_event_handle_t*>(end), &ms),
          "Event.elapsed_time");
    return ms;
  }
  void destroyEvent(void* event, const c10::DeviceIndex /*device_index*/) const noexcept override {
    bp_event_destroy(static_cast<bp_event_handle_t*>(event));
  }
};

}  // namespace

c10::DeviceIndex CurrentDevice() { return t_current; }

bp_stream_handle_t* StreamHandle(const c10::Stream& s) { return HandleOf(s); }

C10_REGISTER_GUARD_IMPL(PrivateUse1, DeviceGuardImpl);

}  // namespace bptorch
