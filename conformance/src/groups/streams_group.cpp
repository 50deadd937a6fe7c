// The streams group of bp-conformance (--group streams): the ordering rules
// of backplane/streams.h, checked on each (backend, device) with work that
// takes measurable time (streams_fixture.h's slow chain; on vendor_sim,
// BP_VENDOR_SIM_ASYNC=1 with BP_VENDOR_SIM_KERNEL_US makes every kernel
// slow). Each failure message names the ordering that was violated; each
// skip says what the backend lacks. A passing test may leave a note (a
// GoogleTest property "note") that the report prints: what the device showed.
//
// Public C API only. Every test leaves the thread on the default stream and
// destroys what it created.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "groups/streams_fixture.h"

namespace bpc {
namespace {

using abirt::CallOp;
using streams::ChainValue;
using streams::Held;
using streams::kN;
using streams::kSteps;
using streams::LastError;
using streams::ChainX0;
using streams::FinalOf;
using streams::kPoison;
using streams::NoChain;
using streams::X0;

// Runs fn on a thread of its own; false when it has not returned within
// `seconds` (the thread is then left behind, blocked).
bool FinishesWithin(double seconds, std::function<bp_status_t()> fn, bp_status_t* st, std::string* msg) {
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    bp_status_t st = BP_STATUS_OK;
    std::string msg;
  };
  auto sh = std::make_shared<Shared>();
  std::thread([sh, fn] {
    const bp_status_t r = fn();
    const std::string m = r == BP_STATUS_OK ? "" : LastError();
    std::lock_guard<std::mutex> lock(sh->mu);
    sh->st = r;
    sh->msg = m;
    sh->done = true;
    sh->cv.notify_all();
  }).detach();
  std::unique_lock<std::mutex> lock(sh->mu);
  if (!sh->cv.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return sh->done; })) return false;
  *st = sh->st;
  *msg = sh->msg;
  return true;
}

// ---- 1. one stream ---------------------------------------------------------------

TEST_P(StreamsTest, OneStreamRunsItsWorkInOrder) {
  BPS_CREATE_STREAM(a);
  BPS_OK(bp_set_current_stream(a.get()));
  Held x = Upload(Start()), one = Upload(Filled(1.0));
  ASSERT_TRUE(x && one) << "bp_tensor_from_host on stream A: " << LastError();
  std::string err;
  Held snapshot;  // a device copy between the kernels sees exactly the first half
  ASSERT_TRUE(Chain(x.get(), one.get(), kSteps / 2, &err)) << err;
  BPS_OK(bp_tensor_to_device(x.get(), dev(), snapshot.out()));
  ASSERT_TRUE(Chain(x.get(), one.get(), kSteps - kSteps / 2, &err)) << err;
  std::vector<double> got, half;
  ASSERT_TRUE(ReadOn(a.get(), x.get(), &got, &err)) << err;
  ASSERT_TRUE(ReadOn(a.get(), snapshot.get(), &half, &err)) << err;
  const std::string bad = Mismatch(got, FinalOf(kSteps), ChainX0());
  BPS_EXPECT_NO_MISMATCH(bad)
      << "one stream out of order: " << kSteps
      << " dependent kernels on created stream A did not run in enqueue order, or bp_tensor_to_host "
         "on A returned before A's earlier kernels finished: "
      << bad;
  const std::string bad_half = Mismatch(half, FinalOf(kSteps / 2), ChainX0());
  BPS_EXPECT_NO_MISMATCH(bad_half)
      << "one stream out of order: a device-to-device copy enqueued on stream A after step " << kSteps / 2
      << " did not see exactly the kernels before it: " << bad_half;
}

// ---- 2. an event orders stream B after stream A ------------------------------------

