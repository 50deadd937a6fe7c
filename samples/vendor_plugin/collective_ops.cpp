#include "collective_ops.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace vendor_sim {

const char* KindName(int32_t kind) {
  switch (kind) {
    case BP_COLLECTIVE_ALL_REDUCE:
      return "all_reduce";
    case BP_COLLECTIVE_BROADCAST:
      return "broadcast";
    case BP_COLLECTIVE_ALL_GATHER:
      return "all_gather";
    case BP_COLLECTIVE_REDUCE_SCATTER:
      return "reduce_scatter";
    case BP_COLLECTIVE_ALL_TO_ALL:
      return "all_to_all";
    case BP_COLLECTIVE_SEND:
      return "send";
    case BP_COLLECTIVE_RECV:
      return "recv";
    case BP_COLLECTIVE_BARRIER:
      return "barrier";
    default:
      return "collective";
  }
}

void Describe(const Descriptor& d, char* out, size_t cap) {
  if (d.kind == BP_COLLECTIVE_BARRIER) {
    std::snprintf(out, cap, "barrier");
    return;
  }
  char how[48] = "";
  if (d.op >= 0) std::snprintf(how, sizeof how, " %s", ReduceOpName(d.op));
  if (d.kind == BP_COLLECTIVE_BROADCAST) std::snprintf(how, sizeof how, " from rank %d", d.peer);
  const DLDataType t{static_cast<uint8_t>(d.code), static_cast<uint8_t>(d.bits), static_cast<uint16_t>(d.lanes)};
  std::snprintf(out, cap, "%s%s of %lld %s", KindName(d.kind), how, static_cast<long long>(d.n), ElemName(ElemOf(t)));
}

namespace {

bool Same(const Descriptor& a, const Descriptor& b) {
  return a.kind == b.kind && a.code == b.code && a.bits == b.bits && a.lanes == b.lanes && a.n == b.n && a.op == b.op &&
         a.peer == b.peer;
}

size_t Bytes(const Plan& p, int64_t elements) { return static_cast<size_t>(elements) * p.esize; }

}  // namespace

bp_status_t ExchangeDescriptors(Comm* c, const Descriptor& mine, const Deadline& d, char* what, size_t cap) {
  ShmComm& s = c->shm;
  const uint64_t call = c->calls++;
  s.Desc(s.rank(), call) = mine;
  const bp_status_t st = s.Barrier(d, what, cap);  // publishes every descriptor
  if (st != BP_STATUS_OK) return st;
  // Every rank runs this same loop over the same descriptors: one verdict.
  for (int32_t r = 0; r < s.world(); ++r) {
    if (s.Desc(r, call).bad != 0 && r != s.rank()) {
      std::snprintf(what, cap, "rank %d's arguments are invalid (its own error says why)", r);
      return BP_STATUS_INVALID_ARGUMENT;
    }
  }
  const Descriptor& first = s.Desc(0, call);
  for (int32_t r = 1; r < s.world(); ++r) {
    const Descriptor& other = s.Desc(r, call);
    if (Same(first, other)) continue;
    char a[128], b[128];
    Describe(first, a, sizeof a);
    Describe(other, b, sizeof b);
    std::snprintf(what, cap,
                  "rank 0 has %s, rank %d has %s (every rank must pass the same kind, dtype, count, op and root)", a, r,
                  b);
    return BP_STATUS_INVALID_ARGUMENT;
  }
  return BP_STATUS_OK;
}

