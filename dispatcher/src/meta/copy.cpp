// Meta functions of copy_, fill_, cat and the composites to/clone/contiguous
// (for composites infer only gives the output spec; the core does the work).
#include "meta/common.h"
#include "meta/families.h"

namespace bp::core::meta {
namespace {

// copy_(self, src, non_blocking): src broadcasts to self's sizes; the kernel
// converts the dtype. outputs[0] is self.
Status CopyInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType d;
  BP_RETURN_IF_ERROR(RequireTwoTensors(info, args, &d));
  const Geometry& self = *args[0].tensor;
  const Geometry& src = *args[1].tensor;
  int32_t n = 0;
  int64_t s[BP_MAX_NDIM];
  Status st = BroadcastShapes(info, 0, self, 1, src, &n, s);
  bool same = st.ok() && n == self.ndim;
  for (int32_t k = 0; same && k < n; ++k) same = s[k] == self.sizes[k];
  if (!same) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 1) + "of sizes " + SizesText(src) +
                                                 " cannot broadcast to 'self' of sizes " + SizesText(self));
  }
  plan->num_outputs = 1;
  plan->outputs[0] = self;
  return Status::Ok();
}

Status CopyPrepare(const MetaCallInfo& info, const MetaArg* args, const MetaPlan& plan, const Geometry* outputs,
                   KernelViews* views) {
  ViewsAsIs(args, info.num_args, outputs, plan.num_outputs, views);
  views->args[1] = BroadcastTo(*args[1].tensor, args[0].tensor->sizes, args[0].tensor->ndim);
  return Status::Ok();
}

// fill_.Scalar(self, value)
Status FillInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 0, nullptr));
  if (!Has(info, args, 1) ||
      (args[1].kind != BP_VALUE_INT && args[1].kind != BP_VALUE_DOUBLE && args[1].kind != BP_VALUE_BOOL)) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 1) + "expected a Scalar (int, float or bool)");
  }
  plan->num_outputs = 1;
  plan->outputs[0] = *args[0].tensor;
  return Status::Ok();
}

// cat(tensors, dim): promotion across inputs; 1-D empty inputs are skipped
// (PyTorch's legacy rule); sizes match except in dim.
Status CatInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  if (info.num_args < 1 || args[0].kind != BP_VALUE_TENSOR_LIST) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 0) + "expected a list of tensors");
  }
  const MetaArg& list = args[0];
  if (list.num_tensors == 0) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 0) + "expected a non-empty list of tensors, got []");
  }
  const Geometry* ref = nullptr;
  int64_t ref_index = 0;
  for (int64_t j = 0; j < list.num_tensors; ++j) {
    const Geometry* g = list.tensors[j];
    if (g == nullptr || DtypeFromDL(g->dtype) == DType::kInvalid) {
      return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 0) + "element " + std::to_string(j) +
                                                   " is not a tensor of a dtype Backplane knows");
    }
    if (g->ndim == 0) {
      return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 0) + "element " + std::to_string(j) +
                                                   " is 0-dim; expected tensors with at least 1 dim");
    }
    if (ref == nullptr && !CatSkipsInput(*g)) {
      ref = g;
      ref_index = j;
    }
  }
  const int idx[1] = {0};
  DType d;
  BP_RETURN_IF_ERROR(ResultTypeChecked(info, args, idx, 1, &d));
  for (int64_t j = 0; j < list.num_tensors; ++j) {
    if (DtypeFromDL(list.tensors[j]->dtype) != d) plan->cast_to[0] = DtypeToDL(d);
  }
  if (ref == nullptr) {  // every input is an empty 1-D tensor
    const int64_t zero = 0;
    return SetOutput(info, plan, 0, d, &zero, 1, list.tensors[0]->device);
  }
  int64_t raw_dim = Has(info, args, 1) ? args[1].i : 0;
  int32_t dim = 0;
  BP_RETURN_IF_ERROR(WrapDim(info, 1, raw_dim, ref->ndim, &dim));
  int64_t sizes[BP_MAX_NDIM];
  for (int32_t k = 0; k < ref->ndim; ++k) sizes[k] = ref->sizes[k];
  sizes[dim] = 0;
  for (int64_t j = 0; j < list.num_tensors; ++j) {
    const Geometry& g = *list.tensors[j];
    if (CatSkipsInput(g)) continue;
    bool ok = g.ndim == ref->ndim;
    for (int32_t k = 0; ok && k < g.ndim; ++k) ok = k == dim || g.sizes[k] == ref->sizes[k];
    if (!ok) {
      return Error(BP_STATUS_INVALID_ARGUMENT,
                   ArgPrefix(info, 0) + "element " + std::to_string(j) + " has sizes " + SizesText(g) +
                       "; expected the sizes of element " + std::to_string(ref_index) + " " + SizesText(*ref) +
                       " except in dim " + std::to_string(dim));
    }
    sizes[dim] += g.sizes[dim];
  }
  RewriteInt(plan, 1, dim);
  plan->no_output_alias = true;
  BP_RETURN_IF_ERROR(SetOutput(info, plan, 0, d, sizes, ref->ndim, CallDevice(info, args)));
  // Inputs that are all channels-last give a channels-last result, as
  // torch.cat: the branches of an NHWC network (a fire or inception module)
  // join without a reorder, and the next convolution reads NHWC.
  bool channels_last = ref->ndim == 4;
  for (int64_t j = 0; channels_last && j < list.num_tensors; ++j)
    channels_last = CatSkipsInput(*list.tensors[j]) || list.tensors[j]->is_channels_last();
  if (channels_last) plan->outputs[0].set_channels_last_strides();
  return Status::Ok();
}

// to.dtype(self, dtype, non_blocking, copy): self's sizes in `dtype`.
Status ToDtypeInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 0, nullptr));
  DType d = Has(info, args, 1) && args[1].kind == BP_VALUE_DTYPE ? DtypeFromDL(args[1].dtype) : DType::kInvalid;
  if (d == DType::kInvalid) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, 1) + "expected a dtype Backplane knows, got " +
                     (Has(info, args, 1) && args[1].kind == BP_VALUE_DTYPE ? DtypeName(args[1].dtype) : "another kind"));
  }
  const Geometry& g = *args[0].tensor;
  return SetOutput(info, plan, 0, d, g.sizes, g.ndim, g.device);
}

// clone(self) and contiguous(self): a contiguous tensor like self.
Status LikeSelfInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType d;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 0, &d));
  const Geometry& g = *args[0].tensor;
  return SetOutput(info, plan, 0, d, g.sizes, g.ndim, g.device);
}

}  // namespace

const MetaFunctions kCopyMeta = {"copy", CopyInfer, CopyPrepare};
const MetaFunctions kFillMeta = {"fill", FillInfer, AsIsPrepare};
const MetaFunctions kCatMeta = {"cat", CatInfer, AsIsPrepare};
const MetaFunctions kToDtypeMeta = {"to_dtype", ToDtypeInfer, AsIsPrepare};
const MetaFunctions kCloneMeta = {"clone", LikeSelfInfer, AsIsPrepare};
const MetaFunctions kContiguousMeta = {"contiguous", LikeSelfInfer, AsIsPrepare};

}  // namespace bp::core::meta
