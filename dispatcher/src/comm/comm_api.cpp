// The bp_comm_* C API (backplane/comm.h): argument checks, engine choice and
// the queueing of each collective on its communicator.
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

#include "api.h"
#include "comm/communicator.h"
#include "comm/prefix_claim.h"
#include "copy.h"
#include "dtype.h"
#include "tensor.h"

using namespace bp::core;

namespace {

constexpr int64_t kDefaultTimeoutMs = 300000;
// Larger timeouts mean "no limit" and are clamped (2^40 ms, about 35 years):
// steady_clock::now() + milliseconds(INT64_MAX) overflows its nanoseconds.
constexpr int64_t kMaxTimeoutMs = int64_t{1} << 40;
// Gloo connects every pair of ranks (a socket each, W-1 per process); a
// larger world is a mistake, and 2^31-1 ranks would allocate 16 GiB of pairs
// before the first timeout check.
constexpr int32_t kMaxWorldSize = 4096;
constexpr size_t kMaxPrefix = 128;
constexpr size_t kMaxHost = 253;  // a DNS name's longest text form

// The host text with bytes outside printable ASCII as \xNN, for a message.
std::string Printable(const std::string& s) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (const char c : s.substr(0, 300)) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else {
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    }
  }
  return s.size() > 300 ? out + "..." : out;
}

// Gloo's address: checked and resolved here, before Gloo sees it, so a bad
// name is an error naming it (Gloo aborted or spun on some) and resolution
// cost is paid once.
Status CheckHost(const std::string& host, const char* source) {
  const std::string what = std::string("bp_comm_create: ") + source + " is '" + Printable(host) + "'";
  if (host.empty() || host.size() > kMaxHost) {
    return Error(BP_STATUS_INVALID_ARGUMENT, what + ", expected a host name or address of 1 to " +
                                                 std::to_string(kMaxHost) + " bytes");
  }
  for (const char c : host) {
    // Names (letters, digits, '-', '.', '_'), IPv4 and IPv6 literals
    // (':', '%' for a scope).
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_' && c != ':' && c != '%') {
      return Error(BP_STATUS_INVALID_ARGUMENT,
                   what + ", expected a host name or IP address (letters, digits, '.', '-', '_', ':', '%')");
    }
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0) {
    return Error(BP_STATUS_UNAVAILABLE, what + ", which does not resolve to an address: " + gai_strerror(rc));
  }
  freeaddrinfo(res);
  return Status::Ok();
}

Status CheckComm(const bp_comm_t* comm, const std::string& fn) {
  if (comm == nullptr) return Error(BP_STATUS_INVALID_ARGUMENT, fn + ": comm is NULL");
  if (!IsLiveComm(comm)) {
    return Error(BP_STATUS_INVALID_ARGUMENT, fn + ": comm is a destroyed communicator (or not one at all)");
  }
  return Status::Ok();
}

std::string DeviceText(bp_device_t d) { return std::to_string(d.backend) + ":" + std::to_string(d.index); }

Status CheckTensor(const bp_comm_t* comm, const bp_tensor_t* t, const std::string& fn, const char* arg,
                   bool is_output) {
  if (t == nullptr) return Error(BP_STATUS_INVALID_ARGUMENT, fn + ": " + arg + " is NULL");
  if (!CheckLiveTensor(t, fn.c_str())) {
    return Error(BP_STATUS_INVALID_ARGUMENT, fn + ": " + arg + " was already released");
  }
  const bp_device_t d = t->geo.device;
  if (d.backend != comm->device.backend || d.index != comm->device.index) {
    return Error(BP_STATUS_INVALID_ARGUMENT, fn + ": " + arg + " is on device " + DeviceText(d) +
                                                 ", expected the communicator's device " + DeviceText(comm->device) +
                                                 " (" + comm->dev->slot->name + ":" + std::to_string(comm->dev->index) +
                                                 ")");
  }
  if (DtypeFromDL(t->geo.dtype) == DType::kInvalid) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 fn + ": " + arg + " has dtype " + DtypeName(t->geo.dtype) + ", which collectives do not take");
  }
  if (is_output) BP_RETURN_IF_ERROR(CheckNotConstant(t, fn.c_str(), arg));
  return Status::Ok();
}

