// The streams group of bp-conformance, part 2 (streams_group.cpp has the
// ordering rules and bad input): asynchronous copies with pinned host memory
// and graph capture and replay, checked on each (backend, device) against
// the eager chain. Public C API only; every test leaves the thread on the
// default stream and destroys what it created.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "groups/streams_fixture.h"

namespace bpc {
namespace {

using abirt::CallOp;
using streams::ChainX0;
using streams::FinalOf;
using streams::Held;
using streams::kN;
using streams::kPoison;
using streams::kSteps;
using streams::LastError;
using streams::NoChain;
using streams::X0;

// ---- 8b. asynchronous copies with pinned host memory ----------------------------

TEST_P(StreamsTest, AsyncCopiesWithPinnedMemoryFollowTheStream) {
  BPS_CREATE_STREAM(a);
  BPS_OK(bp_set_current_stream(a.get()));
  Held x = Upload(Start()), one = Upload(Filled(1.0)), y = Upload(Filled(0.0));
  ASSERT_TRUE(x && one && y) << "bp_tensor_from_host: " << LastError();
  const size_t nbytes = static_cast<size_t>(kN) * sizeof(float);
  void* pinned = nullptr;
  BPS_OK(bp_host_alloc(ctx(), dev(), nbytes, &pinned));
  ASSERT_NE(pinned, nullptr);
  auto* host = static_cast<float*>(pinned);
  for (int64_t i = 0; i < kN; ++i) host[i] = static_cast<float>(kPoison);
  std::string err;
  ASSERT_TRUE(Chain(x.get(), one.get(), kSteps, &err)) << err;
  // Device to host, after the chain on the same stream: the copy sees its end.
  BPS_OK(bp_tensor_to_host_async(x.get(), pinned, nbytes));
  BPS_OK(bp_stream_synchronize(a.get()));
  std::vector<double> got(host, host + kN);
  const std::string bad = Mismatch(got, FinalOf(kSteps), ChainX0());
  BPS_EXPECT_NO_MISMATCH(bad) << "bp_tensor_to_host_async did not copy X as stream A left it after its "
                              << kSteps << "-kernel chain (the copy must follow the stream's earlier work): "
                              << bad;
  // Host to device: the bytes land in Y in stream order (Y += 1 after them).
  for (int64_t i = 0; i < kN; ++i) host[i] = static_cast<float>(X0(i));
  BPS_OK(bp_tensor_from_host_async(y.get(), pinned, nbytes));
  BPS_OK(CallOp(ctx(), "add_.Tensor", {vt(y.get()), vt(one.get())}, nullptr));
  std::vector<double> y_got;
  ASSERT_TRUE(ReadOn(a.get(), y.get(), &y_got, &err)) << err;
  const std::string bad_y = Mismatch(y_got, [](int64_t i) { return X0(i) + 1.0; }, NoChain());
  BPS_EXPECT_NO_MISMATCH(bad_y) << "bp_tensor_from_host_async's bytes did not reach Y before the add_ enqueued "
                                   "after it on stream A: "
                                << bad_y;
  // A block freed while a copy with it is still queued is not handed out again until the stream passes it.
  ASSERT_TRUE(Chain(x.get(), one.get(), kSteps, &err)) << err;
  BPS_OK(bp_tensor_to_host_async(x.get(), pinned, nbytes));
  BPS_CREATE_EVENT(pending, dev());
  BPS_OK(bp_event_record(pending.get(), a.get()));
  BPS_OK(bp_host_free(ctx(), pinned));
  int32_t done = -1;
  BPS_OK(bp_event_query(pending.get(), &done));
  void* again = nullptr;
  BPS_OK(bp_host_alloc(ctx(), dev(), nbytes, &again));
  if (done == 0) {
    EXPECT_NE(again, pinned) << "bp_host_alloc handed out a pinned block whose asynchronous copy on stream A was "
                                "still queued (freed with bp_host_free meanwhile): the copy would overwrite it";
  }
  BPS_OK(bp_stream_synchronize(a.get()));
  BPS_OK(bp_host_free(ctx(), again));
  // Bad input: memory bp_host_alloc did not return, a wrong size.
  std::vector<float> plain(static_cast<size_t>(kN));
  EXPECT_EQ(bp_tensor_to_host_async(x.get(), plain.data(), nbytes), BP_STATUS_INVALID_ARGUMENT)
      << "bp_tensor_to_host_async accepted memory that is not from bp_host_alloc";
  EXPECT_NE(LastError().find("bp_host_alloc"), std::string::npos) << LastError();
  EXPECT_EQ(bp_host_free(ctx(), plain.data()), BP_STATUS_INVALID_ARGUMENT);
}

// ---- 8c. graph capture and replay -----------------------------------------------

// A captured graph; destroyed with the object.
struct Graph {
  bp_graph_t* g = nullptr;
  ~Graph() { bp_graph_destroy(g); }
};

TEST_P(StreamsTest, GraphReplayEqualsEagerAndReplaysNTimes) {
  BPS_CREATE_STREAM(a);
  BPS_CREATE_STREAM(b);
  BPS_OK(bp_set_current_stream(a.get()));
  Held x = Upload(Start()), one = Upload(Filled(1.0));
  ASSERT_TRUE(x && one) << "bp_tensor_from_host: " << LastError();
  constexpr int kPerGraph = 4;  // steps the graph holds (even: the chain's parity continues across replays)
  BPS_OK(bp_graph_begin_capture(a.get()));
  std::string err;
  const bool ran = Chain(x.get(), one.get(), kPerGraph, &err);
  Graph graph;
  const bp_status_t end = bp_graph_end_capture(a.get(), &graph.g);
  ASSERT_TRUE(ran) << "during the capture: " << err;
  ASSERT_EQ(end, BP_STATUS_OK) << "bp_graph_end_capture of a " << kPerGraph << "-kernel chain: " << LastError();
  bp_graph_info_t info{};
  info.struct_size = sizeof(info);
  BPS_OK(bp_graph_info(graph.g, &info));
  EXPECT_EQ(info.num_nodes, kPerGraph) << "the graph holds " << info.num_nodes << " nodes for " << kPerGraph
                                       << " operator calls";
  // The capture ran the chain once; three replays on A and one on B (ordered after A by an event) follow it.
  constexpr int kReplays = 3;
  for (int r = 0; r < kReplays; ++r) BPS_OK(bp_graph_launch(graph.g, a.get()));
  BPS_CREATE_EVENT(replayed, dev());
  BPS_OK(bp_event_record(replayed.get(), a.get()));
  BPS_OK(bp_stream_wait_event(b.get(), replayed.get()));
  BPS_OK(bp_graph_launch(graph.g, b.get()));
  std::vector<double> got;
  ASSERT_TRUE(ReadOn(b.get(), x.get(), &got, &err)) << err;
  const int steps = kPerGraph * (kReplays + 2);
  const std::string bad = Mismatch(got, FinalOf(steps), ChainX0(), 0.0);
  BPS_EXPECT_NO_MISMATCH(bad) << "after the capture and " << kReplays + 1 << " replays of a " << kPerGraph
                              << "-kernel graph (the last on stream B after an event), X is not the eager chain's "
                              << steps << "-step value: " << bad;
  BPS_OK(bp_stream_synchronize(a.get()));
}

TEST_P(StreamsTest, AnErrorInAReplayedGraphSurfaces) {
  BPS_CREATE_STREAM(a);
  BPS_OK(bp_set_current_stream(a.get()));
  Held x = abirt::FromHost(ctx(), dev(), {4}, DType::kFloat32, {1, 2, 3, 4});
  Held idx = abirt::FromHost(ctx(), dev(), {2}, DType::kInt64, {3, 0});
  Held bad_idx = abirt::FromHost(ctx(), dev(), {2}, DType::kInt64, {1, 99});
  ASSERT_TRUE(x && idx && bad_idx) << "bp_tensor_from_host: " << LastError();
  BPS_OK(bp_graph_begin_capture(a.get()));
  Held y;
  const bp_status_t st = CallOp(ctx(), "index_select", {vt(x.get()), vi(0), vt(idx.get())}, &y);
  Graph graph;
  const bp_status_t end = bp_graph_end_capture(a.get(), &graph.g);
  ASSERT_EQ(st, BP_STATUS_OK) << "index_select during the capture: " << LastError();
  ASSERT_EQ(end, BP_STATUS_OK) << "bp_graph_end_capture: " << LastError();
  BPS_OK(bp_graph_launch(graph.g, a.get()));
  std::vector<double> got;
  std::string err;
  ASSERT_TRUE(ReadOn(a.get(), y.get(), &got, &err)) << err;
  EXPECT_EQ(got, (std::vector<double>{4, 1})) << "a replay of index_select(x, 0, [3, 0])";
  // The captured index now holds 99: the replayed kernel must refuse it, and the launch say so.
  BPS_OK(CallOp(ctx(), "copy_", {vt(idx.get()), vt(bad_idx.get()), vb(false)}, nullptr));
  bp_status_t launched = bp_graph_launch(graph.g, a.get());
  const bp_status_t synced = bp_stream_synchronize(a.get());
  const std::string msg = LastError();
  EXPECT_TRUE(launched != BP_STATUS_OK || synced != BP_STATUS_OK)
      << "a replayed index_select with index 99 into 4 elements reported no error (neither bp_graph_launch nor "
         "the stream's synchronize): an error inside a replayed graph must surface";
  if (launched != BP_STATUS_OK) {
    EXPECT_NE(msg.find("index_select"), std::string::npos) << "the launch's error names no operator: " << msg;
  }
}

}  // namespace
}  // namespace bpc
