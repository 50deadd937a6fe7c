// Meta functions of gather (torch.gather) and scatter / scatter_reduce
// (torch.scatter, torch.scatter_reduce).
//
// index is int32/int64 with self's rank (a 0-dim self takes a 0-dim or
// one-element 1-D index, as torch); in every dim but `dim` it is no larger
// than self, and for scatter no larger than src in any dim. gather's output
// has index's sizes, scatter's self's sizes and dtype (src is cast to it).
// The index values are checked by the kernel, which sees them.
#include <cstring>

#include "meta/common.h"
#include "meta/families.h"

namespace bp::core::meta {
namespace {

int32_t Rank(const Geometry& g) { return g.ndim > 0 ? g.ndim : 1; }
int64_t SizeAt(const Geometry& g, int32_t d) { return g.ndim > 0 ? g.sizes[d] : 1; }

// Shared checks of dim and index; *dim_out normalized.
Status CheckIndex(const MetaCallInfo& info, const MetaArg* args, int32_t* dim_out) {
  DType d;
  BP_RETURN_IF_ERROR(SelfDimIndexArgs(info, args, &d, dim_out));
  const Geometry& self = *args[0].tensor;
  const Geometry& index = *args[2].tensor;
  if (Rank(index) != Rank(self)) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 2) + "expected " + std::to_string(self.ndim) +
                                                 " dims as 'self' has, got sizes " + SizesText(index));
  }
  for (int32_t k = 0; k < Rank(self); ++k) {
    if (k != *dim_out && SizeAt(index, k) > SizeAt(self, k)) {
      return Error(BP_STATUS_INVALID_ARGUMENT,
                   ArgPrefix(info, 2) + "has sizes " + SizesText(index) + "; expected size(" + std::to_string(k) +
                       ") <= " + std::to_string(SizeAt(self, k)) + " as in 'self' " + SizesText(self));
    }
  }
  return Status::Ok();
}

// gather(self, dim, index)
Status GatherInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  int32_t dim;
  BP_RETURN_IF_ERROR(CheckIndex(info, args, &dim));
  RewriteInt(plan, 1, dim);
  plan->no_output_alias = true;
  const Geometry& self = *args[0].tensor;
  const Geometry& index = *args[2].tensor;
  return SetOutput(info, plan, 0, DtypeFromDL(self.dtype), index.sizes, index.ndim, self.device);
}

// scatter.src(self, dim, index, src), scatter_reduce.two(..., reduce, include_self)
Status ScatterInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  int32_t dim;
  BP_RETURN_IF_ERROR(CheckIndex(info, args, &dim));
  DType sd;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 3, &sd));
  const Geometry& self = *args[0].tensor;
  const Geometry& index = *args[2].tensor;
  const Geometry& src = *args[3].tensor;
  const DType d = DtypeFromDL(self.dtype);
  if (Rank(src) != Rank(index)) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 3) + "expected " + std::to_string(index.ndim) +
                                                 " dims as 'index' has, got sizes " + SizesText(src));
  }
  for (int32_t k = 0; k < Rank(index); ++k) {
    if (SizeAt(index, k) > SizeAt(src, k)) {
      return Error(BP_STATUS_INVALID_ARGUMENT,
                   ArgPrefix(info, 2) + "has sizes " + SizesText(index) + "; expected size(" + std::to_string(k) +
                       ") <= " + std::to_string(SizeAt(src, k)) + " as in 'src' " + SizesText(src));
    }
  }
  if (!CanCast(sd, d)) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 3) + "has dtype " + DtypeName(sd) +
                                                 ", which cannot be cast to 'self''s " + DtypeName(d));
  }
  if (BaseNameIs(info, "scatter_reduce")) {
    const char* r = Has(info, args, 4) && args[4].kind == BP_VALUE_STRING ? args[4].str : nullptr;
    const char* const kModes[] = {"sum", "prod", "amax", "amin"};
    bool ok = false;
    for (const char* m : kModes) ok = ok || (r != nullptr && std::strcmp(r, m) == 0);
    if (!ok) {
      return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 4) + "expected 'sum', 'prod', 'amax' or 'amin', got " +
                                                   (r != nullptr ? "'" + std::string(r) + "'" : "none"));
    }
    if (d == DType::kBool) {
      return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 0) + "has dtype bool, which reductions do not take");
    }
  }
  if (sd != d) plan->cast_to[3] = DtypeToDL(d);
  RewriteInt(plan, 1, dim);
  plan->no_output_alias = true;
  return SetOutput(info, plan, 0, d, self.sizes, self.ndim, self.device);
}

}  // namespace

const MetaFunctions kGatherMeta = {"gather", GatherInfer, AsIsPrepare};
const MetaFunctions kScatterMeta = {"scatter", ScatterInfer, AsIsPrepare};

}  // namespace bp::core::meta
