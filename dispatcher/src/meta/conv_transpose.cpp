// Meta function of conv_transpose2d (torch.nn.functional.conv_transpose2d).
//
// input [N, C_in, H, W] or unbatched [C_in, H, W] (shown to the kernel as
// [1, C_in, H, W]); weight [C_in, C_out / groups, kH, kW] of input's dtype;
// bias None or [C_out]. Output size per spatial dim, as PyTorch:
//   (H - 1) * stride - 2 * padding + dilation * (kH - 1) + output_padding + 1,
// which must be positive; output_padding must be smaller than stride or
// dilation. The int lists reach the kernel with length 2.
#include "meta/families.h"
#include "meta/nchw.h"

namespace bp::core::meta {
namespace {

// conv_transpose2d.input(input, weight, bias, stride, padding, output_padding, groups, dilation)
Status ConvTranspose2dInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  ConvArgs c;
  BP_RETURN_IF_ERROR(ReadConvArgs(info, args, "[C_in, C_out / groups, kH, kW]", /*dilation_arg=*/7, &c));
  int64_t out_pad[2];
  BP_RETURN_IF_ERROR(PairAtLeast(info, args, 5, nullptr, 0, "non-negative output_padding", out_pad));
  const Geometry& in = *args[0].tensor;
  const Geometry& w = *args[1].tensor;
  for (int k = 0; k < 2; ++k) {
    if (out_pad[k] >= c.stride[k] && out_pad[k] >= c.dilation[k]) {
      return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 5) + "expected values smaller than stride " +
                                                   SizesText(c.stride, 2) + " or dilation " + SizesText(c.dilation, 2) +
                                                   ", got " + SizesText(out_pad, 2));
    }
  }
  const int64_t c_in = in.sizes[in.ndim - 3];
  if (w.sizes[0] != c_in || c_in % c.groups != 0) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 1) + "of sizes " + SizesText(w) + ": expected " +
                                                 std::to_string(c_in) + " input channels (as 'input' of sizes " +
                                                 SizesText(in) + "), divisible by groups=" + std::to_string(c.groups));
  }
  const int64_t c_out = w.sizes[1] * c.groups;
  BP_RETURN_IF_ERROR(ConvBias(info, args, c_out, c.dtype));
  int64_t hw[2];
  for (int k = 0; k < 2; ++k) {
    if (w.sizes[2 + k] > (int64_t{1} << 30)) {
      return Error(BP_STATUS_OUT_OF_RANGE,
                   ArgPrefix(info, 1) + "of sizes " + SizesText(w) + ": expected kernel sizes <= 2^30");
    }
    hw[k] = (in.sizes[in.ndim - 2 + k] - 1) * c.stride[k] - 2 * c.padding[k] + c.dilation[k] * (w.sizes[2 + k] - 1) +
            out_pad[k] + 1;
  }
  if (hw[0] < 1 || hw[1] < 1) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 0) + "of sizes " + SizesText(in) + " gives output size " +
                                                 HW(hw[0], hw[1]) + " with padding " + SizesText(c.padding, 2) +
                                                 "; expected at least 1 x 1");
  }
  RewritePair(plan, 3, 0, c.stride);
  RewritePair(plan, 4, 1, c.padding);
  RewritePair(plan, 5, 2, out_pad);
  RewritePair(plan, 7, 3, c.dilation);
  plan->no_output_alias = true;
  return SetOutput4(info, args, plan, c.dtype, c_out, hw);
}

}  // namespace

const MetaFunctions kConvTranspose2dMeta = {"conv_transpose2d", ConvTranspose2dInfer, NchwPrepare};

}  // namespace bp::core::meta
