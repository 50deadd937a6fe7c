// channels-last: on the CPU device, marks each 2-D Conv so its mapping runs
// the convolution on a channels-last (NHWC-strided) input. Why: oneDNN's
// fast convolutions read and write NHWC; on plain NCHW activations every
// Conv paid two activation reorders (in and out), which were 35-40% of
// mobilenet_v2's oneDNN time. The layout needs no graph change: a
// channels-last tensor keeps its [N, C, H, W] sizes, and Backplane's
// convolution, pooling and pointwise operators give a channels-last result
// for a channels-last input (as torch's do), so only the first Conv of a
// chain converts, and every later operator sees the same sizes as before.
// Left alone: other devices (their kernels have their own preferred
// layouts), Conv nodes whose weight is not a rank-4 initializer (1-D
// convolutions, weights computed at run time).
#include "pass.h"

namespace bponnx {
namespace passes {

int mark_channels_last(PassGraph* g) {
  if (g->device.backend != 0) return 0;  // backend 0: the CPU device
  int marked = 0;
  for (OnnxNode& n : g->nodes) {
    if (n.op_type != "Conv" || !n.domain.empty() || n.inputs.size() < 2) continue;
    const auto w = g->initializers.find(n.inputs[1]);
    if (w == g->initializers.end() || w->second.sizes.size() != 4) continue;
    OnnxAttribute a;
    a.kind = OnnxAttribute::kInt;
    a.i = 1;
    n.attrs[kChannelsLastAttr] = a;
    ++marked;
  }
  return marked;
}

}  // namespace passes
}  // namespace bponnx
