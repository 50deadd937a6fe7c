// vendor_sim's native collectives (ABI 1.6, samples/vendor_plugin/
// collectives.h) through the fake host: the test forks 2 and 4 processes
// (ranks) that join one communicator over a shared-memory segment and check
// every kind's results, chunking (3 MiB tensors through 1 MiB slots),
// agreement checks and failures (a rank that never calls ends in
// DEADLINE_EXCEEDED on the others, within the call's timeout).
//
// Children report through their exit code (0: every check held) and print
// what failed to stderr; each sets alarm() so a hang kills it instead of
// the test run (ctest's TIMEOUT is the outer net).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "backplane/collectives.h"
#include "fake_host.h"

using namespace bp_test;

namespace {

constexpr int64_t kBig = (3 << 20) / 4 + 5;  // float32/int32 elements: 3 MiB and a partial chunk
constexpr int64_t kTimeoutMs = 20000;        // for calls that must succeed

#define CHILD_CHECK(cond, ...)                                                 \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "rank %d, line %d: %s: ", r.rank, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                       \
      std::fprintf(stderr, " [message: %s]\n", r.msg);                         \
      return 1;                                                                \
    }                                                                          \
  } while (0)

// One rank in a child process: the plugin's table and its communicator.
struct Rank {
  const bp_backend_t* b = nullptr;
  void* bd = nullptr;
  bp_device_comm_t comm = nullptr;
  int rank = 0, world = 0;
  char msg[BP_COMM_MAX_MESSAGE] = {};

  bp_status_t Call(int32_t kind, const DLTensor* in, const DLTensor* out, int32_t op = BP_REDUCE_SUM, int32_t peer = -1,
                   int64_t timeout_ms = kTimeoutMs) {
    bp_collective_args_t a{};
    a.struct_size = sizeof a;
    a.kind = kind;
    a.reduce_op = op;
    a.peer = peer;
    a.input = in;
    a.output = out;
    a.stream = nullptr;
    a.timeout_ms = timeout_ms;
    a.message = msg;
    msg[0] = '\0';
    return b->collectives->collective(bd, comm, &a);
  }
};

// A 1-D tensor in vendor_sim memory. Not copyable: dl points at n.
struct Buf {
  Rank* r;
  int64_t n;
  size_t esize;
  void* h = nullptr;
  DLTensor dl{};
  Buf(Rank& rk, DLDataType t, int64_t count) : r(&rk), n(count), esize(t.bits / 8) {
    if (n > 0) r->b->allocate(r->bd, 0, static_cast<size_t>(n) * esize, &h);
    dl.data = h;
    dl.device = DLDevice{kDLExtDev, 0};
    dl.ndim = 1;
    dl.dtype = t;
    dl.shape = &n;
    dl.strides = nullptr;
  }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  ~Buf() {
    if (h != nullptr) r->b->deallocate(r->bd, 0, h);
  }
  template <typename T>
  void Put(const std::vector<T>& v) {
    r->b->copy_host_to_device(r->bd, 0, v.data(), h, 0, v.size() * sizeof(T), nullptr);
    r->b->stream_synchronize(r->bd, 0, nullptr);
  }
  template <typename T>
  std::vector<T> Get() {
    std::vector<T> v(static_cast<size_t>(n));
    if (n > 0) r->b->copy_device_to_host(r->bd, 0, h, 0, v.data(), v.size() * sizeof(T), nullptr);
    return v;
  }
};

// Deterministic inputs: small values whose sums and averages are exact.
float ValF(int rank, int64_t i) { return static_cast<float>((i % 13) - 6) * 0.5f + static_cast<float>(rank); }
int32_t ValI(int rank, int64_t i) { return static_cast<int32_t>((i % 97) * (rank + 1) - 50 + rank); }

template <typename T>
T Val(int rank, int64_t i) {
  if constexpr (std::is_same_v<T, float>) return ValF(rank, i);
  return ValI(rank, i);
}

template <typename T>
T Expected(int32_t op, int world, int64_t i) {
  T acc = Val<T>(0, i);
  for (int q = 1; q < world; ++q) {
    const T v = Val<T>(q, i);
    acc = op == BP_REDUCE_MAX ? std::max(acc, v) : static_cast<T>(acc + v);
  }
  if (op == BP_REDUCE_AVG) acc = static_cast<T>(acc / static_cast<T>(world));
  return acc;
}