Status CheckRank(const bp_comm_t* comm, int32_t r, const std::string& fn, const char* arg) {
  if (r < 0 || r >= comm->world_size) {
    return Error(BP_STATUS_INVALID_ARGUMENT, fn + ": " + arg + " is " + std::to_string(r) + ", expected 0 <= " + arg +
                                                 " < world size " + std::to_string(comm->world_size));
  }
  return Status::Ok();
}

Status CheckNumel(const std::string& fn, const char* arg, int64_t got, int64_t expected, const std::string& why) {
  if (got == expected) return Status::Ok();
  return Error(BP_STATUS_INVALID_ARGUMENT, fn + ": " + arg + " has " + std::to_string(got) + " elements, expected " +
                                               std::to_string(expected) + " (" + why + ")");
}

// W x n must not wrap (an expanded input has any element count): checked
// multiplication, before the size comparison that would use it.
Status CheckScaled(const std::string& fn, const char* arg, int64_t n, int32_t w) {
  int64_t total = 0;
  if (!__builtin_mul_overflow(n, static_cast<int64_t>(w), &total)) return Status::Ok();
  return Error(BP_STATUS_INVALID_ARGUMENT, fn + ": " + arg + " has " + std::to_string(n) +
                                               " elements; world size " + std::to_string(w) +
                                               " times that overflows a 64-bit element count");
}

// Checks a call, then queues it (or runs it, out_work NULL).
Status Submit(bp_comm_t* comm, CollectiveCall call, bp_comm_work_t** out_work) {
  const std::string fn = std::string("bp_comm_") + CollectiveName(call.kind);
  if (out_work != nullptr) *out_work = nullptr;
  BP_RETURN_IF_ERROR(CheckComm(comm, fn));
  const int32_t w = comm->world_size;
  const bp_collective_kind_t k = call.kind;
  const bool has_in = k != BP_COLLECTIVE_RECV && k != BP_COLLECTIVE_BARRIER;
  const bool has_out = k != BP_COLLECTIVE_SEND && k != BP_COLLECTIVE_BARRIER;
  if (has_in)
    BP_RETURN_IF_ERROR(CheckTensor(comm, call.input, fn, k == BP_COLLECTIVE_BROADCAST ? "tensor" : "input", false));
  if (has_out) {
    BP_RETURN_IF_ERROR(CheckTensor(comm, call.output, fn, k == BP_COLLECTIVE_BROADCAST ? "tensor" : "output", true));
  }
  if (has_in && has_out && !DtypeEqual(call.input->geo.dtype, call.output->geo.dtype)) {
    return Error(BP_STATUS_INVALID_ARGUMENT, fn + ": output has dtype " + DtypeName(call.output->geo.dtype) +
                                                 ", expected input's " + DtypeName(call.input->geo.dtype));
  }
  if (k == BP_COLLECTIVE_ALL_REDUCE || k == BP_COLLECTIVE_REDUCE_SCATTER) {
    if (static_cast<uint32_t>(call.op) > BP_REDUCE_AVG) {
      return Error(BP_STATUS_INVALID_ARGUMENT, fn + ": op is " + std::to_string(static_cast<int>(call.op)) +
                                                   ", expected a bp_reduce_op_t (SUM, PROD, MIN, MAX, AVG)");
    }
    if (call.op == BP_REDUCE_AVG && DtypeFromDL(call.input->geo.dtype) == DType::kBool) {
      return Error(BP_STATUS_INVALID_ARGUMENT,
                   fn + ": op AVG is not defined for bool tensors (use SUM, PROD, MIN or MAX)");
    }
  }
  const int64_t n_in = has_in ? call.input->geo.numel() : 0;
  const int64_t n_out = has_out ? call.output->geo.numel() : 0;
  switch (k) {
    case BP_COLLECTIVE_ALL_REDUCE:
      BP_RETURN_IF_ERROR(CheckNumel(fn, "output", n_out, n_in, "as many as input"));
      break;
    case BP_COLLECTIVE_BROADCAST:
      BP_RETURN_IF_ERROR(CheckRank(comm, call.peer, fn, "root"));
      break;
    case BP_COLLECTIVE_ALL_GATHER:
      BP_RETURN_IF_ERROR(CheckScaled(fn, "input", n_in, w));
      BP_RETURN_IF_ERROR(CheckNumel(fn, "output", n_out, n_in * w, "world size x input's " + std::to_string(n_in)));
      break;
    case BP_COLLECTIVE_REDUCE_SCATTER:
      BP_RETURN_IF_ERROR(CheckScaled(fn, "output", n_out, w));
      BP_RETURN_IF_ERROR(CheckNumel(fn, "input", n_in, n_out * w, "world size x output's " + std::to_string(n_out)));
      break;
    case BP_COLLECTIVE_ALL_TO_ALL:
      BP_RETURN_IF_ERROR(CheckNumel(fn, "output", n_out, n_in, "as many as input"));
      if (n_in % w != 0) {
        return Error(BP_STATUS_INVALID_ARGUMENT, fn + ": input has " + std::to_string(n_in) +
                                                     " elements, expected a multiple of the world size " +
                                                     std::to_string(w));
      }
      break;
    case BP_COLLECTIVE_SEND:
    case BP_COLLECTIVE_RECV:
      BP_RETURN_IF_ERROR(CheckRank(comm, call.peer, fn, "peer"));
      if (call.peer == comm->rank) {
        return Error(BP_STATUS_INVALID_ARGUMENT,
                     fn + ": peer is this rank (" + std::to_string(comm->rank) + "), expected another rank");
      }
      break;
    default:
      break;
  }
  // Work already enqueued on the caller's current stream produced the inputs.
  BP_RETURN_IF_ERROR(SynchronizeDevice(comm->dev));
  if (call.input != nullptr) TensorRetain(call.input);
  if (call.output != nullptr && call.output != call.input) TensorRetain(call.output);
  if (out_work == nullptr) return RunCollective(comm, call);
  std::shared_ptr<WorkState> work;
  BP_RETURN_IF_ERROR(EnqueueCollective(comm, call, &work));
  *out_work = new bp_comm_work_t{std::move(work)};
  return Status::Ok();
}

