// The registration table: which operator each shared kernel entry serves,
// with its op id as kernel_data. Names are ops.yaml's functional schema
// names; every in-place and out= variant runs the same kernel.
#include "ops_register.h"

#include <cstdio>

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
    {"add.Tensor", BinaryEntry, kAdd},
    {"sub.Tensor", BinaryEntry, kSub},
    {"mul.Tensor", BinaryEntry, kMul},
    {"div.Tensor", BinaryEntry, kDiv},
    {"div.Tensor_mode", DivModeEntry, 0},
    {"maximum", BinaryEntry, kMaximum},
    {"minimum", BinaryEntry, kMinimum},
    {"pow.Tensor_Tensor", BinaryEntry, kPow},
    {"eq.Tensor", CompareEntry, kEq},
    {"ne.Tensor", CompareEntry, kNe},
    {"lt.Tensor", CompareEntry, kLt},
    {"le.Tensor", CompareEntry, kLe},
    {"gt.Tensor", CompareEntry, kGt},
    {"ge.Tensor", CompareEntry, kGe},
    {"where.self", WhereEntry, 0},
    {"neg", UnaryEntry, kNeg},
    {"abs", UnaryEntry, kAbs},
    {"exp", UnaryEntry, kExp},
    {"log", UnaryEntry, kLog},
    {"sqrt", UnaryEntry, kSqrt},
    {"rsqrt", UnaryEntry, kRsqrt},
    {"sin", UnaryEntry, kSin},
    {"cos", UnaryEntry, kCos},
    {"tanh", UnaryEntry, kTanh},
    {"sigmoid", UnaryEntry, kSigmoid},
    {"erf", UnaryEntry, kErf},
    {"relu", UnaryEntry, kRelu},
    {"gelu", UnaryEntry, kGelu},
    {"silu", UnaryEntry, kSilu},
    {"sum.dim_IntList", ReduceEntry, kSum},
    {"mean.dim", ReduceEntry, kMean},
    {"amax", ReduceEntry, kAmax},
    {"amin", ReduceEntry, kAmin},
    {"argmax", ReduceEntry, kArgmax},
    {"matmul", MatmulEntry, 0},
    {"addmm", AddmmEntry, 0},
    {"linear", LinearEntry, 0},
    {"softmax.int", SoftmaxEntry, 0},
    {"log_softmax.int", SoftmaxEntry, 1},
    {"layer_norm", LayerNormEntry, 0},
    {"batch_norm", BatchNormEntry, 0},
    {"copy_", CopyEntry, 0},
    {"fill_.Scalar", FillEntry, 0},
    {"cat", CatEntry, 0},
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