class VendorSimCollectives : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { plugin_ = new LoadedPlugin(BP_VENDOR_SIM_PLUGIN_PATH); }
  static void TearDownTestSuite() {
    delete plugin_;
    plugin_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(plugin_->handle, nullptr);
    ASSERT_EQ(plugin_->init_status, BP_STATUS_OK) << LastError();
    ASSERT_NE(B().collectives, nullptr) << "vendor_sim installs its collectives on an ABI 1.6 host";
  }
  static const bp_backend_t& B() { return plugin_->backend; }
  static void* BD() { return plugin_->backend.backend_data; }

  static std::vector<unsigned char> Blob(int world) {
    std::vector<unsigned char> blob(BP_COMM_BOOTSTRAP_MAX_BYTES);
    size_t n = blob.size();
    EXPECT_EQ(B().collectives->comm_bootstrap(BD(), 0, world, blob.data(), &n), BP_STATUS_OK) << LastError();
    blob.resize(n);
    return blob;
  }

  // Forks `world` ranks, each joining a new communicator (rank `rank_of(i)`
  // for child i, by default i) and running body; returns the children's exit
  // codes, or -signal for a child killed by one.
  static std::vector<int> Fork(int world, const std::function<int(Rank&)>& body, int children = -1,
                               const std::function<int(int)>& rank_of = nullptr, int64_t join_timeout_ms = 10000,
                               int world_for_comm = -1) {
    const int comm_world = world_for_comm > 0 ? world_for_comm : world;
    const std::vector<unsigned char> blob = Blob(comm_world);
    const int count = children > 0 ? children : world;
    std::vector<pid_t> pids;
    for (int i = 0; i < count; ++i) {
      const pid_t pid = fork();
      if (pid == 0) {
        alarm(60);  // a hang kills the child; the parent reports the signal
        // Each rank is its own host with its own plugin instance, as in a
        // real job (fork kept only this thread: the parent's instance has
        // no device threads here in BP_VENDOR_SIM_ASYNC mode).
        LoadedPlugin* own = new LoadedPlugin(BP_VENDOR_SIM_PLUGIN_PATH);
        if (own->init_status != BP_STATUS_OK || own->backend.collectives == nullptr) {
          std::fprintf(stderr, "child %d: vendor_sim init: %s\n", i, LastError().c_str());
          _exit(99);
        }
        Rank r;
        r.b = &own->backend;
        r.bd = own->backend.backend_data;
        r.rank = rank_of ? rank_of(i) : i;
        r.world = comm_world;
        const bp_status_t st = r.b->collectives->comm_create(r.bd, 0, r.rank, comm_world, blob.data(), blob.size(),
                                                             join_timeout_ms, &r.comm);
        int code;
        if (st != BP_STATUS_OK) {
          std::fprintf(stderr, "rank %d: comm_create: status %d: %s\n", r.rank, st, LastError().c_str());
          code = 100 + st;
        } else {
          code = body(r);
          r.b->collectives->comm_destroy(r.bd, r.comm);
        }
        std::fflush(stderr);
        _exit(code);
      }
      pids.push_back(pid);
    }
    std::vector<int> codes;
    for (pid_t pid : pids) {
      int status = 0;
      waitpid(pid, &status, 0);
      codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status));
    }
    return codes;
  }

  static void ExpectAllPass(const std::vector<int>& codes) {
    for (size_t i = 0; i < codes.size(); ++i) EXPECT_EQ(codes[i], 0) << "rank " << i << " failed (see stderr)";
  }

  static LoadedPlugin* plugin_;
};
LoadedPlugin* VendorSimCollectives::plugin_ = nullptr;

