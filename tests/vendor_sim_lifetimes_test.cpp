// Object lifetimes around vendor_sim through the public API (issue 42 items
// 8, 9 and 16): bp_plugin_unload refuses while the plugin's events, pinned
// host blocks or communicators live; a destroyed stream leaves nothing
// pointing at it (graphs, record_stream marks); stale stream and event
// handles are refused even after a new object took their place; capture
// rules (bp_device_synchronize and events invalidate a capture); a graph
// destroyed while another thread launches it waits for that launch.
// bp-test: public-api
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "backplane/backplane.h"  // before comm.h, which needs it
#include "backplane/comm.h"
#include "expected_backends.h"

#include "bp_test_util.h"
#include "temp_dir.h"
#include "vendor_sim_hold.h"

using namespace bptest;

namespace {

class LifetimesTest : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    const std::string cpu = std::string(BP_BUILD_PLUGIN_DIR) + "/libbackplane_cpu.so";
    const std::string vendor = std::string(BP_BUILD_PLUGIN_DIR) + "/libbackplane_vendor_sim.so";
    if (access(cpu.c_str(), R_OK) != 0) BP_SKIP_UNLESS_EXPECTED("cpu", "the CPU plugin is not built (" + cpu + ")");
    if (access(vendor.c_str(), R_OK) != 0)
      BP_SKIP_UNLESS_EXPECTED("vendor_sim", "the vendor_sim plugin is not built (" + vendor + ")");
    ASSERT_EQ(bp_plugin_load(ctx_, cpu.c_str(), nullptr), BP_STATUS_OK) << LastError();
    ASSERT_EQ(bp_plugin_load(ctx_, vendor.c_str(), &plugin_), BP_STATUS_OK) << LastError();
    ASSERT_EQ(bp_device_parse(ctx_, "vendor_sim:0", &dev_), BP_STATUS_OK) << LastError();
  }
  bp_stream_handle_t* Create() {
    bp_stream_handle_t* s = nullptr;
    EXPECT_EQ(bp_stream_create(ctx_, dev_, &s), BP_STATUS_OK) << LastError();
    return s;
  }
  bp_stream_handle_t* Default() {
    bp_stream_handle_t* s = nullptr;
    EXPECT_EQ(bp_stream_get_default(ctx_, dev_, &s), BP_STATUS_OK) << LastError();
    return s;
  }
  bp_event_handle_t* Event() {
    bp_event_handle_t* e = nullptr;
    EXPECT_EQ(bp_event_create(ctx_, dev_, &e), BP_STATUS_OK) << LastError();
    return e;
  }
  // Unload must be refused naming `what`; the plugin stays loaded.
  void ExpectUnloadRefused(const std::string& what) {
    EXPECT_EQ(bp_plugin_unload(ctx_, plugin_), BP_STATUS_FAILED_PRECONDITION);
    EXPECT_NE(LastError().find(what), std::string::npos) << LastError();
  }
  bool Has(const std::string& needle) { return LastError().find(needle) != std::string::npos; }

  bp_plugin_t* plugin_ = nullptr;
  bp_device_t dev_{};
};

// ---- Item 8: unload while the plugin's objects live ----

TEST_F(LifetimesTest, UnloadIsRefusedWhileAnEventLivesAndTheEventStaysUsable) {
  if (IsSkipped()) return;
  bp_event_handle_t* e = Event();
  ExpectUnloadRefused("backend 'vendor_sim' still has 1 event(s) from bp_event_create alive");
  // The event still works (the plugin is still loaded).
  ASSERT_EQ(bp_event_record(e, Default()), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_event_synchronize(e), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_event_destroy(e), BP_STATUS_OK) << LastError();
  EXPECT_EQ(bp_plugin_unload(ctx_, plugin_), BP_STATUS_OK) << LastError();
}

TEST_F(LifetimesTest, UnloadIsRefusedWhilePinnedHostBlocksLive) {
  if (IsSkipped()) return;
  void* p = nullptr;
  void* q = nullptr;
  ASSERT_EQ(bp_host_alloc(ctx_, dev_, 64, &p), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_host_alloc(ctx_, dev_, 128, &q), BP_STATUS_OK) << LastError();
  ExpectUnloadRefused("2 pinned host block(s) from bp_host_alloc");
  // The blocks still work: an async copy into one reads back the tensor.
  bp_tensor_t* x = F32(dev_, {4}, {1, 2, 3, 4});
  ASSERT_EQ(bp_tensor_to_host_async(x, p, 16), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_device_synchronize(ctx_, dev_), BP_STATUS_OK) << LastError();
  const auto* f = static_cast<const float*>(p);
  EXPECT_EQ((std::vector<float>(f, f + 4)), (std::vector<float>{1, 2, 3, 4}));
  ASSERT_EQ(bp_host_free(ctx_, p), BP_STATUS_OK) << LastError();
  ExpectUnloadRefused("1 pinned host block(s)");
  ASSERT_EQ(bp_host_free(ctx_, q), BP_STATUS_OK) << LastError();
  EXPECT_EQ(bp_plugin_unload(ctx_, plugin_), BP_STATUS_OK) << LastError();
}

