// The registration table: which operator each shared kernel entry serves,
// with its op id as kernel_data. Names are ops.yaml's functional schema
// names; every in-place and out= variant runs the same kernel.
#include "backplane/op_args.h"
#include "backplane/plugin_kit.h"
#include "kernels.h"

namespace bp_gpu {
namespace {

// kernel_data is the op id (OpData); id 0 is NULL, which the kit's default
// data (NULL here) keeps.
const bp_kit_kernel_t kKernels[] = {
    {BP_OP_ADD_TENSOR, BinaryEntry, OpData(kAdd)},
    {BP_OP_SUB_TENSOR, BinaryEntry, OpData(kSub)},
    {BP_OP_MUL_TENSOR, BinaryEntry, OpData(kMul)},
    {BP_OP_DIV_TENSOR, BinaryEntry, OpData(kDiv)},
    {BP_OP_DIV_TENSOR_MODE, DivModeEntry, OpData(0)},
    {BP_OP_MAXIMUM, BinaryEntry, OpData(kMaximum)},
    {BP_OP_MINIMUM, BinaryEntry, OpData(kMinimum)},
    {BP_OP_POW_TENSOR_TENSOR, BinaryEntry, OpData(kPow)},
    {BP_OP_EQ_TENSOR, CompareEntry, OpData(kEq)},
    {BP_OP_NE_TENSOR, CompareEntry, OpData(kNe)},
    {BP_OP_LT_TENSOR, CompareEntry, OpData(kLt)},
    {BP_OP_LE_TENSOR, CompareEntry, OpData(kLe)},
    {BP_OP_GT_TENSOR, CompareEntry, OpData(kGt)},
    {BP_OP_GE_TENSOR, CompareEntry, OpData(kGe)},
    {BP_OP_WHERE_SELF, WhereEntry, OpData(0)},
    {BP_OP_NEG, UnaryEntry, OpData(kNeg)},
    {BP_OP_ABS, UnaryEntry, OpData(kAbs)},
    {BP_OP_EXP, UnaryEntry, OpData(kExp)},
    {BP_OP_LOG, UnaryEntry, OpData(kLog)},
    {BP_OP_SQRT, UnaryEntry, OpData(kSqrt)},
    {BP_OP_RSQRT, UnaryEntry, OpData(kRsqrt)},
    {BP_OP_SIN, UnaryEntry, OpData(kSin)},
    {BP_OP_COS, UnaryEntry, OpData(kCos)},
    {BP_OP_ACOS, UnaryEntry, OpData(kAcos)},
    {BP_OP_ASIN, UnaryEntry, OpData(kAsin)},
    {BP_OP_ATAN, UnaryEntry, OpData(kAtan)},
    {BP_OP_TANH, UnaryEntry, OpData(kTanh)},
    {BP_OP_SIGMOID, UnaryEntry, OpData(kSigmoid)},
    {BP_OP_ERF, UnaryEntry, OpData(kErf)},
    {BP_OP_RELU, UnaryEntry, OpData(kRelu)},
    {BP_OP_GELU, UnaryEntry, OpData(kGelu)},
    {BP_OP_SILU, UnaryEntry, OpData(kSilu)},
    {BP_OP_SUM_DIM_INTLIST, ReduceEntry, OpData(kSum)},
    {BP_OP_MEAN_DIM, ReduceEntry, OpData(kMean)},
    {BP_OP_AMAX, ReduceEntry, OpData(kAmax)},
    {BP_OP_AMIN, ReduceEntry, OpData(kAmin)},
    {BP_OP_ARGMAX, ReduceEntry, OpData(kArgmax)},
    {BP_OP_MATMUL, MatmulEntry, OpData(0)},
    {BP_OP_ADDMM, AddmmEntry, OpData(0)},
    {BP_OP_LINEAR, LinearEntry, OpData(0)},
    {BP_OP_SOFTMAX_INT, SoftmaxEntry, OpData(0)},
    {BP_OP_LOG_SOFTMAX_INT, SoftmaxEntry, OpData(1)},
    {BP_OP_LAYER_NORM, LayerNormEntry, OpData(0)},
    {BP_OP_BATCH_NORM, BatchNormEntry, OpData(0)},
    {BP_OP_COPY_, CopyEntry, OpData(0)},
    {BP_OP_FILL__SCALAR, FillEntry, OpData(0)},
    {BP_OP_CAT, CatEntry, OpData(0)},
};

}  // namespace

int32_t NumRegisteredOps() { return static_cast<int32_t>(sizeof kKernels / sizeof kKernels[0]); }

bp_status_t RegisterKernels(const bp_host_api_t* host, bp_registrar_t* registrar) {
  return bp_kit_register_kernels(host, registrar, kKernels, sizeof kKernels / sizeof kKernels[0], nullptr);
}

}  // namespace bp_gpu
