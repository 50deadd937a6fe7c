// Kernel entry points (bp_kernel_fn) of the shared GPU kernels, the op ids
// passed to them as kernel_data, and RegisterKernels (register.cpp). One
// entry per kernel family; the op is chosen at run time inside one kernel per
// dtype, which keeps the number of template instantiations (and the CI
// compile time) small.
#pragma once

#include <cstdint>

#include "backplane/backend.h"
#include "platform.h"

namespace bp_gpu {

enum BinaryOp : int32_t { kAdd, kSub, kMul, kDiv, kDivTrunc, kDivFloor, kMaximum, kMinimum, kPow };
enum CompareOp : int32_t { kEq, kNe, kLt, kLe, kGt, kGe };
enum UnaryOp : int32_t {
  kNeg,
  kAbs,
  kExp,
  kLog,
  kSqrt,
  kRsqrt,
  kSin,
  kCos,
  kTanh,
  kSigmoid,
  kErf,
  kRelu,
  kGelu,
  kGeluTanh,
  kSilu,
  kAcos,
  kAsin,
  kAtan,
  kRound
};
enum ReduceOp : int32_t { kSum, kMean, kAmax, kAmin, kArgmax };

inline void* OpData(int32_t op) { return reinterpret_cast<void*>(static_cast<intptr_t>(op)); }
inline int32_t OpOf(const bp_kernel_call_t* call) {
  return static_cast<int32_t>(reinterpret_cast<intptr_t>(call->kernel_data));
}

// pointwise.cu
bp_status_t BinaryEntry(const bp_kernel_call_t* call);   // add sub mul div maximum minimum pow
bp_status_t DivModeEntry(const bp_kernel_call_t* call);  // div.Tensor_mode
bp_status_t CompareEntry(const bp_kernel_call_t* call);  // eq ne lt le gt ge
bp_status_t WhereEntry(const bp_kernel_call_t* call);    // where.self
bp_status_t UnaryEntry(const bp_kernel_call_t* call);    // neg abs exp ... gelu silu
// copy.cu
bp_status_t FillEntry(const bp_kernel_call_t* call);  // fill_.Scalar
bp_status_t CopyEntry(const bp_kernel_call_t* call);  // copy_
bp_status_t CatEntry(const bp_kernel_call_t* call);   // cat
// dst <- src (src broadcast to dst's sizes, any dtypes), on call->stream; the
// device is already current. Used by addmm/linear to stage self/bias.
bp_status_t CopyInto(const bp_kernel_call_t* call, const DLTensor* dst, const DLTensor* src);
// reduce.cu
bp_status_t ReduceEntry(const bp_kernel_call_t* call);  // sum mean amax amin argmax
// nn.cu
bp_status_t SoftmaxEntry(const bp_kernel_call_t* call);  // kernel_data: 0 softmax, 1 log_softmax
bp_status_t LayerNormEntry(const bp_kernel_call_t* call);
bp_status_t BatchNormEntry(const bp_kernel_call_t* call);  // inference only
// conv_pool.cu
bp_status_t Conv2dEntry(const bp_kernel_call_t* call);  // kernel_data: 0 conv2d, 1 conv2d_fused
bp_status_t MaxPool2dEntry(const bp_kernel_call_t* call);
bp_status_t AvgPool2dEntry(const bp_kernel_call_t* call);
// resample.cu
bp_status_t UpsampleNearestEntry(const bp_kernel_call_t* call);
bp_status_t UpsampleBilinearEntry(const bp_kernel_call_t* call);
// matmul.cu
// C <- alpha * A @ B + beta * C on call->stream: the platform's vendor GEMM
// when it takes the problem, else the shared tiled kernel. The device is made
// current here. Used by the matmul entries and the 1x1 convolution.
bp_status_t RunGemm(const bp_kernel_call_t* call, const GemmProblem& p);
bp_status_t MatmulEntry(const bp_kernel_call_t* call);
bp_status_t AddmmEntry(const bp_kernel_call_t* call);
bp_status_t LinearEntry(const bp_kernel_call_t* call);

// register.cpp: registers each kernel under its operator name with the
// compute dtypes it runs (during init, bp_kit_register_kernels_dtypes): an
// operator the host does not know is skipped (the host warns, naming it); any
// other failure is returned (the host's set_error already holds the message).
bp_status_t RegisterKernels(const bp_host_api_t* host, bp_registrar_t* registrar);
// Operators the registration table covers (for tests and logs).
int32_t NumRegisteredOps();

}  // namespace bp_gpu
