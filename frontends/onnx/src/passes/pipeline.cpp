// The pass list: the one place naming the optimizer's passes and their order.
#include "pass.h"

namespace bponnx {
namespace passes {

const std::vector<Pass>& pass_list() {
  // conv-bn first: the BatchNormalization parameters it folds away are then
  // dropped by dead-nodes with the other unread values.
  static const std::vector<Pass> list = {
      {"conv-bn", "folds an inference BatchNormalization into the Conv/ConvTranspose before it", fold_conv_batchnorm},
      {"dead-nodes", "removes nodes and initializers no graph output depends on", eliminate_dead_nodes},
  };
  return list;
}

void optimize(PassGraph* g, const std::set<std::string>& disabled) {
  if (disabled.count("all")) return;
  for (const Pass& p : pass_list()) {
    if (!disabled.count(p.name)) p.run(g);
  }
}

}  // namespace passes
}  // namespace bponnx
