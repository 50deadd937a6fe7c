// Meta functions of matmul, addmm, linear and matmul_integer.
//
// matmul follows torch.matmul: 1-D operands get a dim of size 1 prepended
// (self) or appended (other) for the product and removed from the result;
// batch dims broadcast. The kernel always sees self [..., M, K], other
// [..., K, N] and out [..., M, N] of one rank >= 2 (broadcast batch dims and
// the removed dims with stride 0).
#include <cstring>

#include "meta/common.h"
#include "meta/families.h"

namespace bp::core::meta {
namespace {

Status SameDtype(const MetaCallInfo& info, const MetaArg* args, int a, int b) {
  if (!Has(info, args, b)) return Status::Ok();
  if (!DtypeEqual(args[a].tensor->dtype, args[b].tensor->dtype)) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, b) + "expected dtype " +
                                                 DtypeName(args[a].tensor->dtype) + " (as '" +
                                                 ArgName(info, a) + "'), got " +
                                                 DtypeName(args[b].tensor->dtype));
  }
  return Status::Ok();
}

Status KMismatch(const MetaCallInfo& info, int a, const Geometry& ga, int b, const Geometry& gb, int64_t k_a,
                 int64_t k_b) {
  return Error(BP_STATUS_INVALID_ARGUMENT,
               ArgPrefix(info, b) + "of sizes " + SizesText(gb) + " cannot be multiplied with '" +
                   ArgName(info, a) + "' of sizes " + SizesText(ga) + ": expected its contraction size " +
                   std::to_string(k_a) + ", got " + std::to_string(k_b));
}

// The operands as matrices: a 1-D self is [1, K], a 1-D other is [K, 1].
Geometry AsMatrix(const Geometry& g, bool is_self) {
  if (g.ndim != 1) return g;
  Geometry m = g;
  m.ndim = 2;
  if (is_self) {
    m.sizes[0] = 1, m.strides[0] = 0;
    m.sizes[1] = g.sizes[0], m.strides[1] = g.strides[0];
  } else {
    m.sizes[0] = g.sizes[0], m.strides[0] = g.strides[0];
    m.sizes[1] = 1, m.strides[1] = 0;
  }
  return m;
}

// Batch shape (broadcast) and the full [..., M, N] shape of the product.
Status MatmulShapes(const MetaCallInfo& info, const MetaArg* args, int32_t* full_ndim, int64_t* full) {
  const Geometry& a = *args[0].tensor;
  const Geometry& b = *args[1].tensor;
  if (a.ndim == 0 || b.ndim == 0) {
    return Error(BP_STATUS_INVALID_ARGUMENT, std::string(info.op_name) +
                                                 ": both arguments need at least 1 dim, got 'self' of rank " +
                                                 std::to_string(a.ndim) + " and 'other' of rank " +
                                                 std::to_string(b.ndim));
  }
  Geometry ma = AsMatrix(a, true), mb = AsMatrix(b, false);
  int64_t k_a = ma.sizes[ma.ndim - 1], k_b = mb.sizes[mb.ndim - 2];
  if (k_a != k_b) return KMismatch(info, 0, a, 1, b, k_a, k_b);
  Geometry ba = ma, bb = mb;  // batch parts
  ba.ndim -= 2;
  bb.ndim -= 2;
  int32_t n = 0;
  int64_t batch[BP_MAX_NDIM];
  BP_RETURN_IF_ERROR(BroadcastShapes(info, 0, ba, 1, bb, &n, batch));
  std::memcpy(full, batch, sizeof(int64_t) * static_cast<size_t>(n));
  full[n] = ma.sizes[ma.ndim - 2];
  full[n + 1] = mb.sizes[mb.ndim - 1];
  *full_ndim = n + 2;
  return Status::Ok();
}

// The output sizes of a product from MatmulShapes' [batch..., M, N]: without
// the M a 1-D first operand and the N a 1-D second operand stand for, as
// torch.matmul. Returns the rank written to `sizes`.
int32_t DropVectorDims(const MetaArg* args, const int64_t* full, int32_t n, int64_t* sizes) {
  int32_t ndim = 0;
  for (int32_t i = 0; i < n; ++i) {
    if (i == n - 2 && args[0].tensor->ndim == 1) continue;
    if (i == n - 1 && args[1].tensor->ndim == 1) continue;
    sizes[ndim++] = full[i];
  }
  return ndim;
}

Status MatmulInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType d;
  BP_RETURN_IF_ERROR(RequireTwoTensors(info, args, &d));
  BP_RETURN_IF_ERROR(SameDtype(info, args, 0, 1));
  int32_t n = 0;
  int64_t full[BP_MAX_NDIM + 2];
  BP_RETURN_IF_ERROR(MatmulShapes(info, args, &n, full));
  if (n > BP_MAX_NDIM) return CheckSizes(info, "the output", full, n, d);
  int64_t sizes[BP_MAX_NDIM];
  const int32_t ndim = DropVectorDims(args, full, n, sizes);
  plan->no_output_alias = true;
  return SetOutput(info, plan, 0, d, sizes, ndim, CallDevice(info, args));
}

