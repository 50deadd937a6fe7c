#include "run_report.h"

#include <algorithm>
#include <chrono>
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

std::string op_name(const bp_op_t* op) {
  bp_op_info_t info{};
  info.struct_size = sizeof info;
  return bp_op_info(op, &info) == BP_STATUS_OK && info.name != nullptr ? info.name : "?";
}

bool fell_back(bp_context_t* ctx, const bp_op_t* op, int32_t backend) {
  int32_t kind = 0;
  return bp_op_dispatch_kind(ctx, op, backend, &kind) == BP_STATUS_OK &&
         (kind == BP_DISPATCH_BACKEND_FALLBACK || kind == BP_DISPATCH_CPU_FALLBACK);
}

// "a, b": each name once, in first-call order.
void add_name(const std::string& n, std::string* list) {
  if ((", " + *list + ", ").find(", " + n + ", ") != std::string::npos) return;
  *list += (list->empty() ? "" : ", ") + n;
}

}  // namespace

Recorder::Recorder(bp_context_t* ctx, bp_device_t dev, bool trace, bool shadow, double rtol, double atol)
    : ctx_(ctx), dev_(dev), trace_(trace), shadow_on_(shadow), shadow_(ctx, dev, rtol, atol) {}

void Recorder::begin_run() {
  nodes_.clear();
  clock_us_ = 0.0;
  bp_transfer_stats_reset(ctx_, dev_.backend);
  last_bytes_ = last_cast_calls_ = last_cast_bytes_ = 0;
  own_ = shadow_copies_ = Copies{};
  shadow_us_ = 0.0;
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
  for (const bp_op_t* op : nr.ops) {
    add_name(op_name(op), &r.operators);
    if (fell_back(ctx_, op, dev_.backend)) add_name(op_name(op), &r.fallback_operators);
  }
  r.start_us = clock_us_;
  r.dur_us = nr.seconds * 1e6;
  r.host_us = nr.host_seconds * 1e6;
  clock_us_ += r.dur_us;
  // The counters are cumulative; the shadow check's copies so far are taken off.
  const bp_transfer_stats_t s = transfers(ctx_, dev_.backend);
  r.bytes = total_bytes(s) - last_bytes_;
  last_bytes_ = total_bytes(s);
  // A node whose operators ran natively after a cast the core staged is on
  // the cast route (bp_cast_count), with the bytes those casts moved.
  r.cast_calls = s.cast_count - last_cast_calls_;
  r.cast_bytes = s.cast_bytes - last_cast_bytes_;
  last_cast_calls_ = s.cast_count;
  last_cast_bytes_ = s.cast_bytes;
  if (r.path == "native" && r.cast_calls > 0) r.path = "cast";
  const Copies& sh = shadow_copies_;
  own_ =
      Copies{s.host_to_device_count - sh.h2d_n, s.host_to_device_bytes - sh.h2d,     s.device_to_host_count - sh.d2h_n,
             s.device_to_host_bytes - sh.d2h,   s.device_to_device_count - sh.d2d_n, s.device_to_device_bytes - sh.d2d};
  nodes_.push_back(r);
  if (!shadow_on_) return;
  const auto t0 = std::chrono::steady_clock::now();
  shadow_.check(nr);
  shadow_us_ += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  const bp_transfer_stats_t a = transfers(ctx_, dev_.backend);
  shadow_copies_.h2d_n += a.host_to_device_count - s.host_to_device_count;
  shadow_copies_.h2d += a.host_to_device_bytes - s.host_to_device_bytes;
  shadow_copies_.d2h_n += a.device_to_host_count - s.device_to_host_count;
  shadow_copies_.d2h += a.device_to_host_bytes - s.device_to_host_bytes;
  shadow_copies_.d2d_n += a.device_to_device_count - s.device_to_device_count;
  shadow_copies_.d2d += a.device_to_device_bytes - s.device_to_device_bytes;
  last_bytes_ = total_bytes(a);
}

