// quantize_linear and dequantize_linear (kernels/quantize.cl), the contract
// of ops.yaml: x any sizes and strides; scale float32, one element or 1-D of
// x.size(axis); zero_point NONE or of scale's sizes in the quantized dtype;
// axis -1 (per tensor) or normalized; outputs[0] contiguous with x's sizes
// (quantize: int8 or uint8; dequantize: float32). The scales are checked on
// the device before anything is written (one read-back of a flag).
#include <string>

#include "kernel_sources.h"
#include "kernels.h"
#include "launch.h"

namespace bpcl {
namespace {

static_assert(BP_ARG_QUANTIZE_LINEAR_X == BP_ARG_DEQUANTIZE_LINEAR_X &&
                  BP_ARG_QUANTIZE_LINEAR_SCALE == BP_ARG_DEQUANTIZE_LINEAR_SCALE &&
                  BP_ARG_QUANTIZE_LINEAR_ZERO_POINT == BP_ARG_DEQUANTIZE_LINEAR_ZERO_POINT &&
                  BP_ARG_QUANTIZE_LINEAR_AXIS == BP_ARG_DEQUANTIZE_LINEAR_AXIS,
              "quantize_linear and dequantize_linear read their arguments alike");

// Strides that show a scale or zero point `p` with out's sizes: its one
// stride along `axis` (-1: none), 0 elsewhere.
void AlongAxis(const DLTensor* p, int32_t ndim, int64_t axis, int64_t* strides) {
  for (int32_t d = 0; d < ndim; ++d) strides[d] = 0;
  if (axis >= 0 && p->ndim > 0) strides[axis] = p->strides != nullptr ? p->strides[0] : 1;
}

Status RunQuantize(const bp_kernel_call_t* call) {
  CallCtx ctx;
  BPCL_RETURN_IF_ERROR(GetCallCtx(call, &ctx));
  const bool quantize = call->kernel_data != nullptr;
  const DLTensor* x = bp_kit_tensor_arg(call, BP_ARG_QUANTIZE_LINEAR_X);
  const DLTensor* scale = bp_kit_tensor_arg(call, BP_ARG_QUANTIZE_LINEAR_SCALE);
  const DLTensor* zp = bp_kit_tensor_arg(call, BP_ARG_QUANTIZE_LINEAR_ZERO_POINT);
  const int64_t axis = bp_kit_int_arg(call, BP_ARG_QUANTIZE_LINEAR_AXIS, -1);
  if (x == nullptr || scale == nullptr || call->num_outputs < 1 || call->outputs[0] == nullptr)
    return Status(BP_STATUS_INVALID_ARGUMENT, "expected x, scale and one output");
  const DLTensor* out = call->outputs[0];
  if (axis < -1 || axis >= out->ndim)
    return Status(BP_STATUS_INVALID_ARGUMENT,
                  "argument 'axis': expected -1 or a normalized dim, got " + std::to_string(axis));
  const DtypeInfo f32 = GetDtype(DLDataType{kDLFloat, 32, 1});
  const DtypeInfo q = GetDtype(quantize ? out->dtype : x->dtype);
  auto is_f32 = [](DLDataType d) { return d.code == kDLFloat && d.bits == 32 && d.lanes == 1; };
  if (!is_f32(scale->dtype) || !is_f32(quantize ? x->dtype : out->dtype))
    return Status(BP_STATUS_UNIMPLEMENTED, "expected float32 scale and " + std::string(quantize ? "x" : "output"));
  if (q.kind == kKindFloat || q.kind == kKindBool || (quantize && q.item_size != 1) || q.item_size > 4)
    return Status(BP_STATUS_UNIMPLEMENTED, std::string("quantized dtype ") + q.name);
  const char* lo = q.is_signed ? "-128.0f" : "0.0f";
  const char* hi = q.is_signed ? "127.0f" : "255.0f";
  const std::string options =
      DtypeDefines(q, "Q") + " -DQ_LO=" + lo + " -DQ_HI=" + hi + " -cl-fp32-correctly-rounded-divide-sqrt";
  TensorRef refs[4];
  BPCL_RETURN_IF_ERROR(GetTensorRef(out, "out", &refs[0]));
  BPCL_RETURN_IF_ERROR(GetTensorRef(x, "x", &refs[1]));
  BPCL_RETURN_IF_ERROR(GetTensorRef(scale, "scale", &refs[2]));
  if (zp != nullptr)
    BPCL_RETURN_IF_ERROR(GetTensorRef(zp, "zero_point", &refs[3]));
  else
    refs[3] = refs[1];  // never read (alpha = 0)
  int64_t scale_strides[BP_MAX_NDIM], zp_strides[BP_MAX_NDIM];
  AlongAxis(scale, out->ndim, axis, scale_strides);
  AlongAxis(zp != nullptr ? zp : scale, out->ndim, zp != nullptr ? axis : -1, zp_strides);
  const ScalarArg has_zp = MakeScalar(f32, zp != nullptr ? 1.0 : 0.0, 0, false);
  const ScalarArg none = MakeScalar(f32, 0.0, 0, false);

  // Before anything is written: every scale positive and finite.
  BPCL_RETURN_IF_ERROR(RunCheck(ctx, "quantize", src::k_quantize, options, f32, "chk_scale", scale,
                                "argument 'scale' must hold positive finite scales"));
  const int64_t* strides[4] = {out->strides, x->strides, scale_strides, zp_strides};
  return LaunchPointwiseGeo(ctx, "quantize", src::k_quantize, options, quantize ? "quantize" : "dequantize", out->ndim,
                            out->shape, refs, strides, has_zp, none);
}

}  // namespace

void AddQuantizeKernels(std::vector<KernelReg>* out) {
  static const char kQuantize[] = "quantize";
  out->push_back({BP_OP_QUANTIZE_LINEAR, WrapKernel<RunQuantize>, const_cast<char*>(kQuantize), BP_DTYPE_MASK_FLOAT32});
  out->push_back({BP_OP_DEQUANTIZE_LINEAR, WrapKernel<RunQuantize>, nullptr,
                  BP_DTYPE_MASK_INT8 | BP_DTYPE_MASK_UINT8 | BP_DTYPE_MASK_INT32});
}

}  // namespace bpcl
