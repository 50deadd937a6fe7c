// Meta functions of quantize_linear and dequantize_linear (ONNX
// QuantizeLinear-13 / DequantizeLinear-13 semantics).
//
//   quantize_linear(x, scale, zero_point, axis, dtype): x float32 ->
//       int8 / uint8 (dtype; None: zero_point's dtype, else uint8).
//   dequantize_linear(x, scale, zero_point, axis): x int8 / uint8 / int32
//       -> float32.
//
// scale is float32 with one element (per tensor: axis is ignored, as ONNX
// does) or 1-D of x.size(axis) (per axis); zero_point has scale's sizes.
// The kernel gets axis -1 per tensor, else the normalized dim, so it never
// re-derives the mode. Scale values (positive, finite) are only known when
// the kernel runs: the kernel checks them.
#include "meta/common.h"
#include "meta/families.h"

namespace bp::core::meta {
namespace {

constexpr int kX = 0, kScale = 1, kZeroPoint = 2, kAxis = 3, kDtype = 4;

bool IsQuantized(DType d) { return d == DType::kInt8 || d == DType::kUInt8; }

// Checks scale and zero_point against x and `zp_dtype` (the dtype the zero
// point must have), and rewrites axis to -1 (per tensor) or the normalized dim.
Status ScaleAndZeroPoint(const MetaCallInfo& info, const MetaArg* args, DType zp_dtype, MetaPlan* plan) {
  const Geometry& x = *args[kX].tensor;
  DType sd;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, kScale, &sd));
  const Geometry& s = *args[kScale].tensor;
  if (sd != DType::kFloat32) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, kScale) + "expected dtype float32, got " + DtypeName(sd));
  }
  int64_t axis = 1;
  if (Has(info, args, kAxis)) BP_RETURN_IF_ERROR(IntArg(info, args, kAxis, &axis));
  const int64_t scale_numel = s.ndim == 0 ? 1 : s.sizes[0];
  const bool per_tensor = s.ndim == 0 || (s.ndim == 1 && s.sizes[0] == 1);
  if (!per_tensor) {
    if (s.ndim != 1) {
      return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, kScale) +
                                                   "expected one element (per tensor) or a 1-D tensor (per axis), "
                                                   "got sizes " +
                                                   SizesText(s));
    }
    if (axis < -x.ndim || axis >= x.ndim) {
      return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, kAxis) + "expected a dim in [" +
                                                   std::to_string(-x.ndim) + ", " + std::to_string(x.ndim) +
                                                   ") of x (sizes " + SizesText(x) + "), got " + std::to_string(axis));
    }
    if (axis < 0) axis += x.ndim;
    if (scale_numel != x.sizes[axis]) {
      return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, kScale) + "expected " + std::to_string(x.sizes[axis]) +
                                                   " elements (x.size(" + std::to_string(axis) +
                                                   ")) for per-axis scales, got sizes " + SizesText(s));
    }
  }
  if (Has(info, args, kZeroPoint)) {
    DType zd;
    BP_RETURN_IF_ERROR(RequireTensor(info, args, kZeroPoint, &zd));
    const Geometry& z = *args[kZeroPoint].tensor;
    const int64_t z_numel = z.ndim == 0 ? 1 : z.sizes[0];
    if (z.ndim > 1 || z_numel != scale_numel) {
      return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, kZeroPoint) + "expected the sizes of scale " +
                                                   SizesText(s) + ", got " + SizesText(z));
    }
    if (zd != zp_dtype) {
      return Error(BP_STATUS_INVALID_ARGUMENT,
                   ArgPrefix(info, kZeroPoint) + "expected dtype " + DtypeName(zp_dtype) + ", got " + DtypeName(zd));
    }
  }
  RewriteInt(plan, kAxis, per_tensor ? -1 : axis);
  // Scale (float32) and zero point (the quantized dtype) are checked here;
  // the operator's dtype claim is about x.
  plan->own_dtype_args |= (1u << kScale) | (1u << kZeroPoint);
  return Status::Ok();
}

// quantize_linear(x, scale, zero_point, axis, dtype)
Status QuantizeInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType xd;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, kX, &xd));
  if (xd != DType::kFloat32) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, kX) + "expected dtype float32, got " + DtypeName(xd));
  }
  // ONNX's rule: the output dtype is the zero point's, uint8 without one.
  DType out = DType::kUInt8;
  if (Has(info, args, kDtype)) {
    out = args[kDtype].kind == BP_VALUE_DTYPE ? DtypeFromDL(args[kDtype].dtype) : DType::kInvalid;
    if (!IsQuantized(out)) {
      return Error(BP_STATUS_INVALID_ARGUMENT,
                   ArgPrefix(info, kDtype) + "expected int8 or uint8, got " +
                       (args[kDtype].kind == BP_VALUE_DTYPE ? DtypeName(args[kDtype].dtype) : "another kind"));
    }
  } else if (Has(info, args, kZeroPoint)) {
    BP_RETURN_IF_ERROR(RequireTensor(info, args, kZeroPoint, &out));
    if (!IsQuantized(out)) {
      return Error(BP_STATUS_INVALID_ARGUMENT,
                   ArgPrefix(info, kZeroPoint) + "expected dtype int8 or uint8, got " + DtypeName(out));
    }
  }
  BP_RETURN_IF_ERROR(ScaleAndZeroPoint(info, args, out, plan));
  const Geometry& x = *args[kX].tensor;
  return SetOutput(info, plan, 0, out, x.sizes, x.ndim, x.device);
}

// dequantize_linear(x, scale, zero_point, axis)
Status DequantizeInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType xd;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, kX, &xd));
  if (!IsQuantized(xd) && xd != DType::kInt32) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, kX) + "expected dtype int8, uint8 or int32, got " + DtypeName(xd));
  }
  BP_RETURN_IF_ERROR(ScaleAndZeroPoint(info, args, xd, plan));
  const Geometry& x = *args[kX].tensor;
  return SetOutput(info, plan, 0, DType::kFloat32, x.sizes, x.ndim, x.device);
}

}  // namespace

const MetaFunctions kQuantizeLinearMeta = {"quantize_linear", QuantizeInfer, AsIsPrepare};
const MetaFunctions kDequantizeLinearMeta = {"dequantize_linear", DequantizeInfer, AsIsPrepare};

}  // namespace bp::core::meta
