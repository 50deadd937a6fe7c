// Registers every OpenCL kernel family with the host (called from init).
#include <vector>

#include "kernels.h"

namespace bpcl {

bp_status_t RegisterKernels(const bp_host_api_t* host, bp_registrar_t* registrar, bool fp64) {
  std::vector<KernelReg> regs;
  AddPointwiseKernels(&regs);
  AddCopyKernels(&regs);
  AddReduceKernels(&regs);
  AddSoftmaxKernels(&regs);
  AddLinalgKernels(&regs);
  AddQuantizeKernels(&regs);
  // Masks are per backend: a device without fp64 among devices with it
  // still declines float64 at run time (CheckDtype).
  if (!fp64)
    for (KernelReg& r : regs) r.dtypes &= ~BP_DTYPE_MASK_FLOAT64;
  return bp_kit_register_kernels_dtypes(host, registrar, regs.data(), regs.size(), nullptr);
}

}  // namespace bpcl
