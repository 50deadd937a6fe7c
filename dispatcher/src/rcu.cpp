#include "rcu.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace bp::core {

namespace {

long Membarrier(int cmd) { return syscall(SYS_membarrier, cmd, 0u); }

// Also under ThreadSanitizer (issue 42 item 4): TSan does not model
// membarrier, but it needs no model of it to check this scheme. A writer that
// sees a reader's section still open waits for its release-store exit, and a
// reader that entered too late to be seen reads the new snapshot through its
// acquire load; both are edges TSan sees. What TSan cannot prove is the
// membarrier's own store-load ordering, which the hardware still provides
// under TSan, so the fast path the release build runs is the one checked.
bool RegisterAsymmetric() {
  const long cmds = Membarrier(MEMBARRIER_CMD_QUERY);
  if (cmds < 0 || (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
  return Membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

}  // namespace

bool g_rcu_asymmetric = RegisterAsymmetric();

namespace {
std::mutex& RegistryMutex() {
  static std::mutex* mu = new std::mutex();  // outlives threads exiting after main
  return *mu;
}
// Records are never freed: a thread that exits returns its record to a free
// list, so a writer may keep reading a record without holding the mutex.
std::vector<ReaderRecord*>& Readers() {
  static std::vector<ReaderRecord*>* readers = new std::vector<ReaderRecord*>();  // outlives threads
  return *readers;
}
std::vector<ReaderRecord*>& FreeRecords() {
  static std::vector<ReaderRecord*>* free_records = new std::vector<ReaderRecord*>();
  return *free_records;
}

// Returns the thread's record to the free list when the thread exits.
struct ThreadExit {
  ~ThreadExit() {
    if (tls_reader == nullptr) return;
    std::lock_guard<std::mutex> lock(RegistryMutex());
    FreeRecords().push_back(tls_reader);
    tls_reader = nullptr;
  }
};
}  // namespace

ReaderRecord* RegisterReaderThread() {
  static thread_local ThreadExit exit_hook;
  (void)exit_hook;
  ReaderRecord* rec = nullptr;
  {
    std::lock_guard<std::mutex> lock(RegistryMutex());
    if (!FreeRecords().empty()) {
      rec = FreeRecords().back();
      FreeRecords().pop_back();
    } else {
      rec = new ReaderRecord();
      rec->index = static_cast<int32_t>(Readers().size());
      Readers().push_back(rec);
    }
  }
  rec->depth = 0;
  tls_reader = rec;
  return rec;
}

bool InReadSection() { return tls_reader != nullptr && tls_reader->depth > 0; }

// Orders the writer's publish before its reads of the reader records. GCC
// refuses standalone fences under ThreadSanitizer, which does not model them;
// a seq_cst read-modify-write is the same full barrier on the hardware we
// target, and TSan still sees the acquire/release pairs on ReaderRecord::seq.
void FullBarrier() {
#if defined(__SANITIZE_THREAD__)
  static std::atomic<uint64_t> barrier_word{0};
  barrier_word.fetch_add(1, std::memory_order_seq_cst);
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

void SynchronizeReaders() {
  FullBarrier();
  // Every running thread executes a full barrier: a reader's plain entry
  // store is visible below, or its reads come after the publish above.
  // Registered, the command does not fail (membarrier(2)); should a forked
  // child have lost the registration, register it again first.
  if (g_rcu_asymmetric && Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0) {
    (void)Membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED);
    (void)Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
  }
  std::vector<std::pair<ReaderRecord*, uint64_t>> waiting;
  {
    // Only the snapshot is taken under the mutex: waiting without it lets
    // new threads register meanwhile (a reader may be waiting on one).
    std::lock_guard<std::mutex> lock(RegistryMutex());
    for (ReaderRecord* r : Readers()) {
      if (r == tls_reader) continue;
      uint64_t s = r->seq.load(std::memory_order_acquire);
      if (s & 1u) waiting.emplace_back(r, s);
    }
  }
  for (auto& [r, s] : waiting) {
    while (r->seq.load(std::memory_order_acquire) == s) std::this_thread::yield();
  }
}

}  // namespace bp::core
