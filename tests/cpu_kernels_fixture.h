// The fixture of the CPU kernel tests (cpu_kernels_pointwise_test.cpp,
// cpu_kernels_nn_test.cpp): the CPU plugin loaded once per suite through the
// shared fake host (tests/fake_host.h).
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "fake_host.h"

namespace bp_test {

class CpuKernels : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { plugin_ = new LoadedPlugin(BP_CPU_PLUGIN_PATH); }
  static void TearDownTestSuite() {
    delete plugin_;
    plugin_ = nullptr;
  }
  static bp_status_t Call(const char* op, const std::vector<bp_kernel_arg_t>& args,
                          const std::vector<HostTensor*>& outs) {
    return CallKernel(*plugin_, op, args, outs);
  }
  static inline LoadedPlugin* plugin_ = nullptr;
};

}  // namespace bp_test
