// Lookup of meta and view functions by the names ops.yaml's `meta:` uses.
#include <cstring>

#include "meta/families.h"

namespace bp::core {
namespace {

const MetaFunctions* const kMetas[] = {
    &meta::kBinaryMeta,       &meta::kTrueDivideMeta,   &meta::kDivModeMeta,
    &meta::kComparisonMeta,   &meta::kWhereMeta,        &meta::kUnaryNoBoolMeta,
    &meta::kUnaryFloatMeta,   &meta::kUnaryFloatOnlyMeta,
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
  (void)name;
  return nullptr;
}

}  // namespace bp::core
