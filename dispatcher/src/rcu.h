// Read-copy-update for the dispatch tables: readers (operator calls and other
// API calls that touch backend slots) never lock; writers publish a new
// immutable snapshot, then SynchronizeReaders() waits until every read section
// that could still see the old one has ended (before code is unmapped or a
// backend slot is reused).
#pragma once

#include <atomic>
#include <cstdint>

namespace bp::core {

struct ReaderRecord {
  std::atomic<uint64_t> seq{0};  // odd while the thread is inside a read section
  int depth = 0;                 // nesting, touched only by the owning thread
  int32_t index = 0;             // creation order: a stable small id while the thread lives
};

ReaderRecord* RegisterReaderThread();
// The calling thread's record. Constant-initialized and initial-exec: every
// operator call reads it, and this way the read is one %fs-relative load with
// no TLS wrapper or __tls_get_addr call (8 bytes of static TLS).
inline thread_local ReaderRecord* tls_reader __attribute__((tls_model("initial-exec"))) = nullptr;

// True once the process is registered for expedited membarrier(2) (Linux
// 4.14+, not refused by a seccomp filter): a reader then enters its section
// with a plain store, and SynchronizeReaders() supplies the store-load
// barrier for every running thread at once (the asymmetric scheme of
// liburcu's membarrier flavour), under ThreadSanitizer too (rcu.cpp says
// why). Without it, each entry is a seq_cst store. Set once by a
// static initializer of libbackplane, before any thread can call in.
extern bool g_rcu_asymmetric;

class ReadSection {
 public:
  ReadSection() {
    ReaderRecord* r = tls_reader;
    if (r == nullptr) r = RegisterReaderThread();
    rec_ = r;
    if (r->depth++ == 0) {
      const uint64_t odd = r->seq.load(std::memory_order_relaxed) + 1;
      if (__builtin_expect(g_rcu_asymmetric, 1)) {
        r->seq.store(odd, std::memory_order_relaxed);
        std::atomic_signal_fence(std::memory_order_seq_cst);  // the writer's membarrier orders it
      } else {
        r->seq.store(odd, std::memory_order_seq_cst);
      }
    }
  }
  ~ReadSection() {
    if (--rec_->depth == 0) rec_->seq.store(rec_->seq.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }
  ReadSection(const ReadSection&) = delete;
  ReadSection& operator=(const ReadSection&) = delete;

 private:
  ReaderRecord* rec_;
};

// True when the calling thread is inside a read section (it must not wait for readers).
bool InReadSection();
// Waits until every read section active at the call has ended. Must not be
// called from inside a read section.
void SynchronizeReaders();

}  // namespace bp::core
