#include "bponnx/threads.h"

#include <cstdlib>
#include <thread>

namespace bponnx {

int max_intra_op_threads() {
  const unsigned hw = std::thread::hardware_concurrency();
  return kThreadsPerHardwareThread * static_cast<int>(hw == 0 ? 1 : hw);
}

bool set_intra_op_threads(int n, std::string* err) {
  // More threads than cores only cost memory and switches; 100000 crashed
  // inside libgomp (each thread's stack).
  const int max = max_intra_op_threads();
  if (n < 1 || n > max) {
    *err = "intra-op threads: expected 1 to " + std::to_string(max) + " (" +
           std::to_string(kThreadsPerHardwareThread) + " x the machine's " +
           std::to_string(max / kThreadsPerHardwareThread) + " hardware threads) but got " + std::to_string(n);
    return false;
  }
  // The one mechanism the CPU backend reads (through libgomp) without an
  // ABI change: its kernels use omp_get_max_threads().
  if (setenv("OMP_NUM_THREADS", std::to_string(n).c_str(), 1) != 0) {
    *err = "intra-op threads: could not set OMP_NUM_THREADS";
    return false;
  }
  return true;
}

}  // namespace bponnx
