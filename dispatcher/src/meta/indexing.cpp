// Meta function of index_select (torch.index_select).
//
// self of any dtype and rank; dim normalized against max(rank, 1); index a
// 0-D or 1-D int32/int64 tensor. The output has self's sizes with size(dim)
// replaced by the number of indices (a 0-dim self takes one index and gives
// a 0-dim result). The index values are checked by the kernel, which sees
// them: each must lie in [0, size(dim)), as in PyTorch (no negative indices).
#include "meta/common.h"
#include "meta/families.h"

namespace bp::core::meta {

Status SelfDimIndexArgs(const MetaCallInfo& info, const MetaArg* args, DType* self_dtype, int32_t* dim) {
  DType id;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 0, self_dtype));
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 2, &id));
  int64_t dim_arg;
  BP_RETURN_IF_ERROR(IntArg(info, args, 1, &dim_arg));
  BP_RETURN_IF_ERROR(WrapDim(info, 1, dim_arg, args[0].tensor->ndim, dim));
  if (id != DType::kInt64 && id != DType::kInt32) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, 2) + "expected dtype int64 or int32, got " + DtypeName(id));
  }
  return Status::Ok();
}

namespace {

// index_select(self, dim, index)
Status IndexSelectInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType d;
  int32_t dim;
  BP_RETURN_IF_ERROR(SelfDimIndexArgs(info, args, &d, &dim));
  const Geometry& self = *args[0].tensor;
  const Geometry& index = *args[2].tensor;
  if (index.ndim > 1) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, 2) + "expected a 0-D or 1-D tensor, got sizes " + SizesText(index));
  }
  const int64_t count = index.numel();
  int64_t sizes[BP_MAX_NDIM];
  for (int32_t k = 0; k < self.ndim; ++k) sizes[k] = self.sizes[k];
  if (self.ndim == 0) {
    if (count != 1) {
      return Error(BP_STATUS_INVALID_ARGUMENT,
                   ArgPrefix(info, 2) + "expected one index for a 0-dim 'self', got " + std::to_string(count));
    }
  } else {
    sizes[dim] = count;
  }
  RewriteInt(plan, 1, dim);
  plan->no_output_alias = true;
  return SetOutput(info, plan, 0, d, sizes, self.ndim, self.device);
}

}  // namespace

const MetaFunctions kIndexSelectMeta = {"index_select", IndexSelectInfer, AsIsPrepare};

}  // namespace bp::core::meta
