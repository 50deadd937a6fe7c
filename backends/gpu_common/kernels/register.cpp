// The registration table: which operator each shared kernel entry serves,
// with its op id as kernel_data. Names are ops.yaml's functional schema
// names; every in-place and out= variant runs the same kernel.
#include <cstdio>

#include "backplane/op_args.h"
#include "kernels.h"
#include "platform.h"

namespace bp_gpu {
namespace {

struct KernelEntry {
  const char* op;
  bp_kernel_fn fn;
  int32_t op_id;
};

const KernelEntry kKernels[] = {
    {BP_OP_ADD_TENSOR, BinaryEntry, kAdd},
    {BP_OP_SUB_TENSOR, BinaryEntry, kSub},
    {BP_OP_MUL_TENSOR, BinaryEntry, kMul},
    {BP_OP_DIV_TENSOR, BinaryEntry, kDiv},
    {BP_OP_DIV_TENSOR_MODE, DivModeEntry, 0},
    {BP_OP_MAXIMUM, BinaryEntry, kMaximum},
    {BP_OP_MINIMUM, BinaryEntry, kMinimum},
    {BP_OP_POW_TENSOR_TENSOR, BinaryEntry, kPow},
    {BP_OP_EQ_TENSOR, CompareEntry, kEq},
    {BP_OP_NE_TENSOR, CompareEntry, kNe},
    {BP_OP_LT_TENSOR, CompareEntry, kLt},
    {BP_OP_LE_TENSOR, CompareEntry, kLe},
    {BP_OP_GT_TENSOR, CompareEntry, kGt},
    {BP_OP_GE_TENSOR, CompareEntry, kGe},
    {BP_OP_WHERE_SELF, WhereEntry, 0},
    {BP_OP_NEG, UnaryEntry, kNeg},
    {BP_OP_ABS, UnaryEntry, kAbs},
    {BP_OP_EXP, UnaryEntry, kExp},
    {BP_OP_LOG, UnaryEntry, kLog},
    {BP_OP_SQRT, UnaryEntry, kSqrt},
    {BP_OP_RSQRT, UnaryEntry, kRsqrt},
    {BP_OP_SIN, UnaryEntry, kSin},
    {BP_OP_COS, UnaryEntry, kCos},
    {BP_OP_ACOS, UnaryEntry, kAcos},
    {BP_OP_ASIN, UnaryEntry, kAsin},
    {BP_OP_ATAN, UnaryEntry, kAtan},
    {BP_OP_TANH, UnaryEntry, kTanh},
    {BP_OP_SIGMOID, UnaryEntry, kSigmoid},
    {BP_OP_ERF, UnaryEntry, kErf},
    {BP_OP_RELU, UnaryEntry, kRelu},
    {BP_OP_GELU, UnaryEntry, kGelu},
    {BP_OP_SILU, UnaryEntry, kSilu},
    {BP_OP_SUM_DIM_INTLIST, ReduceEntry, kSum},
    {BP_OP_MEAN_DIM, ReduceEntry, kMean},
    {BP_OP_AMAX, ReduceEntry, kAmax},
    {BP_OP_AMIN, ReduceEntry, kAmin},
    {BP_OP_ARGMAX, ReduceEntry, kArgmax},
    {BP_OP_MATMUL, MatmulEntry, 0},
    {BP_OP_ADDMM, AddmmEntry, 0},
    {BP_OP_LINEAR, LinearEntry, 0},
    {BP_OP_SOFTMAX_INT, SoftmaxEntry, 0},
    {BP_OP_LOG_SOFTMAX_INT, SoftmaxEntry, 1},
    {BP_OP_LAYER_NORM, LayerNormEntry, 0},
    {BP_OP_BATCH_NORM, BatchNormEntry, 0},
    {BP_OP_COPY_, CopyEntry, 0},
    {BP_OP_FILL__SCALAR, FillEntry, 0},
    {BP_OP_CAT, CatEntry, 0},
};

}  // namespace

int32_t NumRegisteredOps() { return static_cast<int32_t>(sizeof kKernels / sizeof kKernels[0]); }

bp_status_t RegisterKernels(const bp_host_api_t* host, bp_registrar_t* registrar) {
  for (const KernelEntry& e : kKernels) {
    const bp_status_t s = host->register_kernel(registrar, e.op, e.fn, OpData(e.op_id), 0);
    if (s == BP_STATUS_NOT_FOUND) {
      // A core without this operator: keep the others (forward compatible).
      if (host->log) {
        char msg[160];
        std::snprintf(msg, sizeof msg, "%s backend: host has no operator '%s'; kernel skipped",
                      platform::kBackendName, e.op);
        host->log(registrar, BP_LOG_DEBUG, msg);
      }
      continue;
    }
    if (s != BP_STATUS_OK) return s;
  }
  return BP_STATUS_OK;
}

}  // namespace bp_gpu
