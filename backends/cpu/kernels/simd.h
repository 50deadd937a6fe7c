// Vectorized float32 building blocks of the CPU kernels, written with Google
// Highway and compiled for several instruction sets (SSE4, AVX2, AVX-512 and
// a portable baseline); the best one the processor has is picked at the
// first call (HWY_DYNAMIC_DISPATCH), so the plugin still runs on any x86-64.
//
// Every function takes contiguous float32 rows; `y` may alias `x` exactly
// (in place) but must not overlap it otherwise. They run on the calling
// thread: the kernels split work across threads around them.
//
// Accuracy (the conformance suite checks each against a double reference):
// - ExpF32: Highway's Exp, at most 1 ULP in its valid range; inputs above
//   ln(FLT_MAX) give +inf, -inf and inputs below -104 give 0, NaN stays NaN.
// - GeluTanhF32: Highway's Tanh (at most 4 ULP) in the tanh formula.
// - SigmoidF32, SiluF32: the scalar formulas on ExpF32's exp, so within a
//   few ULP; the same edges (sigmoid of NaN is NaN, silu(-inf) is NaN).
// - TanhF32: Highway's Tanh (at most 4 ULP); NaN stays NaN.
// - GeluErfF32: erf by the rational approximation 7.1.26 of Abramowitz and
//   Stegun (absolute error at most 1.5e-7, plus float32 rounding), so
//   |gelu error| <= 0.5 * |x| * 2e-7 + a few ULP of the result.
// - SumF32: pairwise sums of blocks; within a block each lane adds at most
//   kSumBlock / (4 * lanes) terms in sequence (32 with AVX-512, 64 with
//   AVX2, 128 with SSE4), so the error is at most about
//   (kSumBlock / (4 * lanes) + log2(n)) * 2^-24 * sum(|x|); the conformance
//   suite allows n * 2^-23 * sum(|x|).
// - SoftmaxRowF32 / LayerNormRowF32: the same sums; layer_norm is two-pass
//   (mean, then the mean of squared deviations), so no cancellation.
#pragma once

#include <cstdint>

namespace bp_cpu {
namespace simd {

// Elements summed by one block of SumF32 before pairwise combination.
// Measured on 64 MiB: the block loop, one forward pass, streams as fast as a
// plain 32-accumulator loop (recursive halving into blocks this short ran at
// half that speed).
constexpr int64_t kSumBlock = 2048;

void ExpF32(const float* x, float* y, int64_t n);
// max(x, 0); NaN stays NaN, -0.0 gives +0.0 (as the scalar kernel).
void ReluF32(const float* x, float* y, int64_t n);
void GeluErfF32(const float* x, float* y, int64_t n);
void SigmoidF32(const float* x, float* y, int64_t n);
void SiluF32(const float* x, float* y, int64_t n);
void TanhF32(const float* x, float* y, int64_t n);
void GeluTanhF32(const float* x, float* y, int64_t n);
// y = x * scale + shift.
void ScaleShiftF32(const float* x, float* y, int64_t n, float scale, float shift);

// Sum of x[0..n) (0 for n == 0).
float SumF32(const float* x, int64_t n);

// Sum of (x[i] - mean)^2 over x[0..n) in float32 lanes (0 for n == 0).
float SumSqDevF32(const float* x, int64_t n, float mean);

// out[k] = the max over t < ntaps of taps[t][k] for k < n (-inf for no
// taps), NaN winning as torch's max pooling: one output position of a
// channels-last max pool, each tap a row of n contiguous channels.
void MaxTapsF32(const float* const* taps, int64_t ntaps, int64_t n, float* out);

// acc[k] += x[0 * stride + k] + ... + x[(rows - 1) * stride + k] for k < cols
// (stride in elements): the sum over rows of a channels-last image. Rows are
// summed in float32 in blocks of 64, each block added into acc in double, so
// the error is at most about 64 * 2^-24 * sum(|x|) per column.
void SumRowsF32(const float* x, int64_t stride, int64_t rows, int64_t cols, double* acc);

// softmax (log_softmax when `log`) of one row of n > 0 elements, max
// subtracted; a row of only -inf uses 0 as its max (torch's result).
void SoftmaxRowF32(const float* x, float* y, int64_t n, bool log);

// y = (x - mean) / sqrt(var + eps) * w + b over one row of n > 0 elements,
// var biased; w or b may be null (1 and 0).
void LayerNormRowF32(const float* x, float* y, int64_t n, const float* w, const float* b, double eps);

// dst[c * dst_pitch + r] = src[r * src_pitch + c] for r < rows, c < cols
// (pitches in elements): one tile of a transpose copy of 32-bit elements,
// bits moved unchanged.
void TransposeU32(const uint32_t* src, int64_t src_pitch, uint32_t* dst, int64_t dst_pitch, int64_t rows, int64_t cols);

// Binary pointwise functions over n elements: each input is a unit-stride row
// (step 1) or one element broadcast (step 0); y is a unit-stride row that may
// alias an input row exactly. Exact IEEE arithmetic, so they match the
// scalar kernels bit for bit (simd_binary.cpp).
enum class BinOp { kAdd, kSub, kMul, kDiv };
enum class CmpOp { kEq, kNe, kLt, kLe, kGt, kGe };
// y[i] = a[i] op b[i].
void BinaryF32(BinOp op, const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n);
// Rows of a broadcast-by-row product: for r < rows, y[r * cols + k] =
// dense[r * cols + k] op row[k] (row op dense when `row_first`); the same
// bits as BinaryF32 on each row.
void BinaryRowsF32(BinOp op, const float* dense, const float* row, bool row_first, float* y, int64_t rows,
                   int64_t cols);
// y[i] = a[i] + alpha * b[i], the product rounded before the sum (no fused
// multiply-add), as the scalar kernel and torch.add(a, b, alpha=alpha).
// Subtraction with alpha is this with -alpha: negation is exact.
void AddScaledF32(const float* a, int64_t sa, const float* b, int64_t sb, float alpha, float* y, int64_t n);
// y[i] = a[i] op b[i]; false where either side is NaN, except ne (true).
void CompareF32(CmpOp op, const float* a, int64_t sa, const float* b, int64_t sb, bool* y, int64_t n);
// y[i] = c[i] ? a[i] : b[i], the stored bits selected.
void WhereF32(const bool* c, int64_t sc, const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n);

// Name of the instruction set the dispatcher picked (for benchmarks).
const char* TargetName();

}  // namespace simd
}  // namespace bp_cpu