TEST_P(StreamsTest, EventWaitOrdersTheConsumerStreamAfterTheProducer) {
  BPS_CREATE_STREAM(a);
  BPS_CREATE_STREAM(b);
  BPS_CREATE_EVENT(e, dev());
  BPS_OK(bp_set_current_stream(b.get()));
  Held one_b = Upload(Filled(1.0));
  BPS_OK(bp_set_current_stream(a.get()));
  Held x = Upload(Start()), one = Upload(Filled(1.0));
  ASSERT_TRUE(x && one && one_b) << "bp_tensor_from_host: " << LastError();
  std::string err;
  ASSERT_TRUE(Chain(x.get(), one.get(), kSteps, &err)) << err;  // producer: slow, on A
  BPS_OK(bp_event_record(e.get(), a.get()));
  BPS_OK(bp_stream_wait_event(b.get(), e.get()));
  BPS_OK(bp_set_current_stream(b.get()));
  BPS_OK(bp_tensor_record_stream(x.get(), b.get()));
  Held y;  // consumer, on B: Y = X + 1
  ASSERT_EQ(CallOp(ctx(), "add.Tensor", {vt(x.get()), vt(one_b.get())}, &y), BP_STATUS_OK) << LastError();
  std::vector<double> got;
  ASSERT_TRUE(ReadOn(b.get(), y.get(), &got, &err)) << err;  // synchronizes B only
  const std::string bad = Mismatch(got, FinalOf(kSteps, 1.0), ChainX0(), 1.0);
  BPS_EXPECT_NO_MISMATCH(bad)
      << "stream B ran before the event recorded on stream A completed: event_wait not honoured "
         "(bp_event_record(E, A) after A's "
      << kSteps << "-kernel chain writing X, bp_stream_wait_event(B, E), then Y = X + 1 on B): Y " << bad;
  BPS_OK(bp_stream_synchronize(a.get()));
}

// ---- 3. an event completes only after the work it captured -------------------------

TEST_P(StreamsTest, EventCompletesOnlyAfterTheWorkItCaptured) {
  BPS_CREATE_STREAM(a);
  BPS_CREATE_STREAM(b);
  BPS_CREATE_EVENT(e, dev());
  BPS_OK(bp_set_current_stream(a.get()));
  Held x = Upload(Start()), one = Upload(Filled(1.0));
  ASSERT_TRUE(x && one) << "bp_tensor_from_host: " << LastError();
  std::string err;
  ASSERT_TRUE(Chain(x.get(), one.get(), kSteps, &err)) << err;
  BPS_OK(bp_event_record(e.get(), a.get()));
  int32_t early = -1;
  BPS_OK(bp_event_query(e.get(), &early));
  BPS_OK(bp_event_synchronize(e.get()));
  int32_t done = -1;
  BPS_OK(bp_event_query(e.get(), &done));
  EXPECT_EQ(done, 1) << "bp_event_query reports the event incomplete after bp_event_synchronize returned";
  std::vector<double> got;
  ASSERT_TRUE(ReadOn(b.get(), x.get(), &got, &err)) << err;  // synchronizes B only: A is not waited for here
  const std::string bad = Mismatch(got, FinalOf(kSteps), ChainX0());
  BPS_EXPECT_NO_MISMATCH(bad)
      << "event reported complete before the work it captured finished: bp_event_synchronize(E) "
         "returned (E recorded on stream A after a "
      << kSteps << "-kernel chain) while the chain was still running; X read through stream B: " << bad;
  RecordProperty("note", early == 0 ? "the event was still pending right after bp_event_record (asynchronous device)"
                                    : "the event was complete right after bp_event_record (the device had "
                                      "finished, or is synchronous)");
  BPS_OK(bp_stream_synchronize(a.get()));
}

// ---- 4. without an event: the race (informational) -------------------------------

