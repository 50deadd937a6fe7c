// Registers every OpenCL kernel family with the host (called from init).
#include <vector>

#include "kernels.h"

namespace bpcl {

bp_status_t RegisterKernels(const bp_host_api_t* host, bp_registrar_t* registrar) {
  std::vector<KernelReg> regs;
  AddPointwiseKernels(&regs);
  AddCopyKernels(&regs);
  AddReduceKernels(&regs);
  AddSoftmaxKernels(&regs);
  AddLinalgKernels(&regs);
  return bp_kit_register_kernels(host, registrar, regs.data(), regs.size(), nullptr);
}

}  // namespace bpcl
