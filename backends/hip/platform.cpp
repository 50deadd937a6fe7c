// HIP-only parts of the HIP plugin: its identity. Debian 12 ships no
// hipBLAS/rocBLAS, so Gemm declines and matmul, addmm and linear run the
// shared tiled kernel (backends/gpu_common/kernels/matmul.cu).
#include "platform.h"

namespace bp_gpu {

struct PlatformState {};

namespace platform {

const char* const kBackendName = "hip";
const int32_t kDLDeviceType = kDLROCM;
const char* const kVendor = "AMD";

PlatformState* Create(int32_t /*device_count*/) { return nullptr; }
void Destroy(PlatformState* /*state*/) {}

bp_status_t Gemm(const bp_kernel_call_t* /*call*/, PlatformState* /*state*/,
                 const GemmProblem& /*p*/) {
  return BP_STATUS_UNIMPLEMENTED;
}

}  // namespace platform
}  // namespace bp_gpu
