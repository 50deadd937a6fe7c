// Running one exported model on a device through the ONNX frontend
// (bponnx::Session): first with the CPU shadow check and each node's path,
// then timed, its outputs compared with torch's.
#include <algorithm>
#include <cstring>
#include <map>

#include "bponnx/graph.h"
#include "bponnx/npy.h"
#include "bponnx/observe.h"
#include "models/models_group.h"

namespace bpc {

bool models_support_built() { return true; }

namespace {

constexpr int kTimedRuns = 3;

std::string device_label(bp_context_t* ctx, bp_device_t dev) {
  bp_backend_info_t info{};
  info.struct_size = sizeof info;
  const std::string name = bp_backend_info(ctx, dev.backend, &info) == BP_STATUS_OK && info.name ? info.name : "?";
  return name + ":" + std::to_string(dev.index);
}

// Tensor references released at scope exit.
struct Held {
  std::vector<bp_tensor_t*> v;
  ~Held() {
    for (bp_tensor_t* t : v) bp_tensor_release(t);
  }
};

bool fail(ModelResult* r, const std::string& msg) {
  r->outcome = "error";
  r->message = msg;
  return false;
}

// A float output's elements as doubles; false for other dtypes (no spread check).
bool float_values(const bponnx::RawTensor& t, std::vector<double>* out) {
  if (t.dtype == bponnx::DType::kFloat32) {
    std::vector<float> f(t.bytes.size() / sizeof(float));
    std::memcpy(f.data(), t.bytes.data(), f.size() * sizeof(float));
    out->assign(f.begin(), f.end());
    return true;
  }
  if (t.dtype == bponnx::DType::kFloat64) {
    out->resize(t.bytes.size() / sizeof(double));
    std::memcpy(out->data(), t.bytes.data(), out->size() * sizeof(double));
    return true;
  }
  return false;
}

// The output count and each output's dtype must be torch's: "" or the first difference.
std::string output_kinds_differ(const std::vector<bp_tensor_t*>& got, const std::vector<bponnx::RawTensor>& want,
                                const ModelMeta& meta) {
  if (got.size() != want.size()) {
    return "the model gave " + std::to_string(got.size()) + " outputs, torch's reference has " +
           std::to_string(want.size());
  }
  for (size_t k = 0; k < got.size(); ++k) {
    const DLDataType a = bp_tensor_dtype(got[k]), b = bponnx::dtype_to_dl(want[k].dtype);
    if (a.code != b.code || a.bits != b.bits || a.lanes != b.lanes) {
      bponnx::DType ad;
      const std::string an = bponnx::dtype_from_dl(a, &ad) ? bponnx::dtype_name(ad) : "an unknown dtype";
      return meta.outputs[k] + ": dtype " + an + ", torch's reference is " + bponnx::dtype_name(want[k].dtype);
    }
  }
  return "";
}

// Loads the model, its inputs (on the CPU; the session moves them) and
// torch's outputs; sets the tolerance.
bool load(bp_context_t* ctx, const std::string& d, const ModelMeta& meta, bponnx::Model* model,
          std::map<std::string, bp_tensor_t*>* inputs, Held* held, std::vector<bponnx::RawTensor>* expected,
          ModelResult* r) {
  std::string err;
  if (!bponnx::Model::load(d + "/model.onnx", model, &err)) return fail(r, err);
  for (size_t k = 0; k < meta.inputs.size(); ++k) {
    bponnx::RawTensor raw;
    if (!bponnx::npy_read(d + "/input_" + std::to_string(k) + ".npy", &raw, &err)) return fail(r, err);
    bp_tensor_t* t = nullptr;
    const uint8_t dummy = 0;
    if (bp_tensor_from_host(ctx, bp_device_t{0, 0}, static_cast<int32_t>(raw.sizes.size()), raw.sizes.data(),
                            bponnx::dtype_to_dl(raw.dtype), raw.bytes.empty() ? &dummy : (const void*)raw.bytes.data(),
                            raw.bytes.size(), &t) != BP_STATUS_OK) {
      return fail(r, "input " + meta.inputs[k] + ": bp_tensor_from_host: " + bp_last_error_message());
    }
    held->v.push_back(t);
    (*inputs)[meta.inputs[k]] = t;
  }
  for (size_t k = 0; k < meta.outputs.size(); ++k) {
    bponnx::RawTensor raw;
    if (!bponnx::npy_read(d + "/expected_" + std::to_string(k) + ".npy", &raw, &err)) return fail(r, err);
    std::vector<double> values;
    if (float_values(raw, &values)) {
      const std::string why = reference_spread_error(meta.outputs[k], values);
      if (!why.empty()) return fail(r, why);
    }
    expected->push_back(std::move(raw));
  }
  if (model->outputs().size() != meta.outputs.size()) {
    return fail(r, "model.onnx has " + std::to_string(model->outputs().size()) + " outputs, meta.json names " +
                       std::to_string(meta.outputs.size()));
  }
  r->rtol = meta.rtol;
  r->atol = meta.atol;
  return true;
}

// Runs the model once, recording each node's path (by its index in
// Model::nodes(); nodes that did not run, such as Constant, stay absent) and,
// off the CPU, comparing every node with the CPU.
void shadow_run(bp_context_t* ctx, bp_device_t dev, bponnx::Session* s, const std::map<std::string, bp_tensor_t*>& in,
                std::map<size_t, bponnx::NodePath>* paths, ModelResult* r) {
  r->shadowed = dev.backend != 0;  // the CPU is the shadow
  bponnx::ShadowCheck shadow(ctx, dev);
  s->set_observer([&](const bponnx::NodeRun& nr) {
    (*paths)[nr.index] = bponnx::node_path(ctx, dev.backend, nr.ops);
    if (r->shadowed) shadow.check(nr);
  });
  Held outs;
  std::string err;
  if (!s->run(in, &outs.v, &err)) {
    fail(r, err);
    return;
  }
  if (!r->shadowed) return;
  const bponnx::ShadowFinding& w = shadow.worst();
  if (!w.node.empty() && w.ratio > 0.0) {  // ratio 0: every node equals the CPU's result
    r->worst_node = w.node;
    r->worst_op = w.op;
    r->worst_index = static_cast<int64_t>(w.index);
    r->worst_max_abs = w.max_abs;
    r->worst_max_rel = w.max_rel;
    r->worst_ratio = w.ratio;
  }
  r->shadow_nodes = static_cast<int>(shadow.checked());
  r->beyond_nodes = static_cast<int>(shadow.beyond());
  r->shadow_error = shadow.error();
}

}  // namespace

ModelResult run_model(bp_context_t* ctx, bp_device_t dev, const std::string& dir, const std::string& name) {
  ModelResult r;
  r.model = name;
  const std::string d = dir + "/" + name;
  ModelMeta meta;
  std::string err;
  if (!read_model_meta(d, &meta, &err)) {
    fail(&r, err);
    return r;
  }
  bponnx::Model model;
  std::map<std::string, bp_tensor_t*> inputs;
  Held held;
  std::vector<bponnx::RawTensor> expected;
  if (!load(ctx, d, meta, &model, &inputs, &held, &expected, &r)) return r;
  r.rerun = model_rerun(dir, name, meta, device_label(ctx, dev), true);
  bponnx::Session s(ctx, dev, &model);
  if (!s.prepare(&err)) {
    fail(&r, err);
    return r;
  }
  // Run 1: each node's path, and the shadow check (it also warms up the device).
  std::map<size_t, bponnx::NodePath> paths;
  shadow_run(ctx, dev, &s, inputs, &paths, &r);
  if (r.outcome == "error") return r;
  // Runs 2..4: timed; each node's time is its fastest of the three (the
  // per-node synchronization makes single runs noisy on a loaded machine).
  // The last run's outputs are compared with torch's.
  std::map<size_t, double> fastest;
  s.set_observer([&](const bponnx::NodeRun& nr) {
    auto it = fastest.find(nr.index);
    if (it == fastest.end() || nr.seconds < it->second) fastest[nr.index] = nr.seconds;
    if (!paths.count(nr.index)) paths[nr.index] = bponnx::node_path(ctx, dev.backend, nr.ops);
  });
  Held outs;
  bp_transfer_stats_t before{}, after{};
  before.struct_size = after.struct_size = sizeof(bp_transfer_stats_t);
  for (int run = 0; run < kTimedRuns; ++run) {
    for (bp_tensor_t* t : outs.v) bp_tensor_release(t);
    outs.v.clear();
    if (run == kTimedRuns - 1) bp_transfer_stats(ctx, dev.backend, &before);
    if (!s.run(inputs, &outs.v, &err)) {
      fail(&r, err);
      return r;
    }
  }
  if (bp_transfer_stats(ctx, dev.backend, &after) == BP_STATUS_OK) {
    r.to_device_copies = after.host_to_device_count - before.host_to_device_count;
    r.to_device_bytes = after.host_to_device_bytes - before.host_to_device_bytes;
    r.to_host_copies = after.device_to_host_count - before.device_to_host_count;
    r.to_host_bytes = after.device_to_host_bytes - before.device_to_host_bytes;
  }
  for (const auto& nt : fastest) {
    const bponnx::NodePath p = paths[nt.first];
    r.seconds += nt.second;
    (p == bponnx::NodePath::kNative     ? r.native_seconds
     : p == bponnx::NodePath::kFallback ? r.fallback_seconds
                                        : r.core_seconds) += nt.second;
  }
  r.nodes = static_cast<int>(paths.size());
  for (const auto& np : paths) {
    r.native_nodes += np.second == bponnx::NodePath::kNative;
    r.fallback_nodes += np.second == bponnx::NodePath::kFallback;
    r.core_nodes += np.second == bponnx::NodePath::kCore;
  }
  r.outcome = "match";
  const std::string kinds = output_kinds_differ(outs.v, expected, meta);
  if (!kinds.empty()) {
    r.outcome = "mismatch";
    r.message = kinds;
    return r;
  }
  for (size_t k = 0; k < outs.v.size(); ++k) {
    const bponnx::OutputMatch m = bponnx::compare_output(ctx, outs.v[k], expected[k], r.rtol, r.atol);
    r.max_abs = std::max(r.max_abs, m.max_abs);
    r.max_rel = std::max(r.max_rel, m.max_rel);
    if (!m.match && r.outcome == "match") {
      r.outcome = "mismatch";
      r.message = meta.outputs[k] + ": " + m.message(r.rtol, r.atol);
    }
  }
  return r;
}

}  // namespace bpc