Status MatmulPrepare(const MetaCallInfo& info, const MetaArg* args, const MetaPlan& plan,
                     const Geometry* outputs, KernelViews* views) {
  int32_t n = 0;
  int64_t full[BP_MAX_NDIM + 2];
  BP_RETURN_IF_ERROR(MatmulShapes(info, args, &n, full));
  Geometry ma = AsMatrix(*args[0].tensor, true), mb = AsMatrix(*args[1].tensor, false);
  int64_t sa[BP_MAX_NDIM], sb[BP_MAX_NDIM];
  std::memcpy(sa, full, sizeof(int64_t) * static_cast<size_t>(n));
  std::memcpy(sb, full, sizeof(int64_t) * static_cast<size_t>(n));
  sa[n - 1] = ma.sizes[ma.ndim - 1];  // [..., M, K]
  sb[n - 2] = mb.sizes[mb.ndim - 2];  // [..., K, N]
  views->args[0] = BroadcastTo(ma, sa, n);
  views->args[1] = BroadcastTo(mb, sb, n);
  // The output seen as [..., M, N]: removed dims come back with size 1.
  const Geometry& out = outputs[0];
  Geometry v = out;
  v.ndim = n;
  int32_t j = 0;
  for (int32_t i = 0; i < n; ++i) {
    bool removed = (i == n - 2 && args[0].tensor->ndim == 1) || (i == n - 1 && args[1].tensor->ndim == 1);
    if (removed) {
      v.sizes[i] = 1, v.strides[i] = 0;
    } else {
      v.sizes[i] = out.sizes[j], v.strides[i] = out.strides[j];
      ++j;
    }
  }
  views->outputs[0] = v;
  (void)plan;
  return Status::Ok();
}

Status RequireRank(const MetaCallInfo& info, const MetaArg* args, int i, int32_t rank) {
  if (args[i].tensor->ndim != rank) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) + "expected rank " + std::to_string(rank) +
                                                 ", got sizes " + SizesText(*args[i].tensor));
  }
  return Status::Ok();
}

Status CheckScalar(const MetaCallInfo& info, const MetaArg* args, int i) {
  if (!Has(info, args, i)) return Status::Ok();
  if (args[i].kind != BP_VALUE_INT && args[i].kind != BP_VALUE_DOUBLE && args[i].kind != BP_VALUE_BOOL) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) + "expected a Scalar (int, float or bool)");
  }
  return Status::Ok();
}

// addmm(self, mat1, mat2, *, beta, alpha): self broadcasts to [M, N].
Status AddmmInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType d;
  for (int i = 0; i < 3; ++i) BP_RETURN_IF_ERROR(RequireTensor(info, args, i, i == 0 ? &d : nullptr));
  BP_RETURN_IF_ERROR(RequireRank(info, args, 1, 2));
  BP_RETURN_IF_ERROR(RequireRank(info, args, 2, 2));
  BP_RETURN_IF_ERROR(SameDtype(info, args, 1, 0));
  BP_RETURN_IF_ERROR(SameDtype(info, args, 1, 2));
  const Geometry& m1 = *args[1].tensor;
  const Geometry& m2 = *args[2].tensor;
  if (m1.sizes[1] != m2.sizes[0]) return KMismatch(info, 1, m1, 2, m2, m1.sizes[1], m2.sizes[0]);
  BP_RETURN_IF_ERROR(CheckScalar(info, args, 3));
  BP_RETURN_IF_ERROR(CheckScalar(info, args, 4));
  Geometry mn;
  mn.ndim = 2;
  mn.sizes[0] = m1.sizes[0];
  mn.sizes[1] = m2.sizes[1];
  const Geometry& self = *args[0].tensor;
  if (self.ndim > 2) return RequireRank(info, args, 0, 2);
  int32_t n = 0;
  int64_t s[BP_MAX_NDIM];
  BP_RETURN_IF_ERROR(BroadcastShapes(info, 1, mn, 0, self, &n, s));
  if (s[0] != mn.sizes[0] || s[1] != mn.sizes[1]) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 0) + "of sizes " + SizesText(self) +
                                                 " cannot broadcast to the product's sizes " + SizesText(mn));
  }
  plan->no_output_alias = true;
  return SetOutput(info, plan, 0, d, mn.sizes, 2, CallDevice(info, args));
}

Status AddmmPrepare(const MetaCallInfo& info, const MetaArg* args, const MetaPlan& plan,
                    const Geometry* outputs, KernelViews* views) {
  ViewsAsIs(args, info.num_args, outputs, plan.num_outputs, views);
  views->args[0] = BroadcastTo(*args[0].tensor, plan.outputs[0].sizes, 2);
  return Status::Ok();
}

