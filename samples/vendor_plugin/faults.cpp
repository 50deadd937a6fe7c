#include "faults.h"

#include <cstdlib>
#include <cstring>

namespace vendor_sim {
namespace {

uint64_t EnvNumber(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  return end != nullptr && *end == '\0' ? static_cast<uint64_t>(n) : fallback;
}

}  // namespace

const char* Faults::ReadEnvironment() {
  memory_limit_bytes = static_cast<size_t>(EnvNumber("BP_VENDOR_SIM_OOM_AFTER_BYTES", 0));
  fail_copy_every = EnvNumber("BP_VENDOR_SIM_FAIL_COPIES", 0);
  const uint64_t a = EnvNumber("BP_VENDOR_SIM_ALIGNMENT", 256);
  if (a >= 256 && a <= (1u << 20) && (a & (a - 1)) == 0) alignment = static_cast<size_t>(a);
  latency_us = static_cast<uint32_t>(EnvNumber("BP_VENDOR_SIM_LATENCY_US", 0));
  launch_us = static_cast<uint32_t>(EnvNumber("BP_VENDOR_SIM_LAUNCH_US", 0));
  kernel_us = static_cast<uint32_t>(EnvNumber("BP_VENDOR_SIM_KERNEL_US", 0));
  const char* hold = std::getenv("BP_VENDOR_SIM_HOLD_KERNELS");
  try {
    hold_kernels_path = hold != nullptr ? hold : "";
  } catch (...) {  // no memory for a path: nothing is held
    hold_kernels_path.clear();
  }
  const char* fo = std::getenv("BP_VENDOR_SIM_FAULT_OP");
  try {
    fault_op = fo != nullptr ? fo : "";
  } catch (...) {  // no memory for the name: no fault
    fault_op.clear();
  }
  const char* b = std::getenv("BP_VENDOR_SIM_BROKEN");
  if (b == nullptr || *b == '\0') {
    broken = Broken::kNone;
  } else if (std::strcmp(b, "ignore_event_wait") == 0) {
    broken = Broken::kIgnoreEventWait;
  } else if (std::strcmp(b, "early_event") == 0) {
    broken = Broken::kEarlyEvent;
  } else if (std::strcmp(b, "no_streams") == 0) {
    broken = Broken::kNoStreams;
  } else {
    return b;  // a typo must not quietly test a correct device
  }
  return nullptr;
}

bool Faults::NextCopyFails() {
  if (fail_copy_every == 0) return false;
  return (copies.fetch_add(1, std::memory_order_relaxed) + 1) % fail_copy_every == 0;
}

void Faults::Poison(const void* allocation, const std::string& fault) {
  std::lock_guard<std::mutex> lock(poison_mu);
  try {
    poisoned[allocation] = fault;
  } catch (...) {  // no memory to remember it: the stream's sticky fault still reports it
    return;
  }
  any_poison.store(true, std::memory_order_release);
}

std::string Faults::PoisonOf(const void* allocation) {
  if (!any_poison.load(std::memory_order_acquire)) return std::string();
  std::lock_guard<std::mutex> lock(poison_mu);
  auto it = poisoned.find(allocation);
  return it == poisoned.end() ? std::string() : it->second;
}

void Faults::Unpoison(const void* allocation) {
  if (!any_poison.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(poison_mu);
  poisoned.erase(allocation);
}

}  // namespace vendor_sim
