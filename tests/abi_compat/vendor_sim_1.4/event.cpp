#include "event.h"

#include <new>
#include <utility>

namespace vendor_sim {

uint64_t Event::BeginRecord() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  try {
    pending_.insert(recorded_ + 1);
  } catch (const std::bad_alloc&) {
    return 0;
  }
  return ++recorded_;
}

void Event::Complete(uint64_t gen) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (pending_.erase(gen) == 0) return;
    if (gen == recorded_) stamp_ = Clock::now();
  }
  done_.notify_all();
}

uint64_t Event::recorded() {
  std::lock_guard<std::mutex> lock(mu_);
  return recorded_;
}

bool Event::IsDone(uint64_t gen) {
  std::lock_guard<std::mutex> lock(mu_);
  return Done(gen);
}

bool Event::IsComplete() {
  std::lock_guard<std::mutex> lock(mu_);
  return Done(recorded_);
}

void Event::WaitFor(uint64_t gen) {
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] { return Done(gen); });
}

bool Event::CompletionTime(Clock::time_point* out) {
  std::lock_guard<std::mutex> lock(mu_);
  if (recorded_ == 0 || !Done(recorded_)) return false;
  *out = stamp_;
  return true;
}

bp_status_t EventTable::Create(bp_event_t* out_event) {
  try {
    auto e = std::make_shared<Event>();
    void* handle = e.get();
    std::lock_guard<std::mutex> lock(mu_);
    live_.emplace(handle, std::move(e));
    *out_event = handle;
    return BP_STATUS_OK;
  } catch (const std::bad_alloc&) {
    return BP_STATUS_OUT_OF_MEMORY;
  }
}

std::shared_ptr<Event> EventTable::Find(bp_event_t e) {
  if (e == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(e);
  return it == live_.end() ? nullptr : it->second;
}

bool EventTable::Destroy(bp_event_t e) {
  std::shared_ptr<Event> doomed;  // freed outside the lock
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(e);
  if (it == live_.end()) return false;
  doomed = std::move(it->second);
  live_.erase(it);
  return true;
}

void EventTable::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  live_.clear();
}

}  // namespace vendor_sim
