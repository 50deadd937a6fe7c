// Meta function of scaled_dot_product_attention (torch 2.x semantics):
// query [..., L, E], key [..., S, E], value [..., S, Ev] -> [..., L, Ev],
// batch dims broadcast; attn_mask bool (True takes part) or of query's dtype
// (added to the scores), broadcastable to [..., L, S]. Inference only:
// dropout_p must be 0. is_causal and attn_mask together are refused, as torch.
//
// The kernel sees every tensor with the full batch dims (broadcast ones with
// stride 0): query [..., L, E], key [..., S, E], value [..., S, Ev], attn_mask
// [..., L, S] or NONE, out [..., L, Ev], all of one rank >= 2.
#include <cstring>

#include "meta/common.h"
#include "meta/families.h"

namespace bp::core::meta {
namespace {

constexpr int kQuery = 0, kKey = 1, kValue = 2, kMask = 3, kDropout = 4, kCausal = 5, kScale = 6;

Status RankAtLeast2(const MetaCallInfo& info, const MetaArg* args, int i) {
  if (args[i].tensor->ndim >= 2) return Status::Ok();
  return Error(
      BP_STATUS_INVALID_ARGUMENT,
      ArgPrefix(info, i) + "expected rank >= 2 ([..., seq, features]), got sizes " + SizesText(*args[i].tensor));
}

Status SizeMatch(const MetaCallInfo& info, int a, const Geometry& ga, int32_t da, int b, const Geometry& gb,
                 int32_t db) {
  if (ga.sizes[ga.ndim + da] == gb.sizes[gb.ndim + db]) return Status::Ok();
  return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, b) + "of sizes " + SizesText(gb) + " expected size " +
                                               std::to_string(ga.sizes[ga.ndim + da]) + " at dim " +
                                               std::to_string(db) + " (as '" + ArgName(info, a) + "' of sizes " +
                                               SizesText(ga) + " at dim " + std::to_string(da) + "), got " +
                                               std::to_string(gb.sizes[gb.ndim + db]));
}

// The batch part (all dims but the last two) of args[i].
Geometry BatchOf(const Geometry& g) {
  Geometry b = g;
  b.ndim = g.ndim - 2;
  return b;
}

// The broadcast batch sizes of query, key and value into *n, batch.
Status BatchShape(const MetaCallInfo& info, const MetaArg* args, int32_t* n, int64_t* batch) {
  Geometry qk;
  BP_RETURN_IF_ERROR(BroadcastShapes(info, kQuery, BatchOf(*args[kQuery].tensor), kKey, BatchOf(*args[kKey].tensor),
                                     &qk.ndim, qk.sizes));
  return BroadcastShapes(info, kQuery, qk, kValue, BatchOf(*args[kValue].tensor), n, batch);
}

Status CheckScalars(const MetaCallInfo& info, const MetaArg* args) {
  if (Has(info, args, kDropout)) {
    const MetaArg& d = args[kDropout];
    if (d.kind != BP_VALUE_DOUBLE && d.kind != BP_VALUE_INT) {
      return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, kDropout) + "expected a float");
    }
    const double p = d.kind == BP_VALUE_DOUBLE ? d.d : static_cast<double>(d.i);
    if (p != 0.0) {
      return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, kDropout) +
                                                   "expected 0.0 (Backplane runs attention for inference, "
                                                   "without dropout), got " +
                                                   std::to_string(p));
    }
  }
  if (Has(info, args, kCausal) && args[kCausal].kind != BP_VALUE_BOOL) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, kCausal) + "expected a bool");
  }
  if (Has(info, args, kScale) && args[kScale].kind != BP_VALUE_DOUBLE && args[kScale].kind != BP_VALUE_INT) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, kScale) + "expected a float or None");
  }
  return Status::Ok();
}

// attn_mask: bool or query's dtype, broadcasting to scores [batch..., L, S]
// without growing them.
Status CheckMask(const MetaCallInfo& info, const MetaArg* args, const int64_t* scores, int32_t n) {
  if (!Has(info, args, kMask)) return Status::Ok();
  DType md;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, kMask, &md));
  if (Has(info, args, kCausal) && args[kCausal].b) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, kCausal) + "expected False when 'attn_mask' is given (as torch), got True");
  }
  const DType qd = DtypeFromDL(args[kQuery].tensor->dtype);
  if (md != DType::kBool && md != qd) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, kMask) + "expected dtype bool or " + DtypeName(qd) +
                                                 " (as 'query'), got " + DtypeName(md));
  }
  const Geometry& m = *args[kMask].tensor;
  Geometry s;
  s.ndim = n;
  std::memcpy(s.sizes, scores, sizeof(int64_t) * static_cast<size_t>(n));
  int32_t bn = 0;
  int64_t b[BP_MAX_NDIM];
  bool ok = m.ndim <= n && BroadcastSizes(s, m, &bn, b) < 0;
  for (int32_t i = 0; ok && i < n; ++i) ok = b[i] == scores[i];
  if (!ok) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, kMask) + "of sizes " + SizesText(m) +
                                                 " cannot broadcast to the scores' sizes " + SizesText(s) +
                                                 " ([..., L, S])");
  }
  return Status::Ok();
}

