#include "bponnx/threads.h"

#include <cstdlib>

namespace bponnx {

bool set_intra_op_threads(int n, std::string* err) {
  if (n < 1) {
    *err = "intra-op threads: expected a positive integer but got " + std::to_string(n);
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
