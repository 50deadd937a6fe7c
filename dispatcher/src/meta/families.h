// The meta and view function tables each family file defines; registry.cpp
// lists them by ops.yaml name.
#pragma once

#include "meta/meta.h"

namespace bp::core::meta {

// pointwise.cpp
extern const MetaFunctions kBinaryMeta, kTrueDivideMeta, kDivModeMeta, kComparisonMeta, kWhereMeta,
    kUnaryNoBoolMeta, kUnaryFloatMeta, kUnaryFloatOnlyMeta;

}  // namespace bp::core::meta
