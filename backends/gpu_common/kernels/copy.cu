// Data movement: fill_, copy_ (broadcast, strides, dtype conversion), cat.
//
// Same-dtype moves are instantiated per element width only (4 kernels).
// Conversions use one kernel whose load and store switch on run-time dtype
// ids: 9 x 9 typed kernels would multiply compile time for a memory-bound
// loop. Integer-to-integer conversions go through int64 (exact, wrapping like
// C casts); anything involving a float goes through double.
#include <cstring>

#include "dtype_fill.h"
#include "kernel_util.h"
#include "kernels.h"

namespace bp_gpu {
namespace {

template <typename U>
__global__ void FillKernel(int64_t n, OffsetCalculator<1> calc, U* out, U value) {
  BP_GRID_STRIDE_LOOP(i, n) {
    int64_t off[1];
    calc.get(i, off);
    out[off[0]] = value;
  }
}

template <typename U>
__global__ void StridedCopyKernel(int64_t n, OffsetCalculator<2> calc, U* out, const U* in) {
  BP_GRID_STRIDE_LOOP(i, n) {
    int64_t off[2];
    calc.get(i, off);
    out[off[0]] = in[off[1]];
  }
}

__device__ inline double LoadAsDouble(const char* p, int32_t st) {
  switch (static_cast<DType>(st)) {
    case DType::kBool:
      return *reinterpret_cast<const bool*>(p) ? 1.0 : 0.0;
    case DType::kUInt8:
      return *reinterpret_cast<const uint8_t*>(p);
    case DType::kInt8:
      return *reinterpret_cast<const int8_t*>(p);
    case DType::kInt32:
      return *reinterpret_cast<const int32_t*>(p);
    case DType::kInt64:
      return static_cast<double>(*reinterpret_cast<const int64_t*>(p));
    case DType::kFloat16:
      return Load(reinterpret_cast<const Half*>(p));
    case DType::kBFloat16:
      return Load(reinterpret_cast<const BFloat16*>(p));
    case DType::kFloat32:
      return *reinterpret_cast<const float*>(p);
    case DType::kFloat64:
      return *reinterpret_cast<const double*>(p);
    default:
      return 0.0;
  }
}

__device__ inline int64_t LoadAsInt(const char* p, int32_t st) {
  switch (static_cast<DType>(st)) {
    case DType::kBool:
      return *reinterpret_cast<const bool*>(p) ? 1 : 0;
    case DType::kUInt8:
      return *reinterpret_cast<const uint8_t*>(p);
    case DType::kInt8:
      return *reinterpret_cast<const int8_t*>(p);
    case DType::kInt32:
      return *reinterpret_cast<const int32_t*>(p);
    case DType::kInt64:
      return *reinterpret_cast<const int64_t*>(p);
    default:
      return 0;
  }
}

template <typename V>
__device__ inline void StoreAs(char* p, int32_t st, V v) {
  switch (static_cast<DType>(st)) {
    case DType::kBool:
      Store(reinterpret_cast<bool*>(p), v);
      break;
    // Floating values reach integers through int64 (C-style truncation).
    case DType::kUInt8:
      Store(reinterpret_cast<uint8_t*>(p), static_cast<int64_t>(v));
      break;
    case DType::kInt8:
      Store(reinterpret_cast<int8_t*>(p), static_cast<int64_t>(v));
      break;
    case DType::kInt32:
      Store(reinterpret_cast<int32_t*>(p), static_cast<int64_t>(v));
      break;
    case DType::kInt64:
      Store(reinterpret_cast<int64_t*>(p), static_cast<int64_t>(v));
      break;
    case DType::kFloat16:
      Store(reinterpret_cast<Half*>(p), v);
      break;
    case DType::kBFloat16:
      Store(reinterpret_cast<BFloat16*>(p), v);
      break;
    case DType::kFloat32:
      Store(reinterpret_cast<float*>(p), v);
      break;
    case DType::kFloat64:
      Store(reinterpret_cast<double*>(p), v);
      break;
    default:
      break;
  }
}

// Offsets are in elements of each operand's own dtype.
__global__ void ConvertKernel(int64_t n, OffsetCalculator<2> calc, char* out, int32_t out_st,
                              int32_t out_size, const char* in, int32_t in_st, int32_t in_size,
                              int32_t via_int) {
  BP_GRID_STRIDE_LOOP(i, n) {
    int64_t off[2];
    calc.get(i, off);
    char* dst = out + off[0] * out_size;
    const char* src = in + off[1] * in_size;
    if (via_int) {
      StoreAs(dst, out_st, LoadAsInt(src, in_st));
    } else {
      StoreAs(dst, out_st, LoadAsDouble(src, in_st));
    }
  }
}

bool IsIntegralOrBool(DType s) { return !bp_kit::IsFloating(s); }

// Copies `src` (broadcast to `dst`'s sizes by its strides) into `dst`.
bp_status_t LaunchCopy(const bp_kernel_call_t* call, const DLTensor* dst, const DLTensor* src) {
  DType dst_st = DType::kInvalid, src_st = DType::kInvalid;
  if (bp_status_t s = CheckDtype(call, "self", dst, true, true, &dst_st)) return s;
  if (bp_status_t s = CheckDtype(call, "src", src, true, true, &src_st)) return s;
  const int64_t n = TensorNumel(dst);
  const LaunchConfig cfg = PointwiseLaunch(n, SmCount(call));
  if (cfg.grid == 0) return BP_STATUS_OK;
  const int64_t* strides[2] = {dst->strides, src->strides};
  const OffsetCalculator<2> calc = MakeOffsetCalculator<2>(dst->ndim, dst->shape, strides);
  gpuStream_t stream = StreamOf(call);
  if (dst_st == src_st) {
    if (calc.contiguous) {
      // One DMA-engine copy beats a kernel for dense same-dtype data.
      gpuError_t e = gpuMemcpyAsync(DataPtr<char>(dst), DataPtr<const char>(src),
                                    static_cast<size_t>(n) * DtypeSize(dst_st), gpuMemcpyDeviceToDevice, stream);
      if (e != gpuSuccess) {
        return KernelError(call, BP_STATUS_INTERNAL, BP_GPU_PREFIX "MemcpyAsync: %s",
                           gpuGetErrorString(e));
      }
      return BP_STATUS_OK;
    }
    const bp_status_t s = DispatchBySize(static_cast<int>(DtypeSize(dst_st)), [&](auto tag) -> bp_status_t {
      using U = typename decltype(tag)::type;
      BP_GPU_LAUNCH(StridedCopyKernel<U>, cfg.grid, cfg.block, 0, stream)
      (n, calc, DataPtr<U>(dst), DataPtr<const U>(src));
      return BP_STATUS_OK;
    });
    if (s != BP_STATUS_OK) return KernelError(call, s, "internal dtype dispatch failure");
    return CheckLaunch(call, "StridedCopyKernel");
  }
  const int32_t via_int = IsIntegralOrBool(dst_st) && IsIntegralOrBool(src_st) ? 1 : 0;
  BP_GPU_LAUNCH(ConvertKernel, cfg.grid, cfg.block, 0, stream)
  (n, calc, DataPtr<char>(dst), static_cast<int32_t>(dst_st), static_cast<int>(DtypeSize(dst_st)),
   DataPtr<const char>(src), static_cast<int32_t>(src_st), static_cast<int>(DtypeSize(src_st)), via_int);
  return CheckLaunch(call, "ConvertKernel");
}

}  // namespace

bp_status_t CopyInto(const bp_kernel_call_t* call, const DLTensor* dst, const DLTensor* src) {
  return LaunchCopy(call, dst, src);
}

bp_status_t FillEntry(const bp_kernel_call_t* call) {
  if (call->num_outputs < 1) {
    return KernelError(call, BP_STATUS_INVALID_ARGUMENT, "expected the tensor self as output");
  }
  const DLTensor* out = call->outputs[0];
  DType st = DType::kInvalid;
  if (bp_status_t s = CheckDtype(call, "self", out, true, true, &st)) return s;
  const ScalarValue v = ScalarArg(call, BP_ARG_FILL__SCALAR_VALUE, 0.0);
  const uint64_t pattern = FillPattern(st, v.is_floating, v.d, v.i);
  const int64_t n = TensorNumel(out);
  const LaunchConfig cfg = PointwiseLaunch(n, SmCount(call));
  if (cfg.grid == 0) return BP_STATUS_OK;
  if (bp_status_t s = EnterDevice(call)) return s;
  const int64_t* strides[1] = {out->strides};
  const OffsetCalculator<1> calc = MakeOffsetCalculator<1>(out->ndim, out->shape, strides);
  const bp_status_t s = DispatchBySize(static_cast<int>(DtypeSize(st)), [&](auto tag) -> bp_status_t {
    using U = typename decltype(tag)::type;
    U value;
    std::memcpy(&value, &pattern, sizeof value);  // little-endian: the low bytes
    BP_GPU_LAUNCH(FillKernel<U>, cfg.grid, cfg.block, 0, StreamOf(call))
    (n, calc, DataPtr<U>(out), value);
    return BP_STATUS_OK;
  });
  if (s != BP_STATUS_OK) return KernelError(call, s, "internal dtype dispatch failure");
  return CheckLaunch(call, "FillKernel");
}

bp_status_t CopyEntry(const bp_kernel_call_t* call) {
  const DLTensor* src = bp_kit_tensor_arg(call, BP_ARG_COPY__SRC);
  if (!src || call->num_outputs < 1) {
    return KernelError(call, BP_STATUS_INVALID_ARGUMENT, "expected tensors self and src");
  }
  if (bp_status_t s = EnterDevice(call)) return s;
  return LaunchCopy(call, call->outputs[0], src);
}

bp_status_t CatEntry(const bp_kernel_call_t* call) {
  if (call->num_args < BP_NARGS_CAT || call->args[BP_ARG_CAT_TENSORS].kind != BP_VALUE_TENSOR_LIST ||
      call->args[BP_ARG_CAT_DIM].kind != BP_VALUE_INT || call->num_outputs < 1) {
    return KernelError(call, BP_STATUS_INVALID_ARGUMENT,
                       "expected a tensor list 'tensors', an int 'dim' and an output");
  }
  const DLTensor* out = call->outputs[0];
  const int64_t dim = call->args[BP_ARG_CAT_DIM].u.i;
  if (dim < 0 || dim >= out->ndim) {
    return KernelError(call, BP_STATUS_OUT_OF_RANGE,
                       "argument 'dim' = %lld is out of range for rank %d",
                       static_cast<long long>(dim), out->ndim);
  }
  const auto& list = call->args[BP_ARG_CAT_TENSORS].u.tensor_list;
  for (int64_t k = 0; k < list.size; ++k) {
    if (bp_status_t s = RequireSameDtype(call, out, "out", list.data[k], "tensors")) return s;
  }
  if (bp_status_t s = EnterDevice(call)) return s;
  int64_t start = 0;
  for (int64_t k = 0; k < list.size; ++k) {
    const DLTensor* in = list.data[k];
    if (in->ndim != out->ndim) continue;  // empty legacy 1-D inputs (the core removes them)
    // The slice of `out` this input fills: same strides, offset along dim.
    DLTensor slice = *out;
    int64_t shape[kMaxDims];
    for (int d = 0; d < out->ndim; ++d) shape[d] = out->shape[d];
    shape[dim] = in->shape[dim];
    slice.shape = shape;
    slice.byte_offset = out->byte_offset + static_cast<uint64_t>(start * out->strides[dim]) *
                                               static_cast<uint64_t>((out->dtype.bits + 7) / 8);
    if (bp_status_t s = LaunchCopy(call, &slice, in)) return s;
    start += in->shape[dim];
  }
  return BP_STATUS_OK;
}

}  // namespace bp_gpu