TEST_P(StreamsTest, WithoutAnEventTwoStreamsMayOverlap) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "this test races two streams on purpose; a ThreadSanitizer build would report the race itself";
#endif
  BPS_CREATE_STREAM(a);
  BPS_CREATE_STREAM(b);
  BPS_OK(bp_set_current_stream(b.get()));
  Held one_b = Upload(Filled(1.0));
  BPS_OK(bp_set_current_stream(a.get()));
  Held x = Upload(Start()), one = Upload(Filled(1.0));
  ASSERT_TRUE(x && one && one_b) << "bp_tensor_from_host: " << LastError();
  std::string err;
  ASSERT_TRUE(Chain(x.get(), one.get(), kSteps, &err)) << err;
  BPS_OK(bp_set_current_stream(b.get()));
  BPS_OK(bp_tensor_record_stream(x.get(), b.get()));
  Held y;  // no event: B may read X at any step of A's chain
  ASSERT_EQ(CallOp(ctx(), "add.Tensor", {vt(x.get()), vt(one_b.get())}, &y), BP_STATUS_OK) << LastError();
  std::vector<double> got;
  ASSERT_TRUE(ReadOn(b.get(), y.get(), &got, &err)) << err;
  const std::string stale = Mismatch(got, FinalOf(kSteps, 1.0), ChainX0(), 1.0);
  RecordProperty("note", stale.empty() ? "no overlap seen: stream B read X after A's chain had finished (a "
                                         "synchronous device cannot show one)"
                                       : "streams A and B ran concurrently: without an event, B read stale data (Y " +
                                             stale + ")");
  // What must hold: synchronizing A waits for all of A's chain.
  BPS_OK(bp_stream_synchronize(a.get()));
  std::vector<double> final_x;
  ASSERT_TRUE(ReadOn(b.get(), x.get(), &final_x, &err)) << err;
  const std::string bad = Mismatch(final_x, FinalOf(kSteps), ChainX0());
  BPS_EXPECT_NO_MISMATCH(bad) << "bp_stream_synchronize(A) returned before A's " << kSteps
                              << "-kernel chain finished (X read through stream B afterwards): " << bad;
}

// ---- 5. the caching allocator across streams ---------------------------------------

