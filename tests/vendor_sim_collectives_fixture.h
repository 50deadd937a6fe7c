// The fixture of vendor_sim's collectives tests (vendor_sim_collectives_test.cpp:
// every kind's results; vendor_sim_collectives_faults_test.cpp: failures):
// the plugin through the fake host, Fork() making 2 or 4 ranks in child
// processes that join one communicator over a shared-memory segment, and
// what a rank body uses (Rank, Buf, CHILD_CHECK, deterministic values).
//
// Children report through their exit code (0: every check held) and print
// what failed to stderr; each sets alarm() so a hang kills it instead of
// the test run (ctest's TIMEOUT is the outer net).
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <type_traits>
#include <vector>

#include "backplane/collectives.h"
#include "fake_host.h"

inline constexpr int64_t kBig = (3 << 20) / 4 + 5;  // float32/int32 elements: 3 MiB and a partial chunk
inline constexpr int64_t kTimeoutMs = 20000;        // for calls that must succeed

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
inline float ValF(int rank, int64_t i) { return static_cast<float>((i % 13) - 6) * 0.5f + static_cast<float>(rank); }
inline int32_t ValI(int rank, int64_t i) { return static_cast<int32_t>((i % 97) * (rank + 1) - 50 + rank); }

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
  static void SetUpTestSuite() { plugin_ = new bp_test::LoadedPlugin(BP_VENDOR_SIM_PLUGIN_PATH); }
  static void TearDownTestSuite() {
    delete plugin_;
    plugin_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(plugin_->handle, nullptr);
    ASSERT_EQ(plugin_->init_status, BP_STATUS_OK) << bp_test::LastError();
    ASSERT_NE(B().collectives, nullptr) << "vendor_sim installs its collectives on an ABI 1.6 host";
  }
  static const bp_backend_t& B() { return plugin_->backend; }
  static void* BD() { return plugin_->backend.backend_data; }

  static std::vector<unsigned char> Blob(int world) {
    std::vector<unsigned char> blob(BP_COMM_BOOTSTRAP_MAX_BYTES);
    size_t n = blob.size();
    EXPECT_EQ(B().collectives->comm_bootstrap(BD(), 0, world, blob.data(), &n), BP_STATUS_OK) << bp_test::LastError();
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
        bp_test::LoadedPlugin* own = new bp_test::LoadedPlugin(BP_VENDOR_SIM_PLUGIN_PATH);
        if (own->init_status != BP_STATUS_OK || own->backend.collectives == nullptr) {
          std::fprintf(stderr, "child %d: vendor_sim init: %s\n", i, bp_test::LastError().c_str());
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
          std::fprintf(stderr, "rank %d: comm_create: status %d: %s\n", r.rank, st, bp_test::LastError().c_str());
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

  inline static bp_test::LoadedPlugin* plugin_ = nullptr;
};

#define FOR_WORLDS(name, fn)                                                 \
  TEST_F(VendorSimCollectives, name##World2) { ExpectAllPass(Fork(2, fn)); } \
  TEST_F(VendorSimCollectives, name##World4) { ExpectAllPass(Fork(4, fn)); }
