// Meta function of conv_integer (ONNX ConvInteger-10): conv2d's shapes
// (the shared ReadConvWindow / ConvOutputSize of conv_pool.cpp, so both
// operators agree on sizes and messages) with int8/uint8 operands, their
// zero points and an int32 result.
//
//   conv_integer(input, weight, input_zero_point, weight_zero_point,
//                stride, padding, dilation, groups)
//
// input and weight may differ in dtype (ONNX allows it); input_zero_point
// is per tensor (ONNX's x_zero_point is a scalar), weight_zero_point per
// tensor or per output channel.
#include "meta/families.h"
#include "meta/nchw.h"

namespace bp::core::meta {
namespace {

constexpr int kInput = 0, kWeight = 1, kInputZp = 2, kWeightZp = 3;
constexpr ConvPos kPos{4, 5, 6, 7};

Status RequireInteger(const MetaCallInfo& info, int i, DType d) {
  if (d == DType::kInt8 || d == DType::kUInt8) return Status::Ok();
  return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) + "expected dtype int8 or uint8, got " + DtypeName(d));
}

Status ConvIntegerInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType id, wd;
  BP_RETURN_IF_ERROR(InputImage(info, args, &id));
  BP_RETURN_IF_ERROR(RequireInteger(info, kInput, id));
  BP_RETURN_IF_ERROR(RequireTensor(info, args, kWeight, &wd));
  const Geometry& w = *args[kWeight].tensor;
  if (w.ndim != 4) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, kWeight) + "expected sizes [C_out, C_in / groups, kH, kW], got " + SizesText(w));
  }
  BP_RETURN_IF_ERROR(RequireInteger(info, kWeight, wd));
  ConvArgs c;
  c.dtype = DType::kInt32;
  BP_RETURN_IF_ERROR(ReadConvWindow(info, args, kPos, &c));
  int64_t hw[2];
  BP_RETURN_IF_ERROR(ConvOutputSize(info, args, c, hw));
  BP_RETURN_IF_ERROR(IntegerZeroPoint(info, args, kInputZp, kInput, -1, "tensor"));
  BP_RETURN_IF_ERROR(IntegerZeroPoint(info, args, kWeightZp, kWeight, w.sizes[0], "output channel"));
  RewritePair(plan, kPos.stride, 0, c.stride);
  RewritePair(plan, kPos.padding, 1, c.padding);
  RewritePair(plan, kPos.dilation, 2, c.dilation);
  plan->no_output_alias = true;
  return SetOutput4(info, args, plan, DType::kInt32, w.sizes[0], hw);
}

}  // namespace

const MetaFunctions kConvIntegerMeta = {"conv_integer", ConvIntegerInfer, NchwPrepare};

}  // namespace bp::core::meta