TEST_P(StreamsTest, AllocatorKeepsABlockUntilTheStreamsUsingItFinish) {
  BPS_CREATE_STREAM(a);
  BPS_CREATE_STREAM(b);
  BPS_CREATE_EVENT(b_done, dev());
  const uint64_t bytes = static_cast<uint64_t>(kN) * 4;
  for (const auto& [fresh, who] : {std::pair{a.get(), "A"}, std::pair{b.get(), "B"}}) {
    bp_allocator_stats_t st{};
    st.struct_size = sizeof(st);
    BPS_OK(bp_stream_allocator_stats(fresh, &st));
    if (st.allocated_bytes != 0)
      ADD_FAILURE() << "new stream " << who << " starts with allocated_bytes "
                    << static_cast<int64_t>(st.allocated_bytes)
                    << " in bp_stream_allocator_stats: blocks of another (destroyed) stream were "
                       "credited to it";
  }
  BPS_OK(bp_set_current_stream(a.get()));
  Held x = Upload(Start()), poison = Upload(Filled(kPoison));
  BPS_OK(bp_set_current_stream(b.get()));
  Held s = Upload(Filled(0.0)), one_b = Upload(Filled(1.0));
  ASSERT_TRUE(x && poison && s && one_b) << "bp_tensor_from_host: " << LastError();
  std::string err;
  const streams::Address x_at = AddressOf(x.get(), &err);
  ASSERT_EQ(err, "");
  // B: a slow chain first, the read of X (allocated on A) last.
  ASSERT_TRUE(Chain(s.get(), one_b.get(), kSteps, &err)) << err;
  Held y;
  ASSERT_EQ(CallOp(ctx(), "add.Tensor", {vt(x.get()), vt(s.get())}, &y), BP_STATUS_OK) << LastError();
  BPS_OK(bp_tensor_record_stream(x.get(), b.get()));
  BPS_OK(bp_event_record(b_done.get(), b.get()));
  x = Held();  // the last reference: X's block must wait for B's work
  // A: new tensors of X's size, written with the poison at once.
  BPS_OK(bp_set_current_stream(a.get()));
  Held z[3];
  streams::Address z_at[3];
  for (int k = 0; k < 3; ++k) {
    ASSERT_EQ(CallOp(ctx(), "add.Tensor", {vt(poison.get()), vt(poison.get())}, &z[k]), BP_STATUS_OK) << LastError();
    z_at[k] = AddressOf(z[k].get(), &err);
    ASSERT_EQ(err, "");
  }
  bp_allocator_stats_t sa{}, sb{};
  sa.struct_size = sb.struct_size = sizeof(bp_allocator_stats_t);
  BPS_OK(bp_stream_allocator_stats(a.get(), &sa));
  BPS_OK(bp_stream_allocator_stats(b.get(), &sb));
  int32_t complete = -1;
  BPS_OK(bp_event_query(b_done.get(), &complete));
  const bool pending = complete == 0;  // B's work was pending during the allocations and the stats above
  if (pending) {
    for (int k = 0; k < 3; ++k) {
      EXPECT_NE(z_at[k], x_at) << "the caching allocator handed X's block to new tensor " << k + 1
                               << " on stream A while stream B's work using X (bp_tensor_record_stream(X, B)) was "
                                  "still pending: record_stream not honoured";
    }
  }
  // Per-stream counters: sane, and each stream counts its own blocks.
  for (const auto& [st, who, live, made] :
       {std::tuple{sa, "A", (pending ? 5 : 4) * bytes, 5}, std::tuple{sb, "B", 3 * bytes, 3}}) {
    EXPECT_LE(st.allocated_bytes, st.reserved_bytes) << "stream " << who << ": allocated above reserved";
    EXPECT_GE(st.peak_allocated_bytes, st.allocated_bytes) << "stream " << who << ": peak below allocated";
    if (st.allocated_bytes < live)
      ADD_FAILURE() << "stream " << who << "'s allocated_bytes (" << static_cast<int64_t>(st.allocated_bytes)
                    << ") miss live blocks allocated on it (" << live / bytes << " tensors of " << bytes << " bytes"
                    << (pending && *who == 'A' ? ", X's block waiting for B's work included" : "") << ")";
    EXPECT_GE(st.device_allocations + st.cache_hits, static_cast<uint64_t>(made))
        << "stream " << who << ": fewer requests counted than tensors allocated on it";
  }
  bp_allocator_stats_t small{};
  small.struct_size = 0;
  EXPECT_EQ(bp_stream_allocator_stats(a.get(), &small), BP_STATUS_INVALID_ARGUMENT)
      << "bp_stream_allocator_stats with struct_size 0";
  EXPECT_EQ(bp_stream_allocator_stats(nullptr, &sa), BP_STATUS_INVALID_ARGUMENT)
      << "bp_stream_allocator_stats(NULL stream)";
  std::vector<double> got;
  ASSERT_TRUE(ReadOn(b.get(), y.get(), &got, &err)) << err;
  const double base = ChainValue(0.0, kSteps);
  const std::string bad = Mismatch(
      got, [base](int64_t i) { return X0(i) + base; }, NoChain());
  const bool poisoned = !bad.empty() && got[0] == 2 * kPoison + base;
  BPS_EXPECT_NO_MISMATCH(bad) << "stream B's result was corrupted: X's memory was reused before B's work that read it "
                                 "finished (X released after bp_tensor_record_stream(X, B); new tensors on stream A "
                                 "written with "
                              << 2 * kPoison << (poisoned ? ", which B read" : "")
                              << "): record_stream not honoured: Y " << bad;
  // B done: a same-size allocation on A may now reuse X's block.
  z[0] = Held();
  BPS_OK(bp_set_current_stream(a.get()));
  Held w;
  ASSERT_EQ(CallOp(ctx(), "add.Tensor", {vt(poison.get()), vt(poison.get())}, &w), BP_STATUS_OK) << LastError();
  const streams::Address w_at = AddressOf(w.get(), &err);
  RecordProperty("note", std::string(pending ? "B's work was pending during the allocations on A: X's block was "
                                               "kept (checked)"
                                             : "B's work had finished before the allocations on A (pointer check "
                                               "not applicable)") +
                             (w_at == x_at ? "; after B finished, A reused X's block" : ""));
  BPS_OK(bp_stream_synchronize(a.get()));
}

// ---- 6. event timing ---------------------------------------------------------------

