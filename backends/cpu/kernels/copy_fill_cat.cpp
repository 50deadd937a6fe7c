// copy_ (any strides, any dtype pair), fill_ and cat.
#include <cstring>

#include "common.h"
#include "parallel.h"
#include "transpose.h"

namespace bp_cpu {

namespace {

bool SameLayoutContiguous(const DLTensor& a, const DLTensor& b) {
  int64_t expect = 1;
  for (int d = a.ndim - 1; d >= 0; --d) {
    if (a.shape[d] != 1 && (a.strides[d] != expect || b.strides[d] != expect)) return false;
    expect *= a.shape[d];
  }
  return true;
}

}  // namespace

bp_status_t CopyTensor(const DLTensor& dst, const DLTensor& src) {
  const DType dd = DtypeOf(dst.dtype), sd = DtypeOf(src.dtype);
  if (dd == DType::kInvalid || sd == DType::kInvalid) return BP_STATUS_UNIMPLEMENTED;
  const int64_t n = Numel(dst);
  if (n == 0) return BP_STATUS_OK;
  if (dd == sd && SameLayoutContiguous(dst, src)) {
    const size_t bytes = static_cast<size_t>(n * ItemSize(dst));
    char* d = DataPtr(dst);
    const char* s = DataPtr(src);
    if (n < kParallelGrain || omp_get_max_threads() == 1) {
      std::memmove(d, s, bytes);
    } else {
      ParallelRegion([&](int64_t ti, int64_t nti) {
        const size_t t = static_cast<size_t>(ti), nt = static_cast<size_t>(nti);
        const size_t lo = bytes * t / nt, hi = bytes * (t + 1) / nt;
        std::memcpy(d + lo, s + lo, hi - lo);
      });
    }
    return BP_STATUS_OK;
  }
  if (dd == sd && TryTiledTransposeCopy(dst, src)) return BP_STATUS_OK;
  return Dispatch(dd, BP_STATUS_INTERNAL, [&](auto dtag) -> bp_status_t {
    using To = typename decltype(dtag)::type;
    return Dispatch(sd, BP_STATUS_INTERNAL, [&](auto stag) -> bp_status_t {
      using From = typename decltype(stag)::type;
      const DLTensor* ops[2] = {&dst, &src};
      if constexpr (std::is_same<To, From>::value) {
        // Same dtype: move the stored bits (keeps NaN payloads, no rounding).
        RunOps(ops, [](char* const* p, const int64_t* s, int64_t k) {
          if (s[0] == sizeof(To) && s[1] == sizeof(To)) {
            std::memcpy(p[0], p[1], static_cast<size_t>(k) * sizeof(To));
            return;
          }
          for (int64_t i = 0; i < k; ++i)
            std::memcpy(p[0] + i * s[0], p[1] + i * s[1], sizeof(To));
        });
      } else {
        UnaryLoop<To, From>(dst, src, [](opmath_t<From> x) { return x; });
      }
      return BP_STATUS_OK;
    });
  });
}

namespace {

bp_status_t Copy(const bp_kernel_call_t* call) {
  const DLTensor* src = bp_kit_tensor_arg(call, BP_ARG_COPY__SRC);
  DLTensor* out = call->outputs[0];
  if (src == nullptr) return Fail(call, BP_STATUS_INVALID_ARGUMENT, "argument 'src' expected a tensor");
  const bp_status_t st = CopyTensor(*out, *src);
  if (st == BP_STATUS_UNIMPLEMENTED)
    return Fail(call, st, "no conversion from %s to %s", DtypeName(DtypeOf(src->dtype)),
                DtypeName(DtypeOf(out->dtype)));
  return st;
}

bp_status_t Fill(const bp_kernel_call_t* call) {
  DLTensor* out = call->outputs[0];
  const DType dt = DtypeOf(out->dtype);
  if (dt == DType::kInvalid) return FailDtype(call, *out);
  if (bp_kit_arg(call, BP_ARG_FILL__SCALAR_VALUE)->kind == BP_VALUE_NONE)
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "argument 'value' expected a scalar");
  return Dispatch(dt, BP_STATUS_INTERNAL, [&](auto tag) -> bp_status_t {
    using T = typename decltype(tag)::type;
    const T v = ScalarToStorage<T>(call, BP_ARG_FILL__SCALAR_VALUE);
    const DLTensor* ops[1] = {out};
    RunOps(ops, [v](char* const* p, const int64_t* s, int64_t n) {
      if (s[0] == sizeof(T)) {
        T* o = reinterpret_cast<T*>(p[0]);
        for (int64_t i = 0; i < n; ++i) o[i] = v;
      } else {
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p[0] + i * s[0]) = v;
      }
    });
    return BP_STATUS_OK;
  });
}

bp_status_t Cat(const bp_kernel_call_t* call) {
  const bp_kernel_arg_t* list = bp_kit_arg(call, BP_ARG_CAT_TENSORS);
  DLTensor* out = call->outputs[0];
  if (list->kind != BP_VALUE_TENSOR_LIST)
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "argument 'tensors' expected a tensor list");
  const int64_t dim = bp_kit_int_arg(call, BP_ARG_CAT_DIM, 0);
  if (dim < 0 || dim >= out->ndim)
    return Fail(call, BP_STATUS_OUT_OF_RANGE, "argument 'dim' %lld out of range for rank %d",
                static_cast<long long>(dim), out->ndim);
  int64_t offset = 0;
  int64_t shape[BP_MAX_NDIM];
  for (int64_t i = 0; i < list->u.tensor_list.size; ++i) {
    const DLTensor* in = list->u.tensor_list.data[i];
    if (in->ndim != out->ndim) continue;  // legacy empty 1-D inputs (the core removes them)
    // The slice of `out` this input fills: same strides, narrowed along dim.
    DLTensor view = *out;
    for (int d = 0; d < out->ndim; ++d) shape[d] = out->shape[d];
    shape[dim] = in->shape[dim];
    view.shape = shape;
    view.byte_offset = out->byte_offset + static_cast<uint64_t>(offset * out->strides[dim] * ItemSize(*out));
    const bp_status_t st = CopyTensor(view, *in);
    if (st != BP_STATUS_OK)
      return Fail(call, st, "input %lld: cannot copy %s into %s", static_cast<long long>(i),
                  DtypeName(DtypeOf(in->dtype)), DtypeName(DtypeOf(out->dtype)));
    offset += in->shape[dim];
  }
  return BP_STATUS_OK;
}

const KernelDef kKernels[] = {
    {BP_OP_COPY_, Copy, nullptr},
    {BP_OP_FILL__SCALAR, Fill, nullptr},
    {BP_OP_CAT, Cat, nullptr},
};

}  // namespace

const KernelDef* CopyFillCatKernels(size_t* count) {
  *count = sizeof(kKernels) / sizeof(kKernels[0]);
  return kKernels;
}

}  // namespace bp_cpu
