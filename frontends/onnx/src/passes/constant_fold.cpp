// constant-fold: a node reading only initializers (and Constant tensors) is
// run once here, on the CPU device through the mappings (bponnx/exec.h, the
// public C API underneath), and its outputs become initializers. Not folded:
// random or stateful ops, nodes of other domains, outputs over
// kMaxFoldElements (a large tensor stays computed on the device rather than
// uploaded), graph outputs, and any node whose mapping fails here (the
// session then reports it as it would unoptimized).
#include <new>
#include <set>
#include <stdexcept>

#include "bponnx/exec.h"
#include "bponnx/graph.h"
#include "pass.h"

namespace bponnx {
namespace passes {

namespace {

constexpr int64_t kMaxFoldElements = 64 * 1024;

// Ops whose result is not a function of their inputs alone.
bool foldable_op(const OnnxNode& n) {
  static const std::set<std::string> never = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                                              "Multinomial",  "Bernoulli",     "Dropout"};
  return n.domain.empty() && !n.inputs.empty() && !never.count(n.op_type) && map_table().count(n.op_type);
}

// Constant nodes holding a tensor become initializers (the session keeps both
// alike), so nodes reading them can fold.
int constants_to_initializers(PassGraph* g) {
  int moved = 0;
  std::vector<OnnxNode> kept;
  for (OnnxNode& n : g->nodes) {
    const auto it = n.attrs.find("value");
    if (n.op_type == "Constant" && n.domain.empty() && n.outputs.size() == 1 && it != n.attrs.end() &&
        it->second.kind == OnnxAttribute::kTensor && it->second.tensor.unsupported.empty()) {
      g->initializers[n.outputs[0]] = it->second.tensor;
      ++moved;
    } else {
      kept.push_back(std::move(n));
    }
  }
  g->nodes = std::move(kept);
  return moved;
}

// The node's outputs computed on the CPU; false when it cannot or should not fold.
bool evaluate(PassGraph* g, Exec& ex, const OnnxNode& n, std::vector<RawTensor>* outs) {
  std::vector<HostTensor> host(n.inputs.size());
  std::vector<NodeInput> ins(n.inputs.size());
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    if (n.inputs[k].empty()) continue;
    const RawTensor& r = g->initializers.at(n.inputs[k]);
    ins[k].t = ex.upload(r);
    if (host_from_raw(r, &host[k])) ins[k].host = &host[k];
  }
  const std::vector<bp_tensor_t*> ts = run_node(ex, n, ins);
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    if (n.outputs[k].empty()) continue;
    if (k >= ts.size() || ts[k] == nullptr || bp_tensor_numel(ts[k]) > kMaxFoldElements) return false;
    RawTensor r;
    if (!dtype_from_dl(bp_tensor_dtype(ts[k]), &r.dtype)) return false;
    r.sizes.assign(bp_tensor_sizes(ts[k]), bp_tensor_sizes(ts[k]) + bp_tensor_ndim(ts[k]));
    r.bytes.resize(static_cast<size_t>(bp_tensor_numel(ts[k])) * dtype_itemsize(r.dtype));
    if (bp_tensor_to_host(ts[k], &r.bytes[0], r.bytes.size()) != BP_STATUS_OK) return false;
    (*outs)[k] = std::move(r);
  }
  return true;
}

}  // namespace

int fold_constants(PassGraph* g) {
  if (g->ctx == nullptr) return 0;
  int folded = constants_to_initializers(g);
  const std::set<std::string> outputs(g->outputs.begin(), g->outputs.end());
  OpCache ops(g->ctx);
  Exec ex(g->ctx, bp_device_t{0, 0}, &ops);  // the CPU device
  std::vector<OnnxNode> kept;
  for (OnnxNode& n : g->nodes) {
    bool fold = foldable_op(n);
    for (const std::string& in : n.inputs) fold = fold && (in.empty() || g->initializers.count(in));
    for (const std::string& o : n.outputs) fold = fold && !outputs.count(o);
    std::vector<RawTensor> vals(n.outputs.size());
    try {
      fold = fold && evaluate(g, ex, n, &vals);
    } catch (const NotMapped&) {
      fold = false;
    } catch (const CallFailed&) {
      fold = false;
    } catch (const std::bad_alloc&) {
      throw;  // as the session's own runs let it through (graph.h)
    } catch (const std::exception&) {
      fold = false;  // a mapping's own error: the session's run reports it
    }
    if (!fold) {
      kept.push_back(std::move(n));
      continue;
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      if (!n.outputs[k].empty()) g->initializers[n.outputs[k]] = std::move(vals[k]);
    }
    ++folded;
  }
  g->nodes = std::move(kept);
  return folded;
}

}  // namespace passes
}  // namespace bponnx
