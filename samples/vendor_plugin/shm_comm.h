// The simulated interconnect under vendor_sim's collectives (collectives.h):
// the ranks, one process each on one machine, meet in one POSIX
// shared-memory segment. A real plugin calls its fabric's library here
// (NCCL, a vendor's collective runtime); this file only exists because
// vendor_sim has no fabric.
//
// The segment (Layout): a header (readiness, world size, joined count, the
// first failure), one RankArea per rank (the process holding the rank, its
// barrier generation, its call descriptors), one Mailbox per ordered pair of
// ranks (send/recv handshakes), and one data slot of kSlotBytes per rank
// (a rank writes only its own slot; tensors larger than a slot go through in
// chunks).
//
// Synchronization is lock-free std::atomic in the mapped memory (process
// shared because it is lock-free: no futex, no pthread object). Every wait
// spins briefly, then yields, then sleeps 50 us, and gives up at its
// deadline; a rank that gives up records why in the header (Abort), so the
// other ranks stop waiting too instead of each running into its own
// timeout.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "backplane/types.h"

namespace vendor_sim {

// What rank 0's comm_bootstrap writes and every rank's comm_create reads.
struct BootstrapBlob {
  uint64_t magic;  // kBlobMagic
  uint32_t version;
  int32_t world_size;
  char name[64];  // the segment's shm_open name, NUL-terminated
};
constexpr uint64_t kBlobMagic = 0x31304d4853535042ull;  // "BPSSHM01"
constexpr uint32_t kBlobVersion = 1;
// The most ranks one simulated machine holds (the segment grows with the
// square of it: one mailbox per ordered pair).
constexpr int32_t kMaxWorld = 64;

// One rank's view of one call, compared across ranks before any data moves.
// Fields a kind does not use are -1 (op outside reductions, peer outside
// broadcast/send/recv), so they never cause a mismatch.
struct Descriptor {
  int32_t kind = -1;
  int32_t code = 0, bits = 0, lanes = 0;  // the dtype
  int64_t n = 0;                          // elements of one rank's block
  int32_t op = -1, peer = -1;
  int32_t bad = 0;  // this rank's own arguments are invalid (it reports why)
  int32_t reserved = 0;
};

// A point in time a wait gives up at; timeout_ms <= 0 is the host's default
// of five minutes (comm.h).
class Deadline {
 public:
  explicit Deadline(int64_t timeout_ms);
  bool Passed() const { return std::chrono::steady_clock::now() >= end_; }
  int64_t ms() const { return ms_; }

 private:
  int64_t ms_;
  std::chrono::steady_clock::time_point end_;
};

struct SegmentHeader;
struct RankArea;
struct Mailbox;

// Yields for the first waits, then sleeps 50 us: ranks share the machine's
// cores with each other, so a long spin would slow the rank it waits for.
void SleepBriefly(uint32_t iteration);

class ShmComm {
 public:
  static constexpr size_t kSlotBytes = size_t{1} << 20;

  ShmComm() = default;
  ShmComm(const ShmComm&) = delete;
  ShmComm& operator=(const ShmComm&) = delete;
  ~ShmComm() { Leave(); }

  // Rank 0 creates the segment `name`, the others open it (retrying until it
  // exists); then this process claims `rank` and waits until all `world`
  // ranks did. Rank 0 unlinks the name once everyone joined, so a crash
  // later leaves nothing in /dev/shm. OK, or INVALID_ARGUMENT (the rank is
  // held by another process; the segment is for another world size; the
  // name exists already for rank 0), DEADLINE_EXCEEDED (not everyone joined
  // in time), UNAVAILABLE or OUT_OF_MEMORY (shm_open, ftruncate, mmap), with
  // `what` saying which, naming this rank.
  bp_status_t Join(const char* name, int32_t rank, int32_t world, int64_t timeout_ms, char* what, size_t cap);
  // Unmaps the segment (and unlinks it if rank 0 never could). Idempotent.
  void Leave();

