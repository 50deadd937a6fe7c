// vendor_sim's collectives when something goes wrong (fixture:
// vendor_sim_collectives_fixture.h): ranks that disagree on a descriptor, a
// rank that never calls (DEADLINE_EXCEEDED on the others, within the call's
// timeout), a join that times out, foreign bootstrap blobs, a rank claimed
// twice, and the plugin's environment switch (including its wrong
// all-reduce) and older hosts.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

#include "vendor_sim_collectives_fixture.h"

using namespace bp_test;

namespace {

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
