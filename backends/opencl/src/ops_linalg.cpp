#include "ops.h"
namespace bpcl {
void AddLinalgKernels(std::vector<KernelReg>*) {}
}  // namespace bpcl
