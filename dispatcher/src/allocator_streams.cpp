// The caching allocator's streams: one pool per created stream, and the
// record_stream rule (a block used on other streams is cached again only
// once events recorded on them at its free have completed).
#include <algorithm>

#include "allocator.h"

namespace bp::core {

void CachingAllocator::AddStream(bp_stream_t stream) {
  auto pool = std::make_unique<Pool>();
  pool->stream = stream;
  std::lock_guard<SpinMutex> lock(mu_);
  if (stream == default_pool_.stream) return;
  for (auto& p : stream_pools_) {
    if (p->stream == stream) return;
  }
  stream_pools_.push_back(std::move(pool));
}

void CachingAllocator::ForgetStream(bp_stream_t stream) {
  std::lock_guard<SpinMutex> lock(mu_);
  // The stream was synchronized: work on it that used a marked block is
  // done, so the mark goes (record_stream), and pending frees waiting for it
  // can finish.
  for (Block* b : marked_) {
    auto& v = *b->used_on;
    v.erase(std::remove(v.begin(), v.end(), stream), v.end());
  }
  if (!pending_.empty()) ProcessPendingLocked();
  auto it = std::find_if(stream_pools_.begin(), stream_pools_.end(),
                         [&](const std::unique_ptr<Pool>& p) { return p->stream == stream; });
  if (it == stream_pools_.end()) return;
  // The stream was synchronized: its cached blocks are free for anyone. Move
  // them with their bytes to the default pool; its live blocks follow when
  // freed (ReturnLocked), charged to this pool, never to a later stream that
  // gets the same value.
  Pool* from = it->get();
  MoveCachedLocked(from, &default_pool_);
  from->orphaned = true;
  if (from->live > 0) other_pools_.push_back(std::move(*it));
  stream_pools_.erase(it);
}

void CachingAllocator::MoveCachedLocked(Pool* from, Pool* to) {
  auto move = [&](Block* b) {
    b->next = nullptr;
    from->stats.reserved_bytes -= b->size;
    to->stats.reserved_bytes += b->size;
    InsertCachedLocked(to, b);
  };
  for (size_t c = 0; c < kSmallClasses; ++c) {
    while (Block* b = from->small_free[c]) {
      from->small_free[c] = b->next;
      move(b);
    }
    from->small_nonempty[c / 64] = 0;
  }
  for (auto& [size, b] : from->large_free) move(b);
  from->large_free.clear();
}

void CachingAllocator::RecordStream(Block* block, bp_stream_t stream) {
  if (block == nullptr || block->size == 0) return;
  std::lock_guard<SpinMutex> lock(mu_);
  if (stream == block->stream) return;  // stream order already protects it
  if (block->used_on == nullptr) {
    block->used_on = new std::vector<bp_stream_t>();
    marked_.insert(block);
  }
  if (std::find(block->used_on->begin(), block->used_on->end(), stream) == block->used_on->end()) {
    block->used_on->push_back(stream);
  }
}

bp_allocator_stats_t CachingAllocator::StreamStats(bp_stream_t stream) {
  std::lock_guard<SpinMutex> lock(mu_);
  if (!pending_.empty()) ProcessPendingLocked();
  return StreamPoolLocked(stream)->stats;
}

bool CachingAllocator::DeferFree(Block* block) {
  std::vector<bp_stream_t>* streams = nullptr;
  {
    // Under the lock: ForgetStream may be editing the list.
    std::lock_guard<SpinMutex> lock(mu_);
    streams = block->used_on;
    block->used_on = nullptr;
    marked_.erase(block);
  }
  Pending pending{block, {}};
  const bool events = raw_.event_create != nullptr && raw_.event_record != nullptr && raw_.event_destroy != nullptr;
  for (bp_stream_t s : *streams) {
    bp_event_t e = nullptr;
    if (events && raw_.event_create(raw_.backend_data, raw_.device, &e) == BP_STATUS_OK) {
      if (raw_.event_record(raw_.backend_data, e, s) == BP_STATUS_OK) {
        pending.events.push_back(e);
        continue;
      }
      raw_.event_destroy(raw_.backend_data, e);
    }
    // No event: wait for the stream here (correct, only slower). A failing
    // synchronize leaves the error to the stream's next user.
    if (raw_.stream_synchronize != nullptr) raw_.stream_synchronize(raw_.backend_data, raw_.device, s);
  }
  delete streams;
  if (pending.events.empty()) return false;
  std::lock_guard<SpinMutex> lock(mu_);
  pending_.push_back(std::move(pending));
  return true;
}

bool CachingAllocator::EventComplete(bp_event_t event) const {
  int32_t complete = 0;
  if (raw_.event_query != nullptr) {
    return raw_.event_query(raw_.backend_data, event, &complete) == BP_STATUS_OK && complete != 0;
  }
  // No query: only a synchronize can tell (it blocks; plugins should have event_query).
  return raw_.event_synchronize != nullptr && raw_.event_synchronize(raw_.backend_data, event) == BP_STATUS_OK;
}

void CachingAllocator::ProcessPendingLocked() {
  auto done = std::remove_if(pending_.begin(), pending_.end(), [&](Pending& p) {
    for (bp_event_t e : p.events) {
      if (!EventComplete(e)) return false;
    }
    for (bp_event_t e : p.events) raw_.event_destroy(raw_.backend_data, e);
    ReturnLocked(p.block);
    return true;
  });
  pending_.erase(done, pending_.end());
}

}  // namespace bp::core

