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

  /// --report: per path, nodes and time (ms, three decimals); transfers and
  /// bytes; peak allocated bytes; ONNX op types sorted by fallback time with
  /// the Backplane operators that fell back ("Gemm -> addmm"), and the
  /// slowest fallback nodes. With --shadow, the shadow check's own copies and
  /// time are counted apart (they are not the model's).
  void print_report(std::ostream& os) const;
  /// --trace: Chrome trace-event JSON of the last run. False when `path` cannot be written.
  bool write_trace(const std::string& path) const;
  /// --shadow: the first node beyond tolerance and the one furthest beyond
  /// it (the largest share of its tolerance; `found` when beyond).
  const bponnx::ShadowFinding& first_divergence() const { return shadow_.first(); }
  const bponnx::ShadowFinding& worst_divergence() const { return shadow_.worst(); }
  size_t shadow_checked() const { return shadow_.checked(); }
  std::string shadow_error() const { return shadow_.error(); }
  /// Wall time spent in the shadow check during the last run.
  double shadow_seconds() const { return shadow_us_ / 1e6; }

 private:
  // Cumulative copies of one run: counts and bytes per direction.
  struct Copies {
    uint64_t h2d_n = 0, h2d = 0, d2h_n = 0, d2h = 0, d2d_n = 0, d2d = 0;
  };
  struct NodeRecord {
    std::string name, op, path, shapes, dtypes;
    std::string operators;           // "addmm" or "convolution, add.Tensor": what the node called
    std::string fallback_operators;  // those of them served by a fallback on the device
    double start_us = 0.0, dur_us = 0.0;
    double host_us = 0.0;  // of dur_us, until the node's calls were enqueued (mapping and dispatch)
    uint64_t bytes = 0;
    uint64_t cast_calls = 0, cast_bytes = 0;  // calls served by the cast route, and their casts' bytes
  };
  bp_context_t* ctx_;
  bp_device_t dev_;
  bool trace_, shadow_on_;
  bponnx::ShadowCheck shadow_;
  std::vector<NodeRecord> nodes_;
  double clock_us_ = 0.0;
  Copies own_, shadow_copies_;  // the model's copies; the shadow check's
  double shadow_us_ = 0.0;
  uint64_t last_bytes_ = 0;
  uint64_t last_cast_calls_ = 0, last_cast_bytes_ = 0;
};

}  // namespace bprun
