// Pointwise operators: binary (with alpha), division modes, pow, maximum,
// minimum, comparisons, where, and unary math. One program per dtype
// (kernels/pointwise.cl); inputs arrive broadcast to the output's sizes.
#include <cstring>
#include <string>

#include "kernel_sources.h"
#include "launch.h"
#include "kernels.h"

namespace bpcl {
namespace {

enum class PwKind { kBinary, kBinaryAlpha, kTrueDiv, kDivMode, kPow, kCompare, kWhere, kUnary, kUnaryFloat, kGelu };

struct PwOp {
  const char* base;  // kernel name without _1d/_nd
  PwKind kind;
};

std::string PointwiseOptions(const Device* d, const DtypeInfo& t) { return DtypeDefines(t, "T") + DeviceDefines(d); }

Status RunPointwise(const bp_kernel_call_t* call) {
  CallCtx ctx;
  BPCL_RETURN_IF_ERROR(GetCallCtx(call, &ctx));
  const PwOp* op = static_cast<const PwOp*>(call->kernel_data);
  if (call->num_outputs < 1 || call->outputs == nullptr || call->outputs[0] == nullptr)
    return Status(BP_STATUS_INVALID_ARGUMENT, "expected one output tensor");
  const DLTensor* out = call->outputs[0];
  const DLTensor* in[3] = {nullptr, nullptr, nullptr};
  int n_in = 0;
  for (int32_t k = 0; k < call->num_args && n_in < 3; ++k)
    if (call->args[k].kind == BP_VALUE_TENSOR) in[n_in++] = call->args[k].u.tensor;
  const int want = op->kind == PwKind::kWhere ? 3
                   : (op->kind == PwKind::kUnary || op->kind == PwKind::kUnaryFloat || op->kind == PwKind::kGelu) ? 1
                                                                                                                   : 2;
  if (n_in < want) {
    return Status(BP_STATUS_INVALID_ARGUMENT,
                  "expected " + std::to_string(want) + " tensor arguments, got " + std::to_string(n_in));
  }
  const DLTensor* typed = op->kind == PwKind::kCompare ? in[0] : op->kind == PwKind::kWhere ? in[1] : out;
  const DtypeInfo t = GetDtype(typed->dtype);
  BPCL_RETURN_IF_ERROR(CheckDtype(ctx.device, t, "compute dtype"));
  const bool floating = t.kind >= kKindFloat;

  std::string base = op->base;
  ScalarArg alpha = MakeScalar(t, 1.0, 1, true);
  const ScalarArg beta = MakeScalar(t, 0.0, 0, true);
  switch (op->kind) {
    case PwKind::kBinaryAlpha:
      // add.Tensor and sub.Tensor: alpha at the same index.
      static_assert(BP_ARG_ADD_TENSOR_ALPHA == BP_ARG_SUB_TENSOR_ALPHA, "add/sub alpha");
      if (call->num_args > BP_ARG_ADD_TENSOR_ALPHA) alpha = ScalarFromArg(t, call->args[BP_ARG_ADD_TENSOR_ALPHA], 1.0);
      break;
    case PwKind::kTrueDiv:
      if (!floating) return Status(BP_STATUS_UNIMPLEMENTED, "true division of integer dtype " + std::string(t.name));
      break;
    case PwKind::kDivMode: {
      const int m = BP_ARG_DIV_TENSOR_MODE_ROUNDING_MODE;
      const char* mode = (call->num_args > m && call->args[m].kind == BP_VALUE_STRING) ? call->args[m].u.str : nullptr;
      if (mode == nullptr) {
        if (!floating) return Status(BP_STATUS_UNIMPLEMENTED, "true division of integer dtype " + std::string(t.name));
        base = "div";
      } else if (std::strcmp(mode, "trunc") == 0) {
        base = "div_trunc";
      } else if (std::strcmp(mode, "floor") == 0) {
        base = "div_floor";
      } else {
        return Status(BP_STATUS_INVALID_ARGUMENT, std::string("argument 'rounding_mode': expected None, 'trunc' or "
                                                              "'floor', got '") + mode + "'");
      }
      if (!floating) {
        BPCL_RETURN_IF_ERROR(RunCheck(ctx, "pointwise", src::k_pointwise, PointwiseOptions(ctx.device, t), t, "chk_zero", in[1],
                                      "ZeroDivisionError: argument 'other' has a zero element (integer division by zero)"));
      }
      break;
    }
    case PwKind::kPow:
      if (!floating && t.is_signed) {
        BPCL_RETURN_IF_ERROR(RunCheck(ctx, "pointwise", src::k_pointwise, PointwiseOptions(ctx.device, t), t, "chk_neg", in[1],
                                      "argument 'exponent': integers to negative integer powers are not allowed"));
      }
      break;
    case PwKind::kUnaryFloat:
      if (!floating) return Status(BP_STATUS_UNIMPLEMENTED, "needs a floating dtype, got " + std::string(t.name));
      break;
    case PwKind::kGelu: {
      if (!floating) return Status(BP_STATUS_UNIMPLEMENTED, "needs a floating dtype, got " + std::string(t.name));
      const int a = BP_ARG_GELU_APPROXIMATE;
      const char* approx = (call->num_args > a && call->args[a].kind == BP_VALUE_STRING) ? call->args[a].u.str : "none";
      if (std::strcmp(approx, "tanh") == 0) base = "gelu_tanh";
      else if (std::strcmp(approx, "none") != 0)
        return Status(BP_STATUS_INVALID_ARGUMENT,
                      std::string("argument 'approximate': expected 'none' or 'tanh', got '") + approx + "'");
      break;
    }
    default:
      break;
  }
  return LaunchPointwise(ctx, "pointwise", src::k_pointwise, PointwiseOptions(ctx.device, t), base.c_str(), out, in,
                         alpha, beta);
}

bp_status_t PointwiseKernel(const bp_kernel_call_t* call) {
  try {
    Status st = RunPointwise(call);
    return st.ok() ? BP_STATUS_OK : Fail(call, st);
  } catch (const std::exception& e) {
    return Fail(call, Status(BP_STATUS_INTERNAL, e.what()));
  } catch (...) {
    return Fail(call, Status(BP_STATUS_INTERNAL, "unknown exception"));
  }
}

struct Entry {
  const char* op_name;
  PwOp op;
};
const Entry kOps[] = {
    {BP_OP_ADD_TENSOR, {"add", PwKind::kBinaryAlpha}},
    {BP_OP_SUB_TENSOR, {"sub", PwKind::kBinaryAlpha}},
    {BP_OP_MUL_TENSOR, {"mul", PwKind::kBinary}},
    {BP_OP_DIV_TENSOR, {"div", PwKind::kTrueDiv}},
    {BP_OP_DIV_TENSOR_MODE, {"div", PwKind::kDivMode}},
    {BP_OP_MAXIMUM, {"maximum", PwKind::kBinary}},
    {BP_OP_MINIMUM, {"minimum", PwKind::kBinary}},
    {BP_OP_POW_TENSOR_TENSOR, {"pow", PwKind::kPow}},
    {BP_OP_EQ_TENSOR, {"eq", PwKind::kCompare}},
    {BP_OP_NE_TENSOR, {"ne", PwKind::kCompare}},
    {BP_OP_LT_TENSOR, {"lt", PwKind::kCompare}},
    {BP_OP_LE_TENSOR, {"le", PwKind::kCompare}},
    {BP_OP_GT_TENSOR, {"gt", PwKind::kCompare}},
    {BP_OP_GE_TENSOR, {"ge", PwKind::kCompare}},
    {BP_OP_WHERE_SELF, {"where", PwKind::kWhere}},
    {BP_OP_NEG, {"neg", PwKind::kUnary}},
    {BP_OP_ABS, {"abs", PwKind::kUnary}},
    {BP_OP_ROUND, {"round", PwKind::kUnary}},
    {BP_OP_RELU, {"relu", PwKind::kUnary}},
    {BP_OP_EXP, {"exp", PwKind::kUnaryFloat}},
    {BP_OP_LOG, {"log", PwKind::kUnaryFloat}},
    {BP_OP_SQRT, {"sqrt", PwKind::kUnaryFloat}},
    {BP_OP_RSQRT, {"rsqrt", PwKind::kUnaryFloat}},
    {BP_OP_SIN, {"sin", PwKind::kUnaryFloat}},
    {BP_OP_COS, {"cos", PwKind::kUnaryFloat}},
    {BP_OP_ACOS, {"acos", PwKind::kUnaryFloat}},
    {BP_OP_ASIN, {"asin", PwKind::kUnaryFloat}},
    {BP_OP_ATAN, {"atan", PwKind::kUnaryFloat}},
    {BP_OP_TANH, {"tanh", PwKind::kUnaryFloat}},
    {BP_OP_SIGMOID, {"sigmoid", PwKind::kUnaryFloat}},
    {BP_OP_ERF, {"erf", PwKind::kUnaryFloat}},
    {BP_OP_GELU, {"gelu", PwKind::kGelu}},
    {BP_OP_SILU, {"silu", PwKind::kUnaryFloat}},
};

// The compute dtypes of each kind: RunPointwise declines integers and bool
// for true division and floating math. div.Tensor_mode takes every dtype:
// only its rounding_mode None needs a floating one (an argument, decided at
// run time).
uint64_t KindDtypes(PwKind kind) {
  switch (kind) {
    case PwKind::kTrueDiv:
    case PwKind::kUnaryFloat:
    case PwKind::kGelu:
      return BP_DTYPE_MASK_FLOATING;
    default:
      return BP_DTYPE_MASK_ALL;
  }
}

}  // namespace

void AddPointwiseKernels(std::vector<KernelReg>* out) {
  for (const Entry& e : kOps)
    out->push_back({e.op_name, PointwiseKernel, const_cast<PwOp*>(&e.op), KindDtypes(e.op.kind)});
}

}  // namespace bpcl
