// Helpers the passes share: readers of values, float32 initializers, names,
// the pattern matcher.
#include <cmath>
#include <cstring>

#include "pass.h"

namespace bponnx {
namespace passes {

std::map<std::string, int> reader_counts(const PassGraph& g) {
  std::map<std::string, int> n;
  for (const OnnxNode& node : g.nodes) {
    for (const std::string& in : node.inputs) {
      if (!in.empty()) ++n[in];
    }
  }
  for (const std::string& o : g.outputs) ++n[o];
  return n;
}

bool float_initializer(const PassGraph& g, const std::string& name, std::vector<float>* out) {
  const auto it = g.initializers.find(name);
  if (it == g.initializers.end() || it->second.dtype != DType::kFloat32 || !it->second.unsupported.empty()) {
    return false;
  }
  const RawTensor& r = it->second;
  const int64_t n = r.numel();
  if (n < 0 || r.bytes.size() != static_cast<size_t>(n) * sizeof(float)) return false;
  out->resize(static_cast<size_t>(n));
  if (n > 0) std::memcpy(out->data(), r.bytes.data(), r.bytes.size());
  return true;
}

RawTensor float_tensor(const std::vector<int64_t>& sizes, const std::vector<float>& values) {
  RawTensor r;
  r.dtype = DType::kFloat32;
  r.sizes = sizes;
  r.bytes.assign(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  return r;
}

std::string fresh_name(const PassGraph& g, const std::string& base) {
  std::map<std::string, int> used = reader_counts(g);
  for (const OnnxNode& node : g.nodes) {
    for (const std::string& o : node.outputs) used[o];
  }
  for (const auto& kv : g.initializers) used[kv.first];
  std::string name = base;
  for (int k = 1; used.count(name); ++k) name = base + "_" + std::to_string(k);
  return name;
}

Matcher::Matcher(PassGraph* graph) : g(graph), readers(reader_counts(*graph)) {
  for (size_t k = 0; k < g->nodes.size(); ++k) {
    for (const std::string& o : g->nodes[k].outputs) producer[o] = k;
  }
}

const OnnxNode* Matcher::made_by(const std::string& v, const char* op, size_t num_inputs) const {
  const auto it = producer.find(v);
  if (it == producer.end()) return nullptr;
  const OnnxNode& n = g->nodes[it->second];
  return n.op_type == op && n.domain.empty() && n.inputs.size() == num_inputs && n.outputs.size() == 1 ? &n
                                                                                                     : nullptr;
}

bool Matcher::scalar(const std::string& v, double want) const {
  std::vector<float> f;
  return float_initializer(*g, v, &f) && f.size() == 1 && std::fabs(f[0] - want) <= 1e-6 * std::fabs(want);
}

std::string Matcher::other_than(const OnnxNode& n, double want) const {
  if (scalar(n.inputs[1], want)) return n.inputs[0];
  if (scalar(n.inputs[0], want)) return n.inputs[1];
  return "";
}

bool Matcher::read_by(const std::string& v, int count) const {
  const auto it = readers.find(v);
  return it != readers.end() && it->second == count;
}

void drop_nodes(PassGraph* g, const std::vector<bool>& drop) {
  std::vector<OnnxNode> kept;
  for (size_t k = 0; k < g->nodes.size(); ++k) {
    if (!drop[k]) kept.push_back(std::move(g->nodes[k]));
  }
  g->nodes = std::move(kept);
}

}  // namespace passes
}  // namespace bponnx
