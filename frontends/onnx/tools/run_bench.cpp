#include "run_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

namespace bprun {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

std::string last_error() { return bp_last_error_message(); }

void release_all(std::vector<bp_tensor_t*>* ts) {
  for (bp_tensor_t* t : *ts) bp_tensor_release(t);
  ts->clear();
}

// Reads a float32 tensor to the host (others: empty, not compared).
std::vector<float> read_f32(const bp_tensor_t* t) {
  const DLDataType d = bp_tensor_dtype(t);
  if (d.code != kDLFloat || d.bits != 32) return {};
  std::vector<float> v(static_cast<size_t>(bp_tensor_numel(t)));
  if (bp_tensor_to_host(t, v.data(), v.size() * sizeof(float)) != BP_STATUS_OK) return {};
  return v;
}

void summarize(std::vector<double> wall, std::vector<double> host, BenchResult* out) {
  std::sort(wall.begin(), wall.end());
  std::sort(host.begin(), host.end());
  out->median_ms = wall[wall.size() / 2];
  out->min_ms = wall[0];
  out->host_median_ms = host[host.size() / 2];
}

// The stream a graph is captured on and replayed on; destroyed (after its
// work) with the guard, the previous current stream restored first.
struct StreamScope {
  bp_stream_handle_t* stream = nullptr;
  bp_stream_handle_t* previous = nullptr;
  bp_graph_t* graph = nullptr;
  std::map<std::string, bp_tensor_t*> inputs;  // on the device: a capture cannot copy from the host
  ~StreamScope() {
    bp_graph_destroy(graph);
    for (auto& [name, t] : inputs) bp_tensor_release(t);
    if (previous != nullptr) bp_set_current_stream(previous);
    bp_stream_destroy(stream);
  }
};

bool bench_graph(bp_context_t* ctx, bp_device_t dev, bponnx::Session& session,
                 const std::map<std::string, bp_tensor_t*>& host_inputs, int runs, BenchResult* out,
                 std::string* err) {
  StreamScope scope;
  if (bp_get_current_stream(ctx, dev, &scope.previous) != BP_STATUS_OK ||
      bp_stream_create(ctx, dev, &scope.stream) != BP_STATUS_OK ||
      bp_set_current_stream(scope.stream) != BP_STATUS_OK) {
    *err = "--graph: " + last_error();
    return false;
  }
  for (const auto& [name, t] : host_inputs) {
    bp_tensor_t* on_dev = nullptr;
    if (bp_tensor_to_device(t, dev, &on_dev) != BP_STATUS_OK) {
      *err = "--graph: input " + name + ": " + last_error();
      return false;
    }
    scope.inputs[name] = on_dev;
  }
  const std::map<std::string, bp_tensor_t*>& inputs = scope.inputs;
  std::vector<bp_tensor_t*> eager, captured;
  // Two eager runs on the stream: the first plans the session (it may read
  // values back to the host, which a capture cannot hold), the second is the
  // reference the replays are compared with.
  for (int i = 0; i < 2; ++i) {
    release_all(&eager);
    if (!session.run(inputs, &eager, err)) return false;
  }
  std::vector<std::vector<float>> reference;
  for (bp_tensor_t* t : eager) reference.push_back(read_f32(t));
  release_all(&eager);
  if (bp_graph_begin_capture(scope.stream) != BP_STATUS_OK) {
    *err = "--graph: " + last_error();
    return false;
  }
  const bool ran = session.run(inputs, &captured, err);
  const bp_status_t end = bp_graph_end_capture(scope.stream, &scope.graph);
  if (!ran || end != BP_STATUS_OK) {
    if (end != BP_STATUS_OK) *err = "--graph: " + last_error() + (ran ? "" : " (the run: " + *err + ")");
    release_all(&captured);
    return false;
  }
  bp_graph_info_t info{};
  info.struct_size = sizeof(info);
  bp_graph_info(scope.graph, &info);
  out->graph_nodes = info.num_nodes;
  out->graph_host_nodes = info.num_host_nodes;
  std::vector<double> wall, host;
  for (int i = -1; i < runs; ++i) {  // i = -1: warm-up
    const auto s = Clock::now();
    if (bp_graph_launch(scope.graph, scope.stream) != BP_STATUS_OK) {
      *err = "--graph: " + last_error();
      release_all(&captured);
      return false;
    }
    const double enqueued = ms_since(s);
    bp_stream_synchronize(scope.stream);
    if (i >= 0) {
      wall.push_back(ms_since(s));
      host.push_back(enqueued);
    }
  }
  summarize(wall, host, out);
  // The replay's outputs, against the eager run's.
  double worst = 0;
  for (size_t k = 0; k < captured.size() && k < reference.size(); ++k) {
    const std::vector<float> got = read_f32(captured[k]);
    for (size_t j = 0; j < got.size() && j < reference[k].size(); ++j) {
      worst = std::max(worst, static_cast<double>(std::fabs(got[j] - reference[k][j])));
    }
  }
  out->max_abs_diff = worst;
  release_all(&captured);
  return true;
}

}  // namespace

bool bench_runs(bp_context_t* ctx, bp_device_t dev, bponnx::Session& session,
                const std::map<std::string, bp_tensor_t*>& inputs, int runs, bool graph, BenchResult* out,
                std::string* err) {
  if (graph) return bench_graph(ctx, dev, session, inputs, runs, out, err);
  std::vector<double> wall, host;
  for (int i = -1; i < runs; ++i) {  // i = -1: warm-up
    std::vector<bp_tensor_t*> outs;
    const auto s = Clock::now();
    if (!session.run(inputs, &outs, err)) return false;
    const double enqueued = ms_since(s);
    bp_device_synchronize(ctx, dev);
    if (i >= 0) {
      wall.push_back(ms_since(s));
      host.push_back(enqueued);
    }
    release_all(&outs);
  }
  summarize(wall, host, out);
  return true;
}

}  // namespace bprun
