// Batched matrix product shared by matmul, addmm and linear.
#pragma once

#include "common.h"

namespace bp_cpu {

// C = alpha * (A @ B) + beta * C, over A [..., M, K], B [..., K, N] and
// C [..., M, N] of one rank (>= 2) and one dtype; batch dims of A and B may
// be broadcast (stride 0). beta == 0 ignores C's old contents (NaN included),
// as torch.addmm. float32/bfloat16 (and float16 where the CPU has it) run on
// oneDNN's matmul primitive; float16 without hardware support goes through
// float32 buffers; float64 and anything oneDNN refuses use a direct loop with
// double accumulation. `b_id` is B's constant-storage id
// (bp_kit_constant_id; 0: not constant): a constant B without batch dims of
// its own is reordered into oneDNN's layout once and kept (packed_weights.h).
// Returns OK, or an error status after Fail().
bp_status_t Gemm(const bp_kernel_call_t* call, const DLTensor& A, const DLTensor& B, const DLTensor& C, double alpha,
                 double beta, uint64_t b_id = 0);

}  // namespace bp_cpu
