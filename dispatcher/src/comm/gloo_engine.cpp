// The host engine: Gloo's TCP transport and algorithms (Debian's libgloo),
// for every device whose plugin has no collectives of its own. Device
// tensors are staged through host memory; a contiguous tensor of the host
// backend is handed to Gloo where it lives.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "comm/host_reduce.h"
#include "copy.h"
#include "dtype.h"
#include "tensor.h"

#ifdef BACKPLANE_HAVE_GLOO
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>
#endif

namespace bp::core {

#ifndef BACKPLANE_HAVE_GLOO

Status MakeGlooEngine(const CommSetup&, std::unique_ptr<CommEngine>*) {
  return Error(BP_STATUS_UNIMPLEMENTED,
               "bp_comm_create: this libbackplane was built without Gloo (install libgloo-dev and rebuild); "
               "only devices whose plugin has its own collectives can make communicators");
}

#else

namespace {

// Gloo's rendezvous store over the caller's bp_kv_store_t. Gloo reports a
// failed wait by exception; the status is kept so bp_comm_create can say
// what happened (DEADLINE_EXCEEDED for a rank that never came).
class StoreAdapter : public gloo::rendezvous::Store {
 public:
  explicit StoreAdapter(const CommSetup& setup) : setup_(setup) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    Check(StoreSet(setup_, "gloo/" + key, data.data(), data.size()));
  }
  std::vector<char> get(const std::string& key) override {
    std::string value;
    Check(StoreGet(setup_, "gloo/" + key, &value));
    return std::vector<char>(value.begin(), value.end());
  }
  void wait(const std::vector<std::string>& keys) override {
    for (const std::string& k : keys) get(k);
  }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds&) override { wait(keys); }
  const Status& failure() const { return failure_; }

 private:
  void Check(Status st) {
    if (st.ok()) return;
    failure_ = std::move(st);
    throw gloo::IoException(failure_.message());
  }
  const CommSetup& setup_;
  Status failure_;
};

// A tensor's bytes in host memory: its own memory (host backend, contiguous)
// or a staged copy.
struct HostSpan {
  char* ptr = nullptr;
  size_t bytes = 0;
  bool staged = false;
  std::vector<char> owned;
};

Status ToHost(const bp_tensor_t* t, bool read, HostSpan* span) {
  const Geometry& g = t->geo;
  Storage* s = t->storage;
  const size_t item = DtypeItemSize(DtypeFromDL(g.dtype));
  span->bytes = static_cast<size_t>(g.numel()) * item;
  if (s->dev->slot->host_memory && g.is_contiguous()) {
    span->ptr = static_cast<char*>(s->data) + g.offset * static_cast<int64_t>(item);
    return Status::Ok();
  }
  span->owned.resize(span->bytes);
  span->ptr = span->owned.data();
  span->staged = true;
  if (!read || span->bytes == 0) return Status::Ok();
  return ReadView(s->dev, s->data, g, g.dtype, span->ptr);
}

Status FromHost(bp_tensor_t* t, const HostSpan& span) {
  if (!span.staged || span.bytes == 0) return Status::Ok();
  return WriteView(t->storage->dev, t->storage->data, t->geo, span.ptr, t->geo.dtype);
}

// Calls that disagree on kind, dtype, size, reduction or root get different
// tags, so their messages never match and every rank times out instead of
// reducing garbage (Gloo checks nothing across ranks).
uint32_t CallTag(const CollectiveCall& c, DType dtype, int64_t n) {
  uint64_t h = 1469598103934665603ull;
  // A send and its recv share a tag.
  const int64_t kind = c.kind == BP_COLLECTIVE_RECV ? BP_COLLECTIVE_SEND : c.kind;
  for (int64_t v : {kind, static_cast<int64_t>(dtype), n, static_cast<int64_t>(c.op),
                    static_cast<int64_t>(c.kind == BP_COLLECTIVE_BROADCAST ? c.peer : -1)}) {
    h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
  }
  return static_cast<uint32_t>(h ^ (h >> 32));
}

