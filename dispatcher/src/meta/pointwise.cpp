// Meta functions of the pointwise families: binary (+ true divide and
// rounding-mode divide), comparison, where, and the unary families.
//
// Kernel contract (ops.yaml): every tensor argument arrives broadcast to the
// output's sizes (stride 0 in broadcast dims) and in the compute dtype;
// comparison outputs are bool.
#include <cstring>

#include "meta/common.h"
#include "meta/families.h"

namespace bp::core::meta {
namespace {

bool IsBoolScalar(const MetaArg& a) { return a.kind == BP_VALUE_BOOL; }

// Broadcasts the tensor arguments listed in idx; returns the output shape.
Status BroadcastAll(const MetaCallInfo& info, const MetaArg* args, const int* idx, int count, int32_t* ndim,
                    int64_t* sizes) {
  Geometry acc;
  acc.ndim = 0;
  int acc_arg = idx[0];
  for (int k = 0; k < count; ++k) {
    const Geometry& g = *args[idx[k]].tensor;
    if (k == 0) {
      acc = g;
      continue;
    }
    int32_t n = 0;
    int64_t s[BP_MAX_NDIM];
    BP_RETURN_IF_ERROR(BroadcastShapes(info, acc_arg, acc, idx[k], g, &n, s));
    acc.ndim = n;
    std::memcpy(acc.sizes, s, sizeof(int64_t) * static_cast<size_t>(n));
  }
  *ndim = acc.ndim;
  std::memcpy(sizes, acc.sizes, sizeof(int64_t) * static_cast<size_t>(acc.ndim));
  return Status::Ok();
}

// Shared by every pointwise family: broadcast, promote (or use `fixed`),
// record casts, set the output.
Status PointwiseInfer(const MetaCallInfo& info, const MetaArg* args, const int* idx, int count, DType compute,
                      DType out_dtype, MetaPlan* plan) {
  int32_t ndim = 0;
  int64_t sizes[BP_MAX_NDIM];
  BP_RETURN_IF_ERROR(BroadcastAll(info, args, idx, count, &ndim, sizes));
  for (int k = 0; k < count; ++k) {
    if (DtypeFromDL(args[idx[k]].tensor->dtype) != compute) plan->cast_to[idx[k]] = DtypeToDL(compute);
  }
  BP_RETURN_IF_ERROR(SetOutput(info, plan, 0, out_dtype, sizes, ndim, CallDevice(info, args)));
  // The output follows a channels-last input of its sizes (torch's
  // TensorIterator keeps the inputs' memory format); else it is contiguous.
  if (ndim == 4) {
    for (int k = 0; k < count; ++k) {
      const Geometry& g = *args[idx[k]].tensor;
      if (g.ndim == 4 && std::memcmp(g.sizes, sizes, sizeof(int64_t) * 4) == 0 && g.is_channels_last()) {
        plan->outputs[0].set_channels_last_strides();
        break;
      }
    }
  }
  return Status::Ok();
}

Status PointwisePrepare(const MetaCallInfo& info, const MetaArg* args, const MetaPlan& plan, const Geometry* outputs,
                        KernelViews* views) {
  const Geometry& out = plan.outputs[0];
  for (int i = 0; i < info.num_args && i < kMaxArgs; ++i) {
    if (args[i].kind == BP_VALUE_TENSOR && args[i].tensor) {
      views->args[i] = BroadcastTo(*args[i].tensor, out.sizes, out.ndim);
    }
  }
  for (int i = 0; i < plan.num_outputs; ++i) views->outputs[i] = outputs[i];
  return Status::Ok();
}

// torch's alpha_check.
Status CheckAlpha(const MetaCallInfo& info, const MetaArg* args, int i, DType dtype) {
  if (!Has(info, args, i)) return Status::Ok();
  const MetaArg& a = args[i];
  if (a.kind != BP_VALUE_INT && a.kind != BP_VALUE_DOUBLE && a.kind != BP_VALUE_BOOL) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) + "expected a Scalar (int, float or bool)");
  }
  if (IsBoolScalar(a) && dtype != DType::kBool) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) +
                                                 "is a bool; boolean alpha is only supported for bool "
                                                 "results, got result dtype " +
                                                 DtypeName(dtype));
  }
  if (a.kind == BP_VALUE_DOUBLE && !DtypeIsFloating(dtype)) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) +
                                                 "must not be a floating point number for integral inputs "
                                                 "(result dtype " +
                                                 DtypeName(dtype) + "), got " + std::to_string(a.d));
  }
  return Status::Ok();
}

Status BinaryCommon(const MetaCallInfo& info, const MetaArg* args, DType* common) {
  BP_RETURN_IF_ERROR(RequireTwoTensors(info, args, nullptr));
  const int idx[2] = {0, 1};
  return ResultTypeChecked(info, args, idx, 2, common);
}

Status BinaryInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType common;
  BP_RETURN_IF_ERROR(BinaryCommon(info, args, &common));
  if (BaseNameIs(info, "sub")) {
    bool a = DtypeFromDL(args[0].tensor->dtype) == DType::kBool;
    bool b = DtypeFromDL(args[1].tensor->dtype) == DType::kBool;
    if (a && b) {
      return Error(BP_STATUS_INVALID_ARGUMENT, std::string(info.op_name) +
                                                   ": subtraction of two bool tensors ('self' and 'other') "
                                                   "is not supported; use logical_xor (the ^ operator) instead");
    }
    if (a || b) {
      return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, a ? 0 : 1) +
                                                   "is a bool tensor; subtraction with a bool tensor is not "
                                                   "supported (to invert a mask, use logical_not, the ~ operator)");
    }
  }
  BP_RETURN_IF_ERROR(CheckAlpha(info, args, 2, common));
  const int idx[2] = {0, 1};
  return PointwiseInfer(info, args, idx, 2, common, common, plan);
}

