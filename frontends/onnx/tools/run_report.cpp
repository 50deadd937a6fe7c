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

// "native" when every operator the node called ran on the backend's own
// kernels (or the core's views), "fallback" when any went through a fallback.
std::string path_of(bp_context_t* ctx, int32_t backend, const std::vector<bp_op_t*>& ops) {
  bool native = false, fallback = false;
  for (bp_op_t* op : ops) {
    int32_t kind = BP_DISPATCH_NONE;
    if (bp_op_dispatch_kind(ctx, op, backend, &kind) != BP_STATUS_OK) continue;
    native = native || kind == BP_DISPATCH_NATIVE;
    fallback = fallback || kind == BP_DISPATCH_BACKEND_FALLBACK || kind == BP_DISPATCH_CPU_FALLBACK;
  }
  return fallback ? "fallback" : native ? "native" : "core";
}

std::string shapes_of(const std::vector<bponnx::NodeInput>& ins) {
  std::string s;
  for (const bponnx::NodeInput& in : ins) {
    if (!s.empty()) s += " ";
    s += in.t ? bponnx::sizes_str(bponnx::sizes_of(in.t)) : "-";
  }
  return s;
}

}  // namespace

Recorder::Recorder(bp_context_t* ctx, bp_device_t dev, bool trace, bool shadow, double rtol, double atol)
    : ctx_(ctx), dev_(dev), trace_(trace), shadow_(shadow), rtol_(rtol), atol_(atol) {}

void Recorder::begin_run() {
  nodes_.clear();
  clock_us_ = 0.0;
  bp_transfer_stats_reset(ctx_, dev_.backend);
  last_bytes_ = 0;
}

void Recorder::on_node(const bponnx::NodeRun& nr) {
  NodeRecord r;
  const bponnx::OnnxNode& n = *nr.node;
  r.name = n.name.empty() ? n.outputs.at(0) : n.name;
  r.op = n.op_type;
  r.path = path_of(ctx_, dev_.backend, nr.ops);
  r.shapes = shapes_of(*nr.inputs);
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
  if (shadow_) shadow(nr, r.name);
}

void Recorder::shadow(const bponnx::NodeRun& nr, const std::string& label) {
  try {
    bponnx::OpCache ops(ctx_);
    bponnx::Exec cpu(ctx_, bp_device_t{0, 0}, &ops);
    bponnx::Exec dev(ctx_, dev_, &ops);
    std::vector<bponnx::NodeInput> ins = *nr.inputs;
    std::vector<bp_tensor_t*> moved;
    for (bponnx::NodeInput& in : ins) {
      if (in.t == nullptr || bp_tensor_device(in.t).backend == 0) continue;
      bp_tensor_t* c = nullptr;
      if (bp_tensor_to_device(in.t, bp_device_t{0, 0}, &c) != BP_STATUS_OK) throw bponnx::CallFailed{"input copy"};
      moved.push_back(c);
      in.t = c;
    }
    const std::vector<bp_tensor_t*> want = bponnx::run_node(cpu, *nr.node, ins);
    for (bp_tensor_t* t : moved) bp_tensor_release(t);
    ++shadow_checked_;
    for (size_t k = 0; k < want.size() && k < nr.outputs.size(); ++k) {
      if (want[k] == nullptr || nr.outputs[k] == nullptr) continue;
      const bponnx::HostTensor e = cpu.to_host(want[k]);
      const bponnx::HostTensor a = dev.to_host(nr.outputs[k]);
      ShadowFinding f;
      f.index = nr.index;
      f.node = label;
      f.op = nr.node->op_type;
      f.shapes = shapes_of(*nr.inputs);
      if (a.sizes != e.sizes) {
        f.excess = INFINITY;
      }
      for (size_t i = 0; i < e.values.size() && a.sizes == e.sizes; ++i) {
        const double x = a.values[i], y = e.values[i];
        if (std::isnan(x) != std::isnan(y) || (std::isinf(y) && x != y)) {
          f.excess = INFINITY;
          continue;
        }
        if (std::isnan(y) || std::isinf(y)) continue;
        const double d = std::fabs(x - y);
        f.max_abs = std::max(f.max_abs, d);
        if (y != 0.0) f.max_rel = std::max(f.max_rel, d / std::fabs(y));
        f.excess = std::max(f.excess, d - (atol_ + rtol_ * std::fabs(y)));
      }
      f.found = f.excess > 0.0;
      if (f.found && !first_.found) first_ = f;
      if (f.found && (!worst_.found || f.excess > worst_.excess)) worst_ = f;
    }
  } catch (const bponnx::NotMapped& e) {
    if (shadow_error_.empty()) shadow_error_ = label + ": " + e.reason;
  } catch (const bponnx::CallFailed& e) {
    if (shadow_error_.empty()) shadow_error_ = label + ": " + e.message;
  }
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