// A Gloo call that throws (a timeout, a peer gone) can leave Gloo's
// transport thread still referring to the call's unbound buffers, and the
// buffers' destructors then race it (ThreadSanitizer showed it on ranks that
// disagree on a size). Declared after a call's options, so destroyed before
// them, this closes the context's connections while an exception unwinds:
// Gloo's pair close waits for its loop thread, so nothing refers to the
// buffers or the staged host memory once they go. The communicator is
// broken by the failure anyway.
class CloseOnThrow {
 public:
  explicit CloseOnThrow(gloo::Context* ctx) : ctx_(ctx), uncaught_(std::uncaught_exceptions()) {}
  CloseOnThrow(const CloseOnThrow&) = delete;
  CloseOnThrow& operator=(const CloseOnThrow&) = delete;
  ~CloseOnThrow() {
    if (std::uncaught_exceptions() <= uncaught_) return;
    try {
      ctx_->closeConnections();
    } catch (...) {  // already failing: the first error is the one reported
    }
  }

 private:
  gloo::Context* ctx_;
  int uncaught_;
};

class GlooEngine : public CommEngine {
 public:
  GlooEngine(bp_comm_t* comm, std::shared_ptr<gloo::Context> ctx) : comm_(comm), ctx_(std::move(ctx)) {}
  const char* name() const override { return "gloo"; }

  Status Run(const CollectiveCall& call) override {
    const char* what = CollectiveName(call.kind);
    try {
      return RunGloo(call);
    } catch (const gloo::IoException& e) {
      return Error(BP_STATUS_DEADLINE_EXCEEDED,
                   std::string(what) + ": rank " + std::to_string(comm_->rank) + " of " +
                       std::to_string(comm_->world_size) + " did not complete within " +
                       std::to_string(comm_->timeout_ms) +
                       " ms: a rank died, never called it, or the ranks disagree on its dtype, sizes, reduction or "
                       "root (Gloo: " +
                       e.what() + ")");
    } catch (const gloo::Exception& e) {
      return Error(BP_STATUS_INTERNAL, std::string(what) + ": Gloo failed: " + e.what());
    }
  }

 private:
  std::chrono::milliseconds timeout() const { return std::chrono::milliseconds(comm_->timeout_ms); }

  template <typename Options>
  void Common(Options& o, uint32_t tag) {
    o.setTag(tag);
    o.setTimeout(timeout());
  }

