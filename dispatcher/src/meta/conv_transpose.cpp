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
  DType d, wd;
  BP_RETURN_IF_ERROR(Input3or4(info, args, &d));
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 1, &wd));
  const Geometry& in = *args[0].tensor;
  const Geometry& w = *args[1].tensor;
  if (w.ndim != 4) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, 1) + "expected sizes [C_in, C_out / groups, kH, kW], got " + SizesText(w));
  }
  if (wd != d) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, 1) + "expected dtype " + DtypeName(d) + " (as 'input'), got " + DtypeName(wd));
  }
  int64_t stride[2], padding[2], out_pad[2], dilation[2];
  BP_RETURN_IF_ERROR(Pair(info, args, 3, nullptr, stride));
  BP_RETURN_IF_ERROR(Pair(info, args, 4, nullptr, padding));
  BP_RETURN_IF_ERROR(Pair(info, args, 5, nullptr, out_pad));
  BP_RETURN_IF_ERROR(Pair(info, args, 7, nullptr, dilation));
  BP_RETURN_IF_ERROR(AtLeast(info, 3, stride, 1, "positive strides"));
  BP_RETURN_IF_ERROR(AtLeast(info, 4, padding, 0, "non-negative padding"));
  BP_RETURN_IF_ERROR(AtLeast(info, 5, out_pad, 0, "non-negative output_padding"));
  BP_RETURN_IF_ERROR(AtLeast(info, 7, dilation, 1, "positive dilation"));
  for (int k = 0; k < 2; ++k) {
    if (out_pad[k] >= stride[k] && out_pad[k] >= dilation[k]) {
      return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 5) + "expected values smaller than stride " +
                                                   SizesText(stride, 2) + " or dilation " + SizesText(dilation, 2) +
                                                   ", got " + SizesText(out_pad, 2));
    }
  }
  const int64_t groups = Has(info, args, 6) ? args[6].i : 1;
  if (groups < 1) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, 6) + "expected a positive int, got " + std::to_string(groups));
  }
  const int64_t c_in = in.sizes[in.ndim - 3];
  if (w.sizes[0] != c_in || c_in % groups != 0) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 1) + "of sizes " + SizesText(w) + ": expected " +
                                                 std::to_string(c_in) + " input channels (as 'input' of sizes " +
                                                 SizesText(in) + "), divisible by groups=" + std::to_string(groups));
  }
  const int64_t c_out = w.sizes[1] * groups;
  if (Has(info, args, 2)) {
    DType bd;
    BP_RETURN_IF_ERROR(RequireTensor(info, args, 2, &bd));
    const Geometry& b = *args[2].tensor;
    if (b.ndim != 1 || b.sizes[0] != c_out || bd != d) {
      return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 2) + "expected sizes [" + std::to_string(c_out) +
                                                   "] and dtype " + DtypeName(d) + ", got " + SizesText(b) + " " +
                                                   DtypeName(bd));
    }
  }
  int64_t hw[2];
  for (int k = 0; k < 2; ++k) {
    if (w.sizes[2 + k] > (int64_t{1} << 30)) {
      return Error(BP_STATUS_OUT_OF_RANGE,
                   ArgPrefix(info, 1) + "of sizes " + SizesText(w) + ": expected kernel sizes <= 2^30");
    }
    hw[k] = (in.sizes[in.ndim - 2 + k] - 1) * stride[k] - 2 * padding[k] + dilation[k] * (w.sizes[2 + k] - 1) +
            out_pad[k] + 1;
  }
  if (hw[0] < 1 || hw[1] < 1) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 0) + "of sizes " + SizesText(in) + " gives output size " +
                                                 HW(hw[0], hw[1]) + " with padding " + SizesText(padding, 2) +
                                                 "; expected at least 1 x 1");
  }
  RewritePair(plan, 3, 0, stride);
  RewritePair(plan, 4, 1, padding);
  RewritePair(plan, 5, 2, out_pad);
  RewritePair(plan, 7, 3, dilation);
  plan->no_output_alias = true;
  return SetOutput4(info, args, plan, d, c_out, hw);
}

}  // namespace

const MetaFunctions kConvTranspose2dMeta = {"conv_transpose2d", ConvTranspose2dInfer, NchwPrepare};

}  // namespace bp::core::meta
