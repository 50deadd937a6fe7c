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
  for (const KernelReg& r : regs) {
    bp_status_t rc = host->register_kernel(registrar, r.op_name, r.fn, r.data, 0);
    if (rc == BP_STATUS_NOT_FOUND) continue;  // an older host without this operator
    if (rc != BP_STATUS_OK) return rc;
  }
  return BP_STATUS_OK;
}

}  // namespace bpcl
