// One rank of the collectives group: every collective against a host
// reference that each rank computes for all ranks (the inputs are a function
// of rank and case), with values chosen so that any reduction order gives
// the same bits (small integers, power-of-two world sizes for AVG).
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "device_tensor.h"
#include "dtype.h"
#include "groups/collectives_group.h"

namespace bpc {
namespace {

struct Rank {
  bp_context_t* ctx = nullptr;
  bp_device_t device{};
  int rank = 0;
  int world = 1;
  int64_t timeout_ms = 3000;
  bp_kv_store_t* store = nullptr;
  int comms_made = 0;
};

// Inputs: small integers (exact in every dtype, sums of 4 included).
double Value(DType d, bp_reduce_op_t op, int rank, int seed, int64_t i) {
  const int64_t k = i * 7 + rank * 13 + seed;
  if (d == DType::kBool) return (k % 3) == 0 ? 1.0 : 0.0;
  if (op == BP_REDUCE_PROD) {
    static const double signed_v[] = {1, 2, -1};
    return d == DType::kUInt8 ? 1.0 + static_cast<double>(k % 2) : signed_v[k % 3];
  }
  if (d == DType::kUInt8) return static_cast<double>(k % 11);
  return static_cast<double>(k % 11) - 5.0;
}

std::vector<double> Inputs(DType d, bp_reduce_op_t op, int rank, int seed, int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = Value(d, op, rank, seed, i);
  return v;
}

double Reduce(DType d, bp_reduce_op_t op, double a, double b) {
  const bool boolean = d == DType::kBool;
  switch (op) {
    case BP_REDUCE_SUM:
      return boolean ? (a != 0 || b != 0) : a + b;
    case BP_REDUCE_PROD:
      return boolean ? (a != 0 && b != 0) : a * b;
    case BP_REDUCE_MIN:
      return a < b ? a : b;
    case BP_REDUCE_MAX:
      return a > b ? a : b;
    case BP_REDUCE_AVG:
      return a + b;
  }
  return a;
}

double Finish(DType d, bp_reduce_op_t op, double x, int world) {
  if (op != BP_REDUCE_AVG) return x;
  if (dtype_is_int(d)) return static_cast<double>(static_cast<int64_t>(x) / world);  // truncates toward zero
  return x / world;
}

// [n] tensor on the device; transposed: a [n/2, 2] view of a [2, n/2] tensor.
bool MakeTensor(const Rank& r, DType d, const std::vector<double>& logical, bool transposed, bp_tensor_t** out,
                std::string* err) {
  const int64_t n = static_cast<int64_t>(logical.size());
  std::vector<double> stored = logical;
  std::vector<int64_t> sizes = {n};
  if (transposed) {
    const int64_t rows = n / 2;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < 2; ++j)
        stored[static_cast<size_t>(j * rows + i)] = logical[static_cast<size_t>(i * 2 + j)];
    sizes = {2, rows};
  }
  std::vector<uint8_t> bytes;
  dtype_encode(d, stored, &bytes);
  bp_tensor_t* base = nullptr;
  bp_status_t st = bp_tensor_from_host(r.ctx, r.device, static_cast<int32_t>(sizes.size()), sizes.data(),
                                       dtype_to_dl(d), bytes.data(), bytes.size(), &base);
  if (st != BP_STATUS_OK) {
    *err = api_error("bp_tensor_from_host", st);
    return false;
  }
  if (!transposed) {
    *out = base;
    return true;
  }
  bp_op_t* op = nullptr;
  bp_op_find(r.ctx, "transpose.int", &op);
  bp_value_t args[3] = {};
  args[0].kind = BP_VALUE_TENSOR;
  args[0].u.tensor = base;
  args[1].kind = args[2].kind = BP_VALUE_INT;
  args[1].u.i = 0;
  args[2].u.i = 1;
  st = op != nullptr ? bp_op_call(r.ctx, op, args, 3, out, 1) : BP_STATUS_NOT_FOUND;
  bp_tensor_release(base);
  if (st != BP_STATUS_OK) *err = api_error("transpose.int", st);
  return st == BP_STATUS_OK;
}

bool Compare(const bp_tensor_t* t, const std::vector<double>& expected, std::string* err) {
  DType d;
  std::vector<int64_t> sizes;
  std::vector<double> got;
  if (!read_tensor(t, &d, &sizes, &got, err)) return false;
  if (got.size() != expected.size()) {
    *err = "result has " + std::to_string(got.size()) + " elements, expected " + std::to_string(expected.size());
    return false;
  }
  for (size_t i = 0; i < got.size(); ++i) {
    const double want = dtype_round(d, expected[i]);
    if (got[i] != want) {
      *err = "element " + std::to_string(i) + ": expected " + std::to_string(want) + ", got " + std::to_string(got[i]);
      return false;
    }
  }
  return true;
}

bp_comm_t* MakeComm(Rank& r, std::string* err) {
  bp_comm_options_t o{};
  o.struct_size = sizeof(o);
  o.rank = r.rank;
  o.world_size = r.world;
  o.store = r.store;
  const std::string prefix = "comm" + std::to_string(r.comms_made++);
  o.prefix = prefix.c_str();
  o.timeout_ms = r.timeout_ms;
  bp_comm_t* comm = nullptr;
  const bp_status_t st = bp_comm_create(r.ctx, r.device, &o, &comm);
  if (st != BP_STATUS_OK) *err = api_error("bp_comm_create", st);
  return comm;
}

const char* ReduceName(bp_reduce_op_t op) {
  static const char* names[] = {"sum", "prod", "min", "max", "avg"};
  return names[op];
}

const char* KindName(bp_collective_kind_t k) {
  static const char* names[] = {"all_reduce", "broadcast", "all_gather", "reduce_scatter",
                                "all_to_all", "send",      "recv",       "barrier"};
  return names[k];
}

struct Outcome {
  int passed = 0;
  int failed = 0;
};

void Report(Outcome* o, const std::string& name, bool ok, const std::string& why) {
  if (ok) {
    ++o->passed;
    std::printf("ok %s\n", name.c_str());
  } else {
    ++o->failed;
    std::printf("FAIL %s: %s\n", name.c_str(), why.c_str());
  }
  std::fflush(stdout);
}

// all_reduce or reduce_scatter of n elements per rank block.
bool ReduceCase(Rank& r, bp_comm_t* comm, bp_collective_kind_t kind, DType d, bp_reduce_op_t op, int64_t n,
                bool transposed, int seed, std::string* err) {
  const int64_t in_n = kind == BP_COLLECTIVE_REDUCE_SCATTER ? n * r.world : n;
  std::vector<double> acc = Inputs(d, op, 0, seed, in_n);
  for (int k = 1; k < r.world; ++k) {
    const std::vector<double> v = Inputs(d, op, k, seed, in_n);
    for (size_t i = 0; i < acc.size(); ++i) acc[i] = Reduce(d, op, acc[i], v[i]);
  }
  std::vector<double> expected(static_cast<size_t>(n));
  const int64_t start = kind == BP_COLLECTIVE_REDUCE_SCATTER ? r.rank * n : 0;
  for (int64_t i = 0; i < n; ++i)
    expected[static_cast<size_t>(i)] = Finish(d, op, acc[static_cast<size_t>(start + i)], r.world);
  bp_tensor_t *in = nullptr, *out = nullptr;
  bool ok = MakeTensor(r, d, Inputs(d, op, r.rank, seed, in_n), transposed, &in, err) &&
            MakeTensor(r, d, std::vector<double>(static_cast<size_t>(n), 0.0), transposed, &out, err);
  if (ok) {
    const bp_status_t st = kind == BP_COLLECTIVE_ALL_REDUCE ? bp_comm_all_reduce(comm, in, out, op, nullptr)
                                                            : bp_comm_reduce_scatter(comm, in, out, op, nullptr);
    ok = st == BP_STATUS_OK ? Compare(out, expected, err) : (*err = api_error("collective", st), false);
  }
  bp_tensor_release(in);
  bp_tensor_release(out);
  return ok;
}

// broadcast, all_gather, all_to_all: data movement, no arithmetic.
bool MoveCase(Rank& r, bp_comm_t* comm, bp_collective_kind_t kind, DType d, int64_t n, bool transposed, int seed,
              std::string* err) {
  const int w = r.world;
  std::vector<double> expected;
  bp_tensor_t *in = nullptr, *out = nullptr;
  bool ok = true;
  bp_status_t st = BP_STATUS_OK;
  if (kind == BP_COLLECTIVE_BROADCAST) {
    const int root = w - 1;
    expected = Inputs(d, BP_REDUCE_SUM, root, seed, n);
    ok = MakeTensor(r, d, Inputs(d, BP_REDUCE_SUM, r.rank, seed, n), transposed, &in, err);
    if (ok) st = bp_comm_broadcast(comm, in, root, nullptr);
    out = in;
    in = nullptr;
  } else if (kind == BP_COLLECTIVE_ALL_GATHER) {
    for (int k = 0; k < w; ++k) {
      const std::vector<double> v = Inputs(d, BP_REDUCE_SUM, k, seed, n);
      expected.insert(expected.end(), v.begin(), v.end());
    }
    ok = MakeTensor(r, d, Inputs(d, BP_REDUCE_SUM, r.rank, seed, n), transposed, &in, err) &&
         MakeTensor(r, d, std::vector<double>(static_cast<size_t>(n * w), 0.0), transposed, &out, err);
    if (ok) st = bp_comm_all_gather(comm, in, out, nullptr);
  } else {  // all_to_all: output block k is block `rank` of rank k's input
    for (int k = 0; k < w; ++k) {
      const std::vector<double> v = Inputs(d, BP_REDUCE_SUM, k, seed, n * w);
      expected.insert(expected.end(), v.begin() + r.rank * n, v.begin() + (r.rank + 1) * n);
    }
    ok = MakeTensor(r, d, Inputs(d, BP_REDUCE_SUM, r.rank, seed, n * w), transposed, &in, err) &&
         MakeTensor(r, d, std::vector<double>(static_cast<size_t>(n * w), 0.0), transposed, &out, err);
    if (ok) st = bp_comm_all_to_all(comm, in, out, nullptr);
  }
  if (ok) ok = st == BP_STATUS_OK ? Compare(out, expected, err) : (*err = api_error("collective", st), false);
  bp_tensor_release(in);
  bp_tensor_release(out);
  return ok;
}

// A ring: rank r sends to r+1 and receives from r-1; even ranks send first.
bool SendRecvCase(Rank& r, bp_comm_t* comm, DType d, int64_t n, int seed, std::string* err) {
  const int next = (r.rank + 1) % r.world, prev = (r.rank + r.world - 1) % r.world;
  bp_tensor_t *in = nullptr, *out = nullptr;
  bool ok = MakeTensor(r, d, Inputs(d, BP_REDUCE_SUM, r.rank, seed, n), false, &in, err) &&
            MakeTensor(r, d, std::vector<double>(static_cast<size_t>(n), 0.0), false, &out, err);
  bp_status_t st = BP_STATUS_OK;
  if (ok) {
    if (r.rank % 2 == 0) {
      st = bp_comm_send(comm, in, next, nullptr);
      if (st == BP_STATUS_OK) st = bp_comm_recv(comm, out, prev, nullptr);
    } else {
      st = bp_comm_recv(comm, out, prev, nullptr);
      if (st == BP_STATUS_OK) st = bp_comm_send(comm, in, next, nullptr);
    }
    ok = st == BP_STATUS_OK ? Compare(out, Inputs(d, BP_REDUCE_SUM, prev, seed, n), err)
                            : (*err = api_error("send/recv", st), false);
  }
  bp_tensor_release(in);
  bp_tensor_release(out);
  return ok;
}

std::string CaseName(const char* what, DType d, int64_t n, const char* extra = "") {
  return std::string(what) + " " + dtype_name(d) + " n=" + std::to_string(n) + extra;
}

void ValidCases(Rank& r, bp_comm_t* comm, Outcome* o) {
  std::string err;
  int seed = 1;
  const DType all[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt8,
                       DType::kUInt8,   DType::kInt32,   DType::kInt64,   DType::kBool};
  for (DType d : all) {
    for (int64_t n : {int64_t{1}, int64_t{1000}}) {
      for (bp_reduce_op_t op : {BP_REDUCE_SUM, BP_REDUCE_PROD, BP_REDUCE_MIN, BP_REDUCE_MAX, BP_REDUCE_AVG}) {
        if (op == BP_REDUCE_AVG && d == DType::kBool) continue;
        err.clear();
        const bool ok = ReduceCase(r, comm, BP_COLLECTIVE_ALL_REDUCE, d, op, n, false, seed++, &err);
        Report(o, CaseName((std::string("all_reduce ") + ReduceName(op)).c_str(), d, n), ok, err);
      }
    }
    for (bp_collective_kind_t k : {BP_COLLECTIVE_BROADCAST, BP_COLLECTIVE_ALL_GATHER, BP_COLLECTIVE_ALL_TO_ALL}) {
      err.clear();
      const bool ok = MoveCase(r, comm, k, d, 1000, false, seed++, &err);
      Report(o, CaseName(KindName(k), d, 1000), ok, err);
    }
    err.clear();
    Report(o, CaseName("reduce_scatter sum", d, 1000),
           ReduceCase(r, comm, BP_COLLECTIVE_REDUCE_SCATTER, d, BP_REDUCE_SUM, 1000, false, seed++, &err), err);
    err.clear();
    Report(o, CaseName("send/recv ring", d, 1000), SendRecvCase(r, comm, d, 1000, seed++, &err), err);
  }
  // Several MB, and non-contiguous inputs and outputs.
  const int64_t big = 3 * 1024 * 1024 / 4 + 3;  // 3 MiB of float32, not a multiple of anything
  err.clear();
  Report(o, CaseName("all_reduce sum", DType::kFloat32, big),
         ReduceCase(r, comm, BP_COLLECTIVE_ALL_REDUCE, DType::kFloat32, BP_REDUCE_SUM, big, false, seed++, &err), err);
  err.clear();
  Report(o, CaseName("all_gather", DType::kInt64, big / 4),
         MoveCase(r, comm, BP_COLLECTIVE_ALL_GATHER, DType::kInt64, big / 4, false, seed++, &err), err);
  err.clear();
  Report(
      o, CaseName("reduce_scatter max", DType::kBFloat16, 1 << 20),
      ReduceCase(r, comm, BP_COLLECTIVE_REDUCE_SCATTER, DType::kBFloat16, BP_REDUCE_MAX, 1 << 20, false, seed++, &err),
      err);
  err.clear();
  Report(o, CaseName("all_reduce sum", DType::kFloat32, 1000, " non-contiguous"),
         ReduceCase(r, comm, BP_COLLECTIVE_ALL_REDUCE, DType::kFloat32, BP_REDUCE_SUM, 1000, true, seed++, &err), err);
  err.clear();
  Report(o, CaseName("all_to_all", DType::kInt32, 1000, " non-contiguous"),
         MoveCase(r, comm, BP_COLLECTIVE_ALL_TO_ALL, DType::kInt32, 1000, true, seed++, &err), err);
  err.clear();
  Report(o, CaseName("broadcast", DType::kFloat64, 1000, " non-contiguous"),
         MoveCase(r, comm, BP_COLLECTIVE_BROADCAST, DType::kFloat64, 1000, true, seed++, &err), err);
  // Asynchronous: queue three calls, then wait for each.
  {
    err.clear();
    bp_tensor_t* t[3] = {};
    bp_comm_work_t* w[3] = {};
    bool ok = true;
    for (int i = 0; i < 3 && ok; ++i) {
      ok = MakeTensor(r, DType::kFloat32, std::vector<double>(100, r.rank + i), false, &t[i], &err);
      if (ok) {
        const bp_status_t st = bp_comm_all_reduce(comm, t[i], t[i], BP_REDUCE_SUM, &w[i]);
        if (st != BP_STATUS_OK) ok = (err = api_error("bp_comm_all_reduce", st), false);
      }
    }
    for (int i = 0; i < 3; ++i) {
      if (w[i] == nullptr) continue;
      const bp_status_t st = bp_comm_work_wait(w[i]);
      if (ok && st != BP_STATUS_OK) ok = (err = api_error("bp_comm_work_wait", st), false);
      const double sum = r.world * (r.world - 1) / 2.0 + r.world * i;
      if (ok) ok = Compare(t[i], std::vector<double>(100, sum), &err);
      bp_comm_work_destroy(w[i]);
    }
    for (bp_tensor_t* x : t) bp_tensor_release(x);
    Report(o, "work handles: three queued all_reduce calls, waited in order", ok, err);
  }
  const bp_status_t st = bp_comm_barrier(comm, nullptr);
  Report(o, "barrier", st == BP_STATUS_OK, st == BP_STATUS_OK ? "" : api_error("bp_comm_barrier", st));
}

// Local argument errors: a status and a message, nothing queued.
void ArgumentCases(Rank& r, bp_comm_t* comm, Outcome* o) {
  auto expect = [&](const std::string& name, bp_status_t st, bp_status_t want, const char* needle) {
    const std::string msg = bp_last_error_message();
    const bool ok = st == want && msg.find(needle) != std::string::npos;
    Report(o, name, ok,
           ok ? ""
              : std::string("expected ") + bp_status_name(want) + " mentioning '" + needle + "', got " +
                    bp_status_name(st) + ": " + msg);
  };
  bp_comm_options_t opt{};
  opt.struct_size = sizeof(opt);
  opt.store = r.store;
  bp_comm_t* c = nullptr;
  opt.world_size = 0;
  expect("bad input: world size 0", bp_comm_create(r.ctx, r.device, &opt, &c), BP_STATUS_INVALID_ARGUMENT,
         "world_size");
  opt.world_size = r.world;
  opt.rank = r.world;
  expect("bad input: rank >= world size", bp_comm_create(r.ctx, r.device, &opt, &c), BP_STATUS_INVALID_ARGUMENT,
         "rank");
  std::string err;
  bp_tensor_t *a = nullptr, *b = nullptr;
  if (!MakeTensor(r, DType::kFloat32, std::vector<double>(8, 1.0), false, &a, &err) ||
      !MakeTensor(r, DType::kFloat32, std::vector<double>(7, 0.0), false, &b, &err)) {
    Report(o, "bad input: setup", false, err);
    return;
  }
  expect("bad input: all_gather output too small", bp_comm_all_gather(comm, a, b, nullptr), BP_STATUS_INVALID_ARGUMENT,
         "output");
  expect("bad input: broadcast root out of range", bp_comm_broadcast(comm, a, r.world, nullptr),
         BP_STATUS_INVALID_ARGUMENT, "root");
  expect("bad input: send to itself", bp_comm_send(comm, a, r.rank, nullptr), BP_STATUS_INVALID_ARGUMENT, "peer");
  bp_tensor_release(a);
  bp_tensor_release(b);
}

// A communicator per case: a failure breaks it.
void FailureCases(Rank& r, Outcome* o) {
  std::string err;
  // Ranks that disagree on the size: every rank gets an error within the timeout.
  if (bp_comm_t* comm = MakeComm(r, &err)) {
    bp_tensor_t* t = nullptr;
    const int64_t n = r.rank == 0 ? 100 : 99;
    if (MakeTensor(r, DType::kFloat32, std::vector<double>(static_cast<size_t>(n), 1.0), false, &t, &err)) {
      const auto t0 = std::chrono::steady_clock::now();
      const bp_status_t st = bp_comm_all_reduce(comm, t, t, BP_REDUCE_SUM, nullptr);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      const bool ok = st != BP_STATUS_OK && ms < r.timeout_ms * 2.0 + 2000;
      Report(o, "failure: ranks disagree on the size (100 vs 99 float32)", ok,
             ok ? "" : "status " + std::string(bp_status_name(st)) + " after " + std::to_string(ms) + " ms");
      bp_tensor_release(t);
    }
    bp_comm_destroy(comm);
  } else {
    Report(o, "failure: ranks disagree on the size (100 vs 99 float32)", false, err);
  }
  // The last rank is killed (SIGKILL, nothing cleaned up) instead of
  // calling: the others fail with DEADLINE_EXCEEDED within the timeout.
  if (bp_comm_t* comm = MakeComm(r, &err)) {
    const bool leaver = r.rank == r.world - 1;
    bp_tensor_t* t = nullptr;
    if (leaver) {
      Report(o, "failure: a rank leaves", true, "");
      std::printf("%s\n", kKilledLine);
      std::fflush(stdout);
      raise(SIGKILL);
    } else if (MakeTensor(r, DType::kFloat32, std::vector<double>(64, 1.0), false, &t, &err)) {
      const auto t0 = std::chrono::steady_clock::now();
      const bp_status_t st = bp_comm_all_reduce(comm, t, t, BP_REDUCE_SUM, nullptr);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      const bool ok = st == BP_STATUS_DEADLINE_EXCEEDED && ms < r.timeout_ms * 2.0 + 2000;
      Report(o, "failure: a rank leaves", ok,
             ok ? ""
                : "expected DEADLINE_EXCEEDED within the timeout, got " + std::string(bp_status_name(st)) + " after " +
                      std::to_string(ms) + " ms: " + bp_last_error_message());
      // The communicator is broken now: the next call fails at once.
      const bp_status_t again = bp_comm_barrier(comm, nullptr);
      Report(o, "failure: a broken communicator refuses the next call", again == BP_STATUS_FAILED_PRECONDITION,
             std::string("got ") + bp_status_name(again));
      bp_tensor_release(t);
      bp_comm_destroy(comm);
      const bp_status_t used = bp_comm_barrier(comm, nullptr);
      Report(o, "bad input: a destroyed communicator", used == BP_STATUS_INVALID_ARGUMENT,
             std::string("got ") + bp_status_name(used) + ": " + bp_last_error_message());
    }
  } else {
    Report(o, "failure: a rank leaves", false, err);
  }
}

}  // namespace