template <typename T>
int AllReduceCase(Rank& r, DLDataType t, int32_t op, int64_t n, bool in_place) {
  Buf in(r, t, n), out(r, t, n);
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = Val<T>(r.rank, i);
  in.Put(v);
  const bp_status_t st = r.Call(BP_COLLECTIVE_ALL_REDUCE, &in.dl, in_place ? &in.dl : &out.dl, op);
  CHILD_CHECK(st == BP_STATUS_OK, "all_reduce op %d n %lld: status %d", op, static_cast<long long>(n), st);
  const std::vector<T> got = in_place ? in.Get<T>() : out.Get<T>();
  for (int64_t i = 0; i < n; ++i) {
    const T want = Expected<T>(op, r.world, i);
    CHILD_CHECK(got[static_cast<size_t>(i)] == want, "all_reduce op %d n %lld: element %lld is %g, expected %g", op,
                static_cast<long long>(n), static_cast<long long>(i), static_cast<double>(got[static_cast<size_t>(i)]),
                static_cast<double>(want));
  }
  return 0;
}

int AllReduces(Rank& r) {
  for (int32_t op : {BP_REDUCE_SUM, BP_REDUCE_MAX, BP_REDUCE_AVG}) {
    for (int64_t n : {int64_t{1}, int64_t{1000}, kBig}) {
      if (AllReduceCase<float>(r, DLDataType{kDLFloat, 32, 1}, op, n, false) != 0) return 1;
      if (AllReduceCase<int32_t>(r, DLDataType{kDLInt, 32, 1}, op, n, n == 1000) != 0) return 1;
    }
  }
  return 0;
}

// bfloat16 sums accumulate in float and round to nearest even once: element
// 0 is 1 + (W-1) * 2^-8, a tie (W=2: to 1.0; W=4: to 1.015625).
int BFloat16Sum(Rank& r) {
  const DLDataType t{kDLBfloat, 16, 1};
  const int64_t n = 1000;
  Buf in(r, t, n), out(r, t, n);
  std::vector<uint16_t> v(n);
  v[0] = r.rank == 0 ? 0x3F80 : 0x3B80;  // 1.0, 2^-8
  for (int64_t i = 1; i < n; ++i) {
    const float f = static_cast<float>(i % 7 + r.rank);  // small integers: exact in bfloat16
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    v[static_cast<size_t>(i)] = static_cast<uint16_t>(bits >> 16);
  }
  in.Put(v);
  CHILD_CHECK(r.Call(BP_COLLECTIVE_ALL_REDUCE, &in.dl, &out.dl, BP_REDUCE_SUM) == BP_STATUS_OK, "bfloat16 sum");
  const std::vector<uint16_t> got = out.Get<uint16_t>();
  const uint16_t want0 = r.world == 2 ? 0x3F80 : r.world == 4 ? 0x3F82 : got[0];
  CHILD_CHECK(got[0] == want0, "bfloat16 element 0 is 0x%04x, expected 0x%04x", got[0], want0);
  for (int64_t i = 1; i < n; ++i) {
    float want = 0;
    for (int q = 0; q < r.world; ++q) want += static_cast<float>(i % 7 + q);
    uint32_t bits = static_cast<uint32_t>(got[static_cast<size_t>(i)]) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    CHILD_CHECK(f == want, "bfloat16 element %lld is %g, expected %g", static_cast<long long>(i), f, want);
  }
  return 0;
}

int BroadcastFromRoot1(Rank& r) {
  const DLDataType t{kDLFloat, 32, 1};
  for (int64_t n : {int64_t{1000}, kBig}) {
    Buf in(r, t, n), out(r, t, n);
    std::vector<float> v(static_cast<size_t>(n), -1.0f);
    if (r.rank == 1)
      for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = ValF(1, i);
    in.Put(v);
    out.Put(std::vector<float>(static_cast<size_t>(n), -2.0f));
    // Root in place for the small case, as torch's broadcast(tensor).
    const bool in_place = n == 1000 && r.rank == 1;
    CHILD_CHECK(r.Call(BP_COLLECTIVE_BROADCAST, r.rank == 1 ? &in.dl : nullptr, in_place ? &in.dl : &out.dl,
                       BP_REDUCE_SUM, 1) == BP_STATUS_OK,
                "broadcast n %lld", static_cast<long long>(n));
    const std::vector<float> got = in_place ? in.Get<float>() : out.Get<float>();
    for (int64_t i = 0; i < n; ++i)
      CHILD_CHECK(got[static_cast<size_t>(i)] == ValF(1, i), "broadcast element %lld", static_cast<long long>(i));
  }
  return 0;
}

