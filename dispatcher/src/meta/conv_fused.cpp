// Meta function of conv2d_fused: act(conv2d(input, weight, bias) + residual).
//
// A thin wrapper over conv2d's meta (conv_pool.cpp): arguments 0..6 are
// conv2d's, so kConv2dMeta's infer and prepare run unchanged and both
// operators always give the same output sizes, strides and kernel views.
// This file adds only what conv2d lacks: residual (7), activation (8),
// alpha (9) and beta (10).
#include <cstring>

#include "meta/families.h"
#include "meta/nchw.h"

namespace bp::core::meta {
namespace {

constexpr int kResidual = 7, kActivation = 8, kAlpha = 9, kBeta = 10;

// The activation names the kernels accept (ops.yaml's kernel contract).
const char* const kActivations[] = {"none", "relu",    "clip", "hardswish", "hardsigmoid",
                                    "sigmoid", "silu", "gelu", "leaky_relu"};

Status CheckActivation(const MetaCallInfo& info, const MetaArg* args) {
  std::string list;
  for (const char* a : kActivations) list += (list.empty() ? "'" : ", '") + std::string(a) + "'";
  if (!Has(info, args, kActivation)) return Status::Ok();  // the default, "none"
  if (args[kActivation].kind != BP_VALUE_STRING || args[kActivation].str == nullptr) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, kActivation) + "expected a string, one of " + list);
  }
  for (const char* a : kActivations) {
    if (std::strcmp(a, args[kActivation].str) == 0) return Status::Ok();
  }
  return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, kActivation) + "expected one of " + list + ", got '" +
                                               args[kActivation].str + "'");
}

Status CheckScalar(const MetaCallInfo& info, const MetaArg* args, int i) {
  if (!Has(info, args, i) || args[i].kind == BP_VALUE_DOUBLE || args[i].kind == BP_VALUE_INT) return Status::Ok();
  return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) + "expected a float");
}

// conv2d_fused(input, weight, bias, stride, padding, dilation, groups,
//              residual, activation, alpha, beta)
Status Conv2dFusedInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  BP_RETURN_IF_ERROR(kConv2dMeta.infer(info, args, plan));
  BP_RETURN_IF_ERROR(CheckActivation(info, args));
  BP_RETURN_IF_ERROR(CheckScalar(info, args, kAlpha));
  BP_RETURN_IF_ERROR(CheckScalar(info, args, kBeta));
  if (!Has(info, args, kResidual)) return Status::Ok();
  DType rd;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, kResidual, &rd));
  const Geometry& r = *args[kResidual].tensor;
  const Geometry& out = plan->outputs[0];
  bool same = r.ndim == out.ndim && rd == DtypeFromDL(out.dtype);
  for (int32_t k = 0; same && k < r.ndim; ++k) same = r.sizes[k] == out.sizes[k];
  if (!same) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, kResidual) + "expected the convolution's output sizes " +
                                                 SizesText(out) + " and dtype " + DtypeName(DtypeFromDL(out.dtype)) +
                                                 " (no broadcasting), got " + SizesText(r) + " " + DtypeName(rd));
  }
  return Status::Ok();
}

Status Conv2dFusedPrepare(const MetaCallInfo& info, const MetaArg* args, const MetaPlan& plan,
                          const Geometry* outputs, KernelViews* views) {
  BP_RETURN_IF_ERROR(kConv2dMeta.prepare(info, args, plan, outputs, views));
  if (Has(info, args, kResidual)) views->args[kResidual] = Batched(views->args[kResidual]);
  return Status::Ok();
}

}  // namespace

const MetaFunctions kConv2dFusedMeta = {"conv2d_fused", Conv2dFusedInfer, Conv2dFusedPrepare};

}  // namespace bp::core::meta