TEST_F(LifetimesTest, UnloadIsRefusedWhileANativeCommunicatorLives) {
  if (IsSkipped()) return;
  TempDir dir;
  bp_kv_store_t* store = nullptr;
  ASSERT_EQ(bp_kv_store_file_create(dir.path().c_str(), &store), BP_STATUS_OK) << LastError();
  bp_comm_options_t o{};
  o.struct_size = sizeof(o);
  o.rank = 0;
  o.world_size = 1;
  o.store = store;
  o.timeout_ms = 20000;
  o.engine = BP_COMM_ENGINE_NATIVE;
  bp_comm_t* comm = nullptr;
  const bp_status_t made = bp_comm_create(ctx_, dev_, &o, &comm);
  bp_kv_store_file_destroy(store);
  ASSERT_EQ(made, BP_STATUS_OK) << LastError();
  bp_event_handle_t* e = Event();
  ExpectUnloadRefused("still has 1 event(s) from bp_event_create and 1 communicator(s) from bp_comm_create alive");
  ASSERT_EQ(bp_event_destroy(e), BP_STATUS_OK) << LastError();
  ExpectUnloadRefused("1 communicator(s)");
  // The communicator still works.
  bp_tensor_t* x = F32(dev_, {3}, {1, 2, 3});
  bp_tensor_t* y = F32(dev_, {3}, {0, 0, 0});
  ASSERT_EQ(bp_comm_all_reduce(comm, x, y, BP_REDUCE_SUM, nullptr), BP_STATUS_OK) << LastError();
  EXPECT_EQ(Read(y), (std::vector<float>{1, 2, 3}));
  ASSERT_EQ(bp_comm_destroy(comm), BP_STATUS_OK) << LastError();
  EXPECT_EQ(bp_plugin_unload(ctx_, plugin_), BP_STATUS_OK) << LastError();
}

// ---- Item 9: what points at a destroyed stream; stale handles ----

