// The bp_collectives_t table: bootstrap, create, destroy, and collective()'s
// argument checks (every rank reports its own bad argument; the others learn
// of it through the descriptor exchange instead of waiting for a timeout).
// The data movement is collective_ops.cpp, the segment shm_comm.cpp.
#include "collectives.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <new>
#include <random>

#include "collective_ops.h"
#include "device.h"

namespace vendor_sim {
namespace {

// A bootstrap/create/destroy error through the host's set_error, longer than
// Fail's buffer allows (they name the segment and the rank).
bp_status_t CommFail(const State* s, bp_status_t code, const char* fn, const char* fmt, ...) {
  char what[640];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  char msg[700];
  std::snprintf(msg, sizeof msg, "vendor_sim: %s: %s", fn, what);
  return s != nullptr && s->host != nullptr ? s->host->set_error(code, msg) : code;
}

// A unique segment name: the process id and 64 random bits, so two runs (or
// two communicators of one run) never meet in one segment.
void SegmentName(char* out, size_t cap) {
  static std::atomic<uint64_t> counter{0};
  uint64_t r = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
               (counter.fetch_add(1) * 0x9e3779b97f4a7c15ull);
  try {
    std::random_device dev;
    r ^= (static_cast<uint64_t>(dev()) << 32) | dev();
  } catch (...) {
    // No entropy source: the clock and the counter still differ per call.
  }
  std::snprintf(out, cap, "/bp_vsim_%d_%016llx", static_cast<int>(getpid()), static_cast<unsigned long long>(r));
}

bp_status_t CommBootstrap(void* bd, int32_t device, int32_t world_size, void* out_blob, size_t* inout_nbytes) {
  State* s = StateOf(bd);
  if (CheckDevice(s, device, "comm_bootstrap") != BP_STATUS_OK) return BP_STATUS_INVALID_ARGUMENT;
  if (world_size < 1 || world_size > kMaxWorld)
    return CommFail(s, BP_STATUS_INVALID_ARGUMENT, "comm_bootstrap",
                    "'world_size' must be in [1, %d] (ranks on one simulated machine), got %d", kMaxWorld, world_size);
  if (out_blob == nullptr || inout_nbytes == nullptr)
    return CommFail(s, BP_STATUS_INVALID_ARGUMENT, "comm_bootstrap", "'%s' is NULL",
                    out_blob == nullptr ? "out_blob" : "inout_nbytes");
  if (*inout_nbytes < sizeof(BootstrapBlob))
    return CommFail(s, BP_STATUS_INVALID_ARGUMENT, "comm_bootstrap", "'out_blob' holds %zu bytes, the blob needs %zu",
                    *inout_nbytes, sizeof(BootstrapBlob));
  BootstrapBlob blob;
  std::memset(&blob, 0, sizeof blob);
  blob.magic = kBlobMagic;
  blob.version = kBlobVersion;
  blob.world_size = world_size;
  SegmentName(blob.name, sizeof blob.name);
  std::memcpy(out_blob, &blob, sizeof blob);
  *inout_nbytes = sizeof blob;
  return BP_STATUS_OK;
}

bp_status_t CommCreate(void* bd, int32_t device, int32_t rank, int32_t world_size, const void* blob_bytes,
                       size_t blob_nbytes, int64_t timeout_ms, bp_device_comm_t* out_comm, bool wrong) {
  State* s = StateOf(bd);
  if (CheckDevice(s, device, "comm_create") != BP_STATUS_OK) return BP_STATUS_INVALID_ARGUMENT;
  if (out_comm == nullptr) return CommFail(s, BP_STATUS_INVALID_ARGUMENT, "comm_create", "'out_comm' is NULL");
  *out_comm = nullptr;
  if (world_size < 1 || world_size > kMaxWorld || rank < 0 || rank >= world_size)
    return CommFail(s, BP_STATUS_INVALID_ARGUMENT, "comm_create",
                    "rank %d of world size %d: expected 0 <= rank < world_size <= %d", rank, world_size, kMaxWorld);
  BootstrapBlob blob;
  if (blob_bytes == nullptr || blob_nbytes != sizeof blob)
    return CommFail(s, BP_STATUS_INVALID_ARGUMENT, "comm_create",
                    "rank %d: 'blob' is not a vendor_sim bootstrap blob (expected %zu bytes, got %zu%s)", rank,
                    sizeof blob, blob_nbytes, blob_bytes == nullptr ? ", NULL" : "");
  std::memcpy(&blob, blob_bytes, sizeof blob);
  if (blob.magic != kBlobMagic || blob.version != kBlobVersion ||
      std::memchr(blob.name, 0, sizeof blob.name) == nullptr || std::strncmp(blob.name, "/bp_vsim_", 9) != 0)
    return CommFail(s, BP_STATUS_INVALID_ARGUMENT, "comm_create",
                    "rank %d: 'blob' is not a vendor_sim bootstrap blob (magic %016llx version %u; expected %016llx "
                    "version %u)",
                    rank, static_cast<unsigned long long>(blob.magic), blob.version,
                    static_cast<unsigned long long>(kBlobMagic), kBlobVersion);
  if (blob.world_size != world_size)
    return CommFail(s, BP_STATUS_INVALID_ARGUMENT, "comm_create",
                    "rank %d has world size %d, rank 0 bootstrapped the communicator for %d", rank, world_size,
                    blob.world_size);
  Comm* c = new (std::nothrow) Comm;
  if (c == nullptr) return CommFail(s, BP_STATUS_OUT_OF_MEMORY, "comm_create", "rank %d: out of host memory", rank);
  c->device = device;
  c->wrong = wrong;
  char what[512];
  const bp_status_t st = c->shm.Join(blob.name, rank, world_size, timeout_ms, what, sizeof what);
  if (st != BP_STATUS_OK) {
    delete c;
    return CommFail(s, st, "comm_create", "%s", what);
  }
  *out_comm = c;
  return BP_STATUS_OK;
}

bp_status_t CommCreateRight(void* bd, int32_t device, int32_t rank, int32_t world, const void* blob, size_t nbytes,
                            int64_t timeout_ms, bp_device_comm_t* out) {
  return CommCreate(bd, device, rank, world, blob, nbytes, timeout_ms, out, false);
}

bp_status_t CommCreateWrong(void* bd, int32_t device, int32_t rank, int32_t world, const void* blob, size_t nbytes,
                            int64_t timeout_ms, bp_device_comm_t* out) {
  return CommCreate(bd, device, rank, world, blob, nbytes, timeout_ms, out, true);
}

bp_status_t CommDestroy(void*, bp_device_comm_t comm) {
  delete static_cast<Comm*>(comm);  // unmaps the segment (ShmComm::Leave)
  return BP_STATUS_OK;
}

// --- collective() ---

// Writes "vendor_sim <kind>: <what>" to the host's message buffer.
bp_status_t Report(const bp_collective_args_t* a, bp_status_t code, const char* fmt, ...) {
  if (a->message == nullptr) return code;
  char what[BP_COMM_MAX_MESSAGE];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  std::snprintf(a->message, BP_COMM_MAX_MESSAGE, "vendor_sim %s: %.990s", KindName(a->kind), what);
  return code;
}

int64_t Numel(const DLTensor* t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; ++d) n *= t->shape[d];
  return n;
}

bool Contiguous(const DLTensor* t) {
  if (t->strides == nullptr) return true;
  int64_t expect = 1;
  for (int32_t d = t->ndim - 1; d >= 0; --d) {
    if (t->shape[d] != 1 && t->strides[d] != expect) return false;
    expect *= t->shape[d];
  }
  return true;
}

// Checks one tensor argument and resolves it to `*addr` (nullptr when it has
// no elements). `role` is "input" or "output".
bp_status_t Resolve(State* s, const Comm* c, const bp_collective_args_t* a, const DLTensor* t, const char* role,
                    int64_t expect_numel, Elem elem, char** addr) {
  const int rank = c->shm.rank();
  if (t == nullptr) return Report(a, BP_STATUS_INVALID_ARGUMENT, "rank %d: '%s' is NULL", rank, role);
  if (t->device.device_type != kDLExtDev || t->device.device_id != c->device)
    return Report(a, BP_STATUS_INVALID_ARGUMENT,
                  "rank %d: '%s' is on device type %d id %d, the communicator's device is vendor_sim:%d", rank, role,
                  static_cast<int>(t->device.device_type), static_cast<int>(t->device.device_id), c->device);
  if (ElemOf(t->dtype) != elem)
    return Report(a, BP_STATUS_INVALID_ARGUMENT, "rank %d: '%s' is %s, expected %s (the input's dtype)", rank, role,
                  ElemName(ElemOf(t->dtype)), ElemName(elem));
  if (!Contiguous(t))
    return Report(a, BP_STATUS_INVALID_ARGUMENT, "rank %d: '%s' is not contiguous (compact strides expected)", rank,
                  role);
  const int64_t n = Numel(t);
  if (n != expect_numel)
    return Report(a, BP_STATUS_INVALID_ARGUMENT, "rank %d: '%s' has %lld elements, expected %lld", rank, role,
                  static_cast<long long>(n), static_cast<long long>(expect_numel));
  *addr = nullptr;
  if (n == 0) return BP_STATUS_OK;
  *addr = s->arena.Resolve(t->data, static_cast<size_t>(t->byte_offset), static_cast<size_t>(n) * ElemSize(elem));
  if (*addr == nullptr)
    return Report(a, BP_STATUS_INVALID_ARGUMENT,
                  "rank %d: '%s' (%lld %s at byte offset %llu) is not inside a live vendor_sim allocation", rank, role,
                  static_cast<long long>(n), ElemName(elem), static_cast<unsigned long long>(t->byte_offset));
  return BP_STATUS_OK;
}

// Checks the call and fills `p` (p->desc even on failure, flagged bad).
bp_status_t Prepare(State* s, const Comm* c, const bp_collective_args_t* a, Plan* p) {
  const int32_t rank = c->shm.rank(), w = c->shm.world();
  p->kind = a->kind;
  p->desc.kind = a->kind;
  p->desc.bad = 1;
  if (a->kind == BP_COLLECTIVE_BARRIER) {
    p->desc.bad = 0;
    return BP_STATUS_OK;
  }
  const bool reduces = a->kind == BP_COLLECTIVE_ALL_REDUCE || a->kind == BP_COLLECTIVE_REDUCE_SCATTER;
  const bool p2p = a->kind == BP_COLLECTIVE_SEND || a->kind == BP_COLLECTIVE_RECV;
  // The tensor that fixes the dtype and n: the output for RECV,
  // REDUCE_SCATTER and BROADCAST (whose non-root ranks need no input), the
  // input otherwise.
  const bool by_output =
      a->kind == BP_COLLECTIVE_RECV || a->kind == BP_COLLECTIVE_REDUCE_SCATTER || a->kind == BP_COLLECTIVE_BROADCAST;
  const DLTensor* lead = by_output ? a->output : a->input;
  if (lead == nullptr)
    return Report(a, BP_STATUS_INVALID_ARGUMENT, "rank %d: '%s' is NULL", rank, by_output ? "output" : "input");
  p->elem = ElemOf(lead->dtype);
  if (p->elem == Elem::kInvalid)
    return Report(a, BP_STATUS_UNIMPLEMENTED,
                  "rank %d: dtype (code %d, %d bits, %d lanes) is not one vendor_sim moves (bool, int8, uint8, int16, "
                  "int32, int64, float16, bfloat16, float32, float64)",
                  rank, lead->dtype.code, lead->dtype.bits, lead->dtype.lanes);
  p->esize = ElemSize(p->elem);
  const int64_t lead_n = Numel(lead);
  p->n = lead_n;
  if (a->kind == BP_COLLECTIVE_ALL_TO_ALL) {
    if (lead_n % w != 0)
      return Report(a, BP_STATUS_INVALID_ARGUMENT, "rank %d: 'input' has %lld elements, expected a multiple of %d",
                    rank, static_cast<long long>(lead_n), w);
    p->n = lead_n / w;
  }
  if (a->kind == BP_COLLECTIVE_BROADCAST || p2p) {
    if (a->peer < 0 || a->peer >= w || (p2p && a->peer == rank))
      return Report(a, BP_STATUS_INVALID_ARGUMENT, "rank %d: '%s' is %d, expected a rank in [0, %d)%s", rank,
                    p2p ? "peer" : "root", a->peer, w, p2p ? " other than this one" : "");
    p->peer = a->peer;
  }
  if (reduces) {
    if (a->reduce_op < BP_REDUCE_SUM || a->reduce_op > BP_REDUCE_AVG)
      return Report(a, BP_STATUS_INVALID_ARGUMENT, "rank %d: 'reduce_op' is %d, not a bp_reduce_op_t", rank,
                    a->reduce_op);
    if (!ReduceSupported(p->elem, a->reduce_op))
      return Report(a, BP_STATUS_UNIMPLEMENTED, "rank %d: reduction %s is not defined on %s", rank,
                    ReduceOpName(a->reduce_op), ElemName(p->elem));
    p->op = a->reduce_op;
  }
  // Fill the descriptor before the tensor checks: a rank whose tensors are
  // wrong still tells the others what it was asked to do.
  p->desc.code = lead->dtype.code;
  p->desc.bits = lead->dtype.bits;
  p->desc.lanes = lead->dtype.lanes;
  p->desc.n = p->n;
  p->desc.op = p->op;
  p->desc.peer = a->kind == BP_COLLECTIVE_BROADCAST ? p->peer : -1;
  const int64_t wn = p->n * w;
  char* in = nullptr;
  char* out = nullptr;
  bp_status_t st = BP_STATUS_OK;
  switch (a->kind) {
    case BP_COLLECTIVE_ALL_REDUCE:
      st = Resolve(s, c, a, a->input, "input", p->n, p->elem, &in);
      if (st == BP_STATUS_OK) st = Resolve(s, c, a, a->output, "output", p->n, p->elem, &out);
      break;
    case BP_COLLECTIVE_BROADCAST:
      st = Resolve(s, c, a, a->output, "output", p->n, p->elem, &out);
      if (st == BP_STATUS_OK && rank == p->peer) st = Resolve(s, c, a, a->input, "input", p->n, p->elem, &in);
      break;
    case BP_COLLECTIVE_ALL_GATHER:
      st = Resolve(s, c, a, a->input, "input", p->n, p->elem, &in);
      if (st == BP_STATUS_OK) st = Resolve(s, c, a, a->output, "output", wn, p->elem, &out);
      break;
    case BP_COLLECTIVE_REDUCE_SCATTER:
      st = Resolve(s, c, a, a->input, "input", wn, p->elem, &in);
      if (st == BP_STATUS_OK) st = Resolve(s, c, a, a->output, "output", p->n, p->elem, &out);
      break;
    case BP_COLLECTIVE_ALL_TO_ALL:
      st = Resolve(s, c, a, a->input, "input", wn, p->elem, &in);
      if (st == BP_STATUS_OK) st = Resolve(s, c, a, a->output, "output", wn, p->elem, &out);
      break;
    case BP_COLLECTIVE_SEND:
      st = Resolve(s, c, a, a->input, "input", p->n, p->elem, &in);
      break;
    default:  // RECV
      st = Resolve(s, c, a, a->output, "output", p->n, p->elem, &out);
      break;
  }
  if (st != BP_STATUS_OK) return st;
  p->in = in;
  p->out = out;
  p->desc.bad = 0;
  return BP_STATUS_OK;
}

// A timeout: the communicator is broken for this rank from now on, and the
// other ranks' waits end with this reason (ShmComm::Abort).
bp_status_t Break(Comm* c, const bp_collective_args_t* a, const char* what) {
  Report(a, BP_STATUS_DEADLINE_EXCEEDED, "%s", what);
  c->broken = true;
  std::snprintf(c->broken_message, sizeof c->broken_message, "vendor_sim %s: %.990s", KindName(a->kind), what);
  c->shm.Abort(c->broken_message);
  return BP_STATUS_DEADLINE_EXCEEDED;
}

bp_status_t Collective(void* bd, bp_device_comm_t comm, const bp_collective_args_t* a) {
  if (a == nullptr || a->struct_size < sizeof(bp_collective_args_t)) return BP_STATUS_INVALID_ARGUMENT;
  Comm* c = static_cast<Comm*>(comm);
  if (c == nullptr) return Report(a, BP_STATUS_INVALID_ARGUMENT, "'comm' is NULL");
  const Deadline deadline(a->timeout_ms);  // from the call's start (collectives.h)
  const int rank = c->shm.rank();
  if (a->kind < BP_COLLECTIVE_ALL_REDUCE || a->kind > BP_COLLECTIVE_BARRIER)
    return Report(a, BP_STATUS_INVALID_ARGUMENT, "rank %d: 'kind' is %d, not a bp_collective_kind_t", rank, a->kind);
  if (c->broken)
    return Report(a, BP_STATUS_DEADLINE_EXCEEDED, "rank %d: the communicator is broken by an earlier failure (%s)",
                  rank, c->broken_message);
  State* s = StateOf(bd);
  Queue* q = s->streams.Find(a->stream);
  if (q == nullptr)
    return Report(a, BP_STATUS_INVALID_ARGUMENT,
                  "rank %d: 'stream' is not a stream of this device (from stream_get_default or stream_create)", rank);
  Plan p;
  // The local error's message stays in a->message; the exchange below
  // writes its own into `what` only.
  const bp_status_t local = Prepare(s, c, a, &p);
  const bool p2p = a->kind == BP_COLLECTIVE_SEND || a->kind == BP_COLLECTIVE_RECV;
  if (local != BP_STATUS_OK && p2p && p.peer < 0) return local;  // no peer to tell
  // The inputs are what earlier work on the stream wrote: wait for it. The
  // collective then runs here, on the calling thread; the stream has
  // nothing left to do for it (collectives.h).
  if (local == BP_STATUS_OK) q->Drain();
  char what[BP_COMM_MAX_MESSAGE];
  bp_status_t st;
  if (p2p) {
    st = a->kind == BP_COLLECTIVE_SEND ? Send(c, p, deadline, what, sizeof what)
                                       : Recv(c, p, deadline, what, sizeof what);
  } else {
    st = ExchangeDescriptors(c, p.desc, deadline, what, sizeof what);
    if (st == BP_STATUS_OK && local == BP_STATUS_OK) st = MoveAllRanks(c, p, deadline, what, sizeof what);
  }
  if (st == BP_STATUS_DEADLINE_EXCEEDED) {
    if (local != BP_STATUS_OK) {
      // Keep the local error's message; the communicator still broke.
      char keep[BP_COMM_MAX_MESSAGE];
      std::snprintf(keep, sizeof keep, "%s", a->message != nullptr ? a->message : "");
      Break(c, a, what);
      if (a->message != nullptr) std::snprintf(a->message, BP_COMM_MAX_MESSAGE, "%s", keep);
      return local;
    }
    return Break(c, a, what);
  }
  if (local != BP_STATUS_OK) return local;
  if (st != BP_STATUS_OK) return Report(a, st, "%s", what);
  return BP_STATUS_OK;
}

const bp_collectives_t kCollectives = {
    sizeof(bp_collectives_t), CommBootstrap, CommCreateRight, CommDestroy, Collective, nullptr};
// Test only (BP_VENDOR_SIM_COLLECTIVES=wrong): communicators whose
// all_reduce is off by one on rank 0 (collective_ops.cpp, AllReduce).
const bp_collectives_t kWrongCollectives = {
    sizeof(bp_collectives_t), CommBootstrap, CommCreateWrong, CommDestroy, Collective, nullptr};

}  // namespace

bool CollectivesFor(const char* mode, const bp_collectives_t** out) {
  if (mode == nullptr || mode[0] == '\0' || std::strcmp(mode, "1") == 0) {
    *out = &kCollectives;
  } else if (std::strcmp(mode, "0") == 0) {
    *out = nullptr;
  } else if (std::strcmp(mode, "wrong") == 0) {
    *out = &kWrongCollectives;
  } else {
    return false;
  }
  return true;
}

}  // namespace vendor_sim
