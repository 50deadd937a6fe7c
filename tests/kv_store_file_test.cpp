// bp_kv_store_file_create against a hostile directory (issue 42 item 11):
// the plugin path rules apply to the store's directory, and no write follows
// a link another local user planted there.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "bp_test_util.h"

namespace {

class KvStoreFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/bp_kv_store_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override {
    if (store_ != nullptr) bp_kv_store_file_destroy(store_);
    std::system(("rm -rf " + root_).c_str());
  }
  // The status of creating a store on `dir`; the message in *msg.
  bp_status_t Create(const std::string& dir, std::string* msg) {
    if (store_ != nullptr) bp_kv_store_file_destroy(store_);
    store_ = nullptr;
    const bp_status_t st = bp_kv_store_file_create(dir.c_str(), &store_);
    *msg = bp_last_error_message();
    return st;
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::string root_;
  bp_kv_store_t* store_ = nullptr;
};

TEST_F(KvStoreFileTest, OwnDirectoryWorks) {
  std::string msg;
  ASSERT_EQ(Create(root_ + "/new", &msg), BP_STATUS_OK) << msg;
  struct stat sb;
  ASSERT_EQ(stat((root_ + "/new").c_str(), &sb), 0);
  EXPECT_EQ(sb.st_mode & 0777, 0700u);
  ASSERT_EQ(store_->set(store_->user_data, "a/key", "hello", 5), BP_STATUS_OK) << bp_last_error_message();
  char buf[16] = {};
  size_t n = 0;
  ASSERT_EQ(store_->get(store_->user_data, "a/key", buf, sizeof buf, &n, 1000), BP_STATUS_OK);
  EXPECT_EQ(std::string(buf, n), "hello");
  // A sticky world-writable directory (as /tmp) is accepted.
  ASSERT_EQ(mkdir((root_ + "/sticky").c_str(), 0700), 0);
  ASSERT_EQ(chmod((root_ + "/sticky").c_str(), 01777), 0);
  EXPECT_EQ(Create(root_ + "/sticky", &msg), BP_STATUS_OK) << msg;
}

TEST_F(KvStoreFileTest, RefusesWorldWritableDirectoryWithoutStickyBit) {
  const std::string dir = root_ + "/open";
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
  std::string msg;
  EXPECT_EQ(Create(dir, &msg), BP_STATUS_PERMISSION_DENIED) << msg;
  EXPECT_THAT(msg, ::testing::HasSubstr(dir));
  EXPECT_THAT(msg, ::testing::HasSubstr("world-writable without the sticky bit"));
  EXPECT_EQ(store_, nullptr);
}

TEST_F(KvStoreFileTest, RefusesDirectoryOwnedByAnotherUser) {
  const std::string dir = root_ + "/foreign";
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  if (chown(dir.c_str(), 65534, 65534) != 0) {
    GTEST_SKIP() << "cannot give a directory to uid 65534 (needs root): " << std::strerror(errno);
  }
  std::string msg;
  EXPECT_EQ(Create(dir, &msg), BP_STATUS_PERMISSION_DENIED) << msg;
  EXPECT_THAT(msg, ::testing::HasSubstr(dir));
  EXPECT_THAT(msg, ::testing::HasSubstr("owned by uid 65534"));
}

TEST_F(KvStoreFileTest, RefusesSymbolicLinkAndNonDirectory) {
  ASSERT_EQ(mkdir((root_ + "/real").c_str(), 0700), 0);
  ASSERT_EQ(symlink((root_ + "/real").c_str(), (root_ + "/link").c_str()), 0);
  std::string msg;
  EXPECT_EQ(Create(root_ + "/link", &msg), BP_STATUS_PERMISSION_DENIED) << msg;
  EXPECT_THAT(msg, ::testing::HasSubstr(root_ + "/link"));
  EXPECT_THAT(msg, ::testing::HasSubstr("symbolic link"));

  std::ofstream(root_ + "/file") << "not a directory\n";
  EXPECT_EQ(Create(root_ + "/file", &msg), BP_STATUS_INVALID_ARGUMENT) << msg;
  EXPECT_THAT(msg, ::testing::HasSubstr(root_ + "/file"));
  EXPECT_THAT(msg, ::testing::HasSubstr("not a directory"));
  EXPECT_EQ(Read(root_ + "/file"), "not a directory\n");
}

// A local user plants links where the store writes: at the temporary name
// the old store used (<key>.tmp.<pid>) and at the key's own name. The job's
// set must write neither victim, and a get must not read through a link.
TEST_F(KvStoreFileTest, PlantedLinksNeverWriteTheirTarget) {
  const std::string dir = root_ + "/store";
  const std::string victim = root_ + "/victim";
  const std::string victim2 = root_ + "/victim2";
  std::ofstream(victim) << "precious\n";
  std::ofstream(victim2) << "precious too\n";
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(symlink(victim.c_str(), (dir + "/key.tmp." + std::to_string(getpid())).c_str()), 0);
  ASSERT_EQ(symlink(victim.c_str(), (dir + "/other").c_str()), 0);
  std::string msg;
  ASSERT_EQ(Create(dir, &msg), BP_STATUS_OK) << msg;
  ASSERT_EQ(store_->set(store_->user_data, "key", "job data", 8), BP_STATUS_OK) << bp_last_error_message();
  EXPECT_EQ(Read(victim), "precious\n");
  char buf[16] = {};
  size_t n = 0;
  ASSERT_EQ(store_->get(store_->user_data, "key", buf, sizeof buf, &n, 1000), BP_STATUS_OK);
  EXPECT_EQ(std::string(buf, n), "job data");
  // A link at a key's name is not read through...
  EXPECT_EQ(store_->get(store_->user_data, "other", buf, sizeof buf, &n, 1000), BP_STATUS_UNAVAILABLE);
  EXPECT_THAT(std::string(bp_last_error_message()), ::testing::HasSubstr("symbolic link"));
  // ...and a set replaces the link instead of writing its target.
  ASSERT_EQ(symlink(victim2.c_str(), (dir + "/third").c_str()), 0);
  ASSERT_EQ(store_->set(store_->user_data, "third", "x", 1), BP_STATUS_OK) << bp_last_error_message();
  EXPECT_EQ(Read(victim2), "precious too\n");
  struct stat sb;
  ASSERT_EQ(lstat((dir + "/third").c_str(), &sb), 0);
  EXPECT_TRUE(S_ISREG(sb.st_mode));
}

// A FIFO at a key's name (another user's trap) must not block the reader.
TEST_F(KvStoreFileTest, NonRegularKeyFileIsAnError) {
  const std::string dir = root_ + "/store";
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(mkfifo((dir + "/fifo").c_str(), 0600), 0);
  std::string msg;
  ASSERT_EQ(Create(dir, &msg), BP_STATUS_OK) << msg;
  char buf[4];
  size_t n = 0;
  EXPECT_EQ(store_->get(store_->user_data, "fifo", buf, sizeof buf, &n, 1000), BP_STATUS_UNAVAILABLE);
  EXPECT_THAT(std::string(bp_last_error_message()), ::testing::HasSubstr("not a regular file"));
}

}  // namespace