namespace {

// The chunk loops. Each step: every rank copies its part of the chunk from
// the arena into its own slot, a barrier, every rank computes its output
// from the slots, a barrier (no rank overwrites its slot while another still
// reads it).

bp_status_t AllReduce(Comm* c, const Plan& p, const Deadline& d, char* what, size_t cap) {
  ShmComm& s = c->shm;
  const int64_t per = static_cast<int64_t>(ShmComm::kSlotBytes / p.esize);
  const char* srcs[kMaxWorld];
  for (int64_t off = 0; off < p.n; off += per) {
    const int64_t count = std::min(per, p.n - off);
    std::memcpy(s.Slot(s.rank()), p.in + Bytes(p, off), Bytes(p, count));
    bp_status_t st = s.Barrier(d, what, cap);
    if (st != BP_STATUS_OK) return st;
    for (int32_t r = 0; r < s.world(); ++r) srcs[r] = s.Slot(r);
    Reduce(p.elem, p.op, srcs, s.world(), static_cast<size_t>(count), p.out + Bytes(p, off));
    st = s.Barrier(d, what, cap);
    if (st != BP_STATUS_OK) return st;
  }
  // Test only: a plugin that gets all_reduce wrong on one rank.
  if (c->wrong && s.rank() == 0 && p.n > 0) AddOne(p.elem, p.out);
  return BP_STATUS_OK;
}

bp_status_t Broadcast(Comm* c, const Plan& p, const Deadline& d, char* what, size_t cap) {
  ShmComm& s = c->shm;
  const int64_t per = static_cast<int64_t>(ShmComm::kSlotBytes / p.esize);
  for (int64_t off = 0; off < p.n; off += per) {
    const int64_t count = std::min(per, p.n - off);
    if (s.rank() == p.peer) std::memcpy(s.Slot(p.peer), p.in + Bytes(p, off), Bytes(p, count));
    bp_status_t st = s.Barrier(d, what, cap);
    if (st != BP_STATUS_OK) return st;
    if (p.out != p.in || s.rank() != p.peer) std::memcpy(p.out + Bytes(p, off), s.Slot(p.peer), Bytes(p, count));
    st = s.Barrier(d, what, cap);
    if (st != BP_STATUS_OK) return st;
  }
  return BP_STATUS_OK;
}

bp_status_t AllGather(Comm* c, const Plan& p, const Deadline& d, char* what, size_t cap) {
  ShmComm& s = c->shm;
  const int64_t per = static_cast<int64_t>(ShmComm::kSlotBytes / p.esize);
  for (int64_t off = 0; off < p.n; off += per) {
    const int64_t count = std::min(per, p.n - off);
    std::memcpy(s.Slot(s.rank()), p.in + Bytes(p, off), Bytes(p, count));
    bp_status_t st = s.Barrier(d, what, cap);
    if (st != BP_STATUS_OK) return st;
    for (int32_t r = 0; r < s.world(); ++r) std::memcpy(p.out + Bytes(p, r * p.n + off), s.Slot(r), Bytes(p, count));
    st = s.Barrier(d, what, cap);
    if (st != BP_STATUS_OK) return st;
  }
  return BP_STATUS_OK;
}

// REDUCE_SCATTER and ALL_TO_ALL: input [W*n]; a rank's slot holds the same
// chunk of each of its W blocks, block b at b*count elements, so rank q
// finds what every rank sent it at q*count in their slots.
bp_status_t Scatter(Comm* c, const Plan& p, const Deadline& d, char* what, size_t cap) {
  ShmComm& s = c->shm;
  const int32_t w = s.world();
  const int64_t per = static_cast<int64_t>(ShmComm::kSlotBytes / (p.esize * static_cast<size_t>(w)));
  const char* srcs[kMaxWorld];
  for (int64_t off = 0; off < p.n; off += per) {
    const int64_t count = std::min(per, p.n - off);
    for (int32_t b = 0; b < w; ++b)
      std::memcpy(s.Slot(s.rank()) + Bytes(p, b * count), p.in + Bytes(p, b * p.n + off), Bytes(p, count));
    bp_status_t st = s.Barrier(d, what, cap);
    if (st != BP_STATUS_OK) return st;
    const size_t mine = Bytes(p, s.rank() * count);
    if (p.kind == BP_COLLECTIVE_REDUCE_SCATTER) {
      for (int32_t r = 0; r < w; ++r) srcs[r] = s.Slot(r) + mine;
      Reduce(p.elem, p.op, srcs, w, static_cast<size_t>(count), p.out + Bytes(p, off));
    } else {
      for (int32_t r = 0; r < w; ++r) std::memcpy(p.out + Bytes(p, r * p.n + off), s.Slot(r) + mine, Bytes(p, count));
    }
    st = s.Barrier(d, what, cap);
    if (st != BP_STATUS_OK) return st;
  }
  return BP_STATUS_OK;
}

}  // namespace

bp_status_t MoveAllRanks(Comm* c, const Plan& p, const Deadline& d, char* what, size_t cap) {
  switch (p.kind) {
    case BP_COLLECTIVE_ALL_REDUCE:
      return AllReduce(c, p, d, what, cap);
    case BP_COLLECTIVE_BROADCAST:
      return Broadcast(c, p, d, what, cap);
    case BP_COLLECTIVE_ALL_GATHER:
      return AllGather(c, p, d, what, cap);
    case BP_COLLECTIVE_REDUCE_SCATTER:
    case BP_COLLECTIVE_ALL_TO_ALL:
      return Scatter(c, p, d, what, cap);
    default:  // BARRIER: the descriptor exchange was the barrier
      return BP_STATUS_OK;
  }
}

