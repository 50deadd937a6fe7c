// Model <-> PassGraph, and the pass names as the public API lists them.
#include "optimize_model.h"

#include "pass.h"

namespace bponnx {

std::vector<std::pair<std::string, std::string>> optimizer_passes() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const passes::Pass& p : passes::pass_list()) out.emplace_back(p.name, p.what);
  return out;
}

Model optimize_model(const Model& model, const std::set<std::string>& disabled, bp_context_t* ctx,
                     bp_device_t device) {
  passes::PassGraph g;
  g.ctx = ctx;
  g.device = device;
  g.nodes = model.nodes();
  g.initializers = model.initializers();
  for (const ValueInfo& v : model.outputs()) g.outputs.push_back(v.name);
  passes::optimize(&g, disabled);
  return model.with_graph(std::move(g.nodes), std::move(g.initializers));
}

}  // namespace bponnx
