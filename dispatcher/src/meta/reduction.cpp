// Meta functions of the reductions: sum, mean, amax/amin, argmax.
//
// Kernel contract (ops.yaml): args[0] has the output dtype (argmax: its own);
// `dim` is an INT_LIST, sorted, unique, non-negative and never empty;
// outputs[0] has keepdim=True sizes whatever keepdim was. A 0-dim input is
// shown to the kernel as [1] reduced over dim [0].
#include "meta/common.h"
#include "meta/families.h"

namespace bp::core::meta {
namespace {

// Reads `dim` (INT_LIST, INT or NONE) into a sorted mask of reduced dims; all
// dims when none were given. Duplicates are an error, as in PyTorch.
Status ReducedDims(const MetaCallInfo& info, const MetaArg* args, int i, int32_t ndim, bool* mask) {
  int32_t n = ndim > 0 ? ndim : 1;
  for (int32_t d = 0; d < n; ++d) mask[d] = false;
  bool all = !Has(info, args, i);
  if (!all && args[i].kind == BP_VALUE_INT) {
    int32_t d = 0;
    BP_RETURN_IF_ERROR(WrapDim(info, i, args[i].i, ndim, &d));
    mask[d] = true;
    return Status::Ok();
  }
  if (!all) {
    BP_RETURN_IF_ERROR(RequireIntList(info, args, i));
    // The length first: more dims than the rank must repeat one, and the
    // list is then never read past what a tensor could have.
    if (args[i].num_ints > n) {
      return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) + "expected at most " + std::to_string(n) +
                                                   " dims for a tensor of rank " + std::to_string(ndim) + ", got " +
                                                   std::to_string(args[i].num_ints));
    }
    all = args[i].num_ints == 0;
    for (int64_t k = 0; k < args[i].num_ints; ++k) {
      int32_t d = 0;
      BP_RETURN_IF_ERROR(WrapDim(info, i, args[i].ints[k], ndim, &d));
      if (mask[d]) {
        return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) + "dim " + std::to_string(d) +
                                                     " appears more than once in " +
                                                     SizesText(args[i].ints, args[i].num_ints));
      }
      mask[d] = true;
    }
  }
  if (all) {
    for (int32_t d = 0; d < n; ++d) mask[d] = true;
  }
  return Status::Ok();
}

bool KeepDim(const MetaCallInfo& info, const MetaArg* args, int i) {
  return Has(info, args, i) && args[i].kind == BP_VALUE_BOOL && args[i].b;
}

// Output sizes, the rewritten dim list and the output dtype for every reduction.
Status ReduceInfer(const MetaCallInfo& info, const MetaArg* args, int dim_arg, int keepdim_arg,
                   DType out_dtype, DType input_dtype, bool nonempty_dims, MetaPlan* plan) {
  const Geometry& self = *args[0].tensor;
  bool mask[BP_MAX_NDIM];
  BP_RETURN_IF_ERROR(ReducedDims(info, args, dim_arg, self.ndim, mask));
  bool keepdim = KeepDim(info, args, keepdim_arg);
  int64_t sizes[BP_MAX_NDIM];
  int32_t ndim = 0;
  MetaArg& dims = plan->rewritten[dim_arg];
  dims.kind = BP_VALUE_INT_LIST;
  dims.ints = plan->int_storage;
  dims.num_ints = 0;
  int32_t n = self.ndim > 0 ? self.ndim : 1;
  for (int32_t d = 0; d < n; ++d) {
    int64_t size = self.ndim > 0 ? self.sizes[d] : 1;
    if (mask[d]) {
      plan->int_storage[dims.num_ints++] = d;
      if (nonempty_dims && size == 0) {
        return Error(BP_STATUS_INVALID_ARGUMENT,
                     ArgPrefix(info, 0) + "of sizes " + SizesText(self) + " has size 0 in reduced dim " +
                         std::to_string(d) + "; expected a non-empty reduction (there is no identity)");
      }
      if (keepdim && self.ndim > 0) sizes[ndim++] = 1;
    } else {
      sizes[ndim++] = size;
    }
  }
  if (input_dtype != DtypeFromDL(self.dtype)) plan->cast_to[0] = DtypeToDL(input_dtype);
  // An out= tensor on self's storage would be written while rows are still read.
  plan->no_output_alias = true;
  return SetOutput(info, plan, 0, out_dtype, sizes, ndim, self.device);
}