// Send/recv. The sender owns the mailbox's `posted` count and its slot, the
// receiver the `taken` count: message k is posted when posted reaches k and
// taken when taken does. Message 1 of a transfer is the sender's descriptor
// (answered by the receiver's), then one message per chunk.

namespace {

bool PairAgrees(const Descriptor& send, const Descriptor& recv) {
  return send.bad == 0 && recv.bad == 0 && send.code == recv.code && send.bits == recv.bits &&
         send.lanes == recv.lanes && send.n == recv.n;
}

void PairMismatch(const Descriptor& send, const Descriptor& recv, int32_t sender, int32_t receiver, char* what,
                  size_t cap) {
  if (send.bad != 0 || recv.bad != 0) {
    std::snprintf(what, cap, "rank %d's arguments are invalid (its own error says why)",
                  send.bad != 0 ? sender : receiver);
    return;
  }
  const DLDataType ts{static_cast<uint8_t>(send.code), static_cast<uint8_t>(send.bits),
                      static_cast<uint16_t>(send.lanes)};
  const DLDataType tr{static_cast<uint8_t>(recv.code), static_cast<uint8_t>(recv.bits),
                      static_cast<uint16_t>(recv.lanes)};
  std::snprintf(what, cap, "rank %d sends %lld %s to rank %d, which receives %lld %s", sender,
                static_cast<long long>(send.n), ElemName(ElemOf(ts)), receiver, static_cast<long long>(recv.n),
                ElemName(ElemOf(tr)));
}

}  // namespace

bp_status_t Send(Comm* c, const Plan& p, const Deadline& d, char* what, size_t cap) {
  ShmComm& s = c->shm;
  Mailbox& box = s.Box(s.rank(), p.peer);
  char whom[96];
  std::snprintf(whom, sizeof whom, "rank %d to receive (dead or never called recv)", p.peer);
  uint64_t k = box.posted.load(std::memory_order_relaxed);  // only this rank writes it
  auto post = [&box, &k] { box.posted.store(++k, std::memory_order_release); };
  auto taken = [&box, &k] { return box.taken.load(std::memory_order_acquire) >= k; };
  box.send_desc = p.desc;
  post();
  bp_status_t st = s.WaitFor(taken, d, whom, what, cap);
  if (st != BP_STATUS_OK) return st;
  if (!PairAgrees(p.desc, box.recv_desc)) {
    PairMismatch(p.desc, box.recv_desc, s.rank(), p.peer, what, cap);
    return BP_STATUS_INVALID_ARGUMENT;
  }
  const int64_t per = static_cast<int64_t>(ShmComm::kSlotBytes / p.esize);
  for (int64_t off = 0; off < p.n; off += per) {
    const int64_t count = std::min(per, p.n - off);
    std::memcpy(s.Slot(s.rank()), p.in + Bytes(p, off), Bytes(p, count));
    post();
    st = s.WaitFor(taken, d, whom, what, cap);  // the slot is free again
    if (st != BP_STATUS_OK) return st;
  }
  return BP_STATUS_OK;
}

bp_status_t Recv(Comm* c, const Plan& p, const Deadline& d, char* what, size_t cap) {
  ShmComm& s = c->shm;
  Mailbox& box = s.Box(p.peer, s.rank());
  char whom[96];
  std::snprintf(whom, sizeof whom, "rank %d to send (dead or never called send)", p.peer);
  uint64_t k = box.taken.load(std::memory_order_relaxed);  // only this rank writes it
  auto posted = [&box, &k] { return box.posted.load(std::memory_order_acquire) > k; };
  auto take = [&box, &k] { box.taken.store(++k, std::memory_order_release); };
  bp_status_t st = s.WaitFor(posted, d, whom, what, cap);
  if (st != BP_STATUS_OK) return st;
  const Descriptor sent = box.send_desc;
  box.recv_desc = p.desc;
  take();
  if (!PairAgrees(sent, p.desc)) {
    PairMismatch(sent, p.desc, p.peer, s.rank(), what, cap);
    return BP_STATUS_INVALID_ARGUMENT;
  }
  const int64_t per = static_cast<int64_t>(ShmComm::kSlotBytes / p.esize);
  for (int64_t off = 0; off < p.n; off += per) {
    const int64_t count = std::min(per, p.n - off);
    st = s.WaitFor(posted, d, whom, what, cap);
    if (st != BP_STATUS_OK) return st;
    std::memcpy(p.out + Bytes(p, off), s.Slot(p.peer), Bytes(p, count));
    take();
  }
  return BP_STATUS_OK;
}

}  // namespace vendor_sim
