// The ownership and permission checks on the way to a plugin file (issue 23
// item 10): every directory up to the root, symbolic links on the way, and
// the owner of the file, with BACKPLANE_ALLOW_INSECURE_PLUGINS=1 as opt-out.
// bp-test: public-api (temp_dir.h is a test helper, not a core header)
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "bp_test_util.h"
#include "temp_dir.h"

using namespace bptest;
using ::testing::HasSubstr;

namespace {

constexpr uid_t kNobody = 65534;

class PluginPathChecksTest : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    ASSERT_FALSE(dir_.path().empty());
  }
  void TearDown() override {
    unsetenv("BACKPLANE_ALLOW_INSECURE_PLUGINS");
    ContextTest::TearDown();
  }
  // <dir>/<sub> with `mode` (chmod, not subject to the umask).
  std::string MakeDir(const std::string& sub, mode_t mode) {
    const std::string d = dir_.path() + "/" + sub;
    EXPECT_EQ(mkdir(d.c_str(), 0700), 0) << d;
    EXPECT_EQ(chmod(d.c_str(), mode), 0) << d;
    return d;
  }
  bp_status_t Load(const std::string& path) { return bp_plugin_load(ctx_, path.c_str(), nullptr); }
  // Changing owners needs root; elsewhere those cases cannot be set up.
  static bool CanChown() { return geteuid() == 0; }

  TempDir dir_;
};

TEST_F(PluginPathChecksTest, WorldWritableDirectoryAboveThePluginIsRefused) {
  MakeDir("open", 0777);
  MakeDir("open/lib", 0755);
  const std::string lib = dir_.Copy(PluginPath("bp_testdev"), "open/lib/libbp_testdev.so");
  EXPECT_EQ(Load(lib), BP_STATUS_PERMISSION_DENIED);
  EXPECT_THAT(LastError(), HasSubstr("directory '" + dir_.path() + "/open' is world-writable without the sticky bit"));
  EXPECT_THAT(LastError(), HasSubstr("BACKPLANE_ALLOW_INSECURE_PLUGINS=1"));
  ASSERT_EQ(setenv("BACKPLANE_ALLOW_INSECURE_PLUGINS", "1", 1), 0);
  EXPECT_EQ(Load(lib), BP_STATUS_OK) << LastError();
}

TEST_F(PluginPathChecksTest, StickyWorldWritableDirectoryIsAccepted) {
  // Like /tmp: others may create files there but not replace this one.
  MakeDir("sticky", 01777);
  const std::string lib = dir_.Copy(PluginPath("bp_testdev"), "sticky/libbp_testdev.so");
  EXPECT_EQ(Load(lib), BP_STATUS_OK) << LastError();
}

TEST_F(PluginPathChecksTest, SymbolicLinkInAWorldWritableDirectoryIsRefused) {
  const std::string open = MakeDir("open", 0777);
  const std::string link = open + "/libbp_testdev.so";
  ASSERT_EQ(symlink(PluginPath("bp_testdev").c_str(), link.c_str()), 0);
  EXPECT_EQ(Load(link), BP_STATUS_PERMISSION_DENIED);
  EXPECT_THAT(LastError(), HasSubstr("directory '" + open + "' is world-writable"));
}

TEST_F(PluginPathChecksTest, SymbolicLinkOwnedByAnotherUserIsRefused) {
  if (!CanChown()) GTEST_SKIP() << "needs root to give a symbolic link to another user";
  const std::string sticky = MakeDir("sticky", 01777);
  const std::string link = sticky + "/libbp_testdev.so";
  ASSERT_EQ(symlink(PluginPath("bp_testdev").c_str(), link.c_str()), 0);
  ASSERT_EQ(lchown(link.c_str(), kNobody, kNobody), 0);
  EXPECT_EQ(Load(link), BP_STATUS_PERMISSION_DENIED);
  EXPECT_THAT(LastError(), HasSubstr("symbolic link '" + link + "' is owned by uid 65534"));
}

TEST_F(PluginPathChecksTest, PluginOrDirectoryOwnedByAnotherUserIsRefused) {
  if (!CanChown()) GTEST_SKIP() << "needs root to give a file to another user";
  const std::string lib = dir_.Copy(PluginPath("bp_testdev"), "libbp_testdev.so");
  ASSERT_EQ(chown(lib.c_str(), kNobody, kNobody), 0);
  EXPECT_EQ(Load(lib), BP_STATUS_PERMISSION_DENIED);
  EXPECT_THAT(LastError(), HasSubstr("is owned by uid 65534, neither root nor the running user"));

  const std::string theirs = MakeDir("theirs", 0755);
  const std::string lib2 = dir_.Copy(PluginPath("bp_testdev"), "theirs/libbp_testdev.so");
  ASSERT_EQ(chown(theirs.c_str(), kNobody, kNobody), 0);
  EXPECT_EQ(Load(lib2), BP_STATUS_PERMISSION_DENIED);
  EXPECT_THAT(LastError(), HasSubstr("directory '" + theirs + "' is owned by uid 65534"));
  ASSERT_EQ(setenv("BACKPLANE_ALLOW_INSECURE_PLUGINS", "1", 1), 0);
  EXPECT_EQ(Load(lib2), BP_STATUS_OK) << LastError();
}

}  // namespace