Status ReducePrepare(const MetaCallInfo& info, const MetaArg* args, const MetaPlan& plan,
                     const Geometry* outputs, KernelViews* views) {
  ViewsAsIs(args, info.num_args, outputs, plan.num_outputs, views);
  Geometry& in = views->args[0];
  if (in.ndim == 0) {  // shown as [1]
    in.ndim = 1;
    in.sizes[0] = 1;
    in.strides[0] = 1;
  }
  // The dim list: the one the plan rewrote (always present for reductions).
  const MetaArg* dims = nullptr;
  for (int i = 0; i < info.num_args && i < kMaxArgs; ++i) {
    if (plan.rewritten[i].kind == BP_VALUE_INT_LIST) dims = &plan.rewritten[i];
  }
  if (dims == nullptr) return Error(BP_STATUS_INTERNAL, std::string(info.op_name) + ": reduction plan without dims");
  bool mask[BP_MAX_NDIM] = {};
  for (int64_t k = 0; k < dims->num_ints; ++k) mask[dims->ints[k]] = true;
  const Geometry& out = outputs[0];
  Geometry& view = views->outputs[0];
  if (out.ndim == in.ndim) return Status::Ok();  // keepdim=True already
  // Insert size-1 dims (stride 0) where dims were reduced away.
  view = out;
  view.ndim = in.ndim;
  int32_t j = 0;
  for (int32_t d = 0; d < in.ndim; ++d) {
    if (mask[d]) {
      view.sizes[d] = 1;
      view.strides[d] = 0;
    } else {
      view.sizes[d] = out.sizes[j];
      view.strides[d] = out.strides[j];
      ++j;
    }
  }
  return Status::Ok();
}

Status OptionalDtype(const MetaCallInfo& info, const MetaArg* args, int i, DType* out) {
  *out = DType::kInvalid;
  if (!Has(info, args, i)) return Status::Ok();
  if (args[i].kind != BP_VALUE_DTYPE || DtypeFromDL(args[i].dtype) == DType::kInvalid) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, i) + "expected a dtype Backplane knows, got " +
                     (args[i].kind == BP_VALUE_DTYPE ? DtypeName(args[i].dtype) : "another kind"));
  }
  *out = DtypeFromDL(args[i].dtype);
  return Status::Ok();
}

// sum.dim_IntList(self, dim, keepdim, *, dtype): integral and bool sum in int64.
Status SumInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType self, dtype;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 0, &self));
  BP_RETURN_IF_ERROR(OptionalDtype(info, args, 3, &dtype));
  if (dtype == DType::kInvalid) dtype = DtypeIsIntegral(self, true) ? DType::kInt64 : self;
  return ReduceInfer(info, args, 1, 2, dtype, dtype, false, plan);
}

Status MeanInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType self, dtype;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 0, &self));
  BP_RETURN_IF_ERROR(OptionalDtype(info, args, 3, &dtype));
  if (dtype != DType::kInvalid && !DtypeIsFloating(dtype)) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, 3) + "expected a floating dtype, got " + DtypeName(dtype));
  }
  if (dtype == DType::kInvalid) {
    if (!DtypeIsFloating(self)) {
      return Error(BP_STATUS_INVALID_ARGUMENT,
                   ArgPrefix(info, 0) + "expected a floating dtype (mean cannot infer an output dtype "
                                        "from integral input; pass dtype=), got " + DtypeName(self));
    }
    dtype = self;
  }
  return ReduceInfer(info, args, 1, 2, dtype, dtype, false, plan);
}

Status MinMaxInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType self;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 0, &self));
  return ReduceInfer(info, args, 1, 2, self, self, true, plan);
}

// argmax(self, dim=None, keepdim): dim None means the flattened tensor.
Status ArgmaxInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType self;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 0, &self));
  if (self == DType::kBool) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 0) + "expected a numeric dtype, got bool");
  }
  if (Has(info, args, 1) && args[1].kind != BP_VALUE_INT) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 1) + "expected an int or None");
  }
  if (!Has(info, args, 1) && args[0].tensor->numel() == 0) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, 0) + "of sizes " + SizesText(*args[0].tensor) +
                     " is empty; expected a dim to be specified for an empty input");
  }
  return ReduceInfer(info, args, 1, 2, DType::kInt64, self, true, plan);
}

}  // namespace

const MetaFunctions kSumMeta = {"reduction_sum", SumInfer, ReducePrepare};
const MetaFunctions kMeanMeta = {"reduction_mean", MeanInfer, ReducePrepare};
const MetaFunctions kMinMaxMeta = {"reduction_minmax", MinMaxInfer, ReducePrepare};
const MetaFunctions kArgmaxMeta = {"reduction_argmax", ArgmaxInfer, ReducePrepare};

}  // namespace bp::core::meta
