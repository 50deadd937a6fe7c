// Intra-op threads of the CPU backend for ONNX sessions.
#pragma once

#include <string>

namespace bponnx {

/// Sets the number of threads the CPU backend's kernels (its OpenMP loops
/// and oneDNN) split one operator across, as OMP_NUM_THREADS does, by
/// setting that variable: the CPU backend's OpenMP runtime reads it once,
/// when the plugin loads, so call this before the process's first
/// bp_context_create (a context created earlier keeps its thread count).
/// False with *err (naming the value and the bounds) when n < 1 or n >
/// max_intra_op_threads().
bool set_intra_op_threads(int n, std::string* err);

/// The most threads set_intra_op_threads takes: kThreadsPerHardwareThread x
/// the machine's hardware threads (std::thread::hardware_concurrency, 1 when
/// unknown).
constexpr int kThreadsPerHardwareThread = 4;
int max_intra_op_threads();

}  // namespace bponnx
