// What bp-run records per node while a model runs: native vs fallback and
// time (--report), Chrome trace events (--trace) and the CPU shadow check
// (--shadow). One Recorder is the Session's observer.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "bponnx/graph.h"
#include "bponnx/observe.h"

namespace bprun {

class Recorder {
 public:
  Recorder(bp_context_t* ctx, bp_device_t dev, bool trace, bool shadow, double rtol, double atol);
  /// The Session observer.
  void on_node(const bponnx::NodeRun& nr);
  /// Starts a new run (the counters of the next run replace the last's).
  void begin_run();

  /// --report: per path, nodes and time; transfers and bytes; peak
  /// allocated bytes; ONNX op types sorted by fallback time.
  void print_report(std::ostream& os) const;
  /// --trace: Chrome trace-event JSON of the last run. False when `path` cannot be written.
  bool write_trace(const std::string& path) const;
  /// --shadow: the first node beyond tolerance and the one furthest beyond
  /// it (the largest share of its tolerance; `found` when beyond).
  const bponnx::ShadowFinding& first_divergence() const { return shadow_.first(); }
  const bponnx::ShadowFinding& worst_divergence() const { return shadow_.worst(); }
  size_t shadow_checked() const { return shadow_.checked(); }
  std::string shadow_error() const { return shadow_.error(); }

 private:
  struct NodeRecord {
    std::string name, op, path, shapes, dtypes;
    double start_us = 0.0, dur_us = 0.0;
    uint64_t bytes = 0;
  };
  bp_context_t* ctx_;
  bp_device_t dev_;
  bool trace_, shadow_on_;
  bponnx::ShadowCheck shadow_;
  std::vector<NodeRecord> nodes_;
  double clock_us_ = 0.0;
  uint64_t h2d_ = 0, d2h_ = 0, d2d_ = 0, h2d_n_ = 0, d2h_n_ = 0, d2d_n_ = 0, last_bytes_ = 0;
};

}  // namespace bprun
