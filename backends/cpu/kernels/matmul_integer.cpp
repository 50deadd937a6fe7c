// matmul_integer (ONNX MatMulInteger-10): int32 (a - a_zero_point) @
// (b - b_zero_point), a and b int8 or uint8 each. Per batch, b minus its
// zero points is widened once into an int16 [K, N] panel, and a minus its
// zero points into int16 rows; then the rows go through
// IntegerPanelProduct (integer_panel.h, shared with conv_integer). Rows are split across threads. Sums wrap where ONNX's
// int32 result wraps.
#include <cstdint>
#include <vector>

#include "backplane/op_args.h"
#include "common.h"
#include "integer_panel.h"

namespace bp_cpu {
namespace {

template <typename Ta, typename Tb>
void MatmulIntegerTyped(const DLTensor& a, const DLTensor& b, const DLTensor* azp, const DLTensor* bzp,
                        const DLTensor& out) {
  const int n = out.ndim;
  const int64_t M = out.shape[n - 2], N = out.shape[n - 1], K = a.shape[n - 1];
  int64_t batches = 1;
  for (int d = 0; d < n - 2; ++d) batches *= out.shape[d];
  if (batches == 0 || M == 0 || N == 0) return;
  std::vector<int32_t> za(static_cast<size_t>(M)), zb(static_cast<size_t>(N));
  for (int64_t m = 0; m < M; ++m) za[static_cast<size_t>(m)] = ZeroPointAt<Ta>(azp, m);
  for (int64_t j = 0; j < N; ++j) zb[static_cast<size_t>(j)] = ZeroPointAt<Tb>(bzp, j);
  std::vector<int16_t> panel(static_cast<size_t>(K * N)), a16(static_cast<size_t>(M * K));
  const int64_t as_m = a.strides[n - 2], as_k = a.strides[n - 1], bs_k = b.strides[n - 2], bs_n = b.strides[n - 1];
  const int64_t os_m = out.strides[n - 2], os_n = out.strides[n - 1];
  int64_t coord[BP_MAX_NDIM] = {};
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t ao = 0, bo = 0, oo = 0;
    for (int d = 0; d < n - 2; ++d) {
      ao += coord[d] * a.strides[d];
      bo += coord[d] * b.strides[d];
      oo += coord[d] * out.strides[d];
    }
    const Ta* pa = reinterpret_cast<const Ta*>(DataPtr(a)) + ao;
    const Tb* pb = reinterpret_cast<const Tb*>(DataPtr(b)) + bo;
    int32_t* po = reinterpret_cast<int32_t*>(DataPtr(out)) + oo;
    for (int64_t k = 0; k < K; ++k) {
      int16_t* row = &panel[static_cast<size_t>(k * N)];
      for (int64_t j = 0; j < N; ++j)
        row[j] = static_cast<int16_t>(static_cast<int32_t>(pb[k * bs_k + j * bs_n]) - zb[static_cast<size_t>(j)]);
    }
    ShiftedRows(pa, as_m, as_k, za.data(), 0, M, K, a16.data());
    ParallelFor(M, M * N * (K + 1), [&](int64_t lo, int64_t hi) {
      IntegerPanelProduct(a16.data(), panel.data(), K, N, lo, hi,
                          [&](int64_t m, int64_t j0, int64_t nb, const uint32_t* sums) {
                            int32_t* dst = po + m * os_m + j0 * os_n;
                            for (int64_t j = 0; j < nb; ++j) dst[j * os_n] = static_cast<int32_t>(sums[j]);
                          });
    });
    for (int d = n - 3; d >= 0; --d) {
      if (++coord[d] < out.shape[d]) break;
      coord[d] = 0;
    }
  }
}

template <typename Ta>
bp_status_t WithB(const bp_kernel_call_t* call, const DLTensor& a, const DLTensor& b, const DLTensor* azp,
                  const DLTensor* bzp, const DLTensor& out) {
  switch (DtypeOf(b.dtype)) {
    case DType::kInt8:
      MatmulIntegerTyped<Ta, int8_t>(a, b, azp, bzp, out);
      return BP_STATUS_OK;
    case DType::kUInt8:
      MatmulIntegerTyped<Ta, uint8_t>(a, b, azp, bzp, out);
      return BP_STATUS_OK;
    default:
      return FailDtype(call, b);
  }
}

bp_status_t MatmulInteger(const bp_kernel_call_t* call) {
  const DLTensor* a = bp_kit_tensor_arg(call, BP_ARG_MATMUL_INTEGER_A);
  const DLTensor* b = bp_kit_tensor_arg(call, BP_ARG_MATMUL_INTEGER_B);
  const DLTensor* azp = bp_kit_tensor_arg(call, BP_ARG_MATMUL_INTEGER_A_ZERO_POINT);
  const DLTensor* bzp = bp_kit_tensor_arg(call, BP_ARG_MATMUL_INTEGER_B_ZERO_POINT);
  const DLTensor& out = *call->outputs[0];
  if (a == nullptr || b == nullptr || out.ndim < 2 || a->ndim != out.ndim || b->ndim != out.ndim ||
      DtypeOf(out.dtype) != DType::kInt32)
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "expected a [..., M, K], b [..., K, N] and an int32 output");
  switch (DtypeOf(a->dtype)) {
    case DType::kInt8:
      return WithB<int8_t>(call, *a, *b, azp, bzp, out);
    case DType::kUInt8:
      return WithB<uint8_t>(call, *a, *b, azp, bzp, out);
    default:
      return FailDtype(call, *a);
  }
}

const KernelDef kKernels[] = {
    {BP_OP_MATMUL_INTEGER, MatmulInteger, nullptr},
};

}  // namespace

const KernelDef* MatmulIntegerKernels(size_t* count) {
  *count = sizeof(kKernels) / sizeof(kKernels[0]);
  return kKernels;
}

}  // namespace bp_cpu