int AllGather(Rank& r) {
  const DLDataType t{kDLInt, 32, 1};
  for (int64_t n : {int64_t{1000}, int64_t{300000}}) {
    Buf in(r, t, n), out(r, t, n * r.world);
    std::vector<int32_t> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = ValI(r.rank, i);
    in.Put(v);
    CHILD_CHECK(r.Call(BP_COLLECTIVE_ALL_GATHER, &in.dl, &out.dl) == BP_STATUS_OK, "all_gather");
    const std::vector<int32_t> got = out.Get<int32_t>();
    for (int q = 0; q < r.world; ++q)
      for (int64_t i = 0; i < n; ++i)
        CHILD_CHECK(got[static_cast<size_t>(q * n + i)] == ValI(q, i), "all_gather block %d element %lld", q,
                    static_cast<long long>(i));
  }
  return 0;
}

int ReduceScatter(Rank& r) {
  const DLDataType t{kDLInt, 32, 1};
  for (int64_t n : {int64_t{1000}, int64_t{300000}}) {
    Buf in(r, t, n * r.world), out(r, t, n);
    std::vector<int32_t> v(static_cast<size_t>(n * r.world));
    for (int64_t i = 0; i < n * r.world; ++i) v[static_cast<size_t>(i)] = ValI(r.rank, i);
    in.Put(v);
    CHILD_CHECK(r.Call(BP_COLLECTIVE_REDUCE_SCATTER, &in.dl, &out.dl, BP_REDUCE_SUM) == BP_STATUS_OK, "reduce_scatter");
    const std::vector<int32_t> got = out.Get<int32_t>();
    for (int64_t i = 0; i < n; ++i) {
      int32_t want = 0;
      for (int q = 0; q < r.world; ++q) want += ValI(q, r.rank * n + i);
      CHILD_CHECK(got[static_cast<size_t>(i)] == want, "reduce_scatter element %lld is %d, expected %d",
                  static_cast<long long>(i), got[static_cast<size_t>(i)], want);
    }
  }
  return 0;
}

int AllToAll(Rank& r) {
  const DLDataType t{kDLInt, 32, 1};
  auto val = [](int from, int to, int64_t i) { return static_cast<int32_t>(from * 1000003 + to * 7 + i); };
  for (int64_t n : {int64_t{1000}, int64_t{300000}}) {
    Buf in(r, t, n * r.world), out(r, t, n * r.world);
    std::vector<int32_t> v(static_cast<size_t>(n * r.world));
    for (int b = 0; b < r.world; ++b)
      for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(b * n + i)] = val(r.rank, b, i);
    in.Put(v);
    CHILD_CHECK(r.Call(BP_COLLECTIVE_ALL_TO_ALL, &in.dl, &out.dl) == BP_STATUS_OK, "all_to_all");
    const std::vector<int32_t> got = out.Get<int32_t>();
    for (int b = 0; b < r.world; ++b)
      for (int64_t i = 0; i < n; ++i)
        CHILD_CHECK(got[static_cast<size_t>(b * n + i)] == val(b, r.rank, i), "all_to_all block %d element %lld", b,
                    static_cast<long long>(i));
  }
  return 0;
}

