// The meta and view function tables each family file defines; registry.cpp
// lists them by ops.yaml name.
#pragma once

#include "meta/meta.h"

namespace bp::core::meta {

// pointwise.cpp
extern const MetaFunctions kBinaryMeta, kTrueDivideMeta, kDivModeMeta, kComparisonMeta, kWhereMeta,
    kUnaryNoBoolMeta, kUnaryFloatMeta, kUnaryFloatOnlyMeta;

// reduction.cpp
extern const MetaFunctions kSumMeta, kMeanMeta, kMinMaxMeta, kArgmaxMeta;
// linalg.cpp
extern const MetaFunctions kMatmulMeta, kAddmmMeta, kLinearMeta, kMatmulIntegerMeta;
// The zero point args[zp] of matmul_integer / conv_integer: NONE, one
// element, or [len] (one per `per`; len < 0: one element only), in
// args[of]'s dtype.
Status IntegerZeroPoint(const MetaCallInfo& info, const MetaArg* args, int zp, int of, int64_t len, const char* per);
// norm.cpp
extern const MetaFunctions kSoftmaxMeta, kLayerNormMeta, kBatchNormMeta;
// conv_pool.cpp
extern const MetaFunctions kConv2dMeta, kMaxPool2dMeta, kAvgPool2dMeta;
// conv_fused.cpp (a wrapper over kConv2dMeta)
extern const MetaFunctions kConv2dFusedMeta;
// attention.cpp
extern const MetaFunctions kAttentionMeta;
// conv_transpose.cpp
extern const MetaFunctions kConvTranspose2dMeta;
// conv_integer.cpp (conv2d's shapes, integer operands)
extern const MetaFunctions kConvIntegerMeta;
// resample.cpp
extern const MetaFunctions kUpsample2dMeta;
// indexing.cpp
extern const MetaFunctions kIndexSelectMeta;
// gather_scatter.cpp
extern const MetaFunctions kGatherMeta, kScatterMeta;
// recurrent.cpp
extern const MetaFunctions kLstmLayerMeta, kGruLayerMeta;
// quantize.cpp
extern const MetaFunctions kQuantizeLinearMeta, kDequantizeLinearMeta;
// sort.cpp
extern const MetaFunctions kTopkMeta;
// copy.cpp
extern const MetaFunctions kCopyMeta, kFillMeta, kCatMeta, kToDtypeMeta, kCloneMeta, kContiguousMeta;
// views.cpp
extern const ViewFunctions kViewFns[];
extern const int kNumViewFns;

}  // namespace bp::core::meta
