#include "bponnx/observe.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace bponnx {

const char* node_path_name(NodePath p) {
  switch (p) {
    case NodePath::kNative:
      return "native";
    case NodePath::kFallback:
      return "fallback";
    case NodePath::kCore:
      break;
  }
  return "core";
}

NodePath node_path(bp_context_t* ctx, int32_t backend, const std::vector<bp_op_t*>& ops) {
  bool native = false, fallback = false;
  for (bp_op_t* op : ops) {
    int32_t kind = BP_DISPATCH_NONE;
    if (bp_op_dispatch_kind(ctx, op, backend, &kind) != BP_STATUS_OK) continue;
    native = native || kind == BP_DISPATCH_NATIVE;
    fallback = fallback || kind == BP_DISPATCH_BACKEND_FALLBACK || kind == BP_DISPATCH_CPU_FALLBACK;
  }
  return fallback ? NodePath::kFallback : native ? NodePath::kNative : NodePath::kCore;
}

std::string node_display_name(const OnnxNode& n) {
  return n.name.empty() && !n.outputs.empty() ? n.outputs[0] : n.name;
}

std::string input_shapes(const std::vector<NodeInput>& inputs) {
  std::string s;
  for (const NodeInput& in : inputs) {
    if (!s.empty()) s += " ";
    s += in.t ? sizes_str(sizes_of(in.t)) : "-";
  }
  return s;
}

ShadowCheck::ShadowCheck(bp_context_t* ctx, bp_device_t dev, double rtol, double atol)
    : ctx_(ctx), dev_(dev), rtol_(rtol), atol_(atol) {}

void ShadowCheck::check(const NodeRun& nr) {
  const std::string label = node_display_name(*nr.node);
  std::vector<bp_tensor_t*> moved;
  try {
    OpCache ops(ctx_);
    Exec cpu(ctx_, bp_device_t{0, 0}, &ops);
    Exec dev(ctx_, dev_, &ops);
    std::vector<NodeInput> ins = *nr.inputs;
    for (NodeInput& in : ins) {
      if (in.t == nullptr || bp_tensor_device(in.t).backend == 0) continue;
      bp_tensor_t* c = nullptr;
      const bp_status_t st = bp_tensor_to_device(in.t, bp_device_t{0, 0}, &c);
      if (st != BP_STATUS_OK) throw CallFailed{api_error("bp_tensor_to_device", st)};
      moved.push_back(c);
      in.t = c;
    }
    const std::vector<bp_tensor_t*> want = run_node(cpu, *nr.node, ins);
    ++checked_;
    bool beyond = false;
    for (size_t k = 0; k < want.size() && k < nr.outputs.size(); ++k) {
      if (want[k] == nullptr || nr.outputs[k] == nullptr) continue;
      const HostTensor e = cpu.to_host(want[k]);
      const HostTensor a = dev.to_host(nr.outputs[k]);
      ShadowFinding f;
      f.index = nr.index;
      f.node = label;
      f.op = nr.node->op_type;
      f.shapes = input_shapes(*nr.inputs);
      if (a.sizes != e.sizes) f.ratio = INFINITY;
      for (size_t i = 0; i < e.values.size() && a.sizes == e.sizes; ++i) {
        const double x = a.values[i], y = e.values[i];
        if (std::isnan(x) != std::isnan(y) || (std::isinf(y) && x != y)) {
          f.ratio = INFINITY;
          continue;
        }
        if (std::isnan(y) || std::isinf(y)) continue;
        const double d = std::fabs(x - y);
        f.max_abs = std::max(f.max_abs, d);
        if (y != 0.0) f.max_rel = std::max(f.max_rel, d / std::fabs(y));
        f.ratio = std::max(f.ratio, d / (atol_ + rtol_ * std::fabs(y)));
      }
      f.found = f.ratio > 1.0;
      beyond = beyond || f.found;
      if (f.found && !first_.found) first_ = f;
      if (!any_ || f.ratio > worst_.ratio) worst_ = f;
      any_ = true;
    }
    beyond_ += beyond;
  } catch (const NotMapped& e) {
    if (error_.empty()) error_ = label + ": " + e.reason;
  } catch (const CallFailed& e) {
    if (error_.empty()) error_ = label + ": " + e.message;
  }
  for (bp_tensor_t* t : moved) bp_tensor_release(t);
}

std::string OutputMatch::message(double rtol, double atol) const {
  if (!error.empty()) return error;
  std::ostringstream os;
  os << "max abs " << max_abs << ", max rel " << max_rel;
  if (beyond > 0) {
    os << "; " << beyond << " of " << count << " beyond rtol " << rtol << " atol " << atol << " (worst at flat index "
       << worst_index << ": got " << worst_got << ", expected " << worst_want << ")";
  }
  return os.str();
}

OutputMatch compare_output(bp_context_t* ctx, bp_tensor_t* got, const RawTensor& want, double rtol, double atol) {
  OutputMatch m;
  try {
    OpCache ops(ctx);
    Exec cpu(ctx, bp_device_t{0, 0}, &ops);
    const HostTensor a = cpu.to_host(got);
    const HostTensor e = cpu.to_host(cpu.upload(want));
    if (a.sizes != e.sizes) {
      m.error = "shape " + sizes_str(a.sizes) + ", expected " + sizes_str(e.sizes);
      return m;
    }
    m.count = e.values.size();
    double worst_excess = 0.0;
    for (size_t k = 0; k < e.values.size(); ++k) {
      const double d = std::fabs(a.values[k] - e.values[k]);
      const double excess = d - (atol + rtol * std::fabs(e.values[k]));
      m.max_abs = std::max(m.max_abs, d);
      if (e.values[k] != 0.0) m.max_rel = std::max(m.max_rel, d / std::fabs(e.values[k]));
      if (!(excess <= 0.0)) {  // NaN counts as beyond
        ++m.beyond;
        if (!(excess <= worst_excess)) worst_excess = excess, m.worst_index = k;
      }
    }
    if (m.beyond > 0) m.worst_got = a.values[m.worst_index], m.worst_want = e.values[m.worst_index];
    m.match = m.beyond == 0;
  } catch (const CallFailed& e) {
    m.error = e.message;
  } catch (const NotMapped& e) {
    m.error = e.reason;
  }
  return m;
}

}  // namespace bponnx
