// vendor_sim's streams and events (ABI 1.4 slots) through the fake host,
// straight on the plugin's bp_backend_t table: each stream is its own queue
// (with BP_VENDOR_SIM_ASYNC=1, its own device thread), events order work
// across streams, and the test holds kernels (BP_VENDOR_SIM_HOLD_KERNELS,
// vendor_sim_hold.h) until it has observed what must be true while they run,
// so every ordering below is decided by the test, not by a clock or by luck.
// The deliberately broken modes (BP_VENDOR_SIM_BROKEN) must really
// misbehave, or the conformance suite's streams group has nothing to catch.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "vendor_sim_streams_fixture.h"

namespace {

// The scenario of the ordering tests, on a Sim(Sim::kHeld). Stream A first
// runs a kernel the test holds, then overwrites x (kOld) with kNew (a second
// kernel, so the write cannot happen before the held one ends), then records
// `e`. Unless `wait` is false, stream B waits for e; then B copies x to y and
// the host reads y on B. `b_waits` is what the device must do: wait for A
// (then the hold ends before the host reads, and B must not have run past
// its wait while A was held), or not (then the host reads while A is still
// held, so B sees kOld for certain, not by winning a race). Returns what B
// saw.
std::vector<float> BReadsWhatAWrote(Sim& sim, bool wait, bool b_waits) {
  bp_stream_t a = sim.NewStream(), b = sim.NewStream();
  bp_event_t e = sim.NewEvent(), b_copied = sim.NewEvent();
  void* src = sim.Alloc(4);
  void* x = sim.Alloc(4);
  void* y = sim.Alloc(4);
  void* scratch = sim.Alloc(4);
  sim.Upload(src, kNew, a);
  sim.Upload(x, kOld, a);
  EXPECT_TRUE(sim.hold().Hold()) << sim.hold().path();
  EXPECT_EQ(sim.Relu(src, scratch, 4, a), BP_STATUS_OK) << LastError();  // held
  EXPECT_EQ(sim.Relu(src, x, 4, a), BP_STATUS_OK) << LastError();        // x = kNew, after the held one
  EXPECT_EQ(sim.b().event_record(sim.bd(), e, a), BP_STATUS_OK) << LastError();
  if (wait) {
    EXPECT_EQ(sim.b().event_wait(sim.bd(), e, b), BP_STATUS_OK) << LastError();
    // event_wait returned while A's kernel is held: it did not block the host.
    if (b_waits) {
      EXPECT_EQ(sim.Query(e), 0) << "e completed while A's kernel was held";
    }
  }
  EXPECT_EQ(sim.b().copy_device_to_device(sim.bd(), 0, x, 0, y, 0, 4 * sizeof(float), b), BP_STATUS_OK) << LastError();
  EXPECT_EQ(sim.b().event_record(sim.bd(), b_copied, b), BP_STATUS_OK) << LastError();
  if (b_waits) {
    EXPECT_EQ(sim.Query(b_copied), 0) << "B ran past its wait while A's kernel was held";
    sim.hold().Release();
  }
  std::vector<float> seen = sim.Download(y, 4, b);
  sim.hold().Release();
  // Let A finish before its memory goes (deallocate waits anyway).
  EXPECT_EQ(sim.b().event_synchronize(sim.bd(), e), BP_STATUS_OK) << LastError();
  for (void* h : {src, x, y, scratch}) EXPECT_EQ(sim.b().deallocate(sim.bd(), 0, h), BP_STATUS_OK) << LastError();
  EXPECT_EQ(sim.b().event_destroy(sim.bd(), e), BP_STATUS_OK) << LastError();
  EXPECT_EQ(sim.b().event_destroy(sim.bd(), b_copied), BP_STATUS_OK) << LastError();
  EXPECT_EQ(sim.b().stream_destroy(sim.bd(), 0, a), BP_STATUS_OK) << LastError();
  EXPECT_EQ(sim.b().stream_destroy(sim.bd(), 0, b), BP_STATUS_OK) << LastError();
  return seen;
}

TEST(VendorSimStreams, FillsEveryStreamAndEventSlot) {
  Sim sim(Env{});
  ASSERT_EQ(sim.init_status(), BP_STATUS_OK) << LastError();
  EXPECT_NE(sim.b().stream_create, nullptr);
  EXPECT_NE(sim.b().stream_destroy, nullptr);
  EXPECT_NE(sim.b().event_create, nullptr);
  EXPECT_NE(sim.b().event_record, nullptr);
  EXPECT_NE(sim.b().event_wait, nullptr);
  EXPECT_NE(sim.b().event_synchronize, nullptr);
  EXPECT_NE(sim.b().event_destroy, nullptr);
  EXPECT_NE(sim.b().event_query, nullptr);
  EXPECT_NE(sim.b().event_elapsed_time, nullptr);
  bp_stream_t def = reinterpret_cast<bp_stream_t>(1);
  ASSERT_EQ(sim.b().stream_get_default(sim.bd(), 0, &def), BP_STATUS_OK);
  EXPECT_EQ(def, nullptr);  // unchanged: the default stream is NULL
}

// The synchronous device (the default): every stream runs its work at once,
// so a recorded event is complete as soon as event_record returns.
TEST(VendorSimStreams, SynchronousStreamsRunAtOnce) {
  Sim sim(Env{});
  ASSERT_EQ(sim.init_status(), BP_STATUS_OK) << LastError();
  bp_stream_t s = sim.NewStream();
  bp_event_t e0 = sim.NewEvent(), e1 = sim.NewEvent();
  void* x = sim.Alloc(4);
  void* y = sim.Alloc(4);
  sim.Upload(x, {-1, 2, -3, 4}, s);
  ASSERT_EQ(sim.b().event_record(sim.bd(), e0, s), BP_STATUS_OK) << LastError();
  ASSERT_EQ(sim.Relu(x, y, 4, s), BP_STATUS_OK) << LastError();
  ASSERT_EQ(sim.b().event_record(sim.bd(), e1, s), BP_STATUS_OK) << LastError();
  EXPECT_EQ(sim.Query(e1), 1);
  ASSERT_EQ(sim.b().event_wait(sim.bd(), e1, nullptr), BP_STATUS_OK) << LastError();
  EXPECT_EQ(sim.Download(y, 4, nullptr), (std::vector<float>{0, 2, 0, 4}));
  float ms = -1;
  ASSERT_EQ(sim.b().event_elapsed_time(sim.bd(), e0, e1, &ms), BP_STATUS_OK) << LastError();
  EXPECT_GE(ms, 0.0f);
  for (void* h : {x, y}) EXPECT_EQ(sim.b().deallocate(sim.bd(), 0, h), BP_STATUS_OK);
  EXPECT_EQ(sim.b().event_destroy(sim.bd(), e0), BP_STATUS_OK);
  EXPECT_EQ(sim.b().event_destroy(sim.bd(), e1), BP_STATUS_OK);
  EXPECT_EQ(sim.b().stream_destroy(sim.bd(), 0, s), BP_STATUS_OK) << LastError();
}

// A never-recorded event is complete; timing it is a precondition error.
TEST(VendorSimStreams, NeverRecordedEventIsCompleteButHasNoTime) {
  Sim sim(Sim::Async());
  ASSERT_EQ(sim.init_status(), BP_STATUS_OK) << LastError();
  bp_event_t e = sim.NewEvent(), f = sim.NewEvent();
  EXPECT_EQ(sim.Query(e), 1);
  EXPECT_EQ(sim.b().event_synchronize(sim.bd(), e), BP_STATUS_OK);  // returns at once
  ASSERT_EQ(sim.b().event_record(sim.bd(), f, nullptr), BP_STATUS_OK) << LastError();
  ASSERT_EQ(sim.b().event_synchronize(sim.bd(), f), BP_STATUS_OK) << LastError();
  float ms = 0;
  EXPECT_EQ(sim.b().event_elapsed_time(sim.bd(), e, f, &ms), BP_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(LastError().find("event_elapsed_time"), std::string::npos) << LastError();
  EXPECT_NE(LastError().find("'start'"), std::string::npos) << LastError();
  EXPECT_EQ(sim.b().event_elapsed_time(sim.bd(), f, e, &ms), BP_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(LastError().find("'end'"), std::string::npos) << LastError();
  EXPECT_EQ(sim.b().event_destroy(sim.bd(), e), BP_STATUS_OK);
  EXPECT_EQ(sim.b().event_destroy(sim.bd(), f), BP_STATUS_OK);
}

// Two streams are two device threads: a kernel on each runs at the same time
// as the other, and an event recorded after a kernel is not complete until
// that kernel has run.
TEST(VendorSimStreams, TwoStreamsRunConcurrently) {
  Sim sim(Sim::kHeld);
  ASSERT_EQ(sim.init_status(), BP_STATUS_OK) << LastError();
  bp_stream_t a = sim.NewStream(), b = sim.NewStream();
  bp_event_t a0 = sim.NewEvent(), ea = sim.NewEvent(), b0 = sim.NewEvent(), eb = sim.NewEvent();
  void* x = sim.Alloc(4);
  void* ya = sim.Alloc(4);
  void* yb = sim.Alloc(4);
  sim.Upload(x, kNew, nullptr);
  ASSERT_TRUE(sim.hold().Hold()) << sim.hold().path();
  ASSERT_EQ(sim.b().event_record(sim.bd(), a0, a), BP_STATUS_OK) << LastError();
  ASSERT_EQ(sim.Relu(x, ya, 4, a), BP_STATUS_OK) << LastError();
  ASSERT_EQ(sim.b().event_record(sim.bd(), ea, a), BP_STATUS_OK) << LastError();
  ASSERT_EQ(sim.b().event_record(sim.bd(), b0, b), BP_STATUS_OK) << LastError();
  ASSERT_EQ(sim.Relu(x, yb, 4, b), BP_STATUS_OK) << LastError();
  ASSERT_EQ(sim.b().event_record(sim.bd(), eb, b), BP_STATUS_OK) << LastError();
  // Every launch returned while both kernels are held: launching did not
  // block the host.
  EXPECT_EQ(sim.Query(ea), 0) << "complete while its kernel is held";
  EXPECT_EQ(sim.Query(eb), 0) << "complete while its kernel is held";
  // Each stream's device thread has passed the event just before its kernel
  // and not the one just after: both kernels are running at once. (Streams
  // that ran one after the other would never reach b0 while a's kernel is
  // held.)
  ASSERT_EQ(sim.b().event_synchronize(sim.bd(), a0), BP_STATUS_OK) << LastError();
  ASSERT_EQ(sim.b().event_synchronize(sim.bd(), b0), BP_STATUS_OK) << LastError();
  EXPECT_EQ(sim.Query(ea), 0) << "the two streams' kernels did not overlap";
  EXPECT_EQ(sim.Query(eb), 0) << "the two streams' kernels did not overlap";
  sim.hold().Release();
  ASSERT_EQ(sim.b().event_synchronize(sim.bd(), ea), BP_STATUS_OK) << LastError();
  ASSERT_EQ(sim.b().event_synchronize(sim.bd(), eb), BP_STATUS_OK) << LastError();
  EXPECT_EQ(sim.Query(ea), 1);
  EXPECT_EQ(sim.Query(eb), 1);
  EXPECT_EQ(sim.Download(ya, 4, a), kNew);
  EXPECT_EQ(sim.Download(yb, 4, b), kNew);
  for (void* h : {x, ya, yb}) EXPECT_EQ(sim.b().deallocate(sim.bd(), 0, h), BP_STATUS_OK);
  for (bp_event_t e : {a0, ea, b0, eb}) EXPECT_EQ(sim.b().event_destroy(sim.bd(), e), BP_STATUS_OK);
  for (bp_stream_t s : {a, b}) EXPECT_EQ(sim.b().stream_destroy(sim.bd(), 0, s), BP_STATUS_OK) << LastError();
}

// stream_synchronize waits for its own stream only: synchronizing B or the
// default stream returns while A's kernel is held.
TEST(VendorSimStreams, SynchronizeWaitsForOneStreamOnly) {
  Sim sim(Sim::kHeld);
  ASSERT_EQ(sim.init_status(), BP_STATUS_OK) << LastError();
  bp_stream_t a = sim.NewStream(), b = sim.NewStream();
  bp_event_t ea = sim.NewEvent();
  void* x = sim.Alloc(4);
  void* y = sim.Alloc(4);
  sim.Upload(x, kNew, nullptr);
  ASSERT_TRUE(sim.hold().Hold()) << sim.hold().path();
  ASSERT_EQ(sim.Relu(x, y, 4, a), BP_STATUS_OK) << LastError();
  ASSERT_EQ(sim.b().event_record(sim.bd(), ea, a), BP_STATUS_OK) << LastError();
  ASSERT_EQ(sim.b().stream_synchronize(sim.bd(), 0, b), BP_STATUS_OK) << LastError();
  ASSERT_EQ(sim.b().stream_synchronize(sim.bd(), 0, nullptr), BP_STATUS_OK) << LastError();
  EXPECT_EQ(sim.Query(ea), 0) << "A's kernel ended while held";
  sim.hold().Release();
  ASSERT_EQ(sim.b().stream_synchronize(sim.bd(), 0, a), BP_STATUS_OK) << LastError();
  EXPECT_EQ(sim.Query(ea), 1);
  for (void* h : {x, y}) EXPECT_EQ(sim.b().deallocate(sim.bd(), 0, h), BP_STATUS_OK);
  EXPECT_EQ(sim.b().event_destroy(sim.bd(), ea), BP_STATUS_OK);
  for (bp_stream_t s : {a, b}) EXPECT_EQ(sim.b().stream_destroy(sim.bd(), 0, s), BP_STATUS_OK) << LastError();
}

// event_wait orders B's later work after A's recorded work, without blocking
// the host (it returns while A's kernel is held).
TEST(VendorSimStreams, EventWaitOrdersBAfterA) {
  Sim sim(Sim::kHeld);
  ASSERT_EQ(sim.init_status(), BP_STATUS_OK) << LastError();
  EXPECT_EQ(BReadsWhatAWrote(sim, /*wait=*/true, /*b_waits=*/true), kNew);
}

// The data race event_wait prevents is real: without it B reads x while A is
// held, before A's second kernel has written it. (Deliberately racy, so not
// under TSan: only the hold orders the two, and TSan cannot see a file.)
#if !defined(__SANITIZE_THREAD__)
TEST(VendorSimStreams, WithoutEventWaitBRunsFirst) {
  Sim sim(Sim::kHeld);
  ASSERT_EQ(sim.init_status(), BP_STATUS_OK) << LastError();
  EXPECT_EQ(BReadsWhatAWrote(sim, /*wait=*/false, /*b_waits=*/false), kOld);
}
#endif

// The wait is for the generation recorded when event_wait was called: a
// re-record afterwards does not move it, and destroying the event leaves
// the queued wait in force.
TEST(VendorSimStreams, WaitKeepsItsGenerationAndOutlivesTheEvent) {
  Sim sim(Sim::kHeld);
  ASSERT_EQ(sim.init_status(), BP_STATUS_OK) << LastError();
  bp_stream_t a = sim.NewStream(), b = sim.NewStream();
  bp_event_t e = sim.NewEvent(), done_b = sim.NewEvent();
  void* x = sim.Alloc(4);
  void* y = sim.Alloc(4);
  sim.Upload(x, kNew, nullptr);
  ASSERT_TRUE(sim.hold().Hold()) << sim.hold().path();
  ASSERT_EQ(sim.Relu(x, y, 4, a), BP_STATUS_OK) << LastError();
  ASSERT_EQ(sim.b().event_record(sim.bd(), e, a), BP_STATUS_OK) << LastError();
  ASSERT_EQ(sim.b().event_wait(sim.bd(), e, b), BP_STATUS_OK) << LastError();
  ASSERT_EQ(sim.b().event_record(sim.bd(), done_b, b), BP_STATUS_OK) << LastError();
  ASSERT_EQ(sim.b().event_record(sim.bd(), e, nullptr), BP_STATUS_OK) << LastError();  // idle default stream
  ASSERT_EQ(sim.b().event_destroy(sim.bd(), e), BP_STATUS_OK) << LastError();
  ASSERT_EQ(sim.b().stream_synchronize(sim.bd(), 0, nullptr), BP_STATUS_OK) << LastError();
  EXPECT_EQ(sim.Query(done_b), 0) << "B stopped waiting when the event was re-recorded or destroyed";
  sim.hold().Release();
  ASSERT_EQ(sim.b().stream_synchronize(sim.bd(), 0, a), BP_STATUS_OK) << LastError();
  ASSERT_EQ(sim.b().event_synchronize(sim.bd(), done_b), BP_STATUS_OK) << LastError();
  for (void* h : {x, y}) EXPECT_EQ(sim.b().deallocate(sim.bd(), 0, h), BP_STATUS_OK);
  EXPECT_EQ(sim.b().event_destroy(sim.bd(), done_b), BP_STATUS_OK);
  for (bp_stream_t s : {a, b}) EXPECT_EQ(sim.b().stream_destroy(sim.bd(), 0, s), BP_STATUS_OK) << LastError();
}

// elapsed_time: milliseconds between completions, monotonic along a stream,
// covering the time a kernel between the records was held; an event not
// complete yet is a precondition error.
TEST(VendorSimStreams, ElapsedTimeCoversTheHeldKernel) {
  Sim sim(Sim::kHeld);
  ASSERT_EQ(sim.init_status(), BP_STATUS_OK) << LastError();
  bp_stream_t s = sim.NewStream();
  bp_event_t e0 = sim.NewEvent(), e1 = sim.NewEvent(), e2 = sim.NewEvent();
  void* x = sim.Alloc(4);
  void* y = sim.Alloc(4);
  sim.Upload(x, kNew, s);
  ASSERT_TRUE(sim.hold().Hold()) << sim.hold().path();
  ASSERT_EQ(sim.b().event_record(sim.bd(), e0, s), BP_STATUS_OK) << LastError();
  ASSERT_EQ(sim.Relu(x, y, 4, s), BP_STATUS_OK) << LastError();  // held
  ASSERT_EQ(sim.b().event_record(sim.bd(), e1, s), BP_STATUS_OK) << LastError();
  ASSERT_EQ(sim.Relu(y, x, 4, s), BP_STATUS_OK) << LastError();
  ASSERT_EQ(sim.b().event_record(sim.bd(), e2, s), BP_STATUS_OK) << LastError();
  // e0 is done (nothing before it); e1 and e2 wait for the held kernel.
  ASSERT_EQ(sim.b().event_synchronize(sim.bd(), e0), BP_STATUS_OK) << LastError();
  using Clock = std::chrono::steady_clock;           // the plugin stamps events with it
  const Clock::time_point held_from = Clock::now();  // after e0's stamp
  EXPECT_EQ(sim.Query(e1), 0) << "complete while its kernel is held";
  float ms = -1;
  EXPECT_EQ(sim.b().event_elapsed_time(sim.bd(), e0, e2, &ms), BP_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(LastError().find("'end'"), std::string::npos) << LastError();
  EXPECT_EQ(sim.b().event_elapsed_time(sim.bd(), e0, e1, &ms), BP_STATUS_FAILED_PRECONDITION);
  const Clock::time_point held_to = Clock::now();  // before e1's stamp
  sim.hold().Release();
  ASSERT_EQ(sim.b().event_synchronize(sim.bd(), e2), BP_STATUS_OK) << LastError();
  float t01 = -1, t02 = -1, t12 = -1;
  ASSERT_EQ(sim.b().event_elapsed_time(sim.bd(), e0, e1, &t01), BP_STATUS_OK) << LastError();
  ASSERT_EQ(sim.b().event_elapsed_time(sim.bd(), e0, e2, &t02), BP_STATUS_OK) << LastError();
  ASSERT_EQ(sim.b().event_elapsed_time(sim.bd(), e1, e2, &t12), BP_STATUS_OK) << LastError();
  // Not a speed check: e0 completed before held_from and e1 after held_to,
  // so whatever the machine's load, the time between them covers that span
  // (measured on the same clock, converted the same way).
  const float held_ms = std::chrono::duration<float, std::milli>(held_to - held_from).count();
  EXPECT_GE(t01, held_ms);
  EXPECT_GE(t12, 0.0f);
  EXPECT_GE(t02, t01);
  EXPECT_NEAR(t02, t01 + t12, 0.01);
  for (void* h : {x, y}) EXPECT_EQ(sim.b().deallocate(sim.bd(), 0, h), BP_STATUS_OK);
  for (bp_event_t e : {e0, e1, e2}) EXPECT_EQ(sim.b().event_destroy(sim.bd(), e), BP_STATUS_OK);
  EXPECT_EQ(sim.b().stream_destroy(sim.bd(), 0, s), BP_STATUS_OK) << LastError();
}

// stream_destroy with work still queued runs it first: nothing is lost (it
// cannot return while the stream's kernel is held, and the copy queued after
// that kernel has run when it does). Afterwards the stream's value is
// refused, with a message.
TEST(VendorSimStreams, DestroyDrainsPendingWork) {
  Sim sim(Sim::kHeld);
  ASSERT_EQ(sim.init_status(), BP_STATUS_OK) << LastError();
  bp_stream_t s = sim.NewStream();
  bp_event_t started = sim.NewEvent();
  void* x = sim.Alloc(4);
  void* y = sim.Alloc(4);
  void* z = sim.Alloc(4);
  sim.Upload(x, {-1, 2, -3, 4}, nullptr);
  sim.Upload(z, kOld, nullptr);
  ASSERT_TRUE(sim.hold().Hold()) << sim.hold().path();
  ASSERT_EQ(sim.b().event_record(sim.bd(), started, s), BP_STATUS_OK) << LastError();
  ASSERT_EQ(sim.Relu(x, y, 4, s), BP_STATUS_OK) << LastError();  // held
  ASSERT_EQ(sim.b().copy_device_to_device(sim.bd(), 0, y, 0, z, 0, 4 * sizeof(float), s), BP_STATUS_OK) << LastError();
  ASSERT_EQ(sim.b().event_synchronize(sim.bd(), started), BP_STATUS_OK) << LastError();  // the kernel is running
  std::atomic<bool> destroyed{false};
  bp_status_t destroy_status = BP_STATUS_INTERNAL;
  std::thread destroyer([&] {
    destroy_status = sim.b().stream_destroy(sim.bd(), 0, s);
    destroyed = true;
  });
  EXPECT_FALSE(destroyed) << "stream_destroy returned while its stream's kernel was held";
  sim.hold().Release();
  destroyer.join();
  ASSERT_EQ(destroy_status, BP_STATUS_OK);
  EXPECT_EQ(sim.Download(z, 4, nullptr), (std::vector<float>{0, 2, 0, 4})) << "destroy dropped the queued copy";
  EXPECT_EQ(sim.b().event_destroy(sim.bd(), started), BP_STATUS_OK);
  // The destroyed stream is no stream any more.
  EXPECT_EQ(sim.Relu(x, y, 4, s), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("'stream'"), std::string::npos) << LastError();
  EXPECT_EQ(sim.b().stream_synchronize(sim.bd(), 0, s), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("stream_synchronize"), std::string::npos) << LastError();
  std::vector<float> back(4);
  EXPECT_EQ(sim.b().copy_device_to_host(sim.bd(), 0, z, 0, back.data(), sizeof back[0] * 4, s),
            BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("copy_device_to_host"), std::string::npos) << LastError();
  EXPECT_EQ(sim.b().stream_destroy(sim.bd(), 0, s), BP_STATUS_INVALID_ARGUMENT);
  // The default stream is never destroyed.
  EXPECT_EQ(sim.b().stream_destroy(sim.bd(), 0, nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("default stream"), std::string::npos) << LastError();
  for (void* h : {x, y, z}) EXPECT_EQ(sim.b().deallocate(sim.bd(), 0, h), BP_STATUS_OK);
}

// Bad event handles are errors that name the function and the argument;
// destroying NULL is fine.
TEST(VendorSimStreams, BadEventHandlesAreClearErrors) {
  Sim sim(Env{});
  ASSERT_EQ(sim.init_status(), BP_STATUS_OK) << LastError();
  bp_event_t e = sim.NewEvent();
  ASSERT_EQ(sim.b().event_destroy(sim.bd(), e), BP_STATUS_OK);
  EXPECT_EQ(sim.b().event_record(sim.bd(), e, nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("vendor_sim: event_record: 'event'"), std::string::npos) << LastError();
  int32_t done = 0;
  EXPECT_EQ(sim.b().event_query(sim.bd(), e, &done), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("event_query"), std::string::npos) << LastError();
  EXPECT_EQ(sim.b().event_destroy(sim.bd(), e), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(sim.b().event_destroy(sim.bd(), nullptr), BP_STATUS_OK);
  bp_event_t f = sim.NewEvent();
  EXPECT_EQ(sim.b().event_wait(sim.bd(), f, reinterpret_cast<bp_stream_t>(0x1234)), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("event_wait: 'stream'"), std::string::npos) << LastError();
  EXPECT_EQ(sim.b().event_create(sim.bd(), 1, &e), BP_STATUS_OUT_OF_RANGE);
  EXPECT_EQ(sim.b().event_destroy(sim.bd(), f), BP_STATUS_OK);
}

#if !defined(__SANITIZE_THREAD__)  // both make B race with A on purpose
// ---- The deliberately broken modes (test only) ----------------------------
TEST(VendorSimStreamsBroken, IgnoreEventWaitLetsBRunFirst) {
  Sim sim(Sim::kHeld, {{"BP_VENDOR_SIM_BROKEN", "ignore_event_wait"}});
  ASSERT_EQ(sim.init_status(), BP_STATUS_OK) << LastError();
  EXPECT_EQ(BReadsWhatAWrote(sim, /*wait=*/true, /*b_waits=*/false), kOld)
      << "the broken event_wait still ordered B after A";
}

TEST(VendorSimStreamsBroken, EarlyEventCompletesBeforeItsWork) {
  Sim sim(Sim::kHeld, {{"BP_VENDOR_SIM_BROKEN", "early_event"}});
  ASSERT_EQ(sim.init_status(), BP_STATUS_OK) << LastError();
  bp_stream_t a = sim.NewStream();
  bp_event_t e = sim.NewEvent();
  void* x = sim.Alloc(4);
  void* y = sim.Alloc(4);
  sim.Upload(x, kNew, a);
  ASSERT_TRUE(sim.hold().Hold()) << sim.hold().path();
  ASSERT_EQ(sim.Relu(x, y, 4, a), BP_STATUS_OK) << LastError();  // held
  ASSERT_EQ(sim.b().event_record(sim.bd(), e, a), BP_STATUS_OK) << LastError();
  EXPECT_EQ(sim.Query(e), 1) << "the early event waited for its work";
  // Returns although the kernel the event captures is still held.
  ASSERT_EQ(sim.b().event_synchronize(sim.bd(), e), BP_STATUS_OK);
  sim.hold().Release();
  for (void* h : {x, y}) EXPECT_EQ(sim.b().deallocate(sim.bd(), 0, h), BP_STATUS_OK);
  EXPECT_EQ(sim.b().event_destroy(sim.bd(), e), BP_STATUS_OK);
  EXPECT_EQ(sim.b().stream_destroy(sim.bd(), 0, a), BP_STATUS_OK) << LastError();
  // And a wait on such an event orders nothing.
  EXPECT_EQ(BReadsWhatAWrote(sim, /*wait=*/true, /*b_waits=*/false), kOld) << "the early event still ordered B after A";
}
#endif

TEST(VendorSimStreamsBroken, UnknownModeFailsInit) {
  Sim sim(Env{{"BP_VENDOR_SIM_BROKEN", "ignore_everything"}});
  EXPECT_EQ(sim.init_status(), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("BP_VENDOR_SIM_BROKEN"), std::string::npos) << LastError();
  EXPECT_NE(LastError().find("ignore_everything"), std::string::npos) << LastError();
}

}  // namespace