TEST_P(StreamsTest, EventTimesAreMonotonicOnOneStream) {
  streams::Stream created;
  std::string why;
  bp_stream_handle_t* s = NewStream(&created, &why) == BP_STATUS_OK ? created.get() : Default();
  ASSERT_NE(s, nullptr) << LastError();
  BPS_CREATE_EVENT(e1, dev());
  BPS_CREATE_EVENT(e2, dev());
  BPS_CREATE_EVENT(e3, dev());
  BPS_CREATE_EVENT(never, dev());
  BPS_OK(bp_set_current_stream(s));
  Held x = Upload(Start()), one = Upload(Filled(1.0));
  ASSERT_TRUE(x && one) << "bp_tensor_from_host: " << LastError();
  std::string err;
  BPS_OK(bp_event_record(e1.get(), s));
  ASSERT_TRUE(Chain(x.get(), one.get(), kSteps, &err)) << err;
  BPS_OK(bp_event_record(e2.get(), s));
  ASSERT_TRUE(Chain(x.get(), one.get(), kSteps / 2, &err)) << err;
  BPS_OK(bp_event_record(e3.get(), s));
  BPS_OK(bp_stream_synchronize(s));
  float t12 = -1, t13 = -1, t23 = -1;
  const bp_status_t st = bp_event_elapsed_time(e1.get(), e2.get(), &t12);
  if (st == BP_STATUS_UNIMPLEMENTED) {
    GTEST_SKIP() << "backend '" << GetParam().backend_name
                 << "' has no event timing (event_elapsed_time NULL): " << LastError();
  }
  ASSERT_EQ(st, BP_STATUS_OK) << "bp_event_elapsed_time(e1, e2) after bp_stream_synchronize: " << LastError();
  BPS_OK(bp_event_elapsed_time(e1.get(), e3.get(), &t13));
  BPS_OK(bp_event_elapsed_time(e2.get(), e3.get(), &t23));
  EXPECT_GE(t12, 0.0f) << "event times out of order: e2, recorded after e1 on one stream, completed " << -t12
                       << " ms before e1";
  EXPECT_GE(t23, 0.0f) << "event times out of order: e3, recorded after e2 on one stream, completed " << -t23
                       << " ms before e2";
  EXPECT_GE(t13, t12) << "event times out of order: elapsed(e1, e3) = " << t13 << " ms < elapsed(e1, e2) = " << t12
                      << " ms, though e3 was recorded after e2 on one stream";
  float t = 0;
  EXPECT_EQ(bp_event_elapsed_time(e1.get(), never.get(), &t), BP_STATUS_FAILED_PRECONDITION)
      << "bp_event_elapsed_time with an end event never recorded";
  std::vector<double> got;
  ASSERT_TRUE(ReadOn(s, x.get(), &got, &err)) << err;
  const std::string bad = Mismatch(got, FinalOf(kSteps + kSteps / 2), NoChain());
  BPS_EXPECT_NO_MISMATCH(bad) << "one stream out of order: the timed chain's result: " << bad;
  RecordProperty("note", "elapsed(e1, e2) = " + std::to_string(t12) + " ms over " + std::to_string(kSteps) +
                             " kernels, elapsed(e1, e3) = " + std::to_string(t13) + " ms");
}

// ---- 7. the current stream is per thread (and per device) ---------------------------

TEST_P(StreamsTest, CurrentStreamIsPerThread) {
  BPS_CREATE_STREAM(s);
  BPS_CREATE_STREAM(s2);
  bp_device_t on{};
  BPS_OK(bp_stream_device(s.get(), &on));
  EXPECT_TRUE(on.backend == dev().backend && on.index == dev().index) << "bp_stream_device names another device";
  EXPECT_EQ(Current(dev()), Default()) << "the thread's current stream is not the default before any "
                                          "bp_set_current_stream";
  BPS_OK(bp_set_current_stream(s.get()));
  EXPECT_EQ(Current(dev()), s.get()) << "bp_get_current_stream does not return the stream just set";
  bp_stream_handle_t *seen = nullptr, *own = nullptr;
  std::thread([&] {
    seen = Current(dev());
    if (bp_set_current_stream(s2.get()) == BP_STATUS_OK) own = Current(dev());
  }).join();
  EXPECT_EQ(seen, Default()) << "the current stream is not per thread: another thread's bp_get_current_stream "
                                "returned this thread's current stream instead of the default";
  EXPECT_EQ(own, s2.get()) << "the other thread's own bp_set_current_stream did not take";
  EXPECT_EQ(Current(dev()), s.get()) << "the current stream is not per thread: another thread's "
                                        "bp_set_current_stream changed this thread's";
  if (dev().backend != abirt::kCpu.backend) {
    EXPECT_EQ(Current(abirt::kCpu), Default(abirt::kCpu))
        << "the current stream is not per device: setting it on " << name() << " changed the cpu device's";
  }
  BPS_OK(bp_set_current_stream(Default()));
  // The other thread has exited: it gave its current stream up.
  EXPECT_EQ(bp_stream_destroy(s2.release()), BP_STATUS_OK)
      << "bp_stream_destroy of a stream only an exited thread had made current: " << LastError();
}

