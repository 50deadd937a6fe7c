#include "onnx/onnx_run.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "boxed_values.h"
#include "bponnx/exec.h"
#include "device_tensor.h"
#include "gen.h"
#include "opdb.h"

namespace bpc {
namespace onnx_corpus {

namespace {

std::string fmt(double v) {
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}

struct Counters {
  uint64_t native = 0, fallback = 0;
};

// Kernel counters summed over every operator (a mapping runs several).
Counters snapshot(bp_context_t* ctx, int32_t backend) {
  Counters c;
  int32_t n = 0;
  if (bp_op_count(ctx, &n) != BP_STATUS_OK) return c;
  for (int32_t i = 0; i < n; ++i) {
    bp_op_t* op = nullptr;
    if (bp_op_at(ctx, i, &op) != BP_STATUS_OK) continue;
    uint64_t v = 0;
    if (bp_native_count(ctx, op, backend, &v) == BP_STATUS_OK) c.native += v;
    if (bp_fallback_count(ctx, op, backend, &v) == BP_STATUS_OK) c.fallback += v;
  }
  return c;
}

// The first input or expected output whose element type Backplane lacks.
std::string unsupported_dtype(const OnnxTest& t) {
  for (const OnnxDataSet& ds : t.data_sets) {
    for (const auto* list : {&ds.inputs, &ds.outputs}) {
      for (const OnnxTensor& x : *list) {
        if (!x.unsupported.empty()) return x.unsupported;
      }
    }
  }
  return "";
}

// The frontend's view of a host tensor (same values; dtype by its DLPack code).
bponnx::HostTensor to_frontend(const HostTensor& h) {
  bponnx::HostTensor r;
  bponnx::dtype_from_dl(dtype_to_dl(h.dtype), &r.dtype);
  r.sizes = h.sizes;
  r.values = h.values;
  return r;
}

// A data-set tensor made on `dev` (contiguous), held by `pool`: made on the
// host, moved when `dev` is not the CPU (no operator runs, so the kernel
// counters see only the mapping's calls).
bp_tensor_t* upload(bp_context_t* ctx, bp_device_t dev, const HostTensor& h, TensorPool* pool) {
  std::vector<uint8_t> bytes;
  dtype_encode(h.dtype, h.values, &bytes);
  const uint8_t dummy = 0;
  bp_tensor_t* host = nullptr;
  bp_status_t st = bp_tensor_from_host(ctx, bp_device_t{0, 0}, h.ndim(), h.sizes.data(), dtype_to_dl(h.dtype),
                                       bytes.empty() ? &dummy : bytes.data(), bytes.size(), &host);
  if (st != BP_STATUS_OK) throw bponnx::CallFailed{api_error("bp_tensor_from_host", st)};
  pool->hold(host);
  if (dev.backend == 0) return host;
  bp_tensor_t* t = nullptr;
  st = bp_tensor_to_device(host, dev, &t);
  if (st != BP_STATUS_OK) throw bponnx::CallFailed{api_error("bp_tensor_to_device", st)};
  return pool->hold(t);
}

// The mapping asks ops.yaml's claims (the suite's table) before calling.
void install_claims() {
  static const bool once = [] {
    bponnx::set_dtype_claims([](const std::string& op, bponnx::DType d) {
      const OpClaim* c = find_claim(op);
      DType ours;
      return c != nullptr && dtype_from_dl(bponnx::dtype_to_dl(d), &ours) && c->claims(ours);
    });
    return true;
  }();
  (void)once;
}

// One data set of a graph test through the frontend's executor: its
// outputs (held by `pool`), or false with *message (and *gap when the
// failure is a gap in the mappings).
bool run_graph_data_set(bp_context_t* ctx, bp_device_t dev, const OnnxTest& test, const OnnxDataSet& ds,
                        TensorPool* pool, std::vector<bp_tensor_t*>* outs, std::string* message, std::string* gap) {
  std::map<std::string, bp_tensor_t*> feeds;
  try {
    for (size_t k = 0; k < ds.inputs.size(); ++k) feeds[test.graph_inputs[k]] = upload(ctx, dev, ds.inputs[k].t, pool);
  } catch (const bponnx::CallFailed& e) {
    *message = ds.name + ": " + e.message;
    return false;
  }
  std::string err;
  if (!run_onnx_graph(ctx, dev, test, feeds, outs, &err, gap)) {
    *message = ds.name + ": " + err;
    return false;
  }
  for (bp_tensor_t* t : *outs) pool->hold(t);
  return true;
}

}  // namespace

std::string compare_output(const HostTensor& expected, DType actual_dtype, const std::vector<int64_t>& actual_sizes,
                           const std::vector<double>& actual, double rtol, double atol) {
  if (actual_dtype != expected.dtype) {
    return std::string("result dtype ") + dtype_name(actual_dtype) + ", expected " + dtype_name(expected.dtype);
  }
  if (actual_sizes != expected.sizes) {
    return "result sizes " + sizes_str(actual_sizes) + ", expected " + sizes_str(expected.sizes);
  }
  const bool exact = !dtype_is_float(expected.dtype);
  int64_t worst = -1, bad = 0;
  double worst_excess = -1.0, max_abs = 0.0, max_rel = 0.0;
  for (size_t k = 0; k < actual.size(); ++k) {
    const double e = expected.values[k], a = actual[k];
    bool ok;
    double excess = 0.0;
    if (std::isnan(e) || std::isnan(a)) {
      ok = std::isnan(e) && std::isnan(a);
      excess = ok ? 0.0 : INFINITY;
    } else if (std::isinf(e) || std::isinf(a)) {
      ok = e == a;
      excess = ok ? 0.0 : INFINITY;
    } else {
      const double diff = std::fabs(a - e);
      max_abs = std::max(max_abs, diff);
      if (e != 0.0) max_rel = std::max(max_rel, diff / std::fabs(e));
      const double bound = exact ? 0.0 : atol + rtol * std::fabs(e);
      ok = diff <= bound;
      excess = diff - bound;
    }
    if (!ok) {
      ++bad;
      if (excess > worst_excess) {
        worst_excess = excess;
        worst = static_cast<int64_t>(k);
      }
    }
  }
  if (bad == 0) return "";
  std::vector<int64_t> idx;
  unravel(worst, expected.sizes, &idx);
  std::ostringstream os;
  os << bad << " of " << actual.size() << " elements differ; worst at " << sizes_str(idx) << ": expected "
     << fmt(expected.values[static_cast<size_t>(worst)]) << ", got " << fmt(actual[static_cast<size_t>(worst)])
     << " (max abs " << fmt(max_abs) << ", max rel " << fmt(max_rel);
  if (!exact) os << "; rtol " << rtol << ", atol " << atol;
  os << ")";
  return os.str();
}

OnnxTestResult run_loaded_test(bp_context_t* ctx, bp_device_t dev, const OnnxTest& test) {
  OnnxTestResult r;
  r.test = test.name;
  r.onnx_op = test.graph                 ? "graph(" + test.graph_ops + ")"
              : test.node.domain.empty() ? test.node.op_type
                                         : test.node.domain + "." + test.node.op_type;
  auto not_mapped = [&](const std::string& why) {
    r.outcome = "not_mapped";
    r.reason = why;
    return r;
  };
  if (!test.not_mapped.empty()) return not_mapped(test.not_mapped);
  install_claims();
  const bponnx::MapTable& table = bponnx::map_table();
  const auto fn = table.find(test.node.op_type);
  if (!test.graph && (!test.node.domain.empty() || fn == table.end())) return not_mapped("op " + r.onnx_op);
  const std::string bad = unsupported_dtype(test);
  if (!bad.empty()) return not_mapped("dtype " + r.onnx_op + "(" + bad + ")");
  if (test.data_sets.empty()) return not_mapped("input: no test_data_set_* directory");

  const Counters before = snapshot(ctx, dev.backend);
  std::string failure;
  for (const OnnxDataSet& ds : test.data_sets) {
    TensorPool pool;
    bponnx::OpCache ops(ctx);
    bponnx::Exec ex(ctx, dev, &ops);
    std::vector<bp_tensor_t*> outs;
    std::vector<bponnx::HostTensor> hosts;
    hosts.reserve(ds.inputs.size());
    if (test.graph) {
      std::string gap;
      if (!run_graph_data_set(ctx, dev, test, ds, &pool, &outs, &r.message, &gap)) {
        if (!gap.empty()) return not_mapped(gap);
        r.outcome = "error";
        return r;
      }
    } else {
      try {
        std::vector<bponnx::NodeInput> ins;
        for (const OnnxTensor& t : ds.inputs) {
          bponnx::NodeInput in;
          if (t.present) {
            hosts.push_back(to_frontend(t.t));
            in.host = &hosts.back();
            in.t = upload(ctx, dev, t.t, &pool);
          }
          ins.push_back(in);
        }
        outs = fn->second(ex, test.node, ins);
      } catch (const bponnx::NotMapped& e) {
        return not_mapped(e.reason);
      } catch (const bponnx::CallFailed& e) {
        r.outcome = "error";
        r.message = ds.name + ": " + e.message;
        return r;
      } catch (const std::exception& e) {  // a malformed test or a bug in a mapping
        r.outcome = "error";
        r.message = ds.name + ": bp-conformance's mapping of " + r.onnx_op + " failed: " + e.what();
        return r;
      }
    }
    const std::vector<std::string>& out_names = test.graph ? test.graph_outputs : test.node.outputs;
    for (size_t k = 0; k < ds.outputs.size() && failure.empty(); ++k) {
      const OnnxTensor& want = ds.outputs[k];
      if (!want.present) continue;
      if (k >= outs.size() || outs[k] == nullptr) {
        failure = "the mapping made no output " + std::to_string(k);
        break;
      }
      DType d;
      std::vector<int64_t> sizes;
      std::vector<double> got;
      std::string err;
      if (!read_tensor(outs[k], &d, &sizes, &got, &err)) {
        r.outcome = "error";
        r.message = ds.name + ": output " + out_names[k] + ": " + err;
        return r;
      }
      const std::string msg = compare_output(want.t, d, sizes, got, test.rtol, test.atol);
      if (!msg.empty()) failure = ds.name + ": output " + out_names[k] + ": " + msg;
    }
    if (!failure.empty()) break;
  }
  const Counters after = snapshot(ctx, dev.backend);
  r.path = after.fallback > before.fallback ? "fallback" : after.native > before.native ? "native" : "core";
  if (!failure.empty()) {
    r.outcome = "fail";
    r.message = failure;
  } else {
    r.outcome = "pass";
  }
  return r;
}

}  // namespace onnx_corpus
}  // namespace bpc