// Integers and bool divide as the default float dtype (torch.div).
Status TrueDivideInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType common;
  BP_RETURN_IF_ERROR(BinaryCommon(info, args, &common));
  if (!DtypeIsFloating(common)) common = DType::kFloat32;
  const int idx[2] = {0, 1};
  return PointwiseInfer(info, args, idx, 2, common, common, plan);
}

Status DivModeInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  if (!Has(info, args, 2)) return TrueDivideInfer(info, args, plan);
  if (args[2].kind != BP_VALUE_STRING || args[2].str == nullptr) {
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 2) + "expected None, 'trunc' or 'floor'");
  }
  std::string mode = args[2].str;
  if (mode != "trunc" && mode != "floor") {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, 2) + "expected one of None, 'trunc' or 'floor', got '" + mode + "'");
  }
  DType common;
  BP_RETURN_IF_ERROR(BinaryCommon(info, args, &common));
  const int idx[2] = {0, 1};
  return PointwiseInfer(info, args, idx, 2, common, common, plan);
}

Status ComparisonInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType common;
  BP_RETURN_IF_ERROR(BinaryCommon(info, args, &common));
  const int idx[2] = {0, 1};
  return PointwiseInfer(info, args, idx, 2, common, DType::kBool, plan);
}

Status WhereInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType cond;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 0, &cond));
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 1, nullptr));
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 2, nullptr));
  if (cond != DType::kBool) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 ArgPrefix(info, 0) + "expected a bool tensor, got dtype " + DtypeName(cond));
  }
  const int vals[2] = {1, 2};
  DType common;
  BP_RETURN_IF_ERROR(ResultTypeChecked(info, args, vals, 2, &common));
  const int idx[3] = {0, 1, 2};
  BP_RETURN_IF_ERROR(PointwiseInfer(info, args, idx, 3, common, common, plan));
  plan->cast_to[0] = DLDataType{};  // the condition stays bool
  return Status::Ok();
}

Status UnaryNoBoolInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType d;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 0, &d));
  if (d == DType::kBool) {
    if (BaseNameIs(info, "neg")) {
      return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 0) +
                                                   "is a bool tensor; negation is not supported on bool (to "
                                                   "invert a mask, use logical_not, the ~ operator)");
    }
    return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, 0) + "expected a numeric dtype, got bool");
  }
  const int idx[1] = {0};
  return PointwiseInfer(info, args, idx, 1, d, d, plan);
}

// Integral and bool inputs compute in float32, the default dtype (torch.exp).
Status UnaryFloatInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType d;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 0, &d));
  if (!DtypeIsFloating(d)) d = DType::kFloat32;
  const int idx[1] = {0};
  return PointwiseInfer(info, args, idx, 1, d, d, plan);
}

Status UnaryFloatOnlyInfer(const MetaCallInfo& info, const MetaArg* args, MetaPlan* plan) {
  DType d;
  BP_RETURN_IF_ERROR(RequireTensor(info, args, 0, &d));
  if (!DtypeIsFloating(d)) {
    return Error(
        BP_STATUS_INVALID_ARGUMENT,
        ArgPrefix(info, 0) + "expected a floating dtype (float16, bfloat16, float32, float64), got " + DtypeName(d));
  }
  for (int i = 1; i < info.num_args; ++i) {
    const char* name = info.arg_names != nullptr && info.arg_names[i] != nullptr ? info.arg_names[i] : "";
    if (std::strcmp(name, "approximate") != 0 || !Has(info, args, i)) continue;
    std::string mode = args[i].kind == BP_VALUE_STRING && args[i].str ? args[i].str : "";
    if (mode != "none" && mode != "tanh") {
      return Error(BP_STATUS_INVALID_ARGUMENT, ArgPrefix(info, i) + "expected 'none' or 'tanh', got '" + mode + "'");
    }
  }
  const int idx[1] = {0};
  return PointwiseInfer(info, args, idx, 1, d, d, plan);
}

// A pointwise family: its own dtype rules (infer), the one way every
// pointwise kernel sees its arguments (broadcast to the output's sizes).
constexpr MetaFunctions Pointwise(const char* name, decltype(MetaFunctions::infer) infer) {
  return MetaFunctions{name, infer, PointwisePrepare};
}

}  // namespace

const MetaFunctions kBinaryMeta = Pointwise("binary", BinaryInfer);
const MetaFunctions kTrueDivideMeta = Pointwise("binary_true_divide", TrueDivideInfer);
const MetaFunctions kDivModeMeta = Pointwise("binary_div_mode", DivModeInfer);
const MetaFunctions kComparisonMeta = Pointwise("comparison", ComparisonInfer);
const MetaFunctions kWhereMeta = Pointwise("ternary_where", WhereInfer);
const MetaFunctions kUnaryNoBoolMeta = Pointwise("unary_no_bool", UnaryNoBoolInfer);
const MetaFunctions kUnaryFloatMeta = Pointwise("unary_float", UnaryFloatInfer);
const MetaFunctions kUnaryFloatOnlyMeta = Pointwise("unary_float_only", UnaryFloatOnlyInfer);

}  // namespace bp::core::meta

namespace bp::core {
bool IsPointwise(const MetaFunctions* m) {
  return m != nullptr && (m->prepare == meta::PointwisePrepare || m == &meta::kFillMeta);
}
bool WritesOneValue(const MetaFunctions* m) { return m == &meta::kFillMeta; }
}  // namespace bp::core
