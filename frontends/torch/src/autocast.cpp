// torch.autocast on the device: the AutocastPrivateUse1 dispatch key gets
// torch's own per-operator policies (ATen's AT_FORALL_LOWER_PRECISION_FP and
// AT_FORALL_FP32 lists, which torch publishes for backends to reuse), as
// CUDA's autocast has them; every other operator falls through.
#include <ATen/autocast_mode.h>
#include <torch/library.h>

#define BP_AUTOCAST_LOWER(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define BP_AUTOCAST_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)

TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) { m.fallback(torch::CppFunction::makeFallthrough()); }

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
  AT_FORALL_LOWER_PRECISION_FP(BP_AUTOCAST_LOWER)
  AT_FORALL_FP32(BP_AUTOCAST_FP32)
}
