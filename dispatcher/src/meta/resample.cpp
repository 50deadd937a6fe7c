// Meta function of upsample_nearest2d and upsample_bilinear2d (torch's
// aten::upsample_*2d with output_size, which F.interpolate calls).
//
// self is [N, C, H, W] with non-zero C, H, W (N may be 0); output_size is
// two positive ints (one int is repeated) and reaches the kernel as a
// two-element INT_LIST. The output is [N, C, output_size[0], output_size[1]]
// in self's dtype. scales_h / scales_w (the caller's scale factors, output
// over input) only change where the kernel samples; a value that is not > 0
// counts as None, as in PyTorch.
#include "meta/families.h"
#include "meta/nchw.h"

namespace bp::core::meta {
namespace {

Status UpsampleInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType d;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 0, &d));
  const Geometry& in = *args[0].tensor;
  if (in.ndim != 4 || in.sizes[1] <= 0 || in.sizes[2] <= 0 || in.sizes[3] <= 0) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, 0) + "expected sizes [N, C, H, W] with non-zero C, H, W, got " + SizesText(in));
  }
  int64_t size[2];
  BP_RETURN_IF_ERROR(PairAtLeast(info, args, 1, nullptr, 1, "two positive output sizes", size));
  // The scale arguments follow output_size (nearest) or align_corners (bilinear).
  const int first_scale = BaseNameIs(info, "upsample_bilinear2d") ? 3 : 2;
  for (int i = first_scale; i < first_scale + 2; ++i) {
    if (Has(info, args, i) && args[i].kind != BP_VALUE_DOUBLE) {
      return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) + "expected a float or None");
    }
  }
  RewritePair(plan, 1, 0, size);
  plan->no_output_alias = true;
  const int64_t sizes[4] = {in.sizes[0], in.sizes[1], size[0], size[1]};
  return SetOutput(info, plan, 0, d, sizes, 4, in.device);
}

}  // namespace

const MetaFunctions kUpsample2dMeta = {"upsample2d", UpsampleInfer, AsIsPrepare};

}  // namespace bp::core::meta
