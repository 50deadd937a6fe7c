// dead-nodes: a node none of whose outputs reaches a graph output is never
// needed; an initializer no kept node reads is never uploaded.
#include <set>

#include "pass.h"

namespace bponnx {
namespace passes {

int eliminate_dead_nodes(PassGraph* g) {
  std::set<std::string> needed(g->outputs.begin(), g->outputs.end());
  std::vector<bool> keep(g->nodes.size(), false);
  // Reverse topological order: a node's readers are decided before it.
  for (size_t k = g->nodes.size(); k-- > 0;) {
    const OnnxNode& n = g->nodes[k];
    for (const std::string& o : n.outputs) {
      if (!o.empty() && needed.count(o)) keep[k] = true;
    }
    if (!keep[k]) continue;
    for (const std::string& in : n.inputs) {
      if (!in.empty()) needed.insert(in);
    }
  }
  int removed = 0;
  std::vector<OnnxNode> kept;
  for (size_t k = 0; k < g->nodes.size(); ++k) {
    if (keep[k])
      kept.push_back(std::move(g->nodes[k]));
    else
      ++removed;
  }
  g->nodes = std::move(kept);
  for (auto it = g->initializers.begin(); it != g->initializers.end();) {
    if (needed.count(it->first)) {
      ++it;
    } else {
      it = g->initializers.erase(it);
      ++removed;
    }
  }
  return removed;
}

}  // namespace passes
}  // namespace bponnx
