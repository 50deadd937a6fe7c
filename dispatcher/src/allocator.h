// The caching device allocator every backend reuses (PyTorch's
// CUDACachingAllocator idea, done once for all backends): size classes, a
// small and a large pool, best-fit reuse of freed blocks, out-of-memory retry
// after releasing the cache, statistics. One per device, with one pool per
// stream: a freed block is reused at once on the stream it was allocated on
// (stream order makes that safe) and, when bp_tensor_record_stream marked it
// as used on other streams, only after events recorded on those streams at
// the free have completed (PyTorch's record_stream rule; allocator_streams.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <memory>
#include <utility>
#include <unordered_set>
#include <vector>

#include "backplane/backplane.h"
#include "spin_mutex.h"
#include "status.h"

namespace bp::core {

// Raw memory functions of one device (a backend's allocate/deallocate, or the
// host's aligned malloc for the built-in CPU memory).
struct RawMemory {
  void* backend_data = nullptr;
  int32_t device = 0;
  bp_status_t (*allocate)(void* backend_data, int32_t device, size_t nbytes, void** out_ptr) = nullptr;
  bp_status_t (*deallocate)(void* backend_data, int32_t device, void* ptr) = nullptr;
  const char* name = "";  // backend name, for messages
  // The pointers allocate returns are host addresses (the core's host
  // memory): only then may a sanitizer build poison a block's slack.
  bool host_addressable = false;
  // Guard mode (BACKPLANE_GUARD=1) writes and reads canaries through these
  // when memory is not host-addressable; `stream` is the device's default.
  bp_status_t (*copy_host_to_device)(void* backend_data, int32_t device, const void* src, void* dst, size_t dst_offset,
                                     size_t nbytes, bp_stream_t stream) = nullptr;
  bp_status_t (*copy_device_to_host)(void* backend_data, int32_t device, const void* src, size_t src_offset, void* dst,
                                     size_t nbytes, bp_stream_t stream) = nullptr;
  bp_stream_t stream = nullptr;  // the default stream: the pool that always exists
  // Stream-ordered reuse (record_stream): events on the streams a freed block
  // was used on. All NULL: the allocator synchronizes those streams instead.
  bp_status_t (*event_create)(void* backend_data, int32_t device, bp_event_t* out_event) = nullptr;
  bp_status_t (*event_record)(void* backend_data, bp_event_t event, bp_stream_t stream) = nullptr;
  bp_status_t (*event_query)(void* backend_data, bp_event_t event, int32_t* out_complete) = nullptr;
  bp_status_t (*event_synchronize)(void* backend_data, bp_event_t event) = nullptr;
  bp_status_t (*event_destroy)(void* backend_data, bp_event_t event) = nullptr;
  bp_status_t (*stream_synchronize)(void* backend_data, int32_t device, bp_stream_t stream) = nullptr;
  // Where guard mode's warnings at release go (the context's log); NULL: stderr.
  void (*log)(void* user, const std::string& message) = nullptr;
  void* log_user = nullptr;
};

struct Block {
  void* ptr = nullptr;
  size_t size = 0;  // rounded
  bool large = false;
  Block* next = nullptr;  // next cached block of the same small size class
  // Guard mode only: the size asked for (the canary follows it) and the
  // operator whose kernel last had the block as an output (static name).
  size_t requested = 0;
  const char* writer = nullptr;
  bp_stream_t stream = nullptr;  // the stream it was allocated on
  // Other streams it was used on (bp_tensor_record_stream); NULL: none.
  std::vector<bp_stream_t>* used_on = nullptr;
  // The pool it returns to when freed (allocator-private): its stream's, or
  // a graph's while the stream was captured. A pool, not a stream value: a
  // stream destroyed while its blocks live may see its value reused.
  void* home = nullptr;
};

// Sanitizer mode (builds with -fsanitize=address, detected through
// __SANITIZE_ADDRESS__): for host-addressable memory, the bytes of a block
// past the size asked for (the rounding slack: a 16-byte tensor gets a
// 512-byte block) and every cached block are poisoned with ASan's manual
// poisoning interface, so a kernel writing one byte past its output, or into
// a freed block still in the cache, is reported where it happens.
//
// Guard mode (BACKPLANE_GUARD=1 when the device's allocator is created, any
// build): every block gets at least kGuardBytes past the size asked for,
// filled with a canary through the backend's own copies (device memory need
// not be host-addressable). The canary is checked when the block is released
// (a warning through the context's log) and by CheckGuards at every
// synchronize (DATA_LOSS), naming the operator whose kernel last wrote the
// block; see docs/security.md.
class CachingAllocator {
 public:
  static constexpr size_t kSmallLimit = size_t(1) << 20;  // < 1 MiB: small pool
  static constexpr size_t kSmallRound = 512;
  static constexpr size_t kLargeRound = size_t(2) << 20;

