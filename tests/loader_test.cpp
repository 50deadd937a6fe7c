// Plugin loader: every bad plugin is refused with a precise status and
// message; a good one loads, is listed, unloads and reloads; discovery.
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "bp_test_util.h"

using namespace bptest;
using ::testing::HasSubstr;

namespace {

class LoaderTest : public ContextTest {};

TEST_F(LoaderTest, MissingFileIsNotFound) {
  std::string path = PluginPath("does_not_exist");
  EXPECT_EQ(bp_plugin_load(ctx_, path.c_str(), nullptr), BP_STATUS_NOT_FOUND);
  EXPECT_EQ(bp_last_error_status(), BP_STATUS_NOT_FOUND);
  EXPECT_THAT(LastError(), HasSubstr(path));
  EXPECT_THAT(LastError(), HasSubstr("no such file"));
}

TEST_F(LoaderTest, NotASharedLibrary) {
  std::string path = PluginPath("bp_not_a_plugin");
  EXPECT_EQ(bp_plugin_load(ctx_, path.c_str(), nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr(path));
  EXPECT_THAT(LastError(), HasSubstr("not a loadable shared library"));
}

TEST_F(LoaderTest, MissingEntrySymbol) {
  std::string path = PluginPath("bp_no_entry");
  EXPECT_EQ(bp_plugin_load(ctx_, path.c_str(), nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr(path));
  EXPECT_THAT(LastError(), HasSubstr("bp_plugin_entry"));
}

TEST_F(LoaderTest, OtherAbiMajorIsIncompatible) {
  std::string path = PluginPath("bp_bad_abi");
  EXPECT_EQ(bp_plugin_load(ctx_, path.c_str(), nullptr), BP_STATUS_INCOMPATIBLE_VERSION);
  EXPECT_THAT(LastError(), HasSubstr(path));
  EXPECT_THAT(LastError(), HasSubstr("ABI 2.0"));
  EXPECT_THAT(LastError(), HasSubstr("ABI " + std::to_string(BP_ABI_VERSION_MAJOR) + "." +
                                     std::to_string(BP_ABI_VERSION_MINOR)));
}

// A plugin built for an older minor answers that minor; the host loads it and
// records the version it negotiated (a minor version only adds).
TEST_F(LoaderTest, PluginAnsweringAnOlderMinorIsAccepted) {
  unsetenv("OLDMINOR_ANSWER");
  bp_plugin_t* p = nullptr;
  ASSERT_EQ(bp_plugin_load(ctx_, PluginPath("bp_old_minor").c_str(), &p), BP_STATUS_OK) << LastError();
  int32_t id = -1;
  ASSERT_EQ(bp_backend_find(ctx_, "oldminor", &id), BP_STATUS_OK);
  bp_backend_info_t info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(bp_backend_info(ctx_, id, &info), BP_STATUS_OK);
  EXPECT_EQ(info.abi_version, BP_MAKE_ABI_VERSION(1, 0));
  EXPECT_EQ(info.device_count, 0);
  EXPECT_STREQ(info.no_device_reason, "oldminor: a loader test plugin with no device");
  EXPECT_EQ(bp_plugin_unload(ctx_, p), BP_STATUS_OK);
}

// A plugin answering a newer version than the host offered broke the
// negotiation contract: refused, with both versions in the message.
TEST_F(LoaderTest, PluginAnsweringANewerMinorThanOfferedIsRefused) {
  ASSERT_EQ(setenv("OLDMINOR_ANSWER", "newer", 1), 0);
  const bp_status_t rc = bp_plugin_load(ctx_, PluginPath("bp_old_minor").c_str(), nullptr);
  unsetenv("OLDMINOR_ANSWER");
  EXPECT_EQ(rc, BP_STATUS_INCOMPATIBLE_VERSION);
  EXPECT_THAT(LastError(), HasSubstr("negotiation failed"));
  int32_t id = -1;
  EXPECT_EQ(bp_backend_find(ctx_, "oldminor", &id), BP_STATUS_NOT_FOUND);
}

TEST_F(LoaderTest, FailingInitIsReportedAndUndone) {
  std::string path = PluginPath("bp_init_fail");
  EXPECT_EQ(bp_plugin_load(ctx_, path.c_str(), nullptr), BP_STATUS_UNAVAILABLE);
  EXPECT_THAT(LastError(), HasSubstr(path));
  EXPECT_THAT(LastError(), HasSubstr("init failed"));
  EXPECT_THAT(LastError(), HasSubstr("simulated driver failure"));
  // Nothing stayed registered and no backend appeared.
  int32_t count = 0;
  ASSERT_EQ(bp_backend_count(ctx_, &count), BP_STATUS_OK);
  EXPECT_EQ(count, 1);
  int32_t kind = -1;
  ASSERT_EQ(bp_op_dispatch_kind(ctx_, Op("mul.Tensor"), 0, &kind), BP_STATUS_OK);
  EXPECT_EQ(kind, BP_DISPATCH_NONE);
}

TEST_F(LoaderTest, NullArgumentsAreInvalid) {
  EXPECT_EQ(bp_plugin_load(ctx_, nullptr, nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(bp_plugin_load(nullptr, "x", nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(bp_plugin_unload(ctx_, nullptr), BP_STATUS_INVALID_ARGUMENT);
}

TEST_F(LoaderTest, GoodPluginIsListedWithItsDevices) {
  bp_plugin_t* p = nullptr;
  bp_device_t dev = LoadTestdev(&p);
  ASSERT_NE(p, nullptr);
  int32_t count = 0;
  ASSERT_EQ(bp_backend_count(ctx_, &count), BP_STATUS_OK);
  EXPECT_EQ(count, 2);
  int32_t id = -1;
  ASSERT_EQ(bp_backend_find(ctx_, "testdev", &id), BP_STATUS_OK);
  EXPECT_EQ(id, dev.backend);
  EXPECT_EQ(dev.index, 0);
  bp_backend_info_t info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(bp_backend_info(ctx_, id, &info), BP_STATUS_OK);
  EXPECT_STREQ(info.name, "testdev");
  EXPECT_STREQ(info.version, "0.1.0");
  EXPECT_EQ(std::string(info.plugin_path), PluginPath("bp_testdev"));
  EXPECT_EQ(info.abi_version, BP_ABI_VERSION);
  EXPECT_EQ(info.device_type, kDLExtDev);
  EXPECT_EQ(info.device_count, 1);
  EXPECT_EQ(info.loaded, 1);
  EXPECT_EQ(info.no_device_reason, nullptr);

  bp_device_properties_t props{};
  props.struct_size = sizeof(props);
  ASSERT_EQ(bp_device_properties(ctx_, dev, &props), BP_STATUS_OK) << LastError();
  EXPECT_STREQ(props.name, "testdev private arena");
  EXPECT_EQ(bp_device_synchronize(ctx_, dev), BP_STATUS_OK);

  // Backend 0 is always the core's cpu.
  ASSERT_EQ(bp_backend_info(ctx_, 0, &info), BP_STATUS_OK);
  EXPECT_STREQ(info.name, "cpu");
  EXPECT_EQ(info.device_type, kDLCPU);
  EXPECT_EQ(info.device_count, 1);

  // Bad device specs.
  bp_device_t d{};
  EXPECT_EQ(bp_device_parse(ctx_, "testdev:1", &d), BP_STATUS_NOT_FOUND);
  EXPECT_EQ(bp_device_parse(ctx_, "nosuch", &d), BP_STATUS_NOT_FOUND);
  EXPECT_EQ(bp_device_parse(ctx_, "testdev:x", &d), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(bp_backend_info(ctx_, 7, &info), BP_STATUS_OUT_OF_RANGE);
}

TEST_F(LoaderTest, SecondLoadOfSameBackendIsAlreadyExists) {
  LoadTestdev();
  EXPECT_EQ(bp_plugin_load(ctx_, PluginPath("bp_testdev").c_str(), nullptr), BP_STATUS_ALREADY_EXISTS);
  EXPECT_THAT(LastError(), HasSubstr("testdev"));
}

TEST_F(LoaderTest, UnloadThenReload) {
  bp_plugin_t* p = nullptr;
  bp_device_t dev = LoadTestdev(&p);
  bp_op_t* add = Op("add.Tensor");
  int32_t kind = -1;
  ASSERT_EQ(bp_op_dispatch_kind(ctx_, add, dev.backend, &kind), BP_STATUS_OK);
  EXPECT_EQ(kind, BP_DISPATCH_NATIVE);
  ASSERT_EQ(bp_plugin_unload(ctx_, p), BP_STATUS_OK) << LastError();
  EXPECT_EQ(bp_plugin_unload(ctx_, p), BP_STATUS_INVALID_ARGUMENT);
  bp_backend_info_t info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(bp_backend_info(ctx_, dev.backend, &info), BP_STATUS_OK);
  EXPECT_EQ(info.loaded, 0);
  ASSERT_EQ(bp_op_dispatch_kind(ctx_, add, dev.backend, &kind), BP_STATUS_OK);
  EXPECT_EQ(kind, BP_DISPATCH_NONE);
  bp_tensor_t* t = nullptr;
  int64_t n = 2;
  EXPECT_EQ(bp_tensor_empty(ctx_, dev, 1, &n, kF32, &t), BP_STATUS_FAILED_PRECONDITION);

  bp_device_t again = LoadTestdev();
  EXPECT_EQ(again.backend, dev.backend);  // the slot is reused
  ASSERT_EQ(bp_op_dispatch_kind(ctx_, add, again.backend, &kind), BP_STATUS_OK);
  EXPECT_EQ(kind, BP_DISPATCH_NATIVE);
}

TEST_F(LoaderTest, TensorsKeepAnUnloadedPluginMapped) {
  bp_plugin_t* p = nullptr;
  bp_device_t dev = LoadTestdev(&p);
  bp_tensor_t* t = F32(dev, {3}, {1, 2, 3});
  ASSERT_EQ(bp_plugin_unload(ctx_, p), BP_STATUS_OK);
  // Operators on it now fail cleanly...
  bp_tensor_t* r = nullptr;
  bp_value_t args[] = {T(t), T(t)};
  EXPECT_EQ(bp_op_call(ctx_, Op("add.Tensor"), args, 2, &r, 1), BP_STATUS_FAILED_PRECONDITION);
  EXPECT_THAT(LastError(), HasSubstr("unloaded"));
  // ...and releasing the tensor (in TearDown) frees its memory through the still-mapped plugin.
}

TEST_F(LoaderTest, DiscoveryUsesPluginPathAndSkipsBadFiles) {
  ASSERT_EQ(setenv("BACKPLANE_PLUGIN_PATH", BP_TEST_PLUGIN_DIR, 1), 0);
  int32_t loaded = -1;
  EXPECT_EQ(bp_plugin_discover(ctx_, &loaded), BP_STATUS_OK) << LastError();
  unsetenv("BACKPLANE_PLUGIN_PATH");
  EXPECT_GE(loaded, 1);
  int32_t id = -1;
  EXPECT_EQ(bp_backend_find(ctx_, "testdev", &id), BP_STATUS_OK);
  // The bad plugins in the same directory were reported, not fatal.
  EXPECT_GE(CountLogs("bp_not_a_plugin"), 1);
  EXPECT_GE(CountLogs("bp_bad_abi"), 1);
  // A second discovery skips what is loaded.
  ASSERT_EQ(setenv("BACKPLANE_PLUGINS", PluginPath("bp_testdev").c_str(), 1), 0);
  EXPECT_EQ(bp_plugin_discover(ctx_, &loaded), BP_STATUS_OK);
  unsetenv("BACKPLANE_PLUGINS");
  EXPECT_EQ(loaded, 0);
}

TEST_F(LoaderTest, DiscoveryFromForcedList) {
  ASSERT_EQ(setenv("BACKPLANE_PLUGINS", (PluginPath("bp_bad_abi") + ":" + PluginPath("bp_testdev")).c_str(), 1), 0);
  int32_t loaded = -1;
  EXPECT_EQ(bp_plugin_discover(ctx_, &loaded), BP_STATUS_OK);
  unsetenv("BACKPLANE_PLUGINS");
  EXPECT_GE(loaded, 1);
  int32_t id = -1;
  EXPECT_EQ(bp_backend_find(ctx_, "testdev", &id), BP_STATUS_OK);
}

}  // namespace

namespace {

TEST_F(LoaderTest, PluginDefinedOperatorLivesWithThePlugin) {
  bp_plugin_t* p = nullptr;
  bp_device_t dev = LoadTestdev(&p);
  bp_op_t* twice = Op("testdev::twice");
  ASSERT_NE(twice, nullptr);
  bp_tensor_t* a = F32(kCpu, {2}, {1.5f, -2});
  EXPECT_EQ(Read(Call("testdev::twice", {T(a)})), (std::vector<float>{3, -4}));
  // On the device it runs through the CPU fallback.
  bp_tensor_t* d = F32(dev, {2}, {4, 5});
  EXPECT_EQ(Read(Call("testdev::twice", {T(d)})), (std::vector<float>{8, 10}));
  ASSERT_EQ(bp_plugin_unload(ctx_, p), BP_STATUS_OK);
  bp_op_t* gone = nullptr;
  EXPECT_EQ(bp_op_find(ctx_, "testdev::twice", &gone), BP_STATUS_NOT_FOUND);
  bp_value_t args[] = {T(a)};
  bp_tensor_t* r = nullptr;
  EXPECT_EQ(bp_op_call(ctx_, twice, args, 1, &r, 1), BP_STATUS_FAILED_PRECONDITION);
  EXPECT_THAT(LastError(), HasSubstr("testdev::twice"));
  // Reloading defines it again.
  LoadTestdev();
  EXPECT_NE(Op("testdev::twice"), nullptr);
}

// A double release is reported and ignored in every build type
// (hardening_test.cpp, DoubleReleaseIsReportedAndIgnored); debug builds also
// keep freed headers in a quarantine so the check holds after reuse.
TEST(TensorDeathTest, DoubleReleaseIsReportedNotFatal) {
  bp_context_t* ctx = nullptr;
  ASSERT_EQ(bp_context_create(nullptr, &ctx), BP_STATUS_OK);
  int64_t n = 1;
  bp_tensor_t* t = nullptr;
  ASSERT_EQ(bp_tensor_empty(ctx, kCpu, 1, &n, kF32, &t), BP_STATUS_OK);
  bp_tensor_release(t);
  bp_tensor_release(t);
  EXPECT_EQ(bp_last_error_status(), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("already freed"));
  bp_context_destroy(ctx);
}

}  // namespace

namespace {

TEST(LoaderDiscoveryTest, ContextOptionDiscoversTheBuildTreePluginDirectory) {
  std::string cpu = std::string(BP_BUILD_PLUGIN_DIR) + "/libbackplane_cpu.so";
  if (access(cpu.c_str(), R_OK) != 0) GTEST_SKIP() << "the CPU plugin is not built (" << cpu << ")";
  bp_context_options_t o{};
  o.struct_size = sizeof(o);
  o.discover_plugins = 1;
  o.min_log_level = BP_LOG_ERROR;
  bp_context_t* ctx = nullptr;
  ASSERT_EQ(bp_context_create(&o, &ctx), BP_STATUS_OK) << LastError();
  bp_backend_info_t info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(bp_backend_info(ctx, 0, &info), BP_STATUS_OK);
  EXPECT_STREQ(info.name, "cpu");
  EXPECT_THAT(std::string(info.plugin_path), HasSubstr("libbackplane_cpu.so"));
  int32_t kind = -1;
  bp_op_t* mul = nullptr;
  ASSERT_EQ(bp_op_find(ctx, "mul.Tensor", &mul), BP_STATUS_OK);
  ASSERT_EQ(bp_op_dispatch_kind(ctx, mul, 0, &kind), BP_STATUS_OK);
  EXPECT_EQ(kind, BP_DISPATCH_NATIVE);
  bp_context_destroy(ctx);
}

}  // namespace