namespace bp::core {

void CachingAllocator::HandOutLocked(Pool* pool, Block* block) {
  block->stream = pool->stream;
  block->home = pool;
  ++pool->live;
}

void CachingAllocator::EraseOtherLocked(Pool* pool) {
  other_pools_.erase(std::remove_if(other_pools_.begin(), other_pools_.end(),
                                    [&](const std::unique_ptr<Pool>& p) { return p.get() == pool; }),
                     other_pools_.end());
}

void CachingAllocator::ReturnLocked(Block* block) {
  auto* home = static_cast<Pool*>(block->home);
  if (home == nullptr) home = &default_pool_;
  --home->live;
  if (!home->orphaned) {
    CacheLocked(home, block);  // a graph's pool keeps it for the graph's replays
    return;
  }
  // Its graph or stream is gone: the block joins the stream's pool (a
  // graph's) or the default pool (a destroyed stream's).
  stats_.allocated_bytes -= block->size;
  home->stats.allocated_bytes -= block->size;
  home->stats.reserved_bytes -= block->size;
  Pool* to = home->capture ? StreamPoolLocked(home->stream) : &default_pool_;
  to->stats.reserved_bytes += block->size;
  InsertCachedLocked(to, block);
  if (home->live == 0) EraseOtherLocked(home);
}

void* CachingAllocator::BeginCapture(bp_stream_t stream) {
  auto pool = std::make_unique<Pool>();
  pool->stream = stream;
  pool->capture = true;
  std::lock_guard<SpinMutex> lock(mu_);
  Pool* token = pool.get();
  other_pools_.push_back(std::move(pool));
  capturing_.emplace_back(stream, token);
  return token;
}

void CachingAllocator::EndCapture(bp_stream_t stream) {
  std::lock_guard<SpinMutex> lock(mu_);
  capturing_.erase(std::remove_if(capturing_.begin(), capturing_.end(),
                                  [&](const std::pair<bp_stream_t, Pool*>& c) { return c.first == stream; }),
                   capturing_.end());
}

void CachingAllocator::ReleaseCapture(void* token) {
  auto* graph = static_cast<Pool*>(token);
  std::lock_guard<SpinMutex> lock(mu_);
  capturing_.erase(std::remove_if(capturing_.begin(), capturing_.end(),
                                  [&](const std::pair<bp_stream_t, Pool*>& c) { return c.second == graph; }),
                   capturing_.end());
  graph->orphaned = true;
  MoveCachedLocked(graph, StreamPoolLocked(graph->stream));
  if (graph->live == 0) EraseOtherLocked(graph);
}

}  // namespace bp::core
