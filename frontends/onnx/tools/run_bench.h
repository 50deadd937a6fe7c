// bp-run --bench: timed runs, eager or (--graph) as a captured graph
// replayed, each reported as the wall time per run and the host's part of it
// (the time until every kernel was enqueued: mapping and dispatch, or the
// graph launch), so a host that holds the device back shows.
#pragma once

#include <map>
#include <string>

#include "backplane/backplane.h"
#include "bponnx/graph.h"

namespace bprun {

struct BenchResult {
  double median_ms = 0, min_ms = 0;   // wall time per run (device synchronized)
  double host_median_ms = 0;          // of it, until the run was enqueued
  int64_t graph_nodes = 0;            // --graph: the graph's nodes (kernel calls and host nodes)
  int64_t graph_host_nodes = 0;       // --graph: of them, host nodes (CPU fallbacks, copies through the host)
  double max_abs_diff = -1;           // --graph: replay outputs vs the eager run (-1: not compared)
};

// Times `runs` runs after one warm-up. With `graph`, the model is captured
// once on a new stream (the eager run it makes is the reference), then each
// run launches the graph; the replay's outputs are compared with the eager
// run's. False with *err when a run, the capture or a launch fails.
bool bench_runs(bp_context_t* ctx, bp_device_t dev, bponnx::Session& session,
                const std::map<std::string, bp_tensor_t*>& inputs, int runs, bool graph, BenchResult* out,
                std::string* err);

}  // namespace bprun