  static constexpr size_t kGuardBytes = 64;      // canary bytes every block has at least
  static constexpr size_t kGuardMaxBytes = 512;  // canary bytes written and checked at most
  static constexpr unsigned char kCanary = 0xFD;

  explicit CachingAllocator(RawMemory raw);
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  static size_t RoundSize(size_t nbytes);
  // A block for work on `stream` (the caller's current stream of the
  // device). nbytes == 0 gives a block with ptr NULL and size 0. With
  // out_header, also hands out a cached tensor header (host memory of
  // kHeaderBytes, given back by Free), or NULL when none is cached; the
  // caller then allocates one.
  Status Allocate(size_t nbytes, bp_stream_t stream, Block** out_block, void** out_header = nullptr);
  // Returns the block to its stream's pool, or, when it was used on other
  // streams, to the pending list until their work has finished; `header` (if
  // not NULL) is kept for reuse or freed with ::operator delete.
  void Free(Block* block, void* header = nullptr);
  // Streams (allocator_streams.cpp). AddStream gives a created stream its
  // pool; ForgetStream (the stream was synchronized and is being destroyed)
  // moves its cached blocks to the default pool. RecordStream marks `block`
  // as used on `stream`. StreamStats: the counters of one stream's blocks.
  void AddStream(bp_stream_t stream);
  void ForgetStream(bp_stream_t stream);
  void RecordStream(Block* block, bp_stream_t stream);
  bp_allocator_stats_t StreamStats(bp_stream_t stream);
  // Graph capture (allocator_streams.cpp), as CUDA graphs' private memory
  // pools: while `stream` is captured, its allocations come from a pool of
  // the graph's, and blocks allocated then return to that pool when freed, so
  // a replay writing them never touches memory a tensor outside the graph
  // holds. BeginCapture returns the pool's token; EndCapture stops drawing
  // from it; ReleaseCapture (the graph is destroyed, its work finished) gives
  // its cached blocks to the stream's pool, and those still held by tensors
  // follow when freed.
  void* BeginCapture(bp_stream_t stream);
  void EndCapture(bp_stream_t stream);
  void ReleaseCapture(void* token);
  // Tensor/storage pairs (an Allocate that asked for a header, until the
  // Free that gives one back) alive now: the context's leak count. Counted
  // under the lock Allocate and Free hold anyway, so an operator call that
  // allocates its output pays no atomic operation for it.
  int64_t LivePairs();
  // Ends a pair whose header never came to exist (the caller could not
  // allocate one): its block was given back with Free(block).
  void DropPair();
  // Size of the tensor headers Allocate/Free cache (sizeof(TensorBlock)).
  static constexpr size_t kHeaderBytes = 512;
  // Returns every cached block to the device, after waiting for the blocks
  // still in use on other streams (record_stream).
  void EmptyCache();
  bp_allocator_stats_t Stats();
  // peak_allocated_bytes := allocated_bytes (torch's reset_peak_memory_stats).
  void ResetPeak();

  // Guard mode (see above).
  bool guarded() const { return guard_; }
  // Records `op_name` (static) as the last writer of the block whose memory
  // starts at `ptr` (an output's DLTensor.data); unknown pointers are ignored.
  void NoteWriter(const void* ptr, const char* op_name);
  // DATA_LOSS naming each live block whose canary was overwritten, and the
  // operator that last wrote it (its canary is rewritten: reported once).
  Status CheckGuards();