  Status RunGloo(const CollectiveCall& call) {
    if (call.kind == BP_COLLECTIVE_BARRIER) {
      gloo::BarrierOptions o(ctx_);
      CloseOnThrow close_on_throw(ctx_.get());
      o.setTimeout(timeout());
      gloo::barrier(o);
      return Status::Ok();
    }
    const bp_tensor_t* any = call.input != nullptr ? call.input : call.output;
    const DType dtype = DtypeFromDL(any->geo.dtype);
    const size_t item = DtypeItemSize(dtype);
    const int32_t world = comm_->world_size;
    HostSpan in, out;
    const bool same = call.input == call.output;
    if (call.input != nullptr) BP_RETURN_IF_ERROR(ToHost(call.input, true, &in));
    if (call.output != nullptr && !same) BP_RETURN_IF_ERROR(ToHost(call.output, false, &out));
    HostSpan& dst = same ? in : out;
    const uint32_t tag =
        CallTag(call, dtype, static_cast<int64_t>((call.input != nullptr ? in.bytes : out.bytes) / item));
    // Gloo's typed setters only use the element size; bytes of `item` each.
    switch (call.kind) {
      case BP_COLLECTIVE_ALL_REDUCE:
      case BP_COLLECTIVE_REDUCE_SCATTER: {
        // reduce_scatter: Gloo has no algorithm for it on unbound buffers;
        // all-reduce the whole input and keep this rank's block.
        const bool scatter = call.kind == BP_COLLECTIVE_REDUCE_SCATTER;
        std::vector<char> full;
        char* result = dst.ptr;
        if (scatter) {
          full.resize(in.bytes);
          result = full.data();
        }
        const size_t n = in.bytes / item;
        gloo::AllreduceOptions o(ctx_);
        CloseOnThrow close_on_throw(ctx_.get());
        Common(o, tag);
        SetBuffers(o, in.ptr, result, n, item);
        o.setReduceFunction(HostReduce(dtype, call.op));
        if (n != 0) gloo::allreduce(o);
        if (call.op == BP_REDUCE_AVG) DivideInPlace(dtype, result, n, world);
        if (scatter) std::memcpy(dst.ptr, full.data() + comm_->rank * dst.bytes, dst.bytes);
        break;
      }
      case BP_COLLECTIVE_BROADCAST: {
        gloo::BroadcastOptions o(ctx_);
        CloseOnThrow close_on_throw(ctx_.get());
        Common(o, tag);
        o.setRoot(call.peer);
        SetOutput(o, in.ptr, in.bytes / item, item);
        if (in.bytes != 0) gloo::broadcast(o);
        if (comm_->rank == call.peer) return Status::Ok();  // root's tensor is unchanged
        break;
      }
      case BP_COLLECTIVE_ALL_GATHER:
      case BP_COLLECTIVE_ALL_TO_ALL: {
        if (in.bytes == 0) break;
        if (call.kind == BP_COLLECTIVE_ALL_GATHER) {
          gloo::AllgatherOptions o(ctx_);
          CloseOnThrow close_on_throw(ctx_.get());
          Common(o, tag);
          SetInOut(o, in.ptr, in.bytes / item, dst.ptr, dst.bytes / item, item);
          gloo::allgather(o);
        } else {
          gloo::AlltoallOptions o(ctx_);
          CloseOnThrow close_on_throw(ctx_.get());
          Common(o, tag);
          SetInOut(o, in.ptr, in.bytes / item, dst.ptr, dst.bytes / item, item);
          gloo::alltoall(o);
        }
        break;
      }
      case BP_COLLECTIVE_SEND:
      case BP_COLLECTIVE_RECV: {
        // One slot per ordered pair and message number, so the k-th send
        // from a to b meets the k-th recv of b from a; the tag keeps
        // disagreeing sizes apart.
        const bool send = call.kind == BP_COLLECTIVE_SEND;
        HostSpan& buf = send ? in : out;
        uint64_t& seq = send ? sent_[call.peer] : received_[call.peer];
        const int32_t from = send ? comm_->rank : call.peer;
        const int32_t to = send ? call.peer : comm_->rank;
        const uint64_t slot = (static_cast<uint64_t>(0xb7) << 56) ^ (static_cast<uint64_t>(tag) << 20) ^ (seq++ << 32) ^
                              (static_cast<uint64_t>(from) << 10) ^ static_cast<uint64_t>(to);
        auto ub = ctx_->createUnboundBuffer(buf.ptr, buf.bytes);
        CloseOnThrow close_on_throw(ctx_.get());
        if (send) {
          ub->send(call.peer, slot);
          if (!ub->waitSend(timeout())) throw gloo::IoException("send was aborted");
          return Status::Ok();
        }
        ub->recv(call.peer, slot);
        if (!ub->waitRecv(timeout())) throw gloo::IoException("recv was aborted");
        break;
      }
      default:
        return Error(BP_STATUS_INTERNAL, std::string(CollectiveName(call.kind)) + ": unknown collective");
    }
    return FromHost(call.output, dst);
  }

