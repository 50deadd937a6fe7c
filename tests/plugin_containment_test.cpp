// Plugin containment (issue 23 items 5, 12; issue 21's registration policy):
// a plugin file loaded twice, a plugin calling back into the loader, calls on
// a destroyed context, plugin strings without bounds, operators in another
// vendor's namespace, and kernels registered under unknown or variant names.
// bp-test: public-api (temp_dir.h is a test helper, not a core header)
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "bp_test_util.h"
#include "temp_dir.h"


using namespace bptest;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

class PluginContainmentTest : public ContextTest {
 protected:
  void TearDown() override {
    for (const char* v : {"BP_FAULT", "BP_FAULT_TRACE", "BP_FAULT_CTX"}) unsetenv(v);
    ContextTest::TearDown();
  }
  // The lines the fault plugin traced (constructor, init, shutdown).
  static std::string ReadTrace(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
};

// ---- item 5: the same file twice ---------------------------------------------

TEST_F(PluginContainmentTest, SameFileThroughAnyPathIsRefusedBeforeItsCodeRuns) {
  // The links live next to the build's plugins: a hard link needs the same file system.
  TempDir dir(BP_TEST_PLUGIN_DIR);
  ASSERT_FALSE(dir.path().empty());
  const std::string trace = dir.path() + "/trace.txt";
  ASSERT_EQ(setenv("BP_FAULT_TRACE", trace.c_str(), 1), 0);
  const std::string lib = PluginPath("bp_fault");
  ASSERT_EQ(bp_plugin_load(ctx_, lib.c_str(), nullptr), BP_STATUS_OK) << LastError();
  const std::string after_first = ReadTrace(trace);
  EXPECT_THAT(after_first, HasSubstr("init"));

  char* real = realpath(lib.c_str(), nullptr);
  ASSERT_NE(real, nullptr);
  const std::string loaded = real;  // the loaded plugin's path as the loader keeps it
  std::free(real);
  const std::string sym = dir.path() + "/libsym.so", hard = dir.path() + "/libhard.so";
  ASSERT_EQ(symlink(lib.c_str(), sym.c_str()), 0);
  ASSERT_EQ(link(lib.c_str(), hard.c_str()), 0);
  for (const std::string& path : {lib, sym, hard}) {
    SCOPED_TRACE(path);
    EXPECT_EQ(bp_plugin_load(ctx_, path.c_str(), nullptr), BP_STATUS_ALREADY_EXISTS);
    EXPECT_THAT(LastError(), HasSubstr("same file"));
    EXPECT_THAT(LastError(), HasSubstr("bp_plugin_load('" + path + "')"));  // the path given
    EXPECT_THAT(LastError(), HasSubstr("as the plugin '" + loaded + "', already loaded"));
  }
  // No constructor, init or shutdown ran for the refused loads.
  EXPECT_EQ(ReadTrace(trace), after_first);
  // The loaded copy still works.
  bp_device_t dev{};
  ASSERT_EQ(bp_device_parse(ctx_, "fault:0", &dev), BP_STATUS_OK) << LastError();
  bp_tensor_t* a = F32(dev, {2}, {1, 2});
  EXPECT_EQ(Read(Call("add.Tensor", {T(a), T(a), I(1)})), (std::vector<float>{2, 4}));
}

// ---- item 12: destroyed context, re-entrant load, caps, namespaces ------------

TEST(PluginContainmentContextTest, OpFindOnADestroyedContextIsRefused) {
  bp_context_t* ctx = nullptr;
  ASSERT_EQ(bp_context_create(nullptr, &ctx), BP_STATUS_OK);
  bp_context_destroy(ctx);
  bp_op_t* op = nullptr;
  EXPECT_EQ(bp_op_find(ctx, "add.Tensor", &op), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("bp_op_find: context is not a live context"));
  EXPECT_EQ(op, nullptr);
  int32_t n = -1;
  EXPECT_EQ(bp_op_count(ctx, &n), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(bp_op_at(ctx, 0, &op), BP_STATUS_INVALID_ARGUMENT);
}

TEST_F(PluginContainmentTest, PluginLoadingFromItsInitIsRefusedNotADeadlock) {
  char ctx_text[32];
  std::snprintf(ctx_text, sizeof(ctx_text), "%p", static_cast<void*>(ctx_));
  ASSERT_EQ(setenv("BP_FAULT_CTX", ctx_text, 1), 0);
  ASSERT_EQ(setenv("BP_FAULT", "init_reenter", 1), 0);
  EXPECT_EQ(bp_plugin_load(ctx_, PluginPath("bp_fault").c_str(), nullptr), BP_STATUS_FAILED_PRECONDITION);
  EXPECT_THAT(LastError(), HasSubstr("bp_plugin_load"));
  EXPECT_THAT(LastError(), HasSubstr("libbp_fault.so' is being loaded into this context"));
  // The context is not wedged: the same plugin loads cleanly afterwards.
  unsetenv("BP_FAULT");
  EXPECT_EQ(bp_plugin_load(ctx_, PluginPath("bp_fault").c_str(), nullptr), BP_STATUS_OK) << LastError();
}

TEST_F(PluginContainmentTest, LongPluginStringsAreTruncatedOrRefused) {
  ASSERT_EQ(setenv("BP_FAULT", "long_strings", 1), 0);
  ASSERT_EQ(bp_plugin_load(ctx_, PluginPath("bp_fault").c_str(), nullptr), BP_STATUS_OK) << LastError();
  int32_t id = -1;
  ASSERT_EQ(bp_backend_find(ctx_, "fault", &id), BP_STATUS_OK);
  bp_backend_info_t info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(bp_backend_info(ctx_, id, &info), BP_STATUS_OK) << LastError();
  ASSERT_NE(info.version, nullptr);
  ASSERT_NE(info.no_device_reason, nullptr);
  EXPECT_EQ(std::string(info.version).size(), size_t{BP_KERNEL_ERROR_MAX_MESSAGE});
  EXPECT_EQ(std::string(info.no_device_reason).size(), size_t{BP_KERNEL_ERROR_MAX_MESSAGE});

  for (const char* fault : {"long_name", "long_op_name"}) {
    SCOPED_TRACE(fault);
    bp_context_t* ctx = nullptr;
    ASSERT_EQ(bp_context_create(nullptr, &ctx), BP_STATUS_OK);
    ASSERT_EQ(setenv("BP_FAULT", fault, 1), 0);
    EXPECT_EQ(bp_plugin_load(ctx, PluginPath("bp_fault").c_str(), nullptr), BP_STATUS_INVALID_ARGUMENT);
    EXPECT_THAT(LastError(), HasSubstr(std::to_string(BP_MAX_NAME_LENGTH)));
    EXPECT_LT(LastError().size(), 1000u);  // the message quotes a bounded prefix, not the whole string
    bp_context_destroy(ctx);
  }
}

TEST_F(PluginContainmentTest, OperatorsInAnotherVendorsNamespaceAreRefused) {
  for (const char* fault : {"foreign_namespace", "foreign_namespace_late"}) {
    SCOPED_TRACE(fault);
    ASSERT_EQ(setenv("BP_FAULT", fault, 1), 0);
    EXPECT_EQ(bp_plugin_load(ctx_, PluginPath("bp_fault").c_str(), nullptr), BP_STATUS_PERMISSION_DENIED);
    EXPECT_THAT(LastError(), HasSubstr("operator 'testdev::twice' is in namespace 'testdev'"));
    EXPECT_THAT(LastError(), HasSubstr("'fault::<name>'"));
  }
  // The owner's own definition is not blocked.
  unsetenv("BP_FAULT");
  LoadTestdev();
  bp_op_t* op = nullptr;
  EXPECT_EQ(bp_op_find(ctx_, "testdev::twice", &op), BP_STATUS_OK) << LastError();
}

// ---- issue 21: registration policy -------------------------------------------

TEST_F(PluginContainmentTest, UnknownOperatorWarnsWithSuggestionsAndIsSkipped) {
  ASSERT_EQ(setenv("BP_FAULT", "unknown_op", 1), 0);
  // The plugin follows the policy (skips NOT_FOUND), so it loads.
  ASSERT_EQ(bp_plugin_load(ctx_, PluginPath("bp_fault").c_str(), nullptr), BP_STATUS_OK) << LastError();
  EXPECT_EQ(CountLogs("register_kernel: unknown operator 'softmax.Int' (did you mean 'softmax.int'"), 1);
  EXPECT_EQ(CountLogs("libbp_fault.so"), 1);  // the warning names the plugin
  // The row after the unknown one was registered: add.Tensor runs natively.
  int32_t backend = -1, kind = -1;
  bp_op_t* add = nullptr;
  ASSERT_EQ(bp_backend_find(ctx_, "fault", &backend), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_op_find(ctx_, "add.Tensor", &add), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_op_dispatch_kind(ctx_, add, backend, &kind), BP_STATUS_OK) << LastError();
  EXPECT_EQ(kind, BP_DISPATCH_NATIVE);
}

TEST_F(PluginContainmentTest, VariantNameIsRefusedNamingTheBaseOperator) {
  ASSERT_EQ(setenv("BP_FAULT", "variant_op", 1), 0);
  EXPECT_EQ(bp_plugin_load(ctx_, PluginPath("bp_fault").c_str(), nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("'relu_' is the in-place variant of 'relu'; register the kernel under 'relu'"));
}

}  // namespace