// Rank 0 sends 3 MiB to rank 1, rank 1 answers with 1000 int32; with 4
// ranks, 2 sends to 3 at the same time (pairs do not wait for other ranks).
int SendRecv(Rank& r) {
  const DLDataType f{kDLFloat, 32, 1}, i32{kDLInt, 32, 1};
  if (r.rank == 0 || r.rank == 2) {
    const int peer = r.rank + 1;
    Buf big(r, f, kBig);
    std::vector<float> v(static_cast<size_t>(kBig));
    for (int64_t i = 0; i < kBig; ++i) v[static_cast<size_t>(i)] = ValF(r.rank, i);
    big.Put(v);
    CHILD_CHECK(r.Call(BP_COLLECTIVE_SEND, &big.dl, nullptr, BP_REDUCE_SUM, peer) == BP_STATUS_OK, "send");
    Buf small(r, i32, 1000);
    CHILD_CHECK(r.Call(BP_COLLECTIVE_RECV, nullptr, &small.dl, BP_REDUCE_SUM, peer) == BP_STATUS_OK, "recv back");
    const std::vector<int32_t> got = small.Get<int32_t>();
    for (int64_t i = 0; i < 1000; ++i)
      CHILD_CHECK(got[static_cast<size_t>(i)] == ValI(peer, i), "reply element %lld", static_cast<long long>(i));
  } else if (r.rank == 1 || r.rank == 3) {
    const int peer = r.rank - 1;
    Buf big(r, f, kBig);
    CHILD_CHECK(r.Call(BP_COLLECTIVE_RECV, nullptr, &big.dl, BP_REDUCE_SUM, peer) == BP_STATUS_OK, "recv");
    const std::vector<float> got = big.Get<float>();
    for (int64_t i = 0; i < kBig; ++i)
      CHILD_CHECK(got[static_cast<size_t>(i)] == ValF(peer, i), "received element %lld", static_cast<long long>(i));
    Buf small(r, i32, 1000);
    std::vector<int32_t> v(1000);
    for (int64_t i = 0; i < 1000; ++i) v[static_cast<size_t>(i)] = ValI(r.rank, i);
    small.Put(v);
    CHILD_CHECK(r.Call(BP_COLLECTIVE_SEND, &small.dl, nullptr, BP_REDUCE_SUM, peer) == BP_STATUS_OK, "send back");
  }
  CHILD_CHECK(r.Call(BP_COLLECTIVE_BARRIER, nullptr, nullptr) == BP_STATUS_OK, "barrier after send/recv");
  return 0;
}

