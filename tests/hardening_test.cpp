// Hardening (issue 14): careless or hostile use contained. One test (at
// least) per numbered item of the issue; the faults a plugin commits are in
// fault_plugin_test.cpp.
// bp-test: public-api (temp_dir.h is a test helper, not a core header)
#include <fcntl.h>
#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "bp_test_util.h"
#include "temp_dir.h"

using namespace bptest;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

class HardeningTest : public ContextTest {
 protected:
  void TearDown() override {
    unsetenv("BP_FAULT");
    unsetenv("BACKPLANE_ALLOW_INSECURE_PLUGINS");
    ContextTest::TearDown();
  }
};

// ---- item 1: bounded device count, transactional load ------------------------

TEST_F(HardeningTest, DeviceCountAboveTheBoundIsRefusedAndTheNameStaysLoadable) {
  ASSERT_EQ(setenv("BP_FAULT", "devices_huge", 1), 0);
  EXPECT_EQ(bp_plugin_load(ctx_, PluginPath("bp_fault").c_str(), nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("reports 5000000 devices"));
  EXPECT_THAT(LastError(), HasSubstr("BP_MAX_DEVICES (" + std::to_string(BP_MAX_DEVICES) + ")"));
  int32_t id = -1;
  EXPECT_EQ(bp_backend_find(ctx_, "fault", &id), BP_STATUS_NOT_FOUND);
  // Nothing was left registered: the same backend loads cleanly afterwards.
  unsetenv("BP_FAULT");
  bp_plugin_t* p = nullptr;
  ASSERT_EQ(bp_plugin_load(ctx_, PluginPath("bp_fault").c_str(), &p), BP_STATUS_OK) << LastError();
  bp_device_t dev{};
  ASSERT_EQ(bp_device_parse(ctx_, "fault:0", &dev), BP_STATUS_OK) << LastError();
  bp_tensor_t* a = F32(dev, {2}, {1, 2});
  bp_tensor_t* b = F32(dev, {2}, {10, 20});
  EXPECT_EQ(Read(Call("add.Tensor", {T(a), T(b), I(1)})), (std::vector<float>{11, 22}));
}

TEST_F(HardeningTest, FailedCommitUndoesTheRegistrationsOfInit) {
  // bad_name: init registers add.Tensor, then the backend table is refused.
  ASSERT_EQ(setenv("BP_FAULT", "bad_name", 1), 0);
  EXPECT_EQ(bp_plugin_load(ctx_, PluginPath("bp_fault").c_str(), nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("got 'Fault!'"));
  int32_t n = 0;
  ASSERT_EQ(bp_backend_count(ctx_, &n), BP_STATUS_OK);
  EXPECT_EQ(n, 1);  // no slot was published
  int32_t kind = -1;
  ASSERT_EQ(bp_op_dispatch_kind(ctx_, Op("add.Tensor"), 0, &kind), BP_STATUS_OK);
  EXPECT_NE(kind, BP_DISPATCH_NATIVE);  // the cpu slot got nothing from it
}

// ---- item 2: double release, destroyed context, live tensors at destroy ------

TEST_F(HardeningTest, DoubleReleaseIsReportedAndIgnored) {
  int64_t n = 4;
  bp_tensor_t* t = nullptr;
  ASSERT_EQ(bp_tensor_empty(ctx_, kCpu, 1, &n, kF32, &t), BP_STATUS_OK);
  bp_tensor_release(t);
  bp_tensor_release(t);  // the caller's bug: detected, not a corruption
  EXPECT_EQ(bp_last_error_status(), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("bp_tensor_release"));
  EXPECT_THAT(LastError(), HasSubstr("already freed"));
  // The allocator is intact: new tensors of the same size work.
  bp_tensor_t* a = F32(kCpu, {4}, {1, 2, 3, 4});
  bp_tensor_t* b = F32(kCpu, {4}, {5, 6, 7, 8});
  EXPECT_EQ(Read(a), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(Read(b), (std::vector<float>{5, 6, 7, 8}));
}

TEST(HardeningContextTest, CallsOnADestroyedContextAreRejected) {
  bp_context_t* ctx = nullptr;
  ASSERT_EQ(bp_context_create(nullptr, &ctx), BP_STATUS_OK);
  bp_context_destroy(ctx);
  int32_t n = 0;
  EXPECT_EQ(bp_backend_count(ctx, &n), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("not a live context"));
  EXPECT_EQ(bp_plugin_load(ctx, PluginPath("bp_testdev").c_str(), nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("not a live context"));
  bp_device_t d{};
  EXPECT_EQ(bp_device_parse(ctx, "cpu", &d), BP_STATUS_INVALID_ARGUMENT);
  bp_context_destroy(ctx);  // a second destroy is refused, not a double free
  EXPECT_THAT(LastError(), HasSubstr("destroyed twice"));
}

TEST(HardeningContextTest, DestroyWithLiveTensorsWarnsWithTheCount) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the context is leaked on purpose here (tensors still use it); LeakSanitizer would report it";
#else
  std::vector<std::string> logs;
  bp_context_options_t o{};
  o.struct_size = sizeof(o);
  o.log_user_data = &logs;
  o.log_callback = [](void* user, int32_t, const char* msg) { static_cast<std::vector<std::string>*>(user)->push_back(msg); };
  bp_context_t* ctx = nullptr;
  ASSERT_EQ(bp_context_create(&o, &ctx), BP_STATUS_OK);
  int64_t n = 3;
  bp_tensor_t* a = nullptr;
  bp_tensor_t* b = nullptr;
  ASSERT_EQ(bp_tensor_empty(ctx, kCpu, 1, &n, kF32, &a), BP_STATUS_OK);
  ASSERT_EQ(bp_tensor_empty(ctx, kCpu, 1, &n, kF32, &b), BP_STATUS_OK);
  // A released tensor whose storage a view still holds: one storage, one tensor (the view).
  bp_tensor_t* c = nullptr;
  ASSERT_EQ(bp_tensor_empty(ctx, kCpu, 1, &n, kF32, &c), BP_STATUS_OK);
  bp_op_t* transpose = nullptr;
  ASSERT_EQ(bp_op_find(ctx, "transpose.int", &transpose), BP_STATUS_OK);
  bp_value_t args[3] = {};
  args[0].kind = BP_VALUE_TENSOR;
  args[0].u.tensor = c;
  args[1].kind = BP_VALUE_INT;
  args[2].kind = BP_VALUE_INT;
  bp_tensor_t* view = nullptr;
  ASSERT_EQ(bp_op_call(ctx, transpose, args, 3, &view, 1), BP_STATUS_OK) << LastError();
  bp_tensor_release(c);
  bp_context_destroy(ctx);
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_THAT(logs[0], HasSubstr("3 tensor(s) and 3 storage(s)"));
  EXPECT_THAT(logs[0], HasSubstr("still alive"));
  bp_tensor_release(a);  // the kept context makes these safe
  bp_tensor_release(b);
  bp_tensor_release(view);
#endif
}

// ---- item 3: discovery and the files the loader opens -------------------------

TEST_F(HardeningTest, BareFileNameLoadsTheFileInTheCurrentDirectory) {
  char old[PATH_MAX];
  ASSERT_NE(getcwd(old, sizeof(old)), nullptr);
  ASSERT_EQ(chdir(BP_TEST_PLUGIN_DIR), 0);
  bp_plugin_t* p = nullptr;
  const bp_status_t rc = bp_plugin_load(ctx_, "libbp_testdev.so", &p);
  const std::string err = LastError();
  ASSERT_EQ(chdir(old), 0);
  ASSERT_EQ(rc, BP_STATUS_OK) << err;
  int32_t id = -1;
  ASSERT_EQ(bp_backend_find(ctx_, "testdev", &id), BP_STATUS_OK);
  bp_backend_info_t info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(bp_backend_info(ctx_, id, &info), BP_STATUS_OK);
  char* real = realpath(PluginPath("bp_testdev").c_str(), nullptr);
  ASSERT_NE(real, nullptr);
  EXPECT_STREQ(info.plugin_path, real);  // the absolute file dlopen was given
  std::free(real);
}

TEST_F(HardeningTest, RelativePluginPathEntriesAreIgnoredWithAWarning) {
  char old[PATH_MAX];
  ASSERT_NE(getcwd(old, sizeof(old)), nullptr);
  ASSERT_EQ(chdir(BP_TEST_PLUGIN_DIR), 0);
  ASSERT_EQ(setenv("BACKPLANE_PLUGIN_PATH", ".", 1), 0);
  int32_t loaded = -1;
  const bp_status_t rc = bp_plugin_discover(ctx_, &loaded);
  unsetenv("BACKPLANE_PLUGIN_PATH");
  ASSERT_EQ(chdir(old), 0);
  ASSERT_EQ(rc, BP_STATUS_OK);
  int32_t id = -1;
  EXPECT_EQ(bp_backend_find(ctx_, "testdev", &id), BP_STATUS_NOT_FOUND);
  EXPECT_EQ(CountLogs("BACKPLANE_PLUGIN_PATH entry '.' is not an absolute path"), 1);
}

TEST_F(HardeningTest, WorldWritableFilesAndDirectoriesAreRefusedUnlessAllowed) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string lib = dir.Copy(PluginPath("bp_testdev"), "libbp_testdev.so");
  ASSERT_EQ(chmod(lib.c_str(), 0777), 0);
  EXPECT_EQ(bp_plugin_load(ctx_, lib.c_str(), nullptr), BP_STATUS_PERMISSION_DENIED);
  EXPECT_THAT(LastError(), HasSubstr("is world-writable"));
  EXPECT_THAT(LastError(), HasSubstr("BACKPLANE_ALLOW_INSECURE_PLUGINS=1"));
  ASSERT_EQ(chmod(lib.c_str(), 0755), 0);
  ASSERT_EQ(chmod(dir.path().c_str(), 0777), 0);
  EXPECT_EQ(bp_plugin_load(ctx_, lib.c_str(), nullptr), BP_STATUS_PERMISSION_DENIED);
  EXPECT_THAT(LastError(), HasSubstr("is world-writable without the sticky bit"));
  ASSERT_EQ(setenv("BACKPLANE_ALLOW_INSECURE_PLUGINS", "1", 1), 0);
  bp_plugin_t* p = nullptr;
  EXPECT_EQ(bp_plugin_load(ctx_, lib.c_str(), &p), BP_STATUS_OK) << LastError();
  ASSERT_EQ(chmod(dir.path().c_str(), 0700), 0);
}

TEST_F(HardeningTest, SymbolicLinkLoopIsReportedAsSuch) {
  TempDir dir;
  const std::string a = dir.path() + "/liba.so", b = dir.path() + "/libb.so";
  ASSERT_EQ(symlink(b.c_str(), a.c_str()), 0);
  ASSERT_EQ(symlink(a.c_str(), b.c_str()), 0);
  EXPECT_EQ(bp_plugin_load(ctx_, a.c_str(), nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("symbolic link loop"));
  EXPECT_THAT(LastError(), Not(HasSubstr("no such file")));
}

// ---- item 4: DLPack import ----------------------------------------------------

struct Managed {
  DLManagedTensor m{};
  int64_t shape[3] = {};
  float data[4] = {};
  Managed() {
    m.dl_tensor.data = data;
    m.dl_tensor.device = {kDLCPU, 0};
    m.dl_tensor.ndim = 1;
    m.dl_tensor.dtype = kF32;
    m.dl_tensor.shape = shape;
    shape[0] = 4;
  }
};

TEST_F(HardeningTest, DlpackNullDataWithElementsIsRejected) {
  Managed t;
  t.m.dl_tensor.data = nullptr;
  bp_tensor_t* out = nullptr;
  EXPECT_EQ(bp_tensor_from_dlpack(ctx_, &t.m, &out), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("data is NULL for a tensor of 4 element(s)"));
  t.shape[0] = 0;  // no elements: NULL is fine
  ASSERT_EQ(bp_tensor_from_dlpack(ctx_, &t.m, &out), BP_STATUS_OK) << LastError();
  EXPECT_EQ(bp_tensor_numel(out), 0);
  bp_tensor_release(out);
}

TEST_F(HardeningTest, DlpackElementCountOverflowIsRejected) {
  Managed t;
  t.m.dl_tensor.ndim = 3;
  t.shape[0] = t.shape[1] = t.shape[2] = int64_t(1) << 22;  // 2^66 elements
  bp_tensor_t* out = nullptr;
  EXPECT_EQ(bp_tensor_from_dlpack(ctx_, &t.m, &out), BP_STATUS_OUT_OF_RANGE);
  EXPECT_THAT(LastError(), HasSubstr("overflows int64"));
  t.m.dl_tensor.ndim = 2;
  t.shape[0] = t.shape[1] = int64_t(1) << 31;  // 2^62 elements of 4 bytes
  EXPECT_EQ(bp_tensor_from_dlpack(ctx_, &t.m, &out), BP_STATUS_OUT_OF_RANGE);
  EXPECT_THAT(LastError(), HasSubstr("byte size"));
}

TEST_F(HardeningTest, DlpackCpuDeviceIdMustBeZero) {
  Managed t;
  t.m.dl_tensor.device = {kDLCPU, 7};
  bp_tensor_t* out = nullptr;
  EXPECT_EQ(bp_tensor_from_dlpack(ctx_, &t.m, &out), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("device_id 0, got 7"));
}

// Found by fuzz/dlpack_fuzz.cpp: a device type this dlpack.h does not list (a
// producer built against a newer DLPack) was loaded as the enum (undefined
// behaviour, reported by UBSan); it is read as an integer and reported.
TEST_F(HardeningTest, DlpackUnknownDeviceTypeIsNotFound) {
  Managed t;
  const int32_t unknown = 117;
  std::memcpy(&t.m.dl_tensor.device.device_type, &unknown, sizeof(unknown));
  bp_tensor_t* out = nullptr;
  EXPECT_EQ(bp_tensor_from_dlpack(ctx_, &t.m, &out), BP_STATUS_NOT_FOUND);
  EXPECT_THAT(LastError(), HasSubstr("no loaded backend has DLPack device type 117"));
  EXPECT_EQ(out, nullptr);
}

// Found by fuzz/dlpack_fuzz.cpp: no elements (a zero dimension), but the other
// dimensions' product overflows int64 when the contiguous strides are computed.
TEST_F(HardeningTest, DlpackStrideOverflowWithAZeroDimensionIsRejected) {
  Managed t;
  t.m.dl_tensor.ndim = 3;
  t.shape[0] = int64_t(1) << 40;
  t.shape[1] = 0;
  t.shape[2] = int64_t(1) << 40;
  bp_tensor_t* out = nullptr;
  EXPECT_EQ(bp_tensor_from_dlpack(ctx_, &t.m, &out), BP_STATUS_OUT_OF_RANGE);
  EXPECT_THAT(LastError(), HasSubstr("contiguous strides"));
  EXPECT_EQ(out, nullptr);
}

// ---- item 6: custom operator schemas --------------------------------------------

bp_status_t NoMeta(const bp_meta_call_t*) { return BP_STATUS_OK; }

TEST_F(HardeningTest, CustomSchemasAreCheckedAtDefinition) {
  struct Case {
    const char* schema;
    bp_status_t code;
    const char* message;
  } cases[] = {
      {"relu.MyOverload(Tensor self) -> Tensor", BP_STATUS_INVALID_ARGUMENT, "needs a namespace"},
      {"myop(Tensor self) -> Tensor", BP_STATUS_INVALID_ARGUMENT, "needs a namespace"},
      {"aten::relu(Tensor self) -> Tensor", BP_STATUS_INVALID_ARGUMENT, "'aten' namespace"},
      {"ns::view(Tensor self) -> Tensor(b)", BP_STATUS_INVALID_ARGUMENT, "alias annotation 'b', which no argument has"},
      {"ns::op_(Tensor(a!) self) -> Tensor(a!)", BP_STATUS_UNIMPLEMENTED, "custom operators must be functional"},
      {"ns::op.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", BP_STATUS_UNIMPLEMENTED, "argument 'out' is mutable"},
      {"ns::f(Tensor self, str(a!) mode) -> Tensor", BP_STATUS_INVALID_ARGUMENT, "only allowed on Tensor"},
  };
  for (const Case& c : cases) {
    bp_op_t* op = nullptr;
    EXPECT_EQ(bp_op_define(ctx_, c.schema, nullptr, nullptr, NoMeta, nullptr, &op), c.code) << c.schema;
    EXPECT_THAT(LastError(), HasSubstr(c.message)) << c.schema;
  }
  bp_op_t* ok = nullptr;
  EXPECT_EQ(bp_op_define(ctx_, "ns::fine(Tensor self) -> Tensor", nullptr, nullptr, NoMeta, nullptr, &ok),
            BP_STATUS_OK)
      << LastError();
}

// ---- item 7: queries never wait on a plugin's init --------------------------------

TEST(HardeningQueryDeathTest, QueriesAnswerWhileAPluginInitHangs) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // In a child: one thread loads a plugin whose init never returns (holding
  // the loading lock); the queries must still answer. The plugin writes a
  // byte to the pipe once its init has begun, so the queries run while it
  // hangs, not before. alarm() turns a hang into a failure instead of a
  // stuck test.
  EXPECT_EXIT(
      {
        alarm(20);
        bp_context_t* ctx = nullptr;
        if (bp_context_create(nullptr, &ctx) != BP_STATUS_OK) _exit(10);
        int ready[2];
        if (pipe(ready) != 0) _exit(15);
        setenv("BP_FAULT", "init_hang", 1);
        setenv("BP_FAULT_READY_FD", std::to_string(ready[1]).c_str(), 1);
        std::thread([ctx] { bp_plugin_load(ctx, PluginPath("bp_fault").c_str(), nullptr); }).detach();
        char byte = 0;
        if (read(ready[0], &byte, 1) != 1) _exit(16);  // init has begun and holds the loading lock
        bp_backend_info_t info{};
        info.struct_size = sizeof(info);
        if (bp_backend_info(ctx, 0, &info) != BP_STATUS_OK) _exit(11);
        bp_device_t d{};
        if (bp_device_parse(ctx, "cpu:0", &d) != BP_STATUS_OK) _exit(12);
        int32_t id = -1;
        if (bp_backend_find(ctx, "cpu", &id) != BP_STATUS_OK) _exit(13);
        if (bp_backend_find(ctx, "fault", &id) != BP_STATUS_NOT_FOUND) _exit(14);
        _exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

// ---- item 8: unload does not leak -------------------------------------------------

TEST_F(HardeningTest, LoadUnloadCyclesDoNotGrowTheHeap) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "mallinfo2 does not see ASan's allocator";
#else
  auto cycle = [&] {
    bp_plugin_t* p = nullptr;
    ASSERT_EQ(bp_plugin_load(ctx_, PluginPath("bp_testdev").c_str(), &p), BP_STATUS_OK) << LastError();
    bp_device_t dev{};
    ASSERT_EQ(bp_device_parse(ctx_, "testdev:0", &dev), BP_STATUS_OK);
    int64_t n = 4;
    bp_tensor_t* t = nullptr;
    ASSERT_EQ(bp_tensor_empty(ctx_, dev, 1, &n, kF32, &t), BP_STATUS_OK);
    bp_tensor_release(t);
    ASSERT_EQ(bp_plugin_unload(ctx_, p), BP_STATUS_OK);
  };
  for (int i = 0; i < 20; ++i) cycle();  // warm-up: caches, vectors reach their size
  const size_t before = mallinfo2().uordblks;
  constexpr int kCycles = 200;
  for (int i = 0; i < kCycles; ++i) cycle();
  const size_t after = mallinfo2().uordblks;
  const double per_cycle = (static_cast<double>(after) - static_cast<double>(before)) / kCycles;
  std::printf("heap in use: %zu -> %zu bytes over %d load/unload cycles (%.1f bytes per cycle)\n", before, after,
              kCycles, per_cycle);
  EXPECT_LT(per_cycle, 256.0) << "each load/unload cycle keeps memory until the context is destroyed";
#endif
}

// ---- item 9: sanitizer builds see a one-byte overrun --------------------------------

TEST(HardeningAsanDeathTest, OneByteOverrunOfASmallTensorIsCaught) {
#if !defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "needs an AddressSanitizer build (the allocator poisons block slack only there)";
#else
  bp_context_t* ctx = nullptr;
  ASSERT_EQ(bp_context_create(nullptr, &ctx), BP_STATUS_OK);
  int64_t n = 4;  // 16 bytes in a 512-byte block
  bp_tensor_t* t = nullptr;
  ASSERT_EQ(bp_tensor_empty(ctx, kCpu, 1, &n, kF32, &t), BP_STATUS_OK);
  DLManagedTensor* m = nullptr;
  ASSERT_EQ(bp_tensor_to_dlpack(t, &m), BP_STATUS_OK);
  volatile char* p = static_cast<char*>(m->dl_tensor.data);
  p[15] = 1;  // the last byte asked for is fine
  EXPECT_DEATH(p[16] = 1, "use-after-poison");
  m->deleter(m);
  bp_tensor_release(t);
  bp_context_destroy(ctx);
#endif
}

}  // namespace
