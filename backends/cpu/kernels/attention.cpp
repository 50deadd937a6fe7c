// scaled_dot_product_attention: scores = query @ key^T * scale (one batched
// Gemm over every batch and head, key^T a strided view, so nothing is
// transposed in memory), then per row the mask and a softmax in place
// (rows split across threads), then out = scores @ value (a second Gemm).
// The scores live in one scratch buffer of [batch..., L, S] elements; the
// Gemms pick oneDNN's threading themselves. float32 rows use the Highway
// softmax of simd.h; float64 runs a direct double loop.
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "common.h"
#include "gemm.h"
#include "simd.h"

namespace bp_cpu {
namespace {

// A DLTensor with its own shape and strides arrays; dl() points the
// DLTensor at them (after any copy of the View).
struct View {
  DLTensor t{};
  int64_t shape[BP_MAX_NDIM] = {}, strides[BP_MAX_NDIM] = {};
  const DLTensor& dl() {
    t.shape = shape;
    t.strides = strides;
    return t;
  }
};

// `src` with its last two dims swapped (key [..., S, E] seen as [..., E, S]).
View Transposed(const DLTensor& src) {
  View v;
  v.t = src;
  int64_t s = 1;
  for (int d = src.ndim - 1; d >= 0; --d) {
    v.shape[d] = src.shape[d];
    v.strides[d] = src.strides != nullptr ? src.strides[d] : s;  // NULL strides: row-major
    s *= src.shape[d];
  }
  const int a = src.ndim - 2, b = src.ndim - 1;
  std::swap(v.shape[a], v.shape[b]);
  std::swap(v.strides[a], v.strides[b]);
  return v;
}

// A contiguous tensor of `shape` (ndim dims) over `data`.
View Dense(void* data, DLDataType dtype, DLDevice device, int ndim, const int64_t* shape) {
  View v;
  v.t.data = data;
  v.t.device = device;
  v.t.ndim = ndim;
  v.t.dtype = dtype;
  int64_t s = 1;
  for (int d = ndim - 1; d >= 0; --d) v.shape[d] = shape[d], v.strides[d] = s, s *= shape[d];
  return v;
}

// Element offset of row (batch b, query i) in a [batch..., L, X] tensor.
int64_t RowOffset(const DLTensor& t, int64_t b, int64_t i) {
  int64_t off = i * t.strides[t.ndim - 2];
  for (int d = t.ndim - 3; d >= 0; --d) {
    off += (b % t.shape[d]) * t.strides[d];
    b /= t.shape[d];
  }
  return off;
}

// The mask of one row of scores (S of them): is_causal masks keys j > i;
// a bool mask's False and a float mask's values are applied to x in place.
template <typename T>
void MaskRow(T* x, int64_t S, int64_t i, bool causal, const DLTensor* mask, int64_t moff) {
  const T ninf = -std::numeric_limits<T>::infinity();
  if (causal) {
    for (int64_t j = i + 1; j < S; ++j) x[j] = ninf;
  }
  if (mask == nullptr) return;
  const int64_t ms = mask->strides[mask->ndim - 1];
  if (DtypeOf(mask->dtype) == DType::kBool) {
    const uint8_t* m = reinterpret_cast<const uint8_t*>(DataPtr(*mask)) + moff;
    for (int64_t j = 0; j < S; ++j) x[j] = m[j * ms] ? x[j] : ninf;
  } else {
    const T* m = reinterpret_cast<const T*>(DataPtr(*mask)) + moff;
    for (int64_t j = 0; j < S; ++j) x[j] += m[j * ms];
  }
}

// Softmax of one row in place: max subtracted; a row of only -inf gives NaN
// (0 / 0), as torch.
void SoftmaxRow(float* x, int64_t S) { simd::SoftmaxRowF32(x, x, S, false); }
void SoftmaxRow(double* x, int64_t S) {
  double m = -INFINITY;
  for (int64_t j = 0; j < S; ++j) m = x[j] > m || x[j] != x[j] ? x[j] : m;
  if (std::isinf(m) && m < 0) m = 0;
  double sum = 0;
  for (int64_t j = 0; j < S; ++j) sum += (x[j] = std::exp(x[j] - m));
  for (int64_t j = 0; j < S; ++j) x[j] /= sum;
}

template <typename T>
bp_status_t Run(const bp_kernel_call_t* call, const DLTensor& q, const DLTensor& k, const DLTensor& v,
                const DLTensor* mask, bool causal, double scale, const DLTensor& out) {
  const int n = out.ndim;
  const int64_t L = q.shape[n - 2], S = k.shape[n - 2];
  int64_t shape[BP_MAX_NDIM];
  int64_t batch = 1;
  for (int d = 0; d < n - 2; ++d) shape[d] = out.shape[d], batch *= out.shape[d];
  shape[n - 2] = L;
  shape[n - 1] = S;
  // Reused across calls on one thread: a model calls this with one shape
  // again and again.
  thread_local std::vector<T> scratch;
  scratch.resize(static_cast<size_t>(batch * L * S));
  View scores = Dense(scratch.data(), out.dtype, out.device, n, shape);
  View kt = Transposed(k);
  bp_status_t st = Gemm(call, q, kt.dl(), scores.dl(), scale, 0.0);
  if (st != BP_STATUS_OK) return st;
  T* s = scratch.data();
  if (S > 0)
    ParallelFor(batch * L, batch * L * S, [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {
        const int64_t b = r / L, i = r % L;
        T* x = s + r * S;
        MaskRow(x, S, i, causal, mask, mask != nullptr ? RowOffset(*mask, b, i) : 0);
        SoftmaxRow(x, S);
      }
    });
  return Gemm(call, scores.dl(), v, out, 1.0, 0.0);
}

bp_status_t Attention(const bp_kernel_call_t* call) {
  const DLTensor* q = bp_kit_tensor_arg(call, BP_ARG_SCALED_DOT_PRODUCT_ATTENTION_QUERY);
  const DLTensor* k = bp_kit_tensor_arg(call, BP_ARG_SCALED_DOT_PRODUCT_ATTENTION_KEY);
  const DLTensor* v = bp_kit_tensor_arg(call, BP_ARG_SCALED_DOT_PRODUCT_ATTENTION_VALUE);
  const DLTensor* mask = bp_kit_tensor_arg(call, BP_ARG_SCALED_DOT_PRODUCT_ATTENTION_ATTN_MASK);
  const DLTensor* out = call->outputs[0];
  if (q == nullptr || k == nullptr || v == nullptr) {
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "arguments 'query', 'key' and 'value' expected tensors");
  }
  const int n = out->ndim;
  if (n < 2 || q->ndim != n || k->ndim != n || v->ndim != n || (mask != nullptr && mask->ndim != n)) {
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "expected query, key, value (and attn_mask) of the output's rank %d",
                n);
  }
  const bool causal = bp_kit_bool_arg(call, BP_ARG_SCALED_DOT_PRODUCT_ATTENTION_IS_CAUSAL, 0) != 0;
  const double E = static_cast<double>(q->shape[n - 1]);
  const double scale = bp_kit_double_arg(call, BP_ARG_SCALED_DOT_PRODUCT_ATTENTION_SCALE, 1.0 / std::sqrt(E));
  if (Numel(*out) == 0) return BP_STATUS_OK;
  switch (DtypeOf(out->dtype)) {
    case DType::kFloat32:
      return Run<float>(call, *q, *k, *v, mask, causal, scale, *out);
    case DType::kFloat64:
      return Run<double>(call, *q, *k, *v, mask, causal, scale, *out);
    default:
      return FailDtype(call, *out);
  }
}

const KernelDef kKernels[] = {
    {BP_OP_SCALED_DOT_PRODUCT_ATTENTION, Attention, nullptr},
};

}  // namespace

const KernelDef* AttentionKernels(size_t* count) {
  *count = sizeof(kKernels) / sizeof(kKernels[0]);
  return kKernels;
}

}  // namespace bp_cpu