// Rank 0's arrival at the barrier, in memory every forked rank shares
// (mapped by the parent before it forks; reset by each test).
std::atomic<int>* Rank0Arrived() {
  static std::atomic<int>* flag = [] {
    void* p = mmap(nullptr, sizeof(std::atomic<int>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : new (p) std::atomic<int>(0);
  }();
  return flag;
}

// Nobody leaves the barrier before the last rank (rank 0) came: each rank
// checks, after leaving, that rank 0 had marked its arrival. The order, not
// a duration, is what is checked; rank 0 comes late (300 ms) only so that a
// barrier that lets ranks through early is caught, not raced past.
int Barrier(Rank& r) {
  std::atomic<int>* arrived = Rank0Arrived();
  CHILD_CHECK(arrived != nullptr, "no shared flag");
  if (r.rank == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    arrived->store(1);
  }
  // The negative control (ctest vendor_sim_collectives_barrier_control_fails):
  // ranks other than 0 pass by as a broken barrier would let them.
  const bool pass_by = r.rank != 0 && std::getenv("BPTEST_BARRIER_PASS_BY") != nullptr;
  CHILD_CHECK(pass_by || r.Call(BP_COLLECTIVE_BARRIER, nullptr, nullptr) == BP_STATUS_OK, "barrier");
  CHILD_CHECK(arrived->load() == 1, "rank %d left the barrier before rank 0 arrived", r.rank);
  return 0;
}

#define FOR_WORLDS(name, fn)                                                 \
  TEST_F(VendorSimCollectives, name##World2) { ExpectAllPass(Fork(2, fn)); } \
  TEST_F(VendorSimCollectives, name##World4) { ExpectAllPass(Fork(4, fn)); }

FOR_WORLDS(AllReduceSumMaxAvgFloat32Int32, AllReduces)
FOR_WORLDS(AllReduceBFloat16RoundsToNearestEven, BFloat16Sum)
FOR_WORLDS(BroadcastFromRoot1, BroadcastFromRoot1)
FOR_WORLDS(AllGather, AllGather)
FOR_WORLDS(ReduceScatter, ReduceScatter)
FOR_WORLDS(AllToAll, AllToAll)
FOR_WORLDS(SendRecvPairs, SendRecv)
TEST_F(VendorSimCollectives, BarrierWorld2) {
  ASSERT_NE(Rank0Arrived(), nullptr);
  Rank0Arrived()->store(0);
  ExpectAllPass(Fork(2, Barrier));
}
TEST_F(VendorSimCollectives, BarrierWorld4) {
  ASSERT_NE(Rank0Arrived(), nullptr);
  Rank0Arrived()->store(0);
  ExpectAllPass(Fork(4, Barrier));
}

// Ranks that disagree on the count all fail with INVALID_ARGUMENT naming
// both descriptors, and the communicator stays usable.
int Mismatch(Rank& r) {
  const DLDataType t{kDLFloat, 32, 1};
  const int64_t n = r.rank == 0 ? 1000 : 999;
  Buf in(r, t, n), out(r, t, n);
  in.Put(std::vector<float>(static_cast<size_t>(n), 1.0f));
  const bp_status_t st = r.Call(BP_COLLECTIVE_ALL_REDUCE, &in.dl, &out.dl, BP_REDUCE_SUM);
  CHILD_CHECK(st == BP_STATUS_INVALID_ARGUMENT, "status %d", st);
  CHILD_CHECK(std::strstr(r.msg,
                          "vendor_sim all_reduce: rank 0 has all_reduce sum of 1000 float32, rank 1 has "
                          "all_reduce sum of 999 float32") != nullptr,
              "message");
  CHILD_CHECK(r.Call(BP_COLLECTIVE_BARRIER, nullptr, nullptr) == BP_STATUS_OK, "barrier after the mismatch");
  return 0;
}
FOR_WORLDS(DescriptorMismatchFailsOnEveryRank, Mismatch)

// The last rank joins, then exits without calling: the others' all_reduce
// fails with DEADLINE_EXCEEDED within its 1500 ms (and does not hang), and
// every later call fails at once.
int DeadRank(Rank& r) {
  if (r.rank == r.world - 1) return 0;
  const DLDataType t{kDLFloat, 32, 1};
  Buf in(r, t, 1000), out(r, t, 1000);
  const auto start = std::chrono::steady_clock::now();
  const bp_status_t st = r.Call(BP_COLLECTIVE_ALL_REDUCE, &in.dl, &out.dl, BP_REDUCE_SUM, -1, 1500);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  CHILD_CHECK(st == BP_STATUS_DEADLINE_EXCEEDED, "status %d", st);
  CHILD_CHECK(ms < 1500 + 3000, "took %lld ms", static_cast<long long>(ms));
  CHILD_CHECK(std::strncmp(r.msg, "vendor_sim all_reduce: rank ", 28) == 0, "message");
  if (r.world == 2) {
    // The one survivor waited itself: the message names the missing rank.
    CHILD_CHECK(std::strstr(r.msg, "waited 1500 ms for rank(s) 1 (dead or never called)") != nullptr, "message");
  }
  const auto again = std::chrono::steady_clock::now();
  CHILD_CHECK(r.Call(BP_COLLECTIVE_BARRIER, nullptr, nullptr) == BP_STATUS_DEADLINE_EXCEEDED, "later call");
  CHILD_CHECK(std::strstr(r.msg, "broken") != nullptr, "later message");
  const auto later_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - again).count();
  CHILD_CHECK(later_ms < 500, "the later call took %lld ms", static_cast<long long>(later_ms));
  return 0;
}
FOR_WORLDS(RankThatNeverCallsTimesOut, DeadRank)

// Every dtype with every reduction on two ranks; AVG on bool is
// UNIMPLEMENTED on every rank.
template <typename T>
int SweepType(Rank& r, DLDataType t) {
  const int64_t n = 6;
  for (int32_t op : {BP_REDUCE_SUM, BP_REDUCE_PROD, BP_REDUCE_MIN, BP_REDUCE_MAX, BP_REDUCE_AVG}) {
    const bool is_bool = t.code == BP_DTYPE_CODE_BOOL;
    Buf in(r, t, n), out(r, t, n);
    std::vector<T> v(n);
    for (int64_t i = 0; i < n; ++i)
      v[static_cast<size_t>(i)] = static_cast<T>(is_bool ? (i + r.rank) % 2 : i - 2 + 3 * r.rank);
    in.Put(v);
    const bp_status_t st = r.Call(BP_COLLECTIVE_ALL_REDUCE, &in.dl, &out.dl, op);
    if (is_bool && op == BP_REDUCE_AVG) {
      CHILD_CHECK(st == BP_STATUS_UNIMPLEMENTED, "bool avg: status %d", st);
      continue;
    }
    CHILD_CHECK(st == BP_STATUS_OK, "code %d bits %d op %d: status %d", t.code, t.bits, op, st);
    const std::vector<T> got = out.Get<T>();
    for (int64_t i = 0; i < n; ++i) {
      double a = 0, b = 0;
      if (is_bool) {
        a = (i + 0) % 2, b = (i + 1) % 2;
      } else {
        a = static_cast<double>(static_cast<T>(i - 2)), b = static_cast<double>(static_cast<T>(i - 2 + 3));
      }
      double want = op == BP_REDUCE_SUM    ? a + b
                    : op == BP_REDUCE_PROD ? a * b
                    : op == BP_REDUCE_MIN  ? std::min(a, b)
                    : op == BP_REDUCE_MAX  ? std::max(a, b)
                                           : (a + b) / 2;
      if (is_bool) want = (op == BP_REDUCE_PROD || op == BP_REDUCE_MIN) ? (a != 0 && b != 0) : (a != 0 || b != 0);
      if (op == BP_REDUCE_AVG && !std::is_floating_point_v<T>) want = std::trunc(want);
      CHILD_CHECK(static_cast<double>(got[static_cast<size_t>(i)]) == want,
                  "code %d bits %d op %d element %lld: %g, expected %g", t.code, t.bits, op, static_cast<long long>(i),
                  static_cast<double>(got[static_cast<size_t>(i)]), want);
    }
  }
  return 0;
}

int Sweep(Rank& r) {
  if (SweepType<uint8_t>(r, DLDataType{BP_DTYPE_CODE_BOOL, 8, 1}) != 0) return 1;
  if (SweepType<int8_t>(r, DLDataType{kDLInt, 8, 1}) != 0) return 1;
  if (SweepType<int16_t>(r, DLDataType{kDLInt, 16, 1}) != 0) return 1;
  if (SweepType<int64_t>(r, DLDataType{kDLInt, 64, 1}) != 0) return 1;
  if (SweepType<double>(r, DLDataType{kDLFloat, 64, 1}) != 0) return 1;
  // uint8 from values >= 0 only (i - 2 wraps: the sweep's a*b would not).
  // float16: 1.0 + 2.0 = 3.0, 1.0 * 2.0 = 2.0.
  const DLDataType h{kDLFloat, 16, 1};
  Buf in(r, h, 1), out(r, h, 1);
  in.Put(std::vector<uint16_t>{static_cast<uint16_t>(r.rank == 0 ? 0x3C00 : 0x4000)});
  CHILD_CHECK(r.Call(BP_COLLECTIVE_ALL_REDUCE, &in.dl, &out.dl, BP_REDUCE_SUM) == BP_STATUS_OK, "float16 sum");
  CHILD_CHECK(out.Get<uint16_t>()[0] == 0x4200, "float16 1 + 2 is 0x%04x", out.Get<uint16_t>()[0]);
  CHILD_CHECK(r.Call(BP_COLLECTIVE_ALL_REDUCE, &in.dl, &out.dl, BP_REDUCE_AVG) == BP_STATUS_OK, "float16 avg");
  CHILD_CHECK(out.Get<uint16_t>()[0] == 0x3E00, "float16 (1 + 2) / 2 is 0x%04x", out.Get<uint16_t>()[0]);
  return 0;
}
TEST_F(VendorSimCollectives, EveryDtypeAndReductionWorld2) { ExpectAllPass(Fork(2, Sweep)); }

TEST_F(VendorSimCollectives, JoinTimesOutNamingTheMissingRank) {
  const std::vector<unsigned char> blob = Blob(2);
  bp_device_comm_t comm = nullptr;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(B().collectives->comm_create(BD(), 0, 0, 2, blob.data(), blob.size(), 300, &comm),
            BP_STATUS_DEADLINE_EXCEEDED);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  EXPECT_EQ(comm, nullptr);
  EXPECT_NE(LastError().find("missing rank(s) 1"), std::string::npos) << LastError();
}

TEST_F(VendorSimCollectives, RejectsForeignBlobsAndOtherWorldSizes) {
  std::vector<unsigned char> blob = Blob(2);
  bp_device_comm_t comm = nullptr;
  EXPECT_EQ(B().collectives->comm_create(BD(), 0, 1, 3, blob.data(), blob.size(), 300, &comm),
            BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("rank 1 has world size 3, rank 0 bootstrapped the communicator for 2"), std::string::npos)
      << LastError();
  blob[0] ^= 0xff;  // the magic
  EXPECT_EQ(B().collectives->comm_create(BD(), 0, 1, 2, blob.data(), blob.size(), 300, &comm),
            BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("not a vendor_sim bootstrap blob"), std::string::npos) << LastError();
  EXPECT_EQ(B().collectives->comm_create(BD(), 0, 1, 2, blob.data(), 7, 300, &comm), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(comm, nullptr);
}

// Two processes claim rank 1 of a world of 3 (rank 2 never comes): one is
// refused with INVALID_ARGUMENT, the other two time out.
TEST_F(VendorSimCollectives, RankHeldByAnotherProcessIsRefused) {
  const std::vector<int> codes = Fork(
      3, [](Rank&) { return 0; }, 3, [](int i) { return i == 0 ? 0 : 1; }, 1500);
  int refused = 0, timed_out = 0;
  for (int c : codes) {
    refused += c == 100 + BP_STATUS_INVALID_ARGUMENT;
    timed_out += c == 100 + BP_STATUS_DEADLINE_EXCEEDED;
  }
  EXPECT_EQ(refused, 1);
  EXPECT_EQ(timed_out, 2);
}

// BP_VENDOR_SIM_COLLECTIVES: "0" leaves the slot NULL (the host's Gloo path);
// "wrong" installs an all_reduce off by one on rank 0; anything else fails
// init; a host whose bp_backend_t predates 1.6 never sees the slot.
TEST_F(VendorSimCollectives, EnvironmentSwitchAndOlderHosts) {
  {
    setenv("BP_VENDOR_SIM_COLLECTIVES", "0", 1);
    LoadedPlugin off(BP_VENDOR_SIM_PLUGIN_PATH);
    unsetenv("BP_VENDOR_SIM_COLLECTIVES");
    ASSERT_EQ(off.init_status, BP_STATUS_OK) << LastError();
    EXPECT_EQ(off.backend.collectives, nullptr);
  }
  {
    setenv("BP_VENDOR_SIM_COLLECTIVES", "bogus", 1);
    LoadedPlugin bad(BP_VENDOR_SIM_PLUGIN_PATH);
    unsetenv("BP_VENDOR_SIM_COLLECTIVES");
    EXPECT_EQ(bad.init_status, BP_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(LastError().find("BP_VENDOR_SIM_COLLECTIVES='bogus'"), std::string::npos) << LastError();
  }
  {
    FakeHost old;
    ASSERT_EQ(old.Init(plugin_->entry, offsetof(bp_backend_t, collectives)), BP_STATUS_OK) << LastError();
    EXPECT_EQ(old.backend().collectives, nullptr);
  }
  // The ranks init their own instance (Fork) with the variable set.
  setenv("BP_VENDOR_SIM_COLLECTIVES", "wrong", 1);
  const std::vector<int> codes = Fork(2, [](Rank& r) {
    const DLDataType t{kDLFloat, 32, 1};
    Buf in(r, t, 10), out(r, t, 10);
    in.Put(std::vector<float>(10, 1.0f));
    CHILD_CHECK(r.Call(BP_COLLECTIVE_ALL_REDUCE, &in.dl, &out.dl, BP_REDUCE_SUM) == BP_STATUS_OK, "all_reduce");
    const std::vector<float> got = out.Get<float>();
    CHILD_CHECK(got[0] == (r.rank == 0 ? 3.0f : 2.0f), "element 0 is %g", got[0]);
    CHILD_CHECK(got[1] == 2.0f, "element 1 is %g", got[1]);
    return 0;
  });
  unsetenv("BP_VENDOR_SIM_COLLECTIVES");
  ExpectAllPass(codes);
}

}  // namespace
