// Two jobs sharing one bootstrap store and prefix (issue 42 item 18): they
// used to pair up silently; now the second job's communicator creation fails
// at once with "prefix ... already used by another job", while another
// prefix on the same store still works. Two in-process groups of two ranks
// (threads) on the cpu device, over one file store directory.
// bp-test: public-api
#include <gmock/gmock.h>

#include <string>
#include <thread>
#include <vector>

#include "bp_test_util.h"
#include "temp_dir.h"

using namespace bptest;
using ::testing::HasSubstr;

namespace {

struct RankResult {
  bp_status_t rc = BP_STATUS_INTERNAL;
  std::string message;
  bp_comm_t* comm = nullptr;
};

class CommPrefixClaimTest : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    ASSERT_EQ(bp_kv_store_file_create(dir_.path().c_str(), &store_), BP_STATUS_OK) << LastError();
  }
  void TearDown() override {
    for (bp_comm_t* c : comms_) bp_comm_destroy(c);
    bp_kv_store_file_destroy(store_);
    ContextTest::TearDown();
  }
  // Every rank of a `world`-rank group joins with `prefix`, one thread each.
  std::vector<RankResult> Group(const char* prefix, int world) {
    std::vector<RankResult> out(static_cast<size_t>(world));
    std::vector<std::thread> threads;
    for (int r = 0; r < world; ++r) {
      threads.emplace_back([&, r] {
        bp_comm_options_t o{};
        o.struct_size = sizeof o;
        o.rank = r;
        o.world_size = world;
        o.store = store_;
        o.prefix = prefix;
        o.timeout_ms = 5000;
        o.engine = BP_COMM_ENGINE_GLOO;
        RankResult& res = out[static_cast<size_t>(r)];
        res.rc = bp_comm_create(ctx_, bp_device_t{0, 0}, &o, &res.comm);
        res.message = bp_last_error_message();
      });
    }
    for (auto& t : threads) t.join();
    for (auto& r : out) {
      if (r.comm != nullptr) comms_.push_back(r.comm);
    }
    return out;
  }

  TempDir dir_;
  bp_kv_store_t* store_ = nullptr;
  std::vector<bp_comm_t*> comms_;
};

TEST_F(CommPrefixClaimTest, ASecondJobWithTheSamePrefixIsRefusedLoudly) {
  auto first = Group("job", 2);
  for (auto& r : first) {
    if (r.rc == BP_STATUS_UNIMPLEMENTED) GTEST_SKIP() << "no Gloo in this build: " << r.message;
    ASSERT_EQ(r.rc, BP_STATUS_OK) << r.message;
  }
  auto second = Group("job", 2);
  for (auto& r : second) {
    EXPECT_EQ(r.rc, BP_STATUS_FAILED_PRECONDITION) << r.message;
    EXPECT_THAT(r.message, HasSubstr("prefix \"job\" of the key-value store is already used by another job"));
  }
  auto other = Group("job2", 2);  // another prefix on the same store works
  for (auto& r : other) EXPECT_EQ(r.rc, BP_STATUS_OK) << r.message;
}

}  // namespace
