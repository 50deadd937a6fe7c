// The registration table: which operator each shared kernel entry serves,
// with its op id as kernel_data and the compute dtypes it runs. Names are
// ops.yaml's functional schema names; every in-place and out= variant runs
// the same kernel.
#include "backplane/op_args.h"
#include "backplane/plugin_kit.h"
#include "kernels.h"

namespace bp_gpu {
namespace {

// The compute dtypes each kernel runs (the host routes the others before it
// allocates anything), matching the checks the kernels keep for older hosts:
// CheckDtype's allow_bool/allow_int per family, and integer division and pow,
// which run on the CPU fallback (it validates divisor and exponent).
constexpr uint64_t kAll = BP_DTYPE_MASK_ALL;
constexpr uint64_t kNoBool = BP_DTYPE_MASK_ALL & ~BP_DTYPE_MASK_BOOL;
constexpr uint64_t kFloat = BP_DTYPE_MASK_FLOATING;

// kernel_data is the op id (OpData); id 0 is NULL, which the kit's default
// data (NULL here) keeps.
const bp_kit_kernel_dtypes_t kKernels[] = {
    {BP_OP_ADD_TENSOR, BinaryEntry, OpData(kAdd), kAll},
    {BP_OP_SUB_TENSOR, BinaryEntry, OpData(kSub), kAll},
    {BP_OP_MUL_TENSOR, BinaryEntry, OpData(kMul), kAll},
    {BP_OP_DIV_TENSOR, BinaryEntry, OpData(kDiv), kFloat},
    {BP_OP_DIV_TENSOR_MODE, DivModeEntry, OpData(0), kFloat},
    {BP_OP_MAXIMUM, BinaryEntry, OpData(kMaximum), kAll},
    {BP_OP_MINIMUM, BinaryEntry, OpData(kMinimum), kAll},
    {BP_OP_POW_TENSOR_TENSOR, BinaryEntry, OpData(kPow), kFloat},
    {BP_OP_EQ_TENSOR, CompareEntry, OpData(kEq), kAll},
    {BP_OP_NE_TENSOR, CompareEntry, OpData(kNe), kAll},
    {BP_OP_LT_TENSOR, CompareEntry, OpData(kLt), kAll},
    {BP_OP_LE_TENSOR, CompareEntry, OpData(kLe), kAll},
    {BP_OP_GT_TENSOR, CompareEntry, OpData(kGt), kAll},
    {BP_OP_GE_TENSOR, CompareEntry, OpData(kGe), kAll},
    {BP_OP_WHERE_SELF, WhereEntry, OpData(0), kAll},
    {BP_OP_NEG, UnaryEntry, OpData(kNeg), kNoBool},
    {BP_OP_ABS, UnaryEntry, OpData(kAbs), kNoBool},
    {BP_OP_ROUND, UnaryEntry, OpData(kRound), kNoBool},
    {BP_OP_EXP, UnaryEntry, OpData(kExp), kFloat},
    {BP_OP_LOG, UnaryEntry, OpData(kLog), kFloat},
    {BP_OP_SQRT, UnaryEntry, OpData(kSqrt), kFloat},
    {BP_OP_RSQRT, UnaryEntry, OpData(kRsqrt), kFloat},
    {BP_OP_SIN, UnaryEntry, OpData(kSin), kFloat},
    {BP_OP_COS, UnaryEntry, OpData(kCos), kFloat},
    {BP_OP_ACOS, UnaryEntry, OpData(kAcos), kFloat},
    {BP_OP_ASIN, UnaryEntry, OpData(kAsin), kFloat},
    {BP_OP_ATAN, UnaryEntry, OpData(kAtan), kFloat},
    {BP_OP_TANH, UnaryEntry, OpData(kTanh), kFloat},
    {BP_OP_SIGMOID, UnaryEntry, OpData(kSigmoid), kFloat},
    {BP_OP_ERF, UnaryEntry, OpData(kErf), kFloat},
    {BP_OP_RELU, UnaryEntry, OpData(kRelu), kNoBool},
    {BP_OP_GELU, UnaryEntry, OpData(kGelu), kFloat},
    {BP_OP_SILU, UnaryEntry, OpData(kSilu), kFloat},
    {BP_OP_SUM_DIM_INTLIST, ReduceEntry, OpData(kSum), kAll},
    {BP_OP_MEAN_DIM, ReduceEntry, OpData(kMean), kFloat},
    {BP_OP_AMAX, ReduceEntry, OpData(kAmax), kAll},
    {BP_OP_AMIN, ReduceEntry, OpData(kAmin), kAll},
    {BP_OP_ARGMAX, ReduceEntry, OpData(kArgmax), kNoBool},
    {BP_OP_MATMUL, MatmulEntry, OpData(0), kFloat},
    {BP_OP_ADDMM, AddmmEntry, OpData(0), kFloat},
    {BP_OP_LINEAR, LinearEntry, OpData(0), kFloat},
    {BP_OP_SOFTMAX_INT, SoftmaxEntry, OpData(0), kFloat},
    {BP_OP_LOG_SOFTMAX_INT, SoftmaxEntry, OpData(1), kFloat},
    {BP_OP_LAYER_NORM, LayerNormEntry, OpData(0), kFloat},
    {BP_OP_BATCH_NORM, BatchNormEntry, OpData(0), kFloat},
    {BP_OP_CONV2D, Conv2dEntry, OpData(0), kFloat},
    {BP_OP_CONV2D_FUSED, Conv2dEntry, OpData(1), kFloat},
    {BP_OP_MAX_POOL2D, MaxPool2dEntry, OpData(0), kFloat},
    {BP_OP_AVG_POOL2D, AvgPool2dEntry, OpData(0), kFloat},
    {BP_OP_UPSAMPLE_NEAREST2D, UpsampleNearestEntry, OpData(0), kAll},
    {BP_OP_UPSAMPLE_BILINEAR2D, UpsampleBilinearEntry, OpData(0), kFloat},
    {BP_OP_COPY_, CopyEntry, OpData(0), kAll},
    {BP_OP_FILL__SCALAR, FillEntry, OpData(0), kAll},
    {BP_OP_CAT, CatEntry, OpData(0), kAll},
};

}  // namespace

int32_t NumRegisteredOps() { return static_cast<int32_t>(sizeof kKernels / sizeof kKernels[0]); }

bp_status_t RegisterKernels(const bp_host_api_t* host, bp_registrar_t* registrar) {
  return bp_kit_register_kernels_dtypes(host, registrar, kKernels, sizeof kKernels / sizeof kKernels[0], nullptr);
}

}  // namespace bp_gpu
