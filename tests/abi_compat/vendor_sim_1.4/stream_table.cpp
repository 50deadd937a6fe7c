#include "stream_table.h"

#include <new>
#include <utility>

namespace vendor_sim {

bool StreamTable::Start(bool async, uint32_t launch_us, uint32_t kernel_us, const char* hold_path) {
  async_ = async;
  launch_us_ = launch_us;
  kernel_us_ = kernel_us;
  hold_path_ = hold_path;
  return default_.Start(async, launch_us, kernel_us, hold_path);
}

void StreamTable::StopAll() {
  std::unordered_map<const void*, std::unique_ptr<Queue>> created;
  {
    std::lock_guard<std::mutex> lock(mu_);
    created.swap(created_);
  }
  // One at a time is safe: while one queue finishes its items (perhaps
  // waiting on an event), every other queue's thread still runs, and a
  // stopped queue has run everything it held.
  for (auto& entry : created) entry.second->Stop();
  default_.Stop();
}

Queue* StreamTable::Find(bp_stream_t stream) {
  if (stream == nullptr) return &default_;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = created_.find(stream);
  return it == created_.end() ? nullptr : it->second.get();
}

bp_status_t StreamTable::Create(bp_stream_t* out_stream) {
  std::unique_ptr<Queue> q(new (std::nothrow) Queue);
  if (q == nullptr) return BP_STATUS_OUT_OF_MEMORY;
  if (!q->Start(async_, launch_us_, kernel_us_, hold_path_)) return BP_STATUS_UNAVAILABLE;
  void* handle = q.get();
  try {
    std::lock_guard<std::mutex> lock(mu_);
    created_.emplace(handle, std::move(q));
  } catch (...) {
    return BP_STATUS_OUT_OF_MEMORY;  // the Queue is freed either way, stopping its thread
  }
  *out_stream = handle;
  return BP_STATUS_OK;
}

bool StreamTable::Destroy(bp_stream_t stream) {
  if (stream == nullptr) return false;
  std::unique_ptr<Queue> q;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = created_.find(stream);
    if (it == created_.end()) return false;
    q = std::move(it->second);
    created_.erase(it);
  }
  // Outside the lock: the queue may still wait on an event another stream
  // completes, and those streams' kernels call Find.
  q->Drain();
  q->Stop();
  return true;
}

void StreamTable::DrainAll() {
  // Under the lock, so a stream cannot be destroyed meanwhile and nothing is
  // allocated. No device thread takes this lock (they never call Find), so
  // the queues drain; only other host threads' launches wait meanwhile.
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& entry : created_) entry.second->Drain();
  default_.Drain();
}

}  // namespace vendor_sim