// linear(input [..., K], weight [N, K], bias [N] or None) -> [..., N].
Status LinearInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType d;
  BP_RETURN_IF_ERROR(RequireTwoTensors(info, args, &d));
  const Geometry& in = *args[0].tensor;
  const Geometry& w = *args[1].tensor;
  if (in.ndim < 1) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 0) + "expected rank >= 1, got a 0-dim tensor");
  }
  BP_RETURN_IF_ERROR(RequireRank(info, args, 1, 2));
  BP_RETURN_IF_ERROR(SameDtype(info, args, 0, 1));
  if (w.sizes[1] != in.sizes[in.ndim - 1]) {
    return KMismatch(info, 0, in, 1, w, in.sizes[in.ndim - 1], w.sizes[1]);
  }
  if (Has(info, args, 2)) {
    BP_RETURN_IF_ERROR(RequireTensor(info, args, 2, nullptr));
    BP_RETURN_IF_ERROR(SameDtype(info, args, 0, 2));
    const Geometry& b = *args[2].tensor;
    if (b.ndim != 1 || b.sizes[0] != w.sizes[0]) {
      return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 2) + "expected sizes [" +
                                                   std::to_string(w.sizes[0]) + "], got " + SizesText(b));
    }
  }
  int64_t sizes[BP_MAX_NDIM];
  for (int32_t i = 0; i < in.ndim; ++i) sizes[i] = in.sizes[i];
  sizes[in.ndim - 1] = w.sizes[0];
  plan->no_output_alias = true;
  return SetOutput(info, plan, 0, d, sizes, in.ndim, CallDevice(info, args));
}


}  // namespace

Status IntegerZeroPoint(const MetaCallInfo& info, const MetaArg* args, int zp, int of, int64_t len, const char* per) {
  if (!Has(info, args, zp)) return Status::Ok();
  DType zd;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, zp, &zd));
  const Geometry& z = *args[zp].tensor;
  const bool one = z.ndim == 0 || (z.ndim == 1 && z.sizes[0] == 1);
  if (!one && len < 0) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, zp) + "expected one element (per tensor), got sizes " + SizesText(z));
  }
  if (!one && !(z.ndim == 1 && z.sizes[0] == len)) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, zp) + "expected one element or [" +
                                                 std::to_string(len) + "] (one per " + per + "), got sizes " +
                                                 SizesText(z));
  }
  return SameDtype(info, args, of, zp);
}

namespace {

// matmul_integer(a, b, a_zero_point, b_zero_point): matmul's shapes; a and
// b int8 or uint8 each (they may differ, as ONNX's MatMulInteger allows);
// each zero point NONE, one element, or one per row of a ([M]) / column of
// b ([N]), in its operand's dtype; an int32 result.
Status MatmulIntegerInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  BP_RETURN_IF_ERROR(RequireTwoTensors(info, args, nullptr));
  for (int i = 0; i < 2; ++i) {
    const DType d = DtypeFromDL(args[i].tensor->dtype);
    if (d != DType::kInt8 && d != DType::kUInt8) {
      return Error(BP_STATUS_INVALID_ARGUMENT,
                   ArgPrefix(info, i) + "expected dtype int8 or uint8, got " + DtypeName(args[i].tensor->dtype));
    }
  }
  int32_t n = 0;
  int64_t full[BP_MAX_NDIM + 2];
  BP_RETURN_IF_ERROR(MatmulShapes(info, args, &n, full));
  if (n > BP_MAX_NDIM) return CheckSizes(info, "the output", full, n, DType::kInt32);
  BP_RETURN_IF_ERROR(IntegerZeroPoint(info, args, 2, 0, full[n - 2], "row of 'a'"));
  BP_RETURN_IF_ERROR(IntegerZeroPoint(info, args, 3, 1, full[n - 1], "column of 'b'"));
  int64_t sizes[BP_MAX_NDIM];
  const int32_t ndim = DropVectorDims(args, full, n, sizes);
  plan->no_output_alias = true;
  return SetOutput(info, plan, 0, DType::kInt32, sizes, ndim, CallDevice(info, args));
}

// matmul's views for a, b and the output; the zero points as they are.
Status MatmulIntegerPrepare(const MetaCallInfo& info, const MetaArg* args, const MetaPlan& plan,
                            const Geometry* outputs, KernelViews* views) {
  ViewsAsIs(args, info.num_args, outputs, 1, views);
  return MatmulPrepare(info, args, plan, outputs, views);
}

}  // namespace

const MetaFunctions kMatmulMeta = {"matmul", MatmulInfer, MatmulPrepare};
const MetaFunctions kAddmmMeta = {"addmm", AddmmInfer, AddmmPrepare};
const MetaFunctions kLinearMeta = {"linear", LinearInfer, AsIsPrepare};
const MetaFunctions kMatmulIntegerMeta = {"matmul_integer", MatmulIntegerInfer, MatmulIntegerPrepare};

}  // namespace bp::core::meta
