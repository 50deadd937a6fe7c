// Generation-checked handles for streams and events (as IREE's and Unified
// Runtime's): the value a caller holds is not the object's address but an
// index into a process-wide table plus the generation of that index's
// entry. Destroying an object bumps the generation, so a stale value is
// recognised without reading freed memory, and stays stale even after a new
// object takes the same index (or the old object's address).
#pragma once

#include <cstdint>
#include <cstdio>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace bp::core {

// Values are (generation << 32) | (index << 4) | tag: the tag's low bit is
// set, so no value is an aligned address, and each table has its own tag, so
// an event handle passed as a stream is told apart.
template <typename T>
class HandleTable {
 public:
  enum class Found { kLive, kStale, kForeign };

  explicit HandleTable(uint32_t tag) : tag_(tag) {}

  // A new value naming `obj`.
  uintptr_t Add(T* obj) {
    std::lock_guard<std::mutex> lock(mu_);
    uint32_t index = 0;
    if (free_.size() >= kMinFree || slots_.size() >= kMaxSlots) {
      // FIFO reuse: an index comes back as late as possible.
      index = free_.front();
      free_.pop_front();
    } else {
      index = static_cast<uint32_t>(slots_.size());
      slots_.push_back(Slot{});
    }
    Slot& s = slots_[index];
    s.obj = obj;
    return Encode(index, s.generation);
  }

  // The object `value` names; NULL with *found kStale (a destroyed object's
  // value) or kForeign (no value this table made).
  T* Find(const void* value, Found* found) const {
    std::lock_guard<std::mutex> lock(mu_);
    const Slot* s = SlotOf(value, found);
    return s != nullptr ? s->obj : nullptr;
  }

  // Takes `value` out of the table (its later uses are stale): the object,
  // or NULL as Find.
  T* Remove(const void* value, Found* found) {
    std::lock_guard<std::mutex> lock(mu_);
    Slot* s = const_cast<Slot*>(SlotOf(value, found));
    if (s == nullptr) return nullptr;
    T* obj = s->obj;
    s->obj = nullptr;
    ++s->generation;
    if (s->generation == 0) s->generation = 1;  // 0 is never a live generation
    free_.push_back(static_cast<uint32_t>(s - slots_.data()));
    return obj;
  }

  // "is not a live <what> handle" with the reason, for an error message.
  static std::string Describe(const void* value, Found found, const char* what) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%p", value);
    return std::string(buf) + (found == Found::kStale
                                   ? " is a stale " + std::string(what) + " handle (that " + what + " was destroyed)"
                                   : " is not a " + std::string(what) + " handle");
  }

 private:
  struct Slot {
    T* obj = nullptr;
    uint32_t generation = 1;
  };
  static constexpr size_t kMinFree = 64;         // indices kept free before one is reused
  static constexpr size_t kMaxSlots = 1u << 27;  // index bits: 28 (value bits 4..31)

  uintptr_t Encode(uint32_t index, uint32_t generation) const {
    return (static_cast<uintptr_t>(generation) << 32) | (static_cast<uintptr_t>(index) << 4) | tag_;
  }

  const Slot* SlotOf(const void* value, Found* found) const {
    const auto v = reinterpret_cast<uintptr_t>(value);
    *found = Found::kForeign;
    if ((v & 0xf) != tag_) return nullptr;
    const uint64_t index = (v & 0xffffffffu) >> 4;
    const auto generation = static_cast<uint32_t>(static_cast<uint64_t>(v) >> 32);
    if (index >= slots_.size() || generation == 0) return nullptr;
    const Slot& s = slots_[index];
    if (s.generation != generation || s.obj == nullptr) {
      *found = s.generation > generation || s.obj == nullptr ? Found::kStale : Found::kForeign;
      return nullptr;
    }
    *found = Found::kLive;
    return &s;
  }

  static_assert(sizeof(uintptr_t) == 8, "handle values need 64-bit pointers");
  const uint32_t tag_;
  mutable std::mutex mu_;
  std::vector<Slot> slots_;
  std::deque<uint32_t> free_;
};

}  // namespace bp::core
