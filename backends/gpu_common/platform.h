// What each GPU plugin supplies beside the shared code (backends/cuda,
// backends/hip): its name, its DLPack device type, and an optional vendor
// GEMM (cuBLAS on CUDA) the shared matmul kernels try before their own
// tiled kernel.
#pragma once

#include <cstdint>

#include "backplane/backend.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/offset_calc.h"

namespace bp_gpu {

// C[b] = alpha * A[b] @ B[b] + beta * C[b] for every batch index b, with
// A [M, K], B [K, N], C [M, N] given by element strides (row stride rs,
// column stride cs) from typed base pointers. `batch` maps a batch index to
// the element offsets of A, B and C (operands 0, 1, 2); batch strides may be
// zero for A and B (broadcast). beta == 0 means C is not read.
struct GemmProblem {
  DType dtype = DType::kInvalid;
  int64_t m = 0, n = 0, k = 0;
  int64_t batch_count = 1;
  OffsetCalculator<3> batch;
  const void* a = nullptr;
  int64_t a_rs = 0, a_cs = 0;
  const void* b = nullptr;
  int64_t b_rs = 0, b_cs = 0;
  void* c = nullptr;
  int64_t c_rs = 0, c_cs = 0;
  double alpha = 1.0;
  double beta = 0.0;
};

struct PlatformState;

namespace platform {

extern const char* const kBackendName;  // "cuda", "hip"
extern const int32_t kDLDeviceType;     // kDLCUDA, kDLROCM
extern const char* const kVendor;       // "NVIDIA", "AMD"

// Per-plugin vendor-library state; may return nullptr. Called from init.
PlatformState* Create(int32_t device_count);
// Releases what Create made (called from shutdown; accepts nullptr).
void Destroy(PlatformState* state);
// Runs `p` on call->stream with a vendor library when it can. Returns
// BP_STATUS_UNIMPLEMENTED (without setting an error) to let the shared tiled
// kernel run instead, or an error after reporting it.
bp_status_t Gemm(const bp_kernel_call_t* call, PlatformState* state, const GemmProblem& p);

}  // namespace platform
}  // namespace bp_gpu
