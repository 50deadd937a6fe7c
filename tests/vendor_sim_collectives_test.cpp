// vendor_sim's native collectives (ABI 1.6, samples/vendor_plugin/
// collectives.h) through the fake host: 2 and 4 ranks (forked processes,
// vendor_sim_collectives_fixture.h) check every kind's results, chunking
// (3 MiB tensors through 1 MiB slots) and every dtype with every reduction.
// Agreement checks and failures: vendor_sim_collectives_faults_test.cpp.
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <new>
#include <thread>

#include "vendor_sim_collectives_fixture.h"

using namespace bp_test;

namespace {

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

}  // namespace