bp_status_t Collective(const char* fn, bp_comm_t* comm, bp_collective_kind_t kind, const bp_tensor_t* input,
                       bp_tensor_t* output, bp_reduce_op_t op, int32_t peer, bp_comm_work_t** out_work) {
  return ApiCall(fn, [&]() -> Status {
    CollectiveCall call;
    call.kind = kind;
    call.op = op;
    call.peer = peer;
    // The queue holds a reference; inputs are only read.
    call.input = const_cast<bp_tensor_t*>(input);
    call.output = output;
    return Submit(comm, call, out_work);
  });
}

}  // namespace

extern "C" BP_API bp_status_t bp_comm_create(bp_context_t* context, bp_device_t device,
                                             const bp_comm_options_t* options, bp_comm_t** out_comm) {
  return ApiCall("bp_comm_create", [&]() -> Status {
    const char* fn = "bp_comm_create";
    BP_CHECK_ARG(context != nullptr && options != nullptr && out_comm != nullptr, fn,
                 "context, options and out_comm must not be NULL");
    *out_comm = nullptr;
    BP_CHECK_ARG(options->struct_size >= offsetof(bp_comm_options_t, host), fn,
                 "options->struct_size is " + std::to_string(options->struct_size) + ", expected at least " +
                     std::to_string(offsetof(bp_comm_options_t, host)));
    const bool has_host = options->struct_size >= sizeof(bp_comm_options_t);
    BP_CHECK_ARG(options->world_size >= 1 && options->world_size <= kMaxWorldSize, fn,
                 "options->world_size is " + std::to_string(options->world_size) + ", expected 1 to " +
                     std::to_string(kMaxWorldSize));
    BP_CHECK_ARG(options->rank >= 0 && options->rank < options->world_size, fn,
                 "options->rank is " + std::to_string(options->rank) + ", expected 0 <= rank < world_size " +
                     std::to_string(options->world_size));
    BP_CHECK_ARG(options->store != nullptr && options->store->set != nullptr && options->store->get != nullptr, fn,
                 "options->store must be a key-value store with set and get");
    BP_CHECK_ARG(options->timeout_ms >= 0, fn,
                 "options->timeout_ms is " + std::to_string(options->timeout_ms) + ", expected >= 0 (0: default)");
    BP_CHECK_ARG(options->engine >= BP_COMM_ENGINE_AUTO && options->engine <= BP_COMM_ENGINE_GLOO, fn,
                 "options->engine is " + std::to_string(options->engine) + ", expected AUTO, NATIVE or GLOO");
    CommSetup setup;
    setup.store = options->store;
    setup.prefix = options->prefix != nullptr ? options->prefix : "bp_comm";
    BP_CHECK_ARG(setup.prefix.size() <= kMaxPrefix, fn,
                 "options->prefix has " + std::to_string(setup.prefix.size()) + " bytes, expected at most 128");
    const char* env_host = std::getenv("BACKPLANE_COMM_HOST");
    const char* host_source = "the default host";
    if (has_host && options->host != nullptr) {
      setup.host = options->host;
      host_source = "options->host";
    } else if (env_host != nullptr && *env_host != '\0') {
      setup.host = env_host;
      host_source = "BACKPLANE_COMM_HOST";
    } else {
      setup.host = "127.0.0.1";
    }
    DeviceState* dev = nullptr;
    BP_RETURN_IF_ERROR(ResolveDevice(context, device, fn, &dev));
    auto comm = std::make_unique<bp_comm_t>();
    comm->ctx = context;
    comm->device = device;
    comm->dev = dev;
    comm->rank = options->rank;
    comm->world_size = options->world_size;
    comm->timeout_ms = options->timeout_ms == 0 ? kDefaultTimeoutMs : std::min(options->timeout_ms, kMaxTimeoutMs);
    setup.comm = comm.get();
    setup.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(comm->timeout_ms);
    const bool native = options->engine == BP_COMM_ENGINE_NATIVE ||
                        (options->engine == BP_COMM_ENGINE_AUTO && dev->slot->table.collectives != nullptr);
    if (!native) BP_RETURN_IF_ERROR(CheckHost(setup.host, host_source));
    std::string claim;
    BP_RETURN_IF_ERROR(ClaimPrefix(setup, &claim));  // one job per store prefix
    BP_RETURN_IF_ERROR(native ? MakeNativeEngine(setup, &comm->engine) : MakeGlooEngine(setup, &comm->engine));
    BP_RETURN_IF_ERROR(CheckClaimKept(setup, claim));
    StartCommWorker(comm.get());
    RegisterComm(comm.get());
    *out_comm = comm.release();
    return Status::Ok();
  });
}

