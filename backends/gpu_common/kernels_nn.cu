// Row-wise nn kernels: softmax, log_softmax, layer_norm.
//
// A "row" is the set of elements normalized together (the softmax dim; the
// trailing normalized_shape dims of layer_norm). Rows are enumerated by an
// offset calculator over the other dims, elements within a row by a stride
// (softmax) or a second calculator (layer_norm), so any strided input works.
// Long rows: a block per row with shared-memory reductions; short rows: a
// thread per row. float16/bfloat16 compute in float, float64 in double.
#include <cmath>

#include "block_reduce.h"
#include "kernel_util.h"
#include "kernels.h"

namespace bp_gpu {
namespace {

// Thread-group reductions for the two layouts: with `serial` every thread owns
// a row and the value is already complete.
template <typename A>
__device__ inline A RowSum(A v, int32_t serial) {
  return serial ? v : BlockSum(v);
}
template <typename A>
__device__ inline A RowMax(A v, int32_t serial) {
  return serial ? v : BlockMax(v);
}

template <typename T>
__global__ void SoftmaxKernel(int64_t num_rows, int64_t len, OffsetCalculator<2> rows,
                              int64_t out_stride, int64_t in_stride, T* out, const T* in,
                              int32_t use_log, int32_t serial) {
  using A = OpMath<T>;
  const int64_t first = serial ? static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x
                               : static_cast<int64_t>(blockIdx.x);
  const int64_t step = serial ? static_cast<int64_t>(gridDim.x) * blockDim.x : gridDim.x;
  const int64_t j0 = serial ? 0 : threadIdx.x;
  const int64_t js = serial ? 1 : blockDim.x;
  for (int64_t row = first; row < num_rows; row += step) {
    int64_t off[2];
    rows.get(row, off);
    const T* x = in + off[1];
    T* y = out + off[0];
    A m = LowestOf<A>();
    for (int64_t j = j0; j < len; j += js) {
      const A v = Load(x + j * in_stride);
      m = (v != v || v > m) ? v : m;
    }
    m = RowMax(m, serial);
    A sum = A(0);
    for (int64_t j = j0; j < len; j += js) sum += exp(Load(x + j * in_stride) - m);
    sum = RowSum(sum, serial);
    if (use_log) {
      const A lse = log(sum);
      for (int64_t j = j0; j < len; j += js) {
        Store(y + j * out_stride, Load(x + j * in_stride) - m - lse);
      }
    } else {
      const A inv = A(1) / sum;
      for (int64_t j = j0; j < len; j += js) {
        Store(y + j * out_stride, exp(Load(x + j * in_stride) - m) * inv);
      }
    }
  }
}

// inner offsets: [0] input, [1] output, [2] weight, [3] bias.
template <typename T>
__global__ void LayerNormKernel(int64_t num_rows, int64_t len, OffsetCalculator<2> rows,
                                OffsetCalculator<4> inner, T* out, const T* in, const T* weight,
                                const T* bias, double eps, int32_t serial) {
  using A = OpMath<T>;
  const int64_t first = serial ? static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x
                               : static_cast<int64_t>(blockIdx.x);
  const int64_t step = serial ? static_cast<int64_t>(gridDim.x) * blockDim.x : gridDim.x;
  const int64_t j0 = serial ? 0 : threadIdx.x;
  const int64_t js = serial ? 1 : blockDim.x;
  for (int64_t row = first; row < num_rows; row += step) {
    int64_t off[2];
    rows.get(row, off);
    const T* x = in + off[1];
    T* y = out + off[0];
    A sum = A(0);
    for (int64_t j = j0; j < len; j += js) {
      int64_t io[4];
      inner.get(j, io);
      sum += Load(x + io[0]);
    }
    const A mean = RowSum(sum, serial) / static_cast<A>(len);
    A sq = A(0);
    for (int64_t j = j0; j < len; j += js) {
      int64_t io[4];
      inner.get(j, io);
      const A d = Load(x + io[0]) - mean;
      sq += d * d;
    }
    const A var = RowSum(sq, serial) / static_cast<A>(len);
    const A rstd = A(1) / sqrt(var + static_cast<A>(eps));
    for (int64_t j = j0; j < len; j += js) {
      int64_t io[4];
      inner.get(j, io);
      A v = (Load(x + io[0]) - mean) * rstd;
      if (weight) v *= Load(weight + io[2]);
      if (bias) v += Load(bias + io[3]);
      Store(y + io[1], v);
    }
  }
}

const DLTensor* OptionalTensor(const bp_kernel_call_t* call, int i) { return TensorArg(call, i); }

}  // namespace

bp_status_t SoftmaxEntry(const bp_kernel_call_t* call) {
  const DLTensor* in = TensorArg(call, 0);
  if (!in || call->num_outputs < 1 || call->num_args < 2 || call->args[1].kind != BP_VALUE_INT) {
    return KernelError(call, BP_STATUS_INVALID_ARGUMENT,
                       "expected tensor self, int dim and an output");
  }
  const DLTensor* out = call->outputs[0];
  ScalarType st = ScalarType::kInvalid;
  if (bp_status_t s = CheckDtype(call, "self", out, false, false, &st)) return s;
  if (bp_status_t s = RequireSameDtype(call, out, "out", in, "self")) return s;
  const int32_t ndim = out->ndim;
  int64_t dim = call->args[1].u.i;
  if (ndim == 0 && (dim == 0 || dim == -1)) dim = 0;
  if ((ndim > 0 && (dim < 0 || dim >= ndim)) || in->ndim != ndim) {
    return KernelError(call, BP_STATUS_OUT_OF_RANGE,
                       "argument 'dim' = %lld is out of range for rank %d",
                       static_cast<long long>(dim), ndim);
  }
  const int64_t len = ndim == 0 ? 1 : out->shape[dim];
  const int64_t out_stride = ndim == 0 ? 0 : out->strides[dim];
  const int64_t in_stride = ndim == 0 ? 0 : in->strides[dim];
  int64_t row_shape[kMaxDims];
  for (int d = 0; d < ndim; ++d) row_shape[d] = d == dim ? 1 : out->shape[d];
  const int64_t num_rows = len == 0 ? 0 : Numel(ndim, row_shape);
  const ReduceLaunch launch = RowReduceLaunch(num_rows, len, SmCount(call));
  if (launch.cfg.grid == 0) return BP_STATUS_OK;
  if (bp_status_t s = EnterDevice(call)) return s;
  const int64_t* strides[2] = {out->strides, in->strides};
  const OffsetCalculator<2> rows = MakeOffsetCalculator<2>(ndim, row_shape, strides);
  const int32_t use_log = OpOf(call);
  const bp_status_t s = DispatchFloat(st, [&](auto tag) -> bp_status_t {
    using T = typename decltype(tag)::type;
    const size_t smem = launch.serial ? 0 : launch.cfg.block * sizeof(OpMath<T>);
    BP_GPU_LAUNCH(SoftmaxKernel<T>, launch.cfg.grid, launch.cfg.block, smem, StreamOf(call))
    (num_rows, len, rows, out_stride, in_stride, DataPtr<T>(out), DataPtr<const T>(in), use_log,
     launch.serial ? 1 : 0);
    return BP_STATUS_OK;
  });
  if (s != BP_STATUS_OK) return KernelError(call, s, "internal dtype dispatch failure");
  return CheckLaunch(call, "SoftmaxKernel");
}

bp_status_t LayerNormEntry(const bp_kernel_call_t* call) {
  const DLTensor* in = TensorArg(call, 0);
  if (!in || call->num_outputs < 1 || call->num_args < 2 ||
      call->args[1].kind != BP_VALUE_INT_LIST) {
    return KernelError(call, BP_STATUS_INVALID_ARGUMENT,
                       "expected tensor input, int[] normalized_shape and an output");
  }
  const DLTensor* out = call->outputs[0];
  const DLTensor* weight = OptionalTensor(call, 2);
  const DLTensor* bias = OptionalTensor(call, 3);
  double eps = 1e-5;
  if (call->num_args > 4 && call->args[4].kind == BP_VALUE_DOUBLE) eps = call->args[4].u.d;
  ScalarType st = ScalarType::kInvalid;
  if (bp_status_t s = CheckDtype(call, "input", out, false, false, &st)) return s;
  if (bp_status_t s = RequireSameDtype(call, out, "out", in, "input")) return s;
  if (bp_status_t s = RequireSameDtype(call, out, "out", weight, "weight")) return s;
  if (bp_status_t s = RequireSameDtype(call, out, "out", bias, "bias")) return s;
  const int32_t ndim = out->ndim;
  const int64_t k = call->args[1].u.int_list.size;
  if (k < 1 || k > ndim || in->ndim != ndim || (weight && weight->ndim != k) ||
      (bias && bias->ndim != k)) {
    return KernelError(call, BP_STATUS_INVALID_ARGUMENT,
                       "normalized_shape of %lld dims does not fit input of rank %d",
                       static_cast<long long>(k), ndim);
  }
  const int32_t lead = ndim - static_cast<int32_t>(k);
  int64_t row_shape[kMaxDims];
  for (int d = 0; d < ndim; ++d) row_shape[d] = d < lead ? out->shape[d] : 1;
  const int64_t num_rows = Numel(ndim, row_shape);
  const int64_t len = Numel(static_cast<int32_t>(k), out->shape + lead);
  const ReduceLaunch launch = RowReduceLaunch(len == 0 ? 0 : num_rows, len, SmCount(call));
  if (launch.cfg.grid == 0) return BP_STATUS_OK;
  if (bp_status_t s = EnterDevice(call)) return s;
  const int64_t* strides[2] = {out->strides, in->strides};
  const OffsetCalculator<2> rows = MakeOffsetCalculator<2>(ndim, row_shape, strides);
  static const int64_t kZeros[kMaxDims] = {};
  const int64_t* inner_strides[4] = {in->strides + lead, out->strides + lead,
                                     weight ? weight->strides : kZeros,
                                     bias ? bias->strides : kZeros};
  const OffsetCalculator<4> inner =
      MakeOffsetCalculator<4>(static_cast<int32_t>(k), out->shape + lead, inner_strides);
  const bp_status_t s = DispatchFloat(st, [&](auto tag) -> bp_status_t {
    using T = typename decltype(tag)::type;
    const size_t smem = launch.serial ? 0 : launch.cfg.block * sizeof(OpMath<T>);
    BP_GPU_LAUNCH(LayerNormKernel<T>, launch.cfg.grid, launch.cfg.block, smem, StreamOf(call))
    (num_rows, len, rows, inner, DataPtr<T>(out), DataPtr<const T>(in),
     weight ? DataPtr<const T>(weight) : nullptr, bias ? DataPtr<const T>(bias) : nullptr, eps,
     launch.serial ? 1 : 0);
    return BP_STATUS_OK;
  });
  if (s != BP_STATUS_OK) return KernelError(call, s, "internal dtype dispatch failure");
  return CheckLaunch(call, "LayerNormKernel");
}

}  // namespace bp_gpu
