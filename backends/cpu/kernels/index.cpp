// index_select: the indices are read and checked first (nothing is written
// when one is out of range), then each selected slice of self is copied into
// its slice of the output (a view with `dim` dropped; CopyTensor takes any
// strides).
#include <vector>

#include "backplane/op_args.h"
#include "common.h"

namespace bp_cpu {
namespace {

// t without dimension `dim`, positioned at index i of it.
DLTensor SliceAt(const DLTensor& t, int dim, int64_t i, int64_t* shape, int64_t* strides) {
  DLTensor s = t;
  int k = 0;
  for (int d = 0; d < t.ndim; ++d) {
    if (d == dim) continue;
    shape[k] = t.shape[d];
    strides[k] = t.strides[d];
    ++k;
  }
  s.ndim = t.ndim - 1;
  s.shape = shape;
  s.strides = strides;
  s.byte_offset = t.byte_offset + static_cast<uint64_t>(i * t.strides[dim] * ItemSize(t));
  return s;
}

bp_status_t IndexSelect(const bp_kernel_call_t* call) {
  const DLTensor* self = bp_kit_tensor_arg(call, BP_ARG_INDEX_SELECT_SELF);
  const DLTensor* index = bp_kit_tensor_arg(call, BP_ARG_INDEX_SELECT_INDEX);
  DLTensor* out = call->outputs[0];
  const int64_t dim = bp_kit_int_arg(call, BP_ARG_INDEX_SELECT_DIM, -1);
  if (self == nullptr || index == nullptr || index->ndim > 1 || self->ndim != out->ndim ||
      DtypeOf(self->dtype) != DtypeOf(out->dtype) || dim < 0 || dim >= (self->ndim > 0 ? self->ndim : 1))
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "expected 'self', a normalized dim and a 0-D or 1-D 'index'");
  const DType it = DtypeOf(index->dtype);
  if (it != DType::kInt64 && it != DType::kInt32) return FailDtype(call, *index);
  const int64_t count = Numel(*index);
  const int64_t size = self->ndim > 0 ? self->shape[dim] : 1;
  const int64_t step = index->ndim > 0 ? index->strides[0] : 0;
  std::vector<int64_t> idx(static_cast<size_t>(count));
  for (int64_t j = 0; j < count; ++j) {
    const char* p = DataPtr(*index) + j * step * ItemSize(*index);
    const int64_t v = it == DType::kInt64 ? *reinterpret_cast<const int64_t*>(p) : *reinterpret_cast<const int32_t*>(p);
    if (v < 0 || v >= size) {
      return Fail(call, BP_STATUS_INVALID_ARGUMENT,
                  "argument 'index' holds %lld at position %lld; expected an index in [0, %lld) for dim %lld",
                  static_cast<long long>(v), static_cast<long long>(j), static_cast<long long>(size),
                  static_cast<long long>(dim));
    }
    idx[static_cast<size_t>(j)] = v;
  }
  if (self->ndim == 0) return CopyTensor(*out, *self);
  int64_t shape_s[BP_MAX_NDIM], strides_s[BP_MAX_NDIM], shape_o[BP_MAX_NDIM], strides_o[BP_MAX_NDIM];
  const int d = static_cast<int>(dim);
  for (int64_t j = 0; j < count; ++j) {
    const DLTensor src = SliceAt(*self, d, idx[static_cast<size_t>(j)], shape_s, strides_s);
    const DLTensor dst = SliceAt(*out, d, j, shape_o, strides_o);
    const bp_status_t st = CopyTensor(dst, src);
    if (st != BP_STATUS_OK) return FailDtype(call, *out);
  }
  return BP_STATUS_OK;
}

const KernelDef kKernels[] = {
    {BP_OP_INDEX_SELECT, IndexSelect, nullptr},
};

}  // namespace

const KernelDef* IndexKernels(size_t* count) {
  *count = sizeof(kKernels) / sizeof(kKernels[0]);
  return kKernels;
}

}  // namespace bp_cpu
