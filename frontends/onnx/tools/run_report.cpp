#include "run_report.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <map>

#include <nlohmann/json.hpp>

namespace bprun {

namespace {

bp_transfer_stats_t transfers(bp_context_t* ctx, int32_t backend) {
  bp_transfer_stats_t s{};
  s.struct_size = sizeof s;
  bp_transfer_stats(ctx, backend, &s);
  return s;
}

uint64_t total_bytes(const bp_transfer_stats_t& s) {
  return s.host_to_device_bytes + s.device_to_host_bytes + s.device_to_device_bytes;
}

}  // namespace

Recorder::Recorder(bp_context_t* ctx, bp_device_t dev, bool trace, bool shadow, double rtol, double atol)
    : ctx_(ctx), dev_(dev), trace_(trace), shadow_on_(shadow), shadow_(ctx, dev, rtol, atol) {}

void Recorder::begin_run() {
  nodes_.clear();
  clock_us_ = 0.0;
  bp_transfer_stats_reset(ctx_, dev_.backend);
  last_bytes_ = 0;
}

void Recorder::on_node(const bponnx::NodeRun& nr) {
  NodeRecord r;
  const bponnx::OnnxNode& n = *nr.node;
  r.name = bponnx::node_display_name(n);
  r.op = n.op_type;
  r.path = bponnx::node_path_name(bponnx::node_path(ctx_, dev_.backend, nr.ops));
  r.shapes = bponnx::input_shapes(*nr.inputs);
  for (const bponnx::NodeInput& in : *nr.inputs) {
    r.dtypes += std::string(r.dtypes.empty() ? "" : " ") + (in.t ? bponnx::dtype_name(bponnx::dtype_of(in.t)) : "-");
  }
  r.start_us = clock_us_;
  r.dur_us = nr.seconds * 1e6;
  clock_us_ += r.dur_us;
  const bp_transfer_stats_t s = transfers(ctx_, dev_.backend);
  r.bytes = total_bytes(s) - last_bytes_;
  last_bytes_ = total_bytes(s);
  h2d_ = s.host_to_device_bytes, d2h_ = s.device_to_host_bytes, d2d_ = s.device_to_device_bytes;
  h2d_n_ = s.host_to_device_count, d2h_n_ = s.device_to_host_count, d2d_n_ = s.device_to_device_count;
  nodes_.push_back(r);
  if (shadow_on_) shadow_.check(nr);
}

void Recorder::print_report(std::ostream& os) const {
  struct Agg {
    size_t nodes = 0, fallback_nodes = 0;
    double us = 0.0, fallback_us = 0.0;
  };
  std::map<std::string, Agg> by_path, by_op;
  double total = 0.0;
  for (const NodeRecord& r : nodes_) {
    Agg& p = by_path[r.path];
    ++p.nodes;
    p.us += r.dur_us;
    total += r.dur_us;
    Agg& o = by_op[r.op];
    ++o.nodes;
    o.us += r.dur_us;
    if (r.path == "fallback") {
      ++o.fallback_nodes;
      o.fallback_us += r.dur_us;
    }
  }
  bp_backend_info_t info{};
  info.struct_size = sizeof info;
  bp_backend_info(ctx_, dev_.backend, &info);
  os << "report: backend " << (info.name ? info.name : "?") << ", device " << dev_.index << ", " << nodes_.size()
     << " nodes, " << std::fixed << std::setprecision(3) << total / 1e3 << " ms\n";
  for (const char* p : {"native", "fallback", "core"}) {
    const auto it = by_path.find(p);
    const Agg a = it == by_path.end() ? Agg{} : it->second;
    os << "  " << std::left << std::setw(9) << p << std::right << std::setw(6) << a.nodes << " nodes "
       << std::setw(10) << a.us / 1e3 << " ms (" << std::setprecision(1)
       << (total > 0 ? 100.0 * a.us / total : 0.0) << "%)\n" << std::setprecision(3);
  }
  os << "  transfers: host->device " << h2d_n_ << " (" << h2d_ << " B), device->host " << d2h_n_ << " (" << d2h_
     << " B), device->device " << d2d_n_ << " (" << d2d_ << " B)\n";
  bp_allocator_stats_t st{};
  st.struct_size = sizeof st;
  if (bp_allocator_stats(ctx_, dev_, &st) == BP_STATUS_OK) {
    os << "  peak allocated: " << st.peak_allocated_bytes << " B on the device\n";
  }
  std::vector<std::pair<std::string, Agg>> ops(by_op.begin(), by_op.end());
  std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second.fallback_us > b.second.fallback_us; });
  os << "  fallback time by ONNX op (the backend's to-do list):\n";
  size_t shown = 0;
  for (const auto& o : ops) {
    if (o.second.fallback_nodes == 0) continue;
    os << "    " << std::left << std::setw(22) << o.first << std::right << std::setw(5) << o.second.fallback_nodes
       << " nodes " << std::setw(10) << o.second.fallback_us / 1e3 << " ms\n";
    ++shown;
  }
  if (shown == 0) os << "    (none: every node ran natively or in the core)\n";
}

bool Recorder::write_trace(const std::string& path) const {
  nlohmann::json events = nlohmann::json::array();
  bp_backend_info_t info{};
  info.struct_size = sizeof info;
  bp_backend_info(ctx_, dev_.backend, &info);
  for (const NodeRecord& r : nodes_) {
    events.push_back({{"name", r.op},
                      {"cat", r.path},
                      {"ph", "X"},
                      {"ts", r.start_us},
                      {"dur", r.dur_us},
                      {"pid", 1},
                      {"tid", 1},
                      {"args",
                       {{"node", r.name},
                        {"backend", info.name ? info.name : "?"},
                        {"path", r.path},
                        {"input_shapes", r.shapes},
                        {"input_dtypes", r.dtypes},
                        {"bytes_transferred", r.bytes}}}});
  }
  std::ofstream o(path);
  o << nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump(1) << "\n";
  return static_cast<bool>(o);
}

}  // namespace bprun
