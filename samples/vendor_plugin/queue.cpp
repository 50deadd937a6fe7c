#include "queue.h"

#include <chrono>
#include <cstdio>
#include <system_error>
#include <utility>

namespace vendor_sim {

namespace {

bool FileExists(const char* path) {
  std::FILE* f = std::fopen(path, "rb");
  if (f == nullptr) return false;
  std::fclose(f);
  return true;
}

}  // namespace

bool Queue::Start(bool async, uint32_t launch_us, uint32_t kernel_us, const char* hold_path) {
  launch_us_ = launch_us;
  kernel_us_ = kernel_us;
  hold_path_ = hold_path != nullptr && *hold_path != '\0' ? hold_path : nullptr;
  if (!async) return true;
  try {
    device_ = std::thread([this] { Run(); });
  } catch (const std::system_error&) {
    return false;
  }
  async_ = true;
  return true;
}

void Queue::Stop() {
  if (!async_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  device_.join();
  async_ = false;
}

void Queue::Submit(std::function<void()> work, ItemKind kind) {
  if (!async_) {
    work();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    items_.push_back(Item{std::move(work), kind});
    ++submitted_;
  }
  wake_.notify_one();
}

void Queue::Drain() {
  if (!async_) return;
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t target = submitted_;
  idle_.wait(lock, [&] { return finished_ >= target; });
}

void Queue::SetFault(const std::string& fault) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!fault_.empty()) return;
  try {
    fault_ = fault;
  } catch (...) {
    fault_ = "?";  // no memory for the message; still a fault
  }
}

std::string Queue::Fault() {
  std::lock_guard<std::mutex> lock(mu_);
  return fault_;
}

void Queue::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || !items_.empty(); });
    if (items_.empty()) return;  // stop_, and nothing left to run
    Item item = std::move(items_.front());
    items_.pop_front();
    lock.unlock();
    if (item.kind != ItemKind::kMarker && launch_us_ != 0)
      std::this_thread::sleep_for(std::chrono::microseconds(launch_us_));
    item.work();
    // The modelled kernel duration: the device is still busy with this
    // kernel, so nothing after it on this stream starts yet.
    if (item.kind == ItemKind::kKernel && kernel_us_ != 0)
      std::this_thread::sleep_for(std::chrono::microseconds(kernel_us_));
    // A test holding kernels (BP_VENDOR_SIM_HOLD_KERNELS): still busy until
    // the test removes the file.
    if (item.kind == ItemKind::kKernel && hold_path_ != nullptr)
      while (FileExists(hold_path_)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    lock.lock();
    ++finished_;
    idle_.notify_all();
  }
}

}  // namespace vendor_sim
