// Guard mode of the caching allocator (BACKPLANE_GUARD=1): canary bytes after
// every block's requested size, written and checked through the backend's
// copies, so an uninstrumented kernel that writes past its output is named
// in a release build (docs/security.md).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "allocator.h"

namespace bp::core {
namespace {

bool GuardRequested() {
  const char* v = secure_getenv("BACKPLANE_GUARD");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

// The canary: one static buffer of kCanary bytes, the source of every write
// (a host-to-device copy may be asynchronous; a static buffer outlives it).
const unsigned char* CanaryBytes() {
  static const auto* bytes = [] {
    auto* b = new unsigned char[CachingAllocator::kGuardMaxBytes];
    std::memset(b, CachingAllocator::kCanary, CachingAllocator::kGuardMaxBytes);
    return b;
  }();
  return bytes;
}

}  // namespace

CachingAllocator::CachingAllocator(RawMemory raw) : raw_(raw) {
  default_pool_.stream = raw_.stream;
  // Guard mode needs a way to reach the bytes: host addresses or both copies.
  guard_ = GuardRequested() &&
           (raw_.host_addressable || (raw_.copy_host_to_device != nullptr && raw_.copy_device_to_host != nullptr));
}

size_t CachingAllocator::CanaryLength(const Block* b) const {
  const size_t slack = b->size - b->requested;
  return slack < kGuardMaxBytes ? slack : kGuardMaxBytes;
}

bool CachingAllocator::WriteCanary(const Block* b) const {
  const size_t n = CanaryLength(b);
  if (n == 0) return true;
  if (raw_.host_addressable) {
    std::memcpy(static_cast<char*>(b->ptr) + b->requested, CanaryBytes(), n);
    return true;
  }
  return raw_.copy_host_to_device(raw_.backend_data, raw_.device, CanaryBytes(), b->ptr, b->requested, n,
                                  b->stream) == BP_STATUS_OK;
}

std::string CachingAllocator::CheckCanary(const Block* b) const {
  const size_t n = CanaryLength(b);
  if (n == 0) return "";
  std::vector<unsigned char> seen(n);
  if (raw_.host_addressable) {
    std::memcpy(seen.data(), static_cast<const char*>(b->ptr) + b->requested, n);
  } else if (raw_.copy_device_to_host(raw_.backend_data, raw_.device, b->ptr, b->requested, seen.data(), n,
                                      b->stream) != BP_STATUS_OK) {
    return "";  // the copy's own failure is reported by the next real copy
  }
  size_t first = n, last = 0;
  for (size_t i = 0; i < n; ++i) {
    if (seen[i] == kCanary) continue;
    if (first == n) first = i;
    last = i;
  }
  if (first == n) return "";
  return "guard: a kernel wrote past the end of its output: bytes " + std::to_string(first) + " to " +
         std::to_string(last) + " after the " + std::to_string(b->requested) + " bytes of a block on " + raw_.name +
         ":" + std::to_string(raw_.device) + " were overwritten; the last kernel that wrote this block ran operator '" +
         (b->writer != nullptr ? b->writer : "(none: written only by copies)") + "' on backend '" + raw_.name + "'";
}

void CachingAllocator::ArmGuardLocked(Block* b, size_t nbytes) {
  if (!guard_ || b->ptr == nullptr) return;
  b->requested = nbytes;
  b->writer = nullptr;
  WriteCanary(b);
  live_[b->ptr] = b;
}

void CachingAllocator::ReleaseGuard(Block* b) {
  {
    std::lock_guard<SpinMutex> lock(mu_);
    live_.erase(b->ptr);
  }
  // The caller owns the block until Free caches it: no lock for the check.
  const std::string report = CheckCanary(b);
  if (report.empty()) return;
  const std::string message = report + " (found when the block was released)";
  if (raw_.log != nullptr) {
    raw_.log(raw_.log_user, message);
  } else {
    std::fprintf(stderr, "[backplane warning] %s\n", message.c_str());
  }
}

void CachingAllocator::NoteWriter(const void* ptr, const char* op_name) {
  std::lock_guard<SpinMutex> lock(mu_);
  auto it = live_.find(ptr);
  if (it != live_.end()) it->second->writer = op_name;
}

Status CachingAllocator::CheckGuards() {
  if (!guard_) return Status::Ok();
  std::lock_guard<SpinMutex> lock(mu_);
  std::string reports;
  int found = 0;
  for (auto& [ptr, b] : live_) {
    const std::string report = CheckCanary(b);
    if (report.empty()) continue;
    if (++found <= 4) reports += (found > 1 ? "; " : "") + report;
    WriteCanary(b);  // reported once; a later overrun is found again
  }
  if (found == 0) return Status::Ok();
  if (found > 4) reports += "; and " + std::to_string(found - 4) + " more block(s)";
  return Error(BP_STATUS_DATA_LOSS, reports);
}

}  // namespace bp::core
