#include "rcu.h"

#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace bp::core {

thread_local ReaderRecord* tls_reader = nullptr;

namespace {
std::mutex& RegistryMutex() {
  static std::mutex mu;
  return mu;
}
std::vector<ReaderRecord*>& Readers() {
  static std::vector<ReaderRecord*>* readers = new std::vector<ReaderRecord*>();  // outlives threads
  return *readers;
}

// Unregisters the thread's record when the thread exits.
struct ThreadExit {
  ~ThreadExit() {
    if (tls_reader == nullptr) return;
    std::lock_guard<std::mutex> lock(RegistryMutex());
    auto& readers = Readers();
    for (size_t i = 0; i < readers.size(); ++i) {
      if (readers[i] == tls_reader) {
        readers[i] = readers.back();
        readers.pop_back();
        break;
      }
    }
    delete tls_reader;
    tls_reader = nullptr;
  }
};
}  // namespace

ReaderRecord* RegisterReaderThread() {
  static thread_local ThreadExit exit_hook;
  (void)exit_hook;
  auto* rec = new ReaderRecord();
  {
    std::lock_guard<std::mutex> lock(RegistryMutex());
    Readers().push_back(rec);
  }
  tls_reader = rec;
  return rec;
}

bool InReadSection() { return tls_reader != nullptr && tls_reader->depth > 0; }

void SynchronizeReaders() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  std::lock_guard<std::mutex> lock(RegistryMutex());
  std::vector<std::pair<ReaderRecord*, uint64_t>> waiting;
  for (ReaderRecord* r : Readers()) {
    if (r == tls_reader) continue;
    uint64_t s = r->seq.load(std::memory_order_acquire);
    if (s & 1u) waiting.emplace_back(r, s);
  }
  for (auto& [r, s] : waiting) {
    while (r->seq.load(std::memory_order_acquire) == s) std::this_thread::yield();
  }
}

}  // namespace bp::core
