// Meta functions of softmax/log_softmax, layer_norm and batch_norm (inference).
#include "meta/common.h"
#include "meta/families.h"

namespace bp::core::meta {
namespace {

// softmax.int(self, dim, dtype=None): the input is cast to the output dtype.
Status SoftmaxInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType self;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 0, &self));
  int64_t dim_arg;
  BP_RETURN_IF_ERROR(IntArg(info, args, 1, &dim_arg));
  const Geometry& g = *args[0].tensor;
  int32_t dim = 0;
  BP_RETURN_IF_ERROR(WrapDim(info, 1, dim_arg, g.ndim, &dim));
  DType out = self;
  if (Has(info, args, 2)) {
    out = args[2].kind == BP_VALUE_DTYPE ? DtypeFromDL(args[2].dtype) : DType::kInvalid;
    if (!DtypeIsFloating(out)) {
      return Error(BP_STATUS_INVALID_ARGUMENT,
                   ArgPrefix(info, 2) + "expected a floating dtype, got " +
                       (args[2].kind == BP_VALUE_DTYPE ? DtypeName(args[2].dtype) : "another kind"));
    }
  }
  if (!DtypeIsFloating(out)) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, 0) + "expected a floating dtype (or pass dtype=), got " + DtypeName(self));
  }
  if (out != self) plan->cast_to[0] = DtypeToDL(out);
  RewriteInt(plan, 1, dim);
  return SetOutput(info, plan, 0, out, g.sizes, g.ndim, g.device);
}

Status OptionalParam(const MetaCallInfo& info, const MetaArg* args, int i, DType dtype, const int64_t* sizes,
                     int32_t ndim) {
  if (!Has(info, args, i)) return Status::Ok();
  DType d;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, i, &d));
  const Geometry& g = *args[i].tensor;
  bool same = g.ndim == ndim;
  for (int32_t k = 0; same && k < ndim; ++k) same = g.sizes[k] == sizes[k];
  if (!same) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) + "expected sizes " + SizesText(sizes, ndim) +
                                                 ", got " + SizesText(g));
  }
  if (d != dtype) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) + "expected dtype " + DtypeName(dtype) +
                                                 " (as the input), got " + DtypeName(d));
  }
  return Status::Ok();
}

Status RequireFloating(const MetaCallInfo& info, int i, DType d) {
  if (DtypeIsFloating(d)) return Status::Ok();
  return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) + "expected a floating dtype, got " + DtypeName(d));
}

// layer_norm(input, normalized_shape, weight, bias, eps, cudnn_enable).
Status LayerNormInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType d;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 0, &d));
  BP_RETURN_IF_ERROR(RequireFloating(info, 0, d));
  BP_RETURN_IF_ERROR(RequireIntList(info, args, 1));
  const Geometry& in = *args[0].tensor;
  const int64_t* ns = args[1].ints;
  int32_t nn = static_cast<int32_t>(args[1].num_ints);
  if (nn < 1) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 1) + "expected at least 1 dim, got []");
  }
  bool ok = nn <= in.ndim;
  for (int32_t k = 0; ok && k < nn; ++k) ok = in.sizes[in.ndim - nn + k] == ns[k];
  if (!ok) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, 1) + "is " + SizesText(ns, nn) + ": expected 'input' of sizes [*, " +
                     SizesText(ns, nn).substr(1) + ", got " + SizesText(in));
  }
  BP_RETURN_IF_ERROR(OptionalParam(info, args, 2, d, ns, nn));
  BP_RETURN_IF_ERROR(OptionalParam(info, args, 3, d, ns, nn));
  return SetOutput(info, plan, 0, d, in.sizes, in.ndim, in.device);
}

// batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
// eps, cudnn_enabled): inference only.
Status BatchNormInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType d;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 0, &d));
  BP_RETURN_IF_ERROR(RequireFloating(info, 0, d));
  if (Has(info, args, 5) && args[5].kind == BP_VALUE_BOOL && args[5].b) {
    return Error(BP_STATUS_UNIMPLEMENTED,
                 ArgPrefix(info, 5) + "is True: Backplane's batch_norm is inference only (training=False)");
  }
  const Geometry& in = *args[0].tensor;
  if (in.ndim < 2) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, 0) + "expected sizes [N, C, ...] (rank >= 2), got " + SizesText(in));
  }
  int64_t c = in.sizes[1];
  for (int i = 3; i <= 4; ++i) {
    if (!Has(info, args, i)) {
      return Error(BP_STATUS_INVALID_ARGUMENT,
                   ArgPrefix(info, i) + "is None: running statistics are required in inference mode");
    }
  }
  for (int i = 1; i <= 4; ++i) BP_RETURN_IF_ERROR(OptionalParam(info, args, i, d, &c, 1));
  return SetOutput(info, plan, 0, d, in.sizes, in.ndim, in.device);
}

}  // namespace

const MetaFunctions kSoftmaxMeta = {"softmax", SoftmaxInfer, AsIsPrepare};
const MetaFunctions kLayerNormMeta = {"layer_norm", LayerNormInfer, AsIsPrepare};
const MetaFunctions kBatchNormMeta = {"batch_norm", BatchNormInfer, AsIsPrepare};

}  // namespace bp::core::meta