  // Gloo's setters are typed; the type only gives the element size.
  template <typename Options>
  static void SetBuffers(Options& o, char* in, char* out, size_t n, size_t item) {
    switch (item) {
      case 1:
        Set<uint8_t>(o, in, out, n);
        break;
      case 2:
        Set<uint16_t>(o, in, out, n);
        break;
      case 4:
        Set<uint32_t>(o, in, out, n);
        break;
      default:
        Set<uint64_t>(o, in, out, n);
        break;
    }
  }
  template <typename T, typename Options>
  static void Set(Options& o, char* in, char* out, size_t n) {
    if (in != out) o.setInput(reinterpret_cast<T*>(in), n);
    o.setOutput(reinterpret_cast<T*>(out), n);
  }
  template <typename Options>
  static void SetOutput(Options& o, char* out, size_t n, size_t item) {
    switch (item) {
      case 1:
        o.setOutput(reinterpret_cast<uint8_t*>(out), n);
        break;
      case 2:
        o.setOutput(reinterpret_cast<uint16_t*>(out), n);
        break;
      case 4:
        o.setOutput(reinterpret_cast<uint32_t*>(out), n);
        break;
      default:
        o.setOutput(reinterpret_cast<uint64_t*>(out), n);
        break;
    }
  }
  template <typename Options>
  static void SetInOut(Options& o, char* in, size_t n_in, char* out, size_t n_out, size_t item) {
    switch (item) {
      case 1:
        InOut<uint8_t>(o, in, n_in, out, n_out);
        break;
      case 2:
        InOut<uint16_t>(o, in, n_in, out, n_out);
        break;
      case 4:
        InOut<uint32_t>(o, in, n_in, out, n_out);
        break;
      default:
        InOut<uint64_t>(o, in, n_in, out, n_out);
        break;
    }
  }
  template <typename T, typename Options>
  static void InOut(Options& o, char* in, size_t n_in, char* out, size_t n_out) {
    o.setInput(reinterpret_cast<T*>(in), n_in);
    o.setOutput(reinterpret_cast<T*>(out), n_out);
  }

  bp_comm_t* comm_;
  std::shared_ptr<gloo::Context> ctx_;
  std::unordered_map<int32_t, uint64_t> sent_, received_;
};

}  // namespace

Status MakeGlooEngine(const CommSetup& setup, std::unique_ptr<CommEngine>* out) {
  bp_comm_t* comm = setup.comm;
  // Every rank first waits, within the deadline, for all the others to
  // announce themselves. Gloo creates W-1 pairs before its first wait, and
  // closing them after a failure takes about 13 ms each on its event loop: a
  // missing rank of 3000 cost 40 s under a 1 s timeout.
  BP_RETURN_IF_ERROR(StoreSet(setup, "present/" + std::to_string(comm->rank), "1", 1));
  for (int32_t r = 0; r < comm->world_size; ++r) {
    if (r == comm->rank) continue;
    std::string value;
    BP_RETURN_IF_ERROR(StoreGet(setup, "present/" + std::to_string(r), &value));
  }
  StoreAdapter store(setup);
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = setup.host;
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto ctx = std::make_shared<gloo::rendezvous::Context>(comm->rank, comm->world_size);
    // Gloo waits up to five times its timeout for a peer that published its
    // address but never connects (measured: 5 s under 1 s), so its
    // connection set-up gets a fifth of what is left of the deadline; every
    // rank is known present by now, so connecting is quick when all is well.
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(setup.deadline -
                                                                            std::chrono::steady_clock::now());
    ctx->setTimeout(std::max(std::chrono::milliseconds(1), left / 5));
    ctx->connectFullMesh(store, device);
    ctx->setTimeout(std::chrono::milliseconds(comm->timeout_ms));  // the calls' default, as before
    *out = std::make_unique<GlooEngine>(comm, std::move(ctx));
    return Status::Ok();
  } catch (const std::exception& e) {
    if (!store.failure().ok()) return store.failure();
    const bool io = dynamic_cast<const gloo::IoException*>(&e) != nullptr;
    return Error(io ? BP_STATUS_DEADLINE_EXCEEDED : BP_STATUS_UNAVAILABLE,
                 "bp_comm_create: rank " + std::to_string(comm->rank) + " of " + std::to_string(comm->world_size) +
                     " could not connect to the other ranks through Gloo at host '" + setup.host + "': " + e.what());
  }
}

#endif  // BACKPLANE_HAVE_GLOO

}  // namespace bp::core
