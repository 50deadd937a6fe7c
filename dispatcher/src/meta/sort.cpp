// Meta function of topk (torch.topk): two outputs.
//
// self of any rank (a 0-dim tensor is one element along dim 0); dim
// normalized against max(rank, 1) and handed to the kernel as an INT;
// 0 <= k <= size(dim). outputs[0] (values, self's dtype) and outputs[1]
// (indices, int64) have self's sizes with size(dim) = k.
#include "meta/common.h"
#include "meta/families.h"

namespace bp::core::meta {
namespace {

// topk(self, k, dim, largest, sorted)
Status TopkInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType d;
  int64_t k, dim_arg;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 0, &d));
  BP_RETURN_IF_ERROR(IntArg(info, args, 1, &k));
  BP_RETURN_IF_ERROR(IntArg(info, args, 2, &dim_arg));
  const Geometry& self = *args[0].tensor;
  int32_t dim;
  BP_RETURN_IF_ERROR(WrapDim(info, 2, dim_arg, self.ndim, &dim));
  const int64_t size = self.ndim > 0 ? self.sizes[dim] : 1;
  if (k < 0 || k > size) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 1) + "expected a value in [0, " + std::to_string(size) +
                                                 "] (the size of dim " + std::to_string(dim) + "), got " +
                                                 std::to_string(k));
  }
  int64_t sizes[BP_MAX_NDIM];
  for (int32_t j = 0; j < self.ndim; ++j) sizes[j] = j == dim ? k : self.sizes[j];
  RewriteInt(plan, 2, dim);
  plan->num_outputs = 2;
  plan->no_output_alias = true;
  BP_RETURN_IF_ERROR(SetOutput(info, plan, 0, d, sizes, self.ndim, self.device));
  return SetOutput(info, plan, 1, DType::kInt64, sizes, self.ndim, self.device);
}

}  // namespace

const MetaFunctions kTopkMeta = {"topk", TopkInfer, AsIsPrepare};

}  // namespace bp::core::meta