// ---- 8. bp_device_synchronize waits for every stream ------------------------------

TEST_P(StreamsTest, DeviceSynchronizeWaitsForEveryStream) {
  BPS_CREATE_STREAM(a);
  BPS_CREATE_STREAM(b);
  BPS_OK(bp_set_current_stream(a.get()));
  Held x = Upload(Start()), one = Upload(Filled(1.0));
  ASSERT_TRUE(x && one) << "bp_tensor_from_host: " << LastError();
  std::string err;
  ASSERT_TRUE(Chain(x.get(), one.get(), kSteps, &err)) << err;
  BPS_OK(bp_device_synchronize(ctx(), dev()));
  std::vector<double> got;
  ASSERT_TRUE(ReadOn(b.get(), x.get(), &got, &err)) << err;
  const std::string bad = Mismatch(got, FinalOf(kSteps), ChainX0());
  BPS_EXPECT_NO_MISMATCH(bad)
      << "bp_device_synchronize returned before the work on created stream A finished (it must "
         "wait for every stream of the device, not only the default one); X read through stream B: "
      << bad;
}

// ---- 9. bad input ------------------------------------------------------------------

TEST_P(StreamsTest, WaitOnAnEventOfAnotherDeviceIsRefused) {
  bp_device_t other = abirt::kCpu;
  if (dev().backend == abirt::kCpu.backend) {
    bool found = false;
    for (const Target& t : suite_targets()) {
      if (t.backend != dev().backend) {
        other = bp_device_t{t.backend, t.device};
        found = true;
        break;
      }
    }
    if (!found) GTEST_SKIP() << "no second device loaded besides " << name() << " (run with another backend too)";
  }
  BPS_CREATE_EVENT(e, other);
  bp_stream_handle_t* mine = Default();
  ASSERT_NE(mine, nullptr) << LastError();
  BPS_OK(bp_event_record(e.get(), Default(other)));
  EXPECT_EQ(bp_stream_wait_event(mine, e.get()), BP_STATUS_INVALID_ARGUMENT)
      << "bp_stream_wait_event(stream of " << name() << ", event of another device)";
  const std::string msg = bp_last_error_message();
  EXPECT_NE(msg.find("bp_stream_wait_event"), std::string::npos) << "the message does not name the function: " << msg;
  EXPECT_NE(msg.find("event"), std::string::npos) << "the message does not name the event argument: " << msg;
  EXPECT_EQ(bp_event_record(e.get(), mine), BP_STATUS_INVALID_ARGUMENT)
      << "bp_event_record(event of another device, stream of " << name() << ")";
  EXPECT_NE(std::string(bp_last_error_message()).find("bp_event_record"), std::string::npos)
      << "the message does not name the function: " << bp_last_error_message();
  // Nothing hangs: the stream still runs and synchronizes.
  Held x = Upload(Filled(1.0));
  ASSERT_TRUE(x) << LastError();
  ASSERT_EQ(CallOp(ctx(), "add_.Tensor", {vt(x.get()), vt(x.get())}, nullptr), BP_STATUS_OK) << LastError();
  bp_status_t st = BP_STATUS_OK;
  std::string sync_msg;
  ASSERT_TRUE(FinishesWithin(
      30.0, [mine] { return bp_stream_synchronize(mine); }, &st, &sync_msg))
      << "bp_stream_synchronize hung (30 s) after a refused bp_stream_wait_event with another device's event";
  EXPECT_EQ(st, BP_STATUS_OK) << sync_msg;
}