int run_collectives_worker(bp_context_t* ctx, const std::string& backend_name, int32_t device,
                           const CollectivesCli& cli) {
  Rank r;
  r.ctx = ctx;
  r.rank = cli.rank;
  r.world = cli.world;
  r.timeout_ms = cli.timeout_ms;
  int32_t backend = -1;
  if (bp_backend_find(ctx, backend_name.c_str(), &backend) != BP_STATUS_OK) {
    std::printf("FAIL setup: no backend '%s' in this worker\n", backend_name.c_str());
    return 1;
  }
  r.device = bp_device_t{backend, device};
  if (bp_kv_store_file_create(cli.store_dir.c_str(), &r.store) != BP_STATUS_OK) {
    std::printf("FAIL setup: %s\n", api_error("bp_kv_store_file_create", bp_last_error_status()).c_str());
    return 1;
  }
  Outcome o;
  std::string err;
  bp_comm_t* comm = MakeComm(r, &err);
  Report(&o, "setup: bp_comm_create", comm != nullptr, err);
  if (comm != nullptr) {
    bp_comm_info_t info{};
    info.struct_size = sizeof(info);
    if (bp_comm_info(comm, &info) == BP_STATUS_OK && r.rank == 0) std::printf("engine %s\n", info.engine);
    ValidCases(r, comm, &o);
    ArgumentCases(r, comm, &o);
    bp_comm_destroy(comm);
    FailureCases(r, &o);
  }
  bp_kv_store_file_destroy(r.store);
  return o.failed == 0 && comm != nullptr ? 0 : 1;
}

}  // namespace bpc
