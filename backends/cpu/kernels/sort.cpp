// topk: each lane along `dim` is gathered as (value, index) pairs, the k
// best are moved to the front with std::partial_sort and written sorted.
// NaN counts as larger than every number (as torch); equal values keep the
// lower index first.
#include <algorithm>
#include <utility>
#include <vector>

#include "backplane/op_args.h"
#include "common.h"

namespace bp_cpu {
namespace {

template <typename T>
void TopkLoop(const DLTensor& x, const DLTensor& values, const DLTensor& indices, int dim, int64_t k, bool largest) {
  using C = opmath_t<T>;
  const int nd = x.ndim;
  const int64_t len = nd > 0 ? x.shape[dim] : 1;
  const int64_t xs = nd > 0 ? x.strides[dim] : 0;
  const int64_t vs = nd > 0 ? values.strides[dim] : 0, is = nd > 0 ? indices.strides[dim] : 0;
  // The lanes: every position of the other dims.
  int64_t lanes = 1;
  for (int d = 0; d < nd; ++d) lanes *= d == dim ? 1 : x.shape[d];
  auto better = [largest](const std::pair<C, int64_t>& a, const std::pair<C, int64_t>& b) {
    const bool an = a.first != a.first, bn = b.first != b.first;
    if (an || bn) {
      if (an && bn) return a.second < b.second;
      return largest ? an : bn;  // NaN is the largest value
    }
    if (a.first != b.first) return largest ? a.first > b.first : a.first < b.first;
    return a.second < b.second;
  };
  ParallelFor(lanes, lanes * len, [&](int64_t lo, int64_t hi) {
    std::vector<std::pair<C, int64_t>> lane(static_cast<size_t>(len));
    for (int64_t l = lo; l < hi; ++l) {
      // Offsets of lane l in x, values and indices (row-major over the other dims).
      int64_t rest = l, xo = 0, vo = 0, io = 0;
      for (int d = nd - 1; d >= 0; --d) {
        if (d == dim) continue;
        const int64_t i = rest % x.shape[d];
        rest /= x.shape[d];
        xo += i * x.strides[d];
        vo += i * values.strides[d];
        io += i * indices.strides[d];
      }
      const T* xp = reinterpret_cast<const T*>(DataPtr(x)) + xo;
      for (int64_t j = 0; j < len; ++j) lane[static_cast<size_t>(j)] = {static_cast<C>(Load(xp[j * xs])), j};
      std::partial_sort(lane.begin(), lane.begin() + k, lane.end(), better);
      T* vp = reinterpret_cast<T*>(DataPtr(values)) + vo;
      int64_t* ip = reinterpret_cast<int64_t*>(DataPtr(indices)) + io;
      for (int64_t j = 0; j < k; ++j) {
        vp[j * vs] = Store<T>(lane[static_cast<size_t>(j)].first);
        ip[j * is] = lane[static_cast<size_t>(j)].second;
      }
    }
  });
}

bp_status_t Topk(const bp_kernel_call_t* call) {
  const DLTensor* x = bp_kit_tensor_arg(call, BP_ARG_TOPK_SELF);
  if (x == nullptr || call->num_outputs < 2 || DtypeOf(call->outputs[1]->dtype) != DType::kInt64 ||
      DtypeOf(call->outputs[0]->dtype) != DtypeOf(x->dtype))
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "expected 'self', values of its dtype and int64 indices");
  const int64_t k = bp_kit_int_arg(call, BP_ARG_TOPK_K, -1);
  const int64_t dim = bp_kit_int_arg(call, BP_ARG_TOPK_DIM, -1);
  const int64_t len = x->ndim > 0 && dim >= 0 && dim < x->ndim ? x->shape[dim] : 1;
  if (dim < 0 || dim >= (x->ndim > 0 ? x->ndim : 1) || k < 0 || k > len)
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "expected a normalized dim and 0 <= k <= size(dim)");
  const bool largest = bp_kit_bool_arg(call, BP_ARG_TOPK_LARGEST, true);
  if (Numel(*call->outputs[0]) == 0) return BP_STATUS_OK;
  const DType dt = DtypeOf(x->dtype);
  if (dt == DType::kInvalid) return FailDtype(call, *x);
  return Dispatch(dt, BP_STATUS_INTERNAL, [&](auto tag) -> bp_status_t {
    using T = typename decltype(tag)::type;
    TopkLoop<T>(*x, *call->outputs[0], *call->outputs[1], static_cast<int>(dim), k, largest);
    return BP_STATUS_OK;
  });
}

const KernelDef kKernels[] = {
    {BP_OP_TOPK, Topk, nullptr},
};

}  // namespace

const KernelDef* SortKernels(size_t* count) {
  *count = sizeof(kKernels) / sizeof(kKernels[0]);
  return kKernels;
}

}  // namespace bp_cpu
