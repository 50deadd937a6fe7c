#include "shm_comm.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <thread>

namespace vendor_sim {

// Process-shared only if lock-free: a lock would live in one process.
static_assert(std::atomic<uint64_t>::is_always_lock_free, "the segment needs lock-free 64-bit atomics");
static_assert(std::atomic<int32_t>::is_always_lock_free, "the segment needs lock-free 32-bit atomics");

constexpr uint64_t kSegmentMagic = 0x31304745534d5642ull;  // "BVMSEG01"

struct alignas(64) SegmentHeader {
  std::atomic<uint64_t> ready{0};  // kSegmentMagic once rank 0 set it up
  int32_t world_size = 0;
  uint32_t slot_bytes = 0;
  alignas(64) std::atomic<int32_t> joined{0};
  alignas(64) std::atomic<int32_t> abort_claim{0};  // 1 once a rank is writing its reason
  std::atomic<int32_t> aborted_by{0};               // that rank + 1, once its reason is written
  char abort_message[512] = {};
};

struct alignas(64) RankArea {
  std::atomic<int32_t> owner_pid{0};             // the process holding the rank; 0: free
  alignas(64) std::atomic<uint64_t> arrived{0};  // the last barrier generation it entered
  Descriptor desc[2];
};

namespace {

constexpr size_t kPage = 4096;

size_t RoundUp(size_t v, size_t a) { return (v + a - 1) / a * a; }

struct Layout {
  size_t ranks, boxes, slots, total;
};

Layout LayoutFor(int32_t world) {
  const size_t w = static_cast<size_t>(world);
  Layout l;
  l.ranks = RoundUp(sizeof(SegmentHeader), kPage);
  l.boxes = RoundUp(l.ranks + w * sizeof(RankArea), kPage);
  l.slots = RoundUp(l.boxes + w * w * sizeof(Mailbox), kPage);
  l.total = l.slots + w * ShmComm::kSlotBytes;
  return l;
}

}  // namespace

Deadline::Deadline(int64_t timeout_ms)
    : ms_(timeout_ms > 0 ? timeout_ms : 300000),
      end_(std::chrono::steady_clock::now() + std::chrono::milliseconds(ms_)) {}

void SleepBriefly(uint32_t iteration) {
  if (iteration < 400) {
    sched_yield();
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

bp_status_t ShmComm::Join(const char* name, int32_t rank, int32_t world, int64_t timeout_ms, char* what, size_t cap) {
  Leave();
  const Layout layout = LayoutFor(world);
  const Deadline deadline(timeout_ms);
  std::snprintf(name_, sizeof name_, "%s", name);
  rank_ = rank;
  world_ = world;
  generation_ = 0;
  int fd = -1;
  if (rank == 0) {
    // O_EXCL: a second rank 0, or a blob used twice, must not share the segment.
    fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
      const int err = errno;
      std::snprintf(what, cap, "rank 0: cannot create the shared-memory segment '%s': %s%s", name, std::strerror(err),
                    err == EEXIST ? " (rank 0 is held by another process, or the blob was used before)" : "");
      return err == EEXIST ? BP_STATUS_INVALID_ARGUMENT : BP_STATUS_UNAVAILABLE;
    }
    unlinked_ = false;
    if (ftruncate(fd, static_cast<off_t>(layout.total)) != 0) {
      std::snprintf(what, cap, "rank 0: cannot size the shared-memory segment '%s' to %zu bytes: %s", name,
                    layout.total, std::strerror(errno));
      close(fd);
      Leave();
      return BP_STATUS_OUT_OF_MEMORY;
    }
    // Reserve the pages now: a full /dev/shm is then this error, not a
    // SIGBUS in some rank's first touch of its slot. (The size is already
    // final, so the others never see a partial one.)
    const int err = posix_fallocate(fd, 0, static_cast<off_t>(layout.total));
    if (err != 0 && err != EOPNOTSUPP && err != EINVAL) {
      std::snprintf(what, cap, "rank 0: cannot reserve %zu bytes of shared memory for '%s' (is /dev/shm full?): %s",
                    layout.total, name, std::strerror(err));
      close(fd);
      Leave();
      return BP_STATUS_OUT_OF_MEMORY;
    }
  } else {
    // Rank 0 may not have created (or sized) the segment yet: retry.
    for (uint32_t i = 0;; ++i) {
      fd = shm_open(name, O_RDWR, 0);
      if (fd >= 0) {
        // One fstat: size 0 is rank 0 between shm_open and ftruncate.
        struct stat st;
        const off_t size = fstat(fd, &st) == 0 ? st.st_size : 0;
        if (static_cast<size_t>(size) == layout.total) break;
        close(fd);
        fd = -1;
        if (size != 0) {
          std::snprintf(what, cap, "rank %d: the segment '%s' is %lld bytes, not the %zu of a world of %d ranks", rank,
                        name, static_cast<long long>(size), layout.total, world);
          return BP_STATUS_INVALID_ARGUMENT;
        }
      } else if (errno != ENOENT) {
        std::snprintf(what, cap, "rank %d: cannot open the shared-memory segment '%s': %s", rank, name,
                      std::strerror(errno));
        return BP_STATUS_UNAVAILABLE;
      }
      if (deadline.Passed()) {
        std::snprintf(what, cap, "rank %d waited %lld ms for rank 0 to create the segment '%s' (never called?)", rank,
                      static_cast<long long>(deadline.ms()), name);
        return BP_STATUS_DEADLINE_EXCEEDED;
      }
      SleepBriefly(400);
    }
  }
  void* p = mmap(nullptr, layout.total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);  // the mapping keeps the segment
  if (p == MAP_FAILED) {
    std::snprintf(what, cap, "rank %d: cannot map %zu bytes of '%s': %s", rank, layout.total, name,
                  std::strerror(errno));
    Leave();
    return BP_STATUS_OUT_OF_MEMORY;
  }
  base_ = static_cast<char*>(p);
  size_ = layout.total;
  header_ = reinterpret_cast<SegmentHeader*>(base_);
  ranks_ = reinterpret_cast<RankArea*>(base_ + layout.ranks);
  boxes_ = reinterpret_cast<Mailbox*>(base_ + layout.boxes);
  slots_ = base_ + layout.slots;
  if (rank == 0) {
    // ftruncate zero-filled the segment; construct the atomics formally, then
    // publish (release: the others see the constructed header after `ready`).
    new (header_) SegmentHeader;
    for (int32_t r = 0; r < world; ++r) new (&ranks_[r]) RankArea;
    for (int32_t b = 0; b < world * world; ++b) new (&boxes_[b]) Mailbox;
    header_->world_size = world;
    header_->slot_bytes = static_cast<uint32_t>(kSlotBytes);
    header_->ready.store(kSegmentMagic, std::memory_order_release);
  } else {
    const bp_status_t st = WaitFor([this] { return header_->ready.load(std::memory_order_acquire) == kSegmentMagic; },
                                   deadline, "rank 0 to set up the segment", what, cap);
    if (st != BP_STATUS_OK) {
      Leave();
      return st;
    }
    if (header_->world_size != world) {
      std::snprintf(what, cap, "rank %d has world size %d, rank 0 made the segment for %d", rank, world,
                    header_->world_size);
      Leave();
      return BP_STATUS_INVALID_ARGUMENT;
    }
  }
  int32_t holder = 0;
  if (!ranks_[rank].owner_pid.compare_exchange_strong(holder, static_cast<int32_t>(getpid()))) {
    std::snprintf(what, cap, "rank %d is already held by process %d", rank, holder);
    Leave();
    return BP_STATUS_INVALID_ARGUMENT;
  }
  header_->joined.fetch_add(1, std::memory_order_acq_rel);
  const bp_status_t st = WaitFor([this] { return header_->joined.load(std::memory_order_acquire) == world_; }, deadline,
                                 "the other ranks to join", what, cap);
  if (st != BP_STATUS_OK) {
    // Name who never came: their rank areas were never claimed.
    size_t len = std::strlen(what);
    len += static_cast<size_t>(std::snprintf(what + len, len < cap ? cap - len : 0, ": missing rank(s)"));
    for (int32_t r = 0; r < world && len < cap; ++r)
      if (ranks_[r].owner_pid.load(std::memory_order_acquire) == 0)
        len += static_cast<size_t>(std::snprintf(what + len, cap - len, " %d", r));
    Leave();
    return st;
  }
  if (rank == 0) {
    shm_unlink(name_);
    unlinked_ = true;
  }
  return BP_STATUS_OK;
}

void ShmComm::Leave() {
  // The rank stays claimed: a communicator is joined once (a failed join's
  // segment is gone with rank 0's unlink), and the others' messages keep
  // naming only the ranks that never came.
  if (base_ != nullptr) munmap(base_, size_);
  if (!unlinked_) shm_unlink(name_);
  unlinked_ = true;
  base_ = nullptr;
  header_ = nullptr;
  ranks_ = nullptr;
  boxes_ = nullptr;
  slots_ = nullptr;
  size_ = 0;
}

bool ShmComm::Aborted() const { return header_->aborted_by.load(std::memory_order_acquire) != 0; }

void ShmComm::AbortedMessage(char* what, size_t cap) const {
  std::snprintf(what, cap, "rank %d stopped: rank %d gave up first (%s)", static_cast<int>(rank_),
                static_cast<int>(header_->aborted_by.load(std::memory_order_acquire) - 1), header_->abort_message);
}

void ShmComm::Abort(const char* reason) {
  if (header_ == nullptr) return;
  int32_t unclaimed = 0;
  if (!header_->abort_claim.compare_exchange_strong(unclaimed, 1)) return;  // another rank's reason stands
  std::snprintf(header_->abort_message, sizeof header_->abort_message, "%s", reason);
  header_->aborted_by.store(rank_ + 1, std::memory_order_release);
}

void ShmComm::Missing(uint64_t gen, char* out, size_t cap) const {
  size_t len = static_cast<size_t>(std::snprintf(out, cap, "rank(s)"));
  for (int32_t r = 0; r < world_ && len < cap; ++r)
    if (ranks_[r].arrived.load(std::memory_order_acquire) < gen)
      len += static_cast<size_t>(std::snprintf(out + len, cap - len, "%s %d", len > 7 ? "," : "", r));
}

bp_status_t ShmComm::Barrier(const Deadline& d, char* what, size_t cap) {
  const uint64_t gen = ++generation_;
  ranks_[rank_].arrived.store(gen, std::memory_order_release);
  auto all_arrived = [this, gen] {
    for (int32_t r = 0; r < world_; ++r)
      if (ranks_[r].arrived.load(std::memory_order_acquire) < gen) return false;
    return true;
  };
  const WaitResult w = Spin(all_arrived, d);
  if (w == WaitResult::kReady) return BP_STATUS_OK;
  if (w == WaitResult::kAborted) {
    AbortedMessage(what, cap);
  } else {
    char missing[256];
    Missing(gen, missing, sizeof missing);
    std::snprintf(what, cap, "rank %d waited %lld ms for %s (dead or never called)", static_cast<int>(rank_),
                  static_cast<long long>(d.ms()), missing);
  }
  return BP_STATUS_DEADLINE_EXCEEDED;
}

Descriptor& ShmComm::Desc(int32_t r, uint64_t call) { return ranks_[r].desc[call & 1]; }

char* ShmComm::Slot(int32_t r) const { return slots_ + static_cast<size_t>(r) * kSlotBytes; }

Mailbox& ShmComm::Box(int32_t src, int32_t dst) const {
  return boxes_[static_cast<size_t>(src) * static_cast<size_t>(world_) + static_cast<size_t>(dst)];
}

}  // namespace vendor_sim