TEST_F(LifetimesTest, ASecondDestroyOfAStreamIsRefusedAfterANewStreamTookItsPlace) {
  if (IsSkipped()) return;
  bp_stream_handle_t* old = Create();
  ASSERT_EQ(bp_stream_destroy(old), BP_STATUS_OK) << LastError();
  // New streams right away: the allocator would hand the freed handle's
  // memory to one of them, which a second destroy must not touch.
  std::vector<bp_stream_handle_t*> fresh;
  for (int i = 0; i < 4; ++i) fresh.push_back(Create());
  EXPECT_EQ(bp_stream_destroy(old), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(Has("is a stale stream handle")) << LastError();
  EXPECT_EQ(bp_stream_synchronize(old), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(bp_set_current_stream(old), BP_STATUS_INVALID_ARGUMENT);
  for (bp_stream_handle_t* s : fresh) {
    EXPECT_EQ(bp_stream_synchronize(s), BP_STATUS_OK) << "a live stream was hit by the stale destroy: " << LastError();
    EXPECT_EQ(bp_stream_destroy(s), BP_STATUS_OK) << LastError();
  }
  // An event handle is not a stream handle, nor the reverse.
  bp_event_handle_t* e = Event();
  EXPECT_EQ(bp_stream_synchronize(reinterpret_cast<bp_stream_handle_t*>(e)), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(Has("is not a stream handle")) << LastError();
  ASSERT_EQ(bp_event_destroy(e), BP_STATUS_OK) << LastError();
}

TEST_F(LifetimesTest, ASecondDestroyOfAnEventIsRefusedAfterANewEventTookItsPlace) {
  if (IsSkipped()) return;
  bp_event_handle_t* old = Event();
  ASSERT_EQ(bp_event_destroy(old), BP_STATUS_OK) << LastError();
  std::vector<bp_event_handle_t*> fresh;
  for (int i = 0; i < 4; ++i) fresh.push_back(Event());
  EXPECT_EQ(bp_event_destroy(old), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(Has("is a stale event handle")) << LastError();
  EXPECT_EQ(bp_event_synchronize(old), BP_STATUS_INVALID_ARGUMENT);
  for (bp_event_handle_t* e : fresh) {
    EXPECT_EQ(bp_event_record(e, Default()), BP_STATUS_OK)
        << "a live event was hit by the stale destroy: " << LastError();
    EXPECT_EQ(bp_event_destroy(e), BP_STATUS_OK) << LastError();
  }
}

TEST_F(LifetimesTest, ASecondDestroyOfAGraphIsRefusedAfterANewGraphTookItsPlace) {
  if (IsSkipped()) return;
  bp_stream_handle_t* s = Create();
  bp_tensor_t* a = F32(dev_, {4}, {-1, 2, -3, 4});
  auto capture = [&] {
    EXPECT_EQ(bp_set_current_stream(s), BP_STATUS_OK) << LastError();
    EXPECT_EQ(bp_graph_begin_capture(s), BP_STATUS_OK) << LastError();
    EXPECT_NE(Call("relu", {T(a)}), nullptr);
    bp_graph_t* g = nullptr;
    EXPECT_EQ(bp_graph_end_capture(s, &g), BP_STATUS_OK) << LastError();
    EXPECT_EQ(bp_set_current_stream(Default()), BP_STATUS_OK) << LastError();
    return g;
  };
  bp_graph_t* old = capture();
  ASSERT_NE(old, nullptr);
  ASSERT_EQ(bp_graph_destroy(old), BP_STATUS_OK) << LastError();
  // New graphs right away: the allocator would hand the freed graph's memory
  // to one of them, which a second destroy must not touch.
  std::vector<bp_graph_t*> fresh;
  for (int i = 0; i < 4; ++i) fresh.push_back(capture());
  EXPECT_EQ(bp_graph_destroy(old), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(Has("a stale graph handle: that graph was destroyed")) << LastError();
  EXPECT_EQ(bp_graph_launch(old, s), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(Has("is not a live graph")) << LastError();
  bp_graph_info_t info{};
  info.struct_size = sizeof(info);
  EXPECT_EQ(bp_graph_info(old, &info), BP_STATUS_INVALID_ARGUMENT);
  for (bp_graph_t* g : fresh) {
    EXPECT_EQ(bp_graph_launch(g, s), BP_STATUS_OK) << "a live graph was hit by the stale destroy: " << LastError();
    EXPECT_EQ(bp_graph_destroy(g), BP_STATUS_OK) << LastError();
  }
  // A stream handle is not a graph handle.
  EXPECT_EQ(bp_graph_info(reinterpret_cast<bp_graph_t*>(s), &info), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(Has("not a graph handle")) << LastError();
  ASSERT_EQ(bp_stream_destroy(s), BP_STATUS_OK) << LastError();
}

TEST_F(LifetimesTest, AGraphLaunchedOnADestroyedStreamIsDestroyedCleanly) {
  if (IsSkipped()) return;
  bp_stream_handle_t* s = Create();
  ASSERT_EQ(bp_set_current_stream(s), BP_STATUS_OK) << LastError();
  bp_tensor_t* a = F32(dev_, {4}, {-1, 2, -3, 4});
  ASSERT_EQ(bp_graph_begin_capture(s), BP_STATUS_OK) << LastError();
  ASSERT_NE(Call("relu", {T(a)}), nullptr);
  bp_graph_t* g = nullptr;
  ASSERT_EQ(bp_graph_end_capture(s, &g), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_set_current_stream(Default()), BP_STATUS_OK) << LastError();
  bp_stream_handle_t* other = Create();
  ASSERT_EQ(bp_graph_launch(g, other), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_stream_destroy(other), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_stream_destroy(s), BP_STATUS_OK) << LastError();
  // The graph remembered `other` to wait for at destroy; it must not wait
  // on (or report) a stream that no longer exists.
  EXPECT_EQ(bp_graph_destroy(g), BP_STATUS_OK) << LastError();
}

TEST_F(LifetimesTest, ATensorMarkedByRecordStreamIsFreedCleanlyAfterTheStreamIsDestroyed) {
  if (IsSkipped()) return;
  bp_tensor_t* x = nullptr;
  const int64_t n = 64;
  ASSERT_EQ(bp_tensor_empty(ctx_, dev_, 1, &n, DLDataType{kDLFloat, 32, 1}, &x), BP_STATUS_OK) << LastError();
  bp_stream_handle_t* s = Create();
  ASSERT_EQ(bp_tensor_record_stream(x, s), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_stream_destroy(s), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_stream_synchronize(Default()), BP_STATUS_OK) << LastError();
  // bp_tensor_release returns nothing: a failure inside it shows only as a
  // new last error (the plugin's set_error), so the last error must not move.
  const bp_status_t status_before = bp_last_error_status();
  const std::string before = LastError();
  bp_tensor_release(x);  // would record an event on the destroyed stream
  EXPECT_EQ(bp_last_error_status(), status_before);
  EXPECT_EQ(LastError(), before) << "freeing the tensor reported an error";
}

// ---- Item 16: capture rules ----

TEST_F(LifetimesTest, DeviceSynchronizeDuringACaptureInvalidatesIt) {
  if (IsSkipped()) return;
  bp_stream_handle_t* s = Create();
  ASSERT_EQ(bp_set_current_stream(s), BP_STATUS_OK) << LastError();
  bp_tensor_t* a = F32(dev_, {4}, {1, 2, 3, 4});
  ASSERT_EQ(bp_graph_begin_capture(s), BP_STATUS_OK) << LastError();
  ASSERT_NE(Call("relu", {T(a)}), nullptr);
  EXPECT_EQ(bp_device_synchronize(ctx_, dev_), BP_STATUS_FAILED_PRECONDITION);
  EXPECT_TRUE(Has("the capture is invalidated")) << LastError();
  bp_graph_t* g = nullptr;
  EXPECT_EQ(bp_graph_end_capture(s, &g), BP_STATUS_FAILED_PRECONDITION);
  EXPECT_TRUE(Has("the capture was invalidated: bp_device_synchronize")) << LastError();
  EXPECT_EQ(g, nullptr);
  ASSERT_EQ(bp_set_current_stream(Default()), BP_STATUS_OK) << LastError();
  EXPECT_EQ(bp_stream_destroy(s), BP_STATUS_OK) << LastError();
}

TEST_F(LifetimesTest, EventsOnACapturingStreamAreRefusedAndInvalidateTheCapture) {
  if (IsSkipped()) return;
  bp_stream_handle_t* s = Create();
  bp_event_handle_t* e = Event();
  ASSERT_EQ(bp_event_record(e, Default()), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_set_current_stream(s), BP_STATUS_OK) << LastError();
  struct Case {
    const char* name;
    bp_status_t (*call)(bp_stream_handle_t*, bp_event_handle_t*);
  };
  const Case cases[] = {
      {"bp_event_record", [](bp_stream_handle_t* st, bp_event_handle_t* ev) { return bp_event_record(ev, st); }},
      {"bp_stream_wait_event",
       [](bp_stream_handle_t* st, bp_event_handle_t* ev) { return bp_stream_wait_event(st, ev); }},
      {"bp_event_synchronize", [](bp_stream_handle_t*, bp_event_handle_t* ev) { return bp_event_synchronize(ev); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_EQ(bp_graph_begin_capture(s), BP_STATUS_OK) << LastError();
    EXPECT_EQ(c.call(s, e), BP_STATUS_FAILED_PRECONDITION);
    EXPECT_TRUE(Has("during the graph capture") || Has("on a stream being captured")) << LastError();
    bp_graph_t* g = nullptr;
    EXPECT_EQ(bp_graph_end_capture(s, &g), BP_STATUS_FAILED_PRECONDITION);
    EXPECT_TRUE(Has(std::string("the capture was invalidated: ") + c.name)) << LastError();
    EXPECT_EQ(g, nullptr);
  }
  // Outside a capture they work as before.
  EXPECT_EQ(bp_event_record(e, s), BP_STATUS_OK) << LastError();
  EXPECT_EQ(bp_event_synchronize(e), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_set_current_stream(Default()), BP_STATUS_OK) << LastError();
  EXPECT_EQ(bp_event_destroy(e), BP_STATUS_OK) << LastError();
  EXPECT_EQ(bp_stream_destroy(s), BP_STATUS_OK) << LastError();
}

// The asynchronous vendor_sim with kernels the test holds.
class HeldLifetimesTest : public LifetimesTest {
 protected:
  void SetUp() override {
    setenv("BP_VENDOR_SIM_ASYNC", "1", 1);
    setenv("BP_VENDOR_SIM_HOLD_KERNELS", hold_.path().c_str(), 1);
    LifetimesTest::SetUp();  // the plugin reads them at init
    unsetenv("BP_VENDOR_SIM_ASYNC");
    unsetenv("BP_VENDOR_SIM_HOLD_KERNELS");
  }
  void TearDown() override {
    hold_.Release();  // before the context drains the plugin's streams
    LifetimesTest::TearDown();
  }
  KernelHold hold_;
};

// A launch blocked inside bp_graph_launch (its host node waits for a held
// kernel) while another thread destroys the graph: the destroy waits for the
// launch, which completes with OK, instead of freeing the graph under it.
// Overlap is proven, not hoped for: the launch is known to be inside
// bp_graph_launch once the relu it replays has written its output (a held
// kernel writes at its start; the output is read on the default stream,
// which does not wait for the launch's stream), and its host node cannot
// return while the kernel is held; the destroy is known to have started once
// the graph is refused as destroyed; only then is the kernel released.
TEST_F(HeldLifetimesTest, DestroyingAGraphWhileAnotherThreadLaunchesItWaitsForTheLaunch) {
  if (IsSkipped()) return;
  bp_stream_handle_t* s = Create();
  ASSERT_EQ(bp_set_current_stream(s), BP_STATUS_OK) << LastError();
  bp_tensor_t* a = F32(dev_, {4}, {-1, 2, -3, 4});
  ASSERT_EQ(bp_device_synchronize(ctx_, dev_), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_op_set_kernel_masked(ctx_, Op("add.Tensor"), dev_.backend, 1), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_graph_begin_capture(s), BP_STATUS_OK) << LastError();
  bp_tensor_t* r = Call("relu", {T(a)});
  ASSERT_NE(r, nullptr);
  ASSERT_NE(Call("add.Tensor", {T(r), T(a), I(1)}), nullptr);  // a host node: it waits for relu
  bp_graph_t* g = nullptr;
  ASSERT_EQ(bp_graph_end_capture(s, &g), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_op_set_kernel_masked(ctx_, Op("add.Tensor"), dev_.backend, 0), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_set_current_stream(Default()), BP_STATUS_OK) << LastError();
  // relu's output is overwritten, so its value tells when a replay ran.
  bp_tensor_t* sentinel = F32(dev_, {4}, {-7, -7, -7, -7});
  ASSERT_NE(Call("copy_", {T(r), T(sentinel), B(false)}), nullptr);
  ASSERT_EQ(bp_device_synchronize(ctx_, dev_), BP_STATUS_OK) << LastError();
  ASSERT_EQ(Read(r), (std::vector<float>{-7, -7, -7, -7}));

  ASSERT_TRUE(hold_.Hold()) << hold_.path();
  std::atomic<bool> launch_returned{false}, destroy_returned{false};
  bp_status_t launch_rc = BP_STATUS_UNKNOWN, destroy_rc = BP_STATUS_UNKNOWN;
  std::string launch_msg, destroy_msg;
  std::thread launcher([&] {
    launch_rc = bp_graph_launch(g, s);  // blocks in its host node until the release
    launch_msg = LastError();
    launch_returned.store(true);
  });
  const std::vector<float> relu_of_a{0, 2, 0, 4};
  std::vector<float> seen(4, -7.0f);
  while (seen != relu_of_a) {  // until the launch's relu ran (it is held now)
    ASSERT_EQ(bp_tensor_to_host(r, seen.data(), 16), BP_STATUS_OK) << LastError();
    std::this_thread::yield();
  }
  EXPECT_FALSE(launch_returned.load());
  std::thread destroyer([&] {
    destroy_rc = bp_graph_destroy(g);
    destroy_msg = LastError();
    destroy_returned.store(true);
  });
  bp_graph_info_t info{};
  info.struct_size = sizeof(info);
  while (bp_graph_info(g, &info) == BP_STATUS_OK) std::this_thread::yield();  // until the destroy unlisted it
  EXPECT_NE(LastError().find("is not a live graph"), std::string::npos) << LastError();
  // Both are in flight: the launch cannot end while held, so the destroy
  // must still be waiting for it.
  EXPECT_FALSE(destroy_returned.load()) << "bp_graph_destroy returned while a launch of the graph was running";
  EXPECT_FALSE(launch_returned.load());
  hold_.Release();
  launcher.join();
  destroyer.join();
  EXPECT_EQ(launch_rc, BP_STATUS_OK) << launch_msg;
  EXPECT_EQ(destroy_rc, BP_STATUS_OK) << destroy_msg;
  EXPECT_EQ(bp_graph_launch(g, s), BP_STATUS_INVALID_ARGUMENT) << "a destroyed graph was launched";
  EXPECT_EQ(bp_stream_synchronize(s), BP_STATUS_OK) << LastError();
  EXPECT_EQ(Read(r), relu_of_a);
  EXPECT_EQ(bp_stream_destroy(s), BP_STATUS_OK) << LastError();
}

}  // namespace
