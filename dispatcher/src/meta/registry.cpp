// Lookup of meta and view functions by the names ops.yaml's `meta:` uses.
#include <cstring>

#include "meta/families.h"

namespace bp::core {
namespace {

using namespace meta;  // NOLINT: the tables below name every family

const MetaFunctions* const kMetas[] = {
    &kBinaryMeta,  &kTrueDivideMeta, &kDivModeMeta,   &kComparisonMeta, &kWhereMeta,    &kUnaryNoBoolMeta,
    &kUnaryFloatMeta, &kUnaryFloatOnlyMeta, &kSumMeta, &kMeanMeta,      &kMinMaxMeta,   &kArgmaxMeta,
    &kMatmulMeta,  &kAddmmMeta,      &kLinearMeta,    &kSoftmaxMeta,    &kLayerNormMeta, &kBatchNormMeta,
    &kConv2dMeta,  &kMaxPool2dMeta,  &kAvgPool2dMeta, &kCopyMeta,       &kFillMeta,     &kCatMeta,
    &kToDtypeMeta, &kCloneMeta,      &kContiguousMeta, &kUpsample2dMeta,
    &kIndexSelectMeta, &kConvTranspose2dMeta, &kTopkMeta, &kGatherMeta, &kScatterMeta,
    &kConv2dFusedMeta, &kAttentionMeta, &kLstmLayerMeta, &kGruLayerMeta,
    &kQuantizeLinearMeta, &kDequantizeLinearMeta, &kMatmulIntegerMeta, &kConvIntegerMeta,
};

}  // namespace

const MetaFunctions* FindMetaFunctions(const char* name) {
  if (name == nullptr) return nullptr;
  for (const MetaFunctions* m : kMetas) {
    if (std::strcmp(m->name, name) == 0) return m;
  }
  return nullptr;
}

const ViewFunctions* FindViewFunctions(const char* name) {
  if (name == nullptr) return nullptr;
  for (int i = 0; i < kNumViewFns; ++i) {
    if (std::strcmp(kViewFns[i].name, name) == 0) return &kViewFns[i];
  }
  return nullptr;
}

}  // namespace bp::core