TEST_P(StreamsTest, DestroyOfTheDefaultStreamIsRefused) {
  bp_stream_handle_t* def = Default();
  ASSERT_NE(def, nullptr) << "bp_stream_get_default: " << LastError();
  EXPECT_EQ(bp_stream_destroy(def), BP_STATUS_FAILED_PRECONDITION) << "bp_stream_destroy(default stream)";
  const std::string msg = bp_last_error_message();
  EXPECT_NE(msg.find("bp_stream_destroy"), std::string::npos) << "the message does not name the function: " << msg;
  EXPECT_NE(msg.find("default"), std::string::npos) << "the message does not say the stream is the default: " << msg;
  EXPECT_EQ(bp_stream_destroy(nullptr), BP_STATUS_OK) << "bp_stream_destroy(NULL) must be accepted";
  // The default stream still works.
  Held x = Upload(Filled(2.0));
  ASSERT_TRUE(x) << LastError();
  std::vector<double> got;
  std::string err;
  ASSERT_TRUE(ReadOn(def, x.get(), &got, &err)) << err;
  EXPECT_EQ(got, Filled(2.0)) << "the default stream after a refused bp_stream_destroy";
}

TEST_P(StreamsTest, DestroyOfACurrentStreamIsRefused) {
  BPS_CREATE_STREAM(s);
  BPS_OK(bp_set_current_stream(s.get()));
  EXPECT_EQ(bp_stream_destroy(s.get()), BP_STATUS_FAILED_PRECONDITION)
      << "bp_stream_destroy of the calling thread's current stream";
  const std::string msg = bp_last_error_message();
  EXPECT_NE(msg.find("bp_stream_destroy"), std::string::npos) << "the message does not name the function: " << msg;
  EXPECT_NE(msg.find("current"), std::string::npos) << "the message does not say the stream is current: " << msg;
  BPS_OK(bp_set_current_stream(Default()));
  // Another thread's current stream is refused too, while that thread holds it.
  std::mutex mu;
  std::condition_variable cv;
  bool set = false, release = false;
  std::thread holder([&] {
    bp_set_current_stream(s.get());
    std::unique_lock<std::mutex> lock(mu);
    set = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
    bp_set_current_stream(Default());
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return set; });
  }
  const bp_status_t other = bp_stream_destroy(s.get());
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
    cv.notify_all();
  }
  holder.join();
  EXPECT_EQ(other, BP_STATUS_FAILED_PRECONDITION) << "bp_stream_destroy of another thread's current stream";
  if (other == BP_STATUS_OK) s.release();  // already gone
}

TEST_P(StreamsTest, DestroyWithPendingWorkKeepsTheWork) {
  BPS_CREATE_STREAM(c);
  BPS_OK(bp_set_current_stream(c.get()));
  Held x = Upload(Start()), one = Upload(Filled(1.0));
  ASSERT_TRUE(x && one) << "bp_tensor_from_host: " << LastError();
  std::string err;
  ASSERT_TRUE(Chain(x.get(), one.get(), kSteps, &err)) << err;
  BPS_OK(bp_set_current_stream(Default()));
  const bp_status_t st = bp_stream_destroy(c.release());
  EXPECT_EQ(st, BP_STATUS_OK) << "bp_stream_destroy of a stream with pending work: " << LastError();
  std::vector<double> got;
  ASSERT_TRUE(ReadOn(Default(), x.get(), &got, &err)) << err;  // the default stream has nothing to wait for
  const std::string bad = Mismatch(got, FinalOf(kSteps), ChainX0());
  BPS_EXPECT_NO_MISMATCH(bad)
      << "bp_stream_destroy returned before the work enqueued on the stream finished (or lost it): "
         "X, written by a "
      << kSteps << "-kernel chain on the destroyed stream, read through the default stream: " << bad;
  // X's block outlived its stream: releasing it now must not be counted
  // against a stream created since (which may reuse the backend's handle).
  streams::Stream later;
  ASSERT_EQ(NewStream(&later, &err), BP_STATUS_OK) << err;
  x = Held();
  bp_allocator_stats_t stats{};
  stats.struct_size = sizeof(stats);
  BPS_OK(bp_stream_allocator_stats(later.get(), &stats));
  if (stats.allocated_bytes != 0) {
    ADD_FAILURE() << "bp_stream_allocator_stats: a stream created after another was destroyed has allocated_bytes "
                  << static_cast<int64_t>(stats.allocated_bytes)
                  << " after a tensor allocated on the destroyed stream was released: the block was credited to the "
                     "new stream";
  }
}

}  // namespace

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(StreamsTest);
INSTANTIATE_TEST_SUITE_P(Streams, StreamsTest, ::testing::ValuesIn(suite_targets()), TargetName());

}  // namespace bpc