void Recorder::print_report(std::ostream& os) const {
  struct Agg {
    size_t nodes = 0, fallback_nodes = 0;
    double us = 0.0, fallback_us = 0.0;
  };
  std::map<std::string, Agg> by_path, by_op;
  std::map<std::string, std::string> fallback_ops;  // ONNX op type -> the operators that fell back
  double total = 0.0, host = 0.0;
  uint64_t cast_calls = 0, cast_bytes = 0;
  for (const NodeRecord& r : nodes_) {
    host += r.host_us;
    cast_calls += r.cast_calls;
    cast_bytes += r.cast_bytes;
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
      for (size_t a = 0; a < r.fallback_operators.size();) {
        size_t b = r.fallback_operators.find(", ", a);
        if (b == std::string::npos) b = r.fallback_operators.size();
        add_name(r.fallback_operators.substr(a, b - a), &fallback_ops[r.op]);
        a = b + 2;
      }
    }
  }
  bp_backend_info_t info{};
  info.struct_size = sizeof info;
  bp_backend_info(ctx_, dev_.backend, &info);
  os << "report: backend " << (info.name ? info.name : "?") << ", device " << dev_.index << ", " << nodes_.size()
     << " nodes, " << std::fixed << std::setprecision(3) << total / 1e3 << " ms\n";
  // Each node is synchronized here: the host part is the enqueueing (the
  // mapping and dispatch), the rest is waiting for the device to finish it.
  os << "  host time " << host / 1e3 << " ms (enqueueing: mapping, dispatch; " << std::setprecision(1)
     << (nodes_.empty() ? 0.0 : host / static_cast<double>(nodes_.size())) << " us per node), waiting for the device "
     << std::setprecision(3) << (total - host) / 1e3 << " ms\n";
  for (const char* p : {"native", "cast", "fallback", "core"}) {
    const auto it = by_path.find(p);
    const Agg a = it == by_path.end() ? Agg{} : it->second;
    os << "  " << std::left << std::setw(9) << p << std::right << std::setw(6) << a.nodes << " nodes "
       << std::setw(10) << a.us / 1e3 << " ms (" << std::setprecision(1)
       << (total > 0 ? 100.0 * a.us / total : 0.0) << "%)\n" << std::setprecision(3);
  }
  os << "  transfers: host->device " << own_.h2d_n << " (" << own_.h2d << " B), device->host " << own_.d2h_n << " ("
     << own_.d2h << " B), device->device " << own_.d2d_n << " (" << own_.d2d << " B)\n";
  os << "  cast route: " << cast_calls << " calls ran the native kernel after a dtype cast the core staged ("
     << cast_bytes << " B of the transfers above; a copy_ kernel converting on the device removes them)\n";
  if (shadow_on_) {
    const Copies& s = shadow_copies_;
    os << "  --shadow's own cost (not counted above): " << shadow_us_ / 1e3 << " ms, host->device " << s.h2d_n << " ("
       << s.h2d << " B), device->host " << s.d2h_n << " (" << s.d2h << " B), device->device " << s.d2d_n << " ("
       << s.d2d << " B)\n";
  }
  bp_allocator_stats_t st{};
  st.struct_size = sizeof st;
  if (bp_allocator_stats(ctx_, dev_, &st) == BP_STATUS_OK) {
    os << "  peak allocated: " << st.peak_allocated_bytes << " B on the device\n";
  }
  std::vector<std::pair<std::string, Agg>> ops(by_op.begin(), by_op.end());
  std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second.fallback_us > b.second.fallback_us; });
  os << "  fallback time by ONNX op -> the Backplane operators to implement (the backend's to-do list):\n";
  size_t shown = 0;
  for (const auto& o : ops) {
    if (o.second.fallback_nodes == 0) continue;
    os << "    " << std::left << std::setw(40) << (o.first + " -> " + fallback_ops[o.first]) << std::right
       << std::setw(5) << o.second.fallback_nodes << " nodes " << std::setw(10) << o.second.fallback_us / 1e3
       << " ms\n";
    ++shown;
  }
  if (shown == 0) os << "    (none: every node ran natively or in the core)\n";
  // The slowest fallback nodes by name, each with what it called.
  std::vector<const NodeRecord*> slow;
  for (const NodeRecord& r : nodes_) {
    if (r.path == "fallback") slow.push_back(&r);
  }
  std::sort(slow.begin(), slow.end(), [](const NodeRecord* a, const NodeRecord* b) { return a->dur_us > b->dur_us; });
  if (slow.size() > 10) slow.resize(10);
  if (!slow.empty()) os << "  slowest fallback nodes (ONNX node -> Backplane operators):\n";
  for (const NodeRecord* r : slow) {
    os << "    " << std::left << std::setw(40) << (r->name + " -> " + r->operators) << std::right << std::setw(17)
       << r->dur_us / 1e3 << " ms\n";
  }
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
                        {"host_us", r.host_us},
                        {"operators", r.operators},
                        {"input_shapes", r.shapes},
                        {"input_dtypes", r.dtypes},
                        {"bytes_transferred", r.bytes},
                        {"cast_calls", r.cast_calls},
                        {"cast_bytes", r.cast_bytes}}}});
  }
  std::ofstream o(path);
  o << nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump(1) << "\n";
  return static_cast<bool>(o);
}

}  // namespace bprun
