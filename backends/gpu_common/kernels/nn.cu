// Row-wise nn kernels: softmax, log_softmax, layer_norm; and inference batch_norm.
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

// Inference batch norm: a pointwise kernel with per-channel statistics.
// Channel of output element i (row-major over [N, C, ...]): (i / inner) % C.
template <typename T>
__global__ void BatchNormKernel(int64_t n, OffsetCalculator<2> calc, int64_t inner,
                                int64_t channels, T* out, const T* in, const T* weight,
                                int64_t w_stride, const T* bias, int64_t b_stride, const T* mean,
                                int64_t m_stride, const T* var, int64_t v_stride, double eps) {
  using A = OpMath<T>;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t off[2];
    calc.get(i, off);
    const int64_t c = (i / inner) % channels;
    const A invstd = A(1) / sqrt(Load(var + c * v_stride) + static_cast<A>(eps));
    A y = (Load(in + off[1]) - Load(mean + c * m_stride)) * invstd;
    if (weight) y *= Load(weight + c * w_stride);
    if (bias) y += Load(bias + c * b_stride);
    Store(out + off[0], y);
  }
}

const DLTensor* OptionalTensor(const bp_kernel_call_t* call, int i) { return bp_kit_tensor_arg(call, i); }

}  // namespace

bp_status_t SoftmaxEntry(const bp_kernel_call_t* call) {
  const DLTensor* in = bp_kit_tensor_arg(call, BP_ARG_SOFTMAX_INT_SELF);
  const int dim_arg = BP_ARG_SOFTMAX_INT_DIM;  // log_softmax.int: the same (kernel_util.h)
  if (!in || call->num_outputs < 1 || call->num_args <= dim_arg || call->args[dim_arg].kind != BP_VALUE_INT) {
    return KernelError(call, BP_STATUS_INVALID_ARGUMENT,
                       "expected tensor self, int dim and an output");
  }
  const DLTensor* out = call->outputs[0];
  DType st = DType::kInvalid;
  if (bp_status_t s = CheckDtype(call, "self", out, false, false, &st)) return s;
  if (bp_status_t s = RequireSameDtype(call, out, "out", in, "self")) return s;
  const int32_t ndim = out->ndim;
  int64_t dim = call->args[dim_arg].u.i;
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
  const DLTensor* in = bp_kit_tensor_arg(call, BP_ARG_LAYER_NORM_INPUT);
  if (!in || call->num_outputs < 1 || call->num_args <= BP_ARG_LAYER_NORM_NORMALIZED_SHAPE ||
      call->args[BP_ARG_LAYER_NORM_NORMALIZED_SHAPE].kind != BP_VALUE_INT_LIST) {
    return KernelError(call, BP_STATUS_INVALID_ARGUMENT,
                       "expected tensor input, int[] normalized_shape and an output");
  }
  const DLTensor* out = call->outputs[0];
  const DLTensor* weight = OptionalTensor(call, BP_ARG_LAYER_NORM_WEIGHT);
  const DLTensor* bias = OptionalTensor(call, BP_ARG_LAYER_NORM_BIAS);
  double eps = 1e-5;
  const int eps_arg = BP_ARG_LAYER_NORM_EPS;
  if (call->num_args > eps_arg && call->args[eps_arg].kind == BP_VALUE_DOUBLE) eps = call->args[eps_arg].u.d;
  DType st = DType::kInvalid;
  if (bp_status_t s = CheckDtype(call, "input", out, false, false, &st)) return s;
  if (bp_status_t s = RequireSameDtype(call, out, "out", in, "input")) return s;
  if (bp_status_t s = RequireSameDtype(call, out, "out", weight, "weight")) return s;
  if (bp_status_t s = RequireSameDtype(call, out, "out", bias, "bias")) return s;
  const int32_t ndim = out->ndim;
  const int64_t k = call->args[BP_ARG_LAYER_NORM_NORMALIZED_SHAPE].u.int_list.size;
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

bp_status_t BatchNormEntry(const bp_kernel_call_t* call) {
  const DLTensor* in = bp_kit_tensor_arg(call, BP_ARG_BATCH_NORM_INPUT);
  const DLTensor* weight = OptionalTensor(call, BP_ARG_BATCH_NORM_WEIGHT);
  const DLTensor* bias = OptionalTensor(call, BP_ARG_BATCH_NORM_BIAS);
  const DLTensor* mean = OptionalTensor(call, BP_ARG_BATCH_NORM_RUNNING_MEAN);
  const DLTensor* var = OptionalTensor(call, BP_ARG_BATCH_NORM_RUNNING_VAR);
  if (!in || call->num_outputs < 1 || in->ndim < 2) {
    return KernelError(call, BP_STATUS_INVALID_ARGUMENT,
                       "expected input [N, C, ...] and an output");
  }
  const int training_arg = BP_ARG_BATCH_NORM_TRAINING;
  const bool training = call->num_args > training_arg && call->args[training_arg].kind == BP_VALUE_BOOL &&
                        call->args[training_arg].u.b;
  if (training || !mean || !var) {
    // Batch statistics (training=True) are not implemented here: CPU fallback.
    return KernelError(call, BP_STATUS_UNIMPLEMENTED,
                       "only inference with running_mean and running_var runs on this backend");
  }
  double eps = 1e-5;
  const int eps_arg = BP_ARG_BATCH_NORM_EPS;
  if (call->num_args > eps_arg && call->args[eps_arg].kind == BP_VALUE_DOUBLE) eps = call->args[eps_arg].u.d;
  const DLTensor* out = call->outputs[0];
  DType st = DType::kInvalid;
  if (bp_status_t s = CheckDtype(call, "input", out, false, false, &st)) return s;
  if (bp_status_t s = RequireSameDtype(call, out, "out", in, "input")) return s;
  const DLTensor* params[4] = {weight, bias, mean, var};
  const char* names[4] = {"weight", "bias", "running_mean", "running_var"};
  for (int k = 0; k < 4; ++k) {
    if (!params[k]) continue;
    if (bp_status_t s = RequireSameDtype(call, out, "out", params[k], names[k])) return s;
    if (params[k]->ndim != 1 || params[k]->shape[0] != in->shape[1]) {
      return KernelError(call, BP_STATUS_INVALID_ARGUMENT, "argument '%s' must have shape [%lld]",
                         names[k], static_cast<long long>(in->shape[1]));
    }
  }
  const int64_t n = TensorNumel(out);
  const LaunchConfig cfg = PointwiseLaunch(n, SmCount(call));
  if (cfg.grid == 0) return BP_STATUS_OK;
  if (bp_status_t s = EnterDevice(call)) return s;
  const int64_t inner = Numel(out->ndim - 2, out->shape + 2);
  const int64_t* strides[2] = {out->strides, in->strides};
  const OffsetCalculator<2> calc = MakeOffsetCalculator<2>(out->ndim, out->shape, strides);
  const bp_status_t s = DispatchFloat(st, [&](auto tag) -> bp_status_t {
    using T = typename decltype(tag)::type;
    BP_GPU_LAUNCH(BatchNormKernel<T>, cfg.grid, cfg.block, 0, StreamOf(call))
    (n, calc, inner, in->shape[1], DataPtr<T>(out), DataPtr<const T>(in),
     weight ? DataPtr<const T>(weight) : nullptr, weight ? weight->strides[0] : 0,
     bias ? DataPtr<const T>(bias) : nullptr, bias ? bias->strides[0] : 0, DataPtr<const T>(mean),
     mean->strides[0], DataPtr<const T>(var), var->strides[0], eps);
    return BP_STATUS_OK;
  });
  if (s != BP_STATUS_OK) return KernelError(call, s, "internal dtype dispatch failure");
  return CheckLaunch(call, "BatchNormKernel");
}

}  // namespace bp_gpu
