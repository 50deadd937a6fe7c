// The pass list: the one place naming the optimizer's passes and their order.
#include "pass.h"

namespace bponnx {
namespace passes {

const std::vector<Pass>& pass_list() {
  // constant-fold first (weights computed from initializers become
  // initializers conv-bn can fold into); dead-nodes last, dropping the
  // values the others left unread.
  static const std::vector<Pass> list = {
      {"constant-fold",
       "runs nodes that read only initializers and constants once, on the CPU, and keeps their results "
       "(at most 64 Ki elements each) as initializers",
       fold_constants},
      {"conv-bn", "folds an inference BatchNormalization into the Conv/ConvTranspose before it", fold_conv_batchnorm},
      {"gelu", "replaces the Erf form of GELU (Div, Erf, Add, Mul, Mul) by one Gelu node", fuse_gelu},
      {"layer-norm",
       "replaces layer normalization written out (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add) "
       "by one LayerNormalization node",
       fuse_layer_norm},
      {"channels-last",
       "on the CPU device, runs 2-D convolutions on channels-last (NHWC) activations, which the operators "
       "after them keep, so oneDNN converts no activation layout between layers",
       mark_channels_last},
      {"conv-act",
       "fuses Conv [-> Add(residual)] -> activation (Relu, Clip, HardSwish, HardSigmoid, Sigmoid, SiLU, Gelu, "
       "LeakyRelu) into one conv2d_fused node, where the device has a native conv2d_fused kernel (cpu)",
       fuse_conv_activation},
      {"attention",
       "replaces scaled dot-product attention written out (MatMul, Mul/Div by constants, Add or Where mask, "
       "Softmax, MatMul) by one scaled_dot_product_attention node, where the device has a native kernel (cpu)",
       fuse_attention},
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
