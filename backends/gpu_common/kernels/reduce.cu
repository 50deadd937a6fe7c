// Reductions over any set of dims: sum, mean, amax, amin, argmax.
//
// Contract (ops.yaml): args[0] has the output dtype (argmax: its own),
// `dim` is a sorted, unique, non-negative INT_LIST, and outputs[0] has the
// keepdim=True sizes. The output's index space comes from one offset
// calculator (output strides + input strides at the kept dims), the row being
// reduced from another (input sizes and strides at the reduced dims, walked in
// row-major order, so argmax's index is the row-major index within them).
// Long rows: a block per output and a shared-memory tree; short rows: a
// thread per output.
#include <cmath>

#include "block_reduce.h"
#include "kernel_util.h"
#include "kernels.h"

namespace bp_gpu {
namespace {

template <typename A>
struct Partial {
  A v;
  int64_t idx;
};

template <typename A>
__device__ inline bool IsNan(A v) {
  if constexpr (std::is_floating_point<A>::value) {
    return v != v;
  } else {
    return false;
  }
}

template <typename A>
__device__ inline Partial<A> Identity(int32_t op) {
  switch (op) {
    case kAmax:
    case kArgmax:
      return {LowestOf<A>(), INT64_MAX};
    case kAmin:
      return {HighestOf<A>(), INT64_MAX};
    default:
      return {A(0), INT64_MAX};
  }
}

template <typename A>
__device__ inline Partial<A> Merge(int32_t op, Partial<A> a, Partial<A> b) {
  switch (op) {
    case kSum:
    case kMean:
      return {a.v + b.v, 0};
    case kAmax:
      if (IsNan(a.v)) return a;
      if (IsNan(b.v)) return b;
      return {a.v > b.v ? a.v : b.v, 0};
    case kAmin:
      if (IsNan(a.v)) return a;
      if (IsNan(b.v)) return b;
      return {a.v < b.v ? a.v : b.v, 0};
    default: {  // argmax: NaN is the maximum; ties go to the first index
      const bool an = IsNan(a.v), bn = IsNan(b.v);
      if (an || bn) {
        if (an && bn) return a.idx <= b.idx ? a : b;
        return an ? a : b;
      }
      if (a.v > b.v) return a;
      if (b.v > a.v) return b;
      return a.idx <= b.idx ? a : b;
    }
  }
}

template <typename T>
__device__ inline void Finish(int32_t op, Partial<OpMath<T>> p, int64_t row_len, void* out,
                              int64_t off) {
  using A = OpMath<T>;
  if (op == kArgmax) {
    static_cast<int64_t*>(out)[off] = p.idx == INT64_MAX ? 0 : p.idx;
  } else if (op == kMean) {
    Store(static_cast<T*>(out) + off, p.v / static_cast<A>(row_len));
  } else {
    Store(static_cast<T*>(out) + off, p.v);
  }
}

template <typename T>
__global__ void ReduceKernel(int64_t num_out, int64_t row_len, OffsetCalculator<2> out_calc,
                             OffsetCalculator<1> row_calc, void* out, const T* in, int32_t op,
                             int32_t serial) {
  using A = OpMath<T>;
  if (serial) {
    for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < num_out;
         o += static_cast<int64_t>(gridDim.x) * blockDim.x) {
      int64_t off[2];
      out_calc.get(o, off);
      Partial<A> acc = Identity<A>(op);
      for (int64_t j = 0; j < row_len; ++j) {
        int64_t r[1];
        row_calc.get(j, r);
        acc = Merge(op, acc, Partial<A>{Load(in + off[1] + r[0]), j});
      }
      Finish<T>(op, acc, row_len, out, off[0]);
    }
    return;
  }
  Partial<A>* scratch = static_cast<Partial<A>*>(SharedScratch());
  for (int64_t o = blockIdx.x; o < num_out; o += gridDim.x) {
    int64_t off[2];
    out_calc.get(o, off);
    Partial<A> acc = Identity<A>(op);
    for (int64_t j = threadIdx.x; j < row_len; j += blockDim.x) {
      int64_t r[1];
      row_calc.get(j, r);
      acc = Merge(op, acc, Partial<A>{Load(in + off[1] + r[0]), j});
    }
    scratch[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
      if (threadIdx.x < stride) {
        scratch[threadIdx.x] = Merge(op, scratch[threadIdx.x], scratch[threadIdx.x + stride]);
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) Finish<T>(op, scratch[0], row_len, out, off[0]);
    __syncthreads();
  }
}

}  // namespace

bp_status_t ReduceEntry(const bp_kernel_call_t* call) {
  const DLTensor* in = bp_kit_tensor_arg(call, arg::kSelf);
  if (!in || call->num_outputs < 1) {
    return KernelError(call, BP_STATUS_INVALID_ARGUMENT, "expected tensor self and an output");
  }
  const DLTensor* out = call->outputs[0];
  const int32_t op = OpOf(call);
  if (out->ndim != in->ndim) {
    return KernelError(call, BP_STATUS_INVALID_ARGUMENT,
                       "output rank %d differs from input rank %d (keepdim-shaped output expected)",
                       out->ndim, in->ndim);
  }
  // Reduced dims: INT_LIST per the contract; INT or NONE tolerated (all dims).
  bool reduced[kMaxDims] = {};
  const bp_kernel_arg_t* dim = call->num_args > arg::kDim ? &call->args[arg::kDim] : nullptr;
  if (dim != nullptr && dim->kind == BP_VALUE_INT_LIST && dim->u.int_list.size > 0) {
    for (int64_t k = 0; k < dim->u.int_list.size; ++k) {
      const int64_t d = dim->u.int_list.data[k];
      if (d < 0 || d >= in->ndim) {
        return KernelError(call, BP_STATUS_OUT_OF_RANGE,
                           "argument 'dim' holds %lld, out of range for rank %d",
                           static_cast<long long>(d), in->ndim);
      }
      reduced[d] = true;
    }
  } else if (dim != nullptr && dim->kind == BP_VALUE_INT) {
    const int64_t d = dim->u.i;
    if (d < 0 || d >= in->ndim) {
      return KernelError(call, BP_STATUS_OUT_OF_RANGE,
                         "argument 'dim' = %lld is out of range for rank %d",
                         static_cast<long long>(d), in->ndim);
    }
    reduced[d] = true;
  } else {
    for (int d = 0; d < in->ndim; ++d) reduced[d] = true;
  }
  DType st = DType::kInvalid;
  if (bp_status_t s =
          CheckDtype(call, "self", in, op != kMean && op != kArgmax, op != kMean, &st)) {
    return s;
  }
  if (bp_status_t s = op == kArgmax ? RequireDtype(call, out, "out", DType::kInt64)
                                    : RequireSameDtype(call, in, "self", out, "out")) {
    return s;
  }
  int64_t row_sizes[kMaxDims], row_strides[kMaxDims];
  int32_t row_ndim = 0;
  for (int d = 0; d < in->ndim; ++d) {
    if (!reduced[d]) continue;
    row_sizes[row_ndim] = in->shape[d];
    row_strides[row_ndim] = in->strides[d];
    ++row_ndim;
  }
  const int64_t row_len = Numel(row_ndim, row_sizes);
  const int64_t num_out = TensorNumel(out);
  const ReduceLaunch launch = RowReduceLaunch(num_out, row_len, SmCount(call));
  if (launch.cfg.grid == 0) return BP_STATUS_OK;
  if (bp_status_t s = EnterDevice(call)) return s;
  const int64_t* out_strides[2] = {out->strides, in->strides};
  const OffsetCalculator<2> out_calc = MakeOffsetCalculator<2>(out->ndim, out->shape, out_strides);
  const int64_t* rs[1] = {row_strides};
  const OffsetCalculator<1> row_calc = MakeOffsetCalculator<1>(row_ndim, row_sizes, rs);
  const bp_status_t s = DispatchAll(st, [&](auto tag) -> bp_status_t {
    using T = typename decltype(tag)::type;
    const size_t smem = launch.serial ? 0 : launch.cfg.block * sizeof(Partial<OpMath<T>>);
    BP_GPU_LAUNCH(ReduceKernel<T>, launch.cfg.grid, launch.cfg.block, smem, StreamOf(call))
    (num_out, row_len, out_calc, row_calc, static_cast<void*>(DataPtr<char>(out)),
     DataPtr<const T>(in), op, launch.serial ? 1 : 0);
    return BP_STATUS_OK;
  });
  if (s != BP_STATUS_OK) return KernelError(call, s, "internal dtype dispatch failure");
  return CheckLaunch(call, "ReduceKernel");
}

}  // namespace bp_gpu