  int32_t rank() const { return rank_; }
  int32_t world() const { return world_; }

  // Every rank's barrier: returns once all ranks entered their barrier of
  // the same generation. DEADLINE_EXCEEDED with `what` = "rank R waited T ms
  // for rank(s) a, b (dead or never called)", or the reason another rank
  // gave up first.
  bp_status_t Barrier(const Deadline& d, char* what, size_t cap);

  // Waits until `ready()`: OK, or DEADLINE_EXCEEDED with `what` = "rank R
  // waited T ms for <whom>", or another rank's reason for giving up.
  template <typename Pred>
  bp_status_t WaitFor(Pred ready, const Deadline& d, const char* whom, char* what, size_t cap);

  // Records `reason` as the communicator's failure for every rank (the first
  // one wins) so their waits end at once.
  void Abort(const char* reason);

  // The descriptor of rank r for calls of parity `call & 1` (two, so a fast
  // rank's next call never overwrites what a slow rank still compares).
  Descriptor& Desc(int32_t r, uint64_t call);
  // Rank r's data slot (kSlotBytes): r writes it, everyone reads it.
  char* Slot(int32_t r) const;
  // The mailbox of sends from `src` to `dst`.
  Mailbox& Box(int32_t src, int32_t dst) const;

 private:
  enum class WaitResult { kReady, kTimeout, kAborted };
  template <typename Pred>
  WaitResult Spin(Pred ready, const Deadline& d) const;
  bool Aborted() const;
  // "rank R stopped: <the first failure>", when Aborted().
  void AbortedMessage(char* what, size_t cap) const;
  // "rank(s) a, b" of the ranks whose barrier generation is below `gen`.
  void Missing(uint64_t gen, char* out, size_t cap) const;

  char* base_ = nullptr;
  size_t size_ = 0;
  SegmentHeader* header_ = nullptr;
  RankArea* ranks_ = nullptr;
  Mailbox* boxes_ = nullptr;
  char* slots_ = nullptr;
  int32_t rank_ = -1, world_ = 0;
  uint64_t generation_ = 0;  // this rank's barriers so far
  char name_[64] = {};
  bool unlinked_ = true;  // rank 0: false until the name is gone
};

// The send/recv handshake of one ordered pair: the sender posts (its
// descriptor, then each chunk in its own slot), the receiver takes (its
// descriptor in reply, then each chunk). posted and taken count messages
// over the communicator's life, so a mailbox needs no reset between calls.
struct alignas(64) Mailbox {
  std::atomic<uint64_t> posted{0};
  std::atomic<uint64_t> taken{0};
  Descriptor send_desc;
  Descriptor recv_desc;
};

// --- template definitions ---

template <typename Pred>
ShmComm::WaitResult ShmComm::Spin(Pred ready, const Deadline& d) const {
  for (uint32_t i = 0;; ++i) {
    if (ready()) return WaitResult::kReady;
    // Another rank gave up; what it published before still counts (acquire
    // on its abort flag makes it visible to the re-check).
    if (Aborted()) return ready() ? WaitResult::kReady : WaitResult::kAborted;
    if (i < 200) continue;  // the peer is usually a few microseconds behind
    if (d.Passed()) return ready() ? WaitResult::kReady : WaitResult::kTimeout;
    SleepBriefly(i);
  }
}

template <typename Pred>
bp_status_t ShmComm::WaitFor(Pred ready, const Deadline& d, const char* whom, char* what, size_t cap) {
  const WaitResult r = Spin(ready, d);
  if (r == WaitResult::kReady) return BP_STATUS_OK;
  if (r == WaitResult::kAborted) {
    AbortedMessage(what, cap);
  } else {
    std::snprintf(what, cap, "rank %d waited %lld ms for %s", static_cast<int>(rank_), static_cast<long long>(d.ms()),
                  whom);
  }
  return BP_STATUS_DEADLINE_EXCEEDED;
}

}  // namespace vendor_sim