// The full shapes: scores [batch..., L, S] and out [batch..., L, Ev].
Status Shapes(const MetaCallInfo& info, const MetaArg* args, int32_t* n, int64_t* scores, int64_t* out) {
  const Geometry& q = *args[kQuery].tensor;
  const Geometry& k = *args[kKey].tensor;
  const Geometry& v = *args[kValue].tensor;
  BP_RETURN_IF_ERROR(SizeMatch(info, kQuery, q, -1, kKey, k, -1));  // E
  BP_RETURN_IF_ERROR(SizeMatch(info, kKey, k, -2, kValue, v, -2));  // S
  int32_t nb = 0;
  int64_t batch[BP_MAX_NDIM];
  BP_RETURN_IF_ERROR(BatchShape(info, args, &nb, batch));
  if (nb + 2 > BP_MAX_NDIM) return CheckSizes(info, "the output", batch, nb + 2, DtypeFromDL(q.dtype));
  std::memcpy(scores, batch, sizeof(int64_t) * static_cast<size_t>(nb));
  std::memcpy(out, batch, sizeof(int64_t) * static_cast<size_t>(nb));
  scores[nb] = out[nb] = q.sizes[q.ndim - 2];
  scores[nb + 1] = k.sizes[k.ndim - 2];
  out[nb + 1] = v.sizes[v.ndim - 1];
  *n = nb + 2;
  return Status::Ok();
}

Status AttentionInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType d;
  for (int i = kQuery; i <= kValue; ++i) {
    BP_RETURN_IF_ERROR(RequireTensor(info, args, i, i == kQuery ? &d : nullptr));
    BP_RETURN_IF_ERROR(RankAtLeast2(info, args, i));
  }
  if (!DtypeIsFloating(d)) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, kQuery) + "expected a floating dtype, got " + DtypeName(d));
  }
  for (int i = kKey; i <= kValue; ++i) {
    if (!DtypeEqual(args[i].tensor->dtype, args[kQuery].tensor->dtype)) {
      return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) + "expected dtype " + DtypeName(d) +
                                                   " (as 'query'), got " + DtypeName(args[i].tensor->dtype));
    }
  }
  BP_RETURN_IF_ERROR(CheckScalars(info, args));
  int32_t n = 0;
  int64_t scores[BP_MAX_NDIM], out[BP_MAX_NDIM];
  BP_RETURN_IF_ERROR(Shapes(info, args, &n, scores, out));
  BP_RETURN_IF_ERROR(CheckMask(info, args, scores, n));
  if (Has(info, args, kMask)) plan->own_dtype_args |= 1u << kMask;  // bool or query's dtype, checked above
  plan->no_output_alias = true;
  return SetOutput(info, plan, 0, d, out, n, CallDevice(info, args));
}

Status AttentionPrepare(const MetaCallInfo& info, const MetaArg* args, const MetaPlan& plan, const Geometry* outputs,
                        KernelViews* views) {
  ViewsAsIs(args, info.num_args, outputs, plan.num_outputs, views);
  int32_t n = 0;
  int64_t scores[BP_MAX_NDIM], out[BP_MAX_NDIM], sizes[BP_MAX_NDIM];
  BP_RETURN_IF_ERROR(Shapes(info, args, &n, scores, out));
  std::memcpy(sizes, scores, sizeof(sizes));
  for (int i = kQuery; i <= kValue; ++i) {
    const Geometry& g = *args[i].tensor;
    sizes[n - 2] = g.sizes[g.ndim - 2];
    sizes[n - 1] = g.sizes[g.ndim - 1];
    views->args[i] = BroadcastTo(g, sizes, n);
  }
  if (Has(info, args, kMask)) views->args[kMask] = BroadcastTo(*args[kMask].tensor, scores, n);
  return Status::Ok();
}

}  // namespace

const MetaFunctions kAttentionMeta = {"attention", AttentionInfer, AttentionPrepare};

}  // namespace bp::core::meta