extern "C" BP_API bp_status_t bp_comm_destroy(bp_comm_t* comm) {
  return ApiCall("bp_comm_destroy", [&]() -> Status {
    if (comm == nullptr) return Status::Ok();
    BP_RETURN_IF_ERROR(CheckComm(comm, "bp_comm_destroy"));
    UnregisterComm(comm);
    DestroyComm(comm);
    return Status::Ok();
  });
}

extern "C" BP_API bp_status_t bp_comm_info(const bp_comm_t* comm, bp_comm_info_t* out_info) {
  return ApiCall("bp_comm_info", [&]() -> Status {
    BP_RETURN_IF_ERROR(CheckComm(comm, "bp_comm_info"));
    BP_CHECK_ARG(out_info != nullptr && out_info->struct_size >= sizeof(bp_comm_info_t), "bp_comm_info",
                 "out_info must be non-NULL with struct_size >= sizeof(bp_comm_info_t)");
    out_info->rank = comm->rank;
    out_info->world_size = comm->world_size;
    out_info->device = comm->device;
    out_info->engine = comm->engine->name();
    out_info->timeout_ms = comm->timeout_ms;
    return Status::Ok();
  });
}

extern "C" BP_API bp_status_t bp_comm_all_reduce(bp_comm_t* comm, const bp_tensor_t* input, bp_tensor_t* output,
                                                 bp_reduce_op_t op, bp_comm_work_t** out_work) {
  return Collective("bp_comm_all_reduce", comm, BP_COLLECTIVE_ALL_REDUCE, input, output, op, -1, out_work);
}
extern "C" BP_API bp_status_t bp_comm_broadcast(bp_comm_t* comm, bp_tensor_t* tensor, int32_t root,
                                                bp_comm_work_t** out_work) {
  return Collective("bp_comm_broadcast", comm, BP_COLLECTIVE_BROADCAST, tensor, tensor, BP_REDUCE_SUM, root, out_work);
}
extern "C" BP_API bp_status_t bp_comm_all_gather(bp_comm_t* comm, const bp_tensor_t* input, bp_tensor_t* output,
                                                 bp_comm_work_t** out_work) {
  return Collective("bp_comm_all_gather", comm, BP_COLLECTIVE_ALL_GATHER, input, output, BP_REDUCE_SUM, -1, out_work);
}
extern "C" BP_API bp_status_t bp_comm_reduce_scatter(bp_comm_t* comm, const bp_tensor_t* input, bp_tensor_t* output,
                                                     bp_reduce_op_t op, bp_comm_work_t** out_work) {
  return Collective("bp_comm_reduce_scatter", comm, BP_COLLECTIVE_REDUCE_SCATTER, input, output, op, -1, out_work);
}
extern "C" BP_API bp_status_t bp_comm_all_to_all(bp_comm_t* comm, const bp_tensor_t* input, bp_tensor_t* output,
                                                 bp_comm_work_t** out_work) {
  return Collective("bp_comm_all_to_all", comm, BP_COLLECTIVE_ALL_TO_ALL, input, output, BP_REDUCE_SUM, -1, out_work);
}
extern "C" BP_API bp_status_t bp_comm_send(bp_comm_t* comm, const bp_tensor_t* input, int32_t peer,
                                           bp_comm_work_t** out_work) {
  return Collective("bp_comm_send", comm, BP_COLLECTIVE_SEND, input, nullptr, BP_REDUCE_SUM, peer, out_work);
}
extern "C" BP_API bp_status_t bp_comm_recv(bp_comm_t* comm, bp_tensor_t* output, int32_t peer,
                                           bp_comm_work_t** out_work) {
  return Collective("bp_comm_recv", comm, BP_COLLECTIVE_RECV, nullptr, output, BP_REDUCE_SUM, peer, out_work);
}
extern "C" BP_API bp_status_t bp_comm_barrier(bp_comm_t* comm, bp_comm_work_t** out_work) {
  return Collective("bp_comm_barrier", comm, BP_COLLECTIVE_BARRIER, nullptr, nullptr, BP_REDUCE_SUM, -1, out_work);
}

extern "C" BP_API bp_status_t bp_comm_work_wait(bp_comm_work_t* work) {
  return ApiCall("bp_comm_work_wait", [&]() -> Status {
    BP_CHECK_ARG(work != nullptr, "bp_comm_work_wait", "work is NULL");
    return work->state->Wait();
  });
}

extern "C" BP_API bp_status_t bp_comm_work_query(bp_comm_work_t* work, int32_t* out_complete) {
  return ApiCall("bp_comm_work_query", [&]() -> Status {
    BP_CHECK_ARG(work != nullptr && out_complete != nullptr, "bp_comm_work_query",
                 "work and out_complete must not be NULL");
    std::lock_guard<std::mutex> lock(work->state->mu);
    *out_complete = work->state->done ? 1 : 0;
    return Status::Ok();
  });
}

extern "C" BP_API void bp_comm_work_destroy(bp_comm_work_t* work) {
  if (work == nullptr) return;
  work->state->Wait();
  delete work;
}