 private:
  static constexpr size_t kSmallClasses = kSmallLimit / kSmallRound;  // class = size / kSmallRound
  void ReleaseCachedLocked();
  // Sanitizer mode (see above); no-ops in other builds.
  void PoisonSlack(const Block* b, size_t used) const;
  void UnpoisonAll(const Block* b) const;
  // Guard mode (allocator_guard.cpp): the canary after b->requested bytes.
  size_t CanaryLength(const Block* b) const;
  bool WriteCanary(const Block* b) const;
  // Allocate's part: records the size asked for, writes the canary, lists the block.
  void ArmGuardLocked(Block* b, size_t nbytes);
  // Free's part: unlists the block and warns when its canary was overwritten.
  void ReleaseGuard(Block* b);
  // An empty string when intact; else what was overwritten and by whom.
  std::string CheckCanary(const Block* b) const;
  bool guard_ = false;
  std::unordered_map<const void*, Block*> live_;  // guard mode: handed-out blocks by ptr
  RawMemory raw_;
  SpinMutex mu_;  // held for a few dozen instructions per call (spin_mutex.h)
  // One stream's cached blocks. Small pool: one list of cached blocks per
  // size class and a bitmap of the non-empty classes. Why: the small path
  // runs on every operator call that allocates its output, and a per-class
  // list takes and returns blocks in O(1) with no heap allocation (a
  // multimap allocates a node per Free).
  struct Pool {
    bp_stream_t stream = nullptr;
    Block* small_free[kSmallClasses] = {};
    uint64_t small_nonempty[kSmallClasses / 64] = {};
    std::multimap<size_t, Block*> large_free;
    bp_allocator_stats_t stats{sizeof(bp_allocator_stats_t), 0, 0, 0, 0, 0};
    bool capture = false;   // a graph's private pool (BeginCapture)
    // The graph was destroyed, or the stream: blocks freed later go to the
    // stream's pool (a graph's) or the default pool, and the pool goes with
    // its last live block.
    bool orphaned = false;
    int64_t live = 0;       // blocks handed out from it and not yet returned
  };
  Pool default_pool_;  // raw_.stream's
  std::vector<std::unique_ptr<Pool>> stream_pools_;  // created streams' (few)
  // Graphs' pools, and destroyed streams' pools that still have live blocks.
  std::vector<std::unique_ptr<Pool>> other_pools_;
  void EraseOtherLocked(Pool* pool);
  // Moves every cached block of `from` (free for anyone) into `to`, bytes included.
  void MoveCachedLocked(Pool* from, Pool* to);
  std::vector<std::pair<bp_stream_t, Pool*>> capturing_;  // streams being captured
  // The pool allocations on `stream` draw from: its graph's while it is
  // captured, else its own; the default pool for a stream it does not know.
  Pool* PoolLocked(bp_stream_t stream) {
    if (stream == default_pool_.stream) return &default_pool_;
    for (auto& [s, p] : capturing_) {
      if (s == stream) return p;
    }
    return StreamPoolLocked(stream);
  }
  // The stream's own pool, ignoring captures.
  Pool* StreamPoolLocked(bp_stream_t stream) {
    if (stream == default_pool_.stream) return &default_pool_;
    for (auto& p : stream_pools_) {
      if (p->stream == stream) return p.get();
    }
    return &default_pool_;
  }
  Block* TakeSmallLocked(Pool* pool, size_t size);
  // Caches a freed block in `pool` (its bytes leave allocated_bytes);
  // InsertCachedLocked only lists it there.
  void CacheLocked(Pool* pool, Block* block);
  void InsertCachedLocked(Pool* pool, Block* block);
  // Caches a freed block where it belongs: its graph's pool, else its stream's.
  void ReturnLocked(Block* block);
  // Allocate's bookkeeping for a block handed out from `pool`.
  void HandOutLocked(Pool* pool, Block* block);
  void ReleasePoolLocked(Pool* pool);
  // A freed block waiting for work on other streams: the events recorded on
  // them at the free. ProcessPendingLocked returns the finished ones to their pools.
  struct Pending {
    Block* block;
    std::vector<bp_event_t> events;
  };
  std::vector<Pending> pending_;
  // Live blocks whose used_on record_stream set: ForgetStream drops a
  // destroyed stream from their lists, so their free never records an event
  // on a freed backend stream.
  std::unordered_set<Block*> marked_;
  // Records events on block->used_on; true when the block went to pending_
  // (else those streams were synchronized and the block may be cached now).
  bool DeferFree(Block* block);
  void ProcessPendingLocked();
  // Waits for every pending block's events and caches the blocks.
  void DrainPendingLocked();
  bool EventComplete(bp_event_t event) const;
  // Cached tensor headers (a freed header's first word links the next). Why:
  // taking one under the lock Allocate holds anyway saves a malloc/free pair
  // per operator call that allocates its output.
  static constexpr int kMaxHeaders = 256;
  void* headers_ = nullptr;
  int num_headers_ = 0;
  int64_t live_pairs_ = 0;  // LivePairs
  // The counters live in the ABI struct Stats returns, so a field has one name.
  bp_allocator_stats_t stats_{sizeof(bp_allocator_stats_t), 0, 0, 0, 0, 0};
};

}  // namespace bp::core
