// gather, scatter.src and scatter_reduce.two. Every index is read and checked
// first (nothing is written when one is out of range); then each index
// element moves one element (gather, scatter: bytes copied, any dtype) or
// combines it (scatter_reduce: in the opmath type, rounded once at the end).
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "backplane/op_args.h"
#include "common.h"

namespace bp_cpu {
namespace {

// Reads index (int32/int64, any strides) row-major and checks each value is
// in [0, bound). Fails naming the value, its position and the bound.
bp_status_t ReadIndex(const bp_kernel_call_t* call, const DLTensor& index, int64_t bound, int64_t dim,
                      std::vector<int64_t>* out) {
  const DType it = DtypeOf(index.dtype);
  if (it != DType::kInt64 && it != DType::kInt32) return FailDtype(call, index);
  const int64_t n = Numel(index);
  out->resize(static_cast<size_t>(n));
  int64_t coord[BP_MAX_NDIM] = {};
  for (int64_t j = 0; j < n; ++j) {
    int64_t off = 0;
    for (int d = 0; d < index.ndim; ++d) off += coord[d] * index.strides[d];
    const char* p = DataPtr(index) + off * ItemSize(index);
    const int64_t v = it == DType::kInt64 ? *reinterpret_cast<const int64_t*>(p) : *reinterpret_cast<const int32_t*>(p);
    if (v < 0 || v >= bound) {
      return Fail(call, BP_STATUS_INVALID_ARGUMENT,
                  "argument 'index' holds %lld at position %lld; expected an index in [0, %lld) for dim %lld",
                  static_cast<long long>(v), static_cast<long long>(j), static_cast<long long>(bound),
                  static_cast<long long>(dim));
    }
    (*out)[static_cast<size_t>(j)] = v;
    for (int d = index.ndim - 1; d >= 0; --d) {
      if (++coord[d] < index.shape[d]) break;
      coord[d] = 0;
    }
  }
  return BP_STATUS_OK;
}

// Calls f(j, moved, same) for each index element j (row-major): `moved` is
// the element offset in `t` at j's coordinates with `dim` set to idx[j],
// `same` the offset in `u` at j's coordinates (u may be t).
template <typename F>
void ForEach(const DLTensor& index, const DLTensor& t, const DLTensor& u, int dim, const std::vector<int64_t>& idx,
             F f) {
  int64_t coord[BP_MAX_NDIM] = {};
  const int64_t n = static_cast<int64_t>(idx.size());
  for (int64_t j = 0; j < n; ++j) {
    int64_t moved = 0, same = 0;
    for (int d = 0; d < index.ndim; ++d) {
      moved += (d == dim ? idx[static_cast<size_t>(j)] : coord[d]) * (t.ndim > 0 ? t.strides[d] : 0);
      same += coord[d] * (u.ndim > 0 ? u.strides[d] : 0);
    }
    if (index.ndim == 0 && t.ndim > 0) moved = idx[static_cast<size_t>(j)] * t.strides[0];
    f(j, moved, same);
    for (int d = index.ndim - 1; d >= 0; --d) {
      if (++coord[d] < index.shape[d]) break;
      coord[d] = 0;
    }
  }
}

int64_t SizeAt(const DLTensor& t, int64_t d) { return t.ndim > 0 ? t.shape[d] : 1; }

bp_status_t Gather(const bp_kernel_call_t* call) {
  const DLTensor* self = bp_kit_tensor_arg(call, BP_ARG_GATHER_SELF);
  const DLTensor* index = bp_kit_tensor_arg(call, BP_ARG_GATHER_INDEX);
  DLTensor* out = call->outputs[0];
  const int64_t dim = bp_kit_int_arg(call, BP_ARG_GATHER_DIM, -1);
  if (self == nullptr || index == nullptr || out->ndim != index->ndim || DtypeOf(self->dtype) != DtypeOf(out->dtype) ||
      dim < 0 || dim >= (self->ndim > 0 ? self->ndim : 1))
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "expected 'self', a normalized dim and an 'index' of out's sizes");
  std::vector<int64_t> idx;
  const bp_status_t st = ReadIndex(call, *index, SizeAt(*self, dim), dim, &idx);
  if (st != BP_STATUS_OK) return st;
  const int64_t es = ItemSize(*out);
  const char* src = DataPtr(*self);
  char* dst = DataPtr(*out);
  ForEach(*index, *self, *out, static_cast<int>(dim), idx, [&](int64_t, int64_t moved, int64_t same) {
    std::memcpy(dst + same * es, src + moved * es, static_cast<size_t>(es));
  });
  return BP_STATUS_OK;
}

enum class Reduce { kNone, kSum, kProd, kAmax, kAmin };

template <typename V>
V Combine(Reduce r, V a, V b) {
  if constexpr (std::is_floating_point<V>::value) {
    if ((r == Reduce::kAmax || r == Reduce::kAmin) && (std::isnan(a) || std::isnan(b))) return a + b;
  }
  if constexpr (std::is_integral<V>::value) {
    // Integers wrap as torch's do (unsigned arithmetic, no overflow UB).
    using U = std::make_unsigned_t<V>;
    if (r == Reduce::kSum) return static_cast<V>(static_cast<U>(a) + static_cast<U>(b));
    if (r == Reduce::kProd) return static_cast<V>(static_cast<U>(a) * static_cast<U>(b));
  }
  switch (r) {
    case Reduce::kSum:
      return a + b;
    case Reduce::kProd:
      return a * b;
    case Reduce::kAmax:
      return a > b ? a : b;
    case Reduce::kAmin:
      return a < b ? a : b;
    default:
      return b;
  }
}

bp_status_t ScatterImpl(const bp_kernel_call_t* call, Reduce reduce, bool include_self) {
  // scatter.src and scatter_reduce.two share their first four arguments.
  const DLTensor* self = bp_kit_tensor_arg(call, BP_ARG_SCATTER_SRC_SELF);
  const DLTensor* index = bp_kit_tensor_arg(call, BP_ARG_SCATTER_SRC_INDEX);
  const DLTensor* src = bp_kit_tensor_arg(call, BP_ARG_SCATTER_SRC_SRC);
  DLTensor* out = call->outputs[0];
  const int64_t dim = bp_kit_int_arg(call, BP_ARG_SCATTER_SRC_DIM, -1);
  if (self == nullptr || index == nullptr || src == nullptr || out->ndim != self->ndim ||
      DtypeOf(self->dtype) != DtypeOf(out->dtype) || DtypeOf(src->dtype) != DtypeOf(out->dtype) || dim < 0 ||
      dim >= (self->ndim > 0 ? self->ndim : 1))
    return Fail(call, BP_STATUS_INVALID_ARGUMENT,
                "expected 'self', a normalized dim, 'index' and 'src' of self's dtype");
  std::vector<int64_t> idx;
  if (DtypeOf(out->dtype) == DType::kInvalid) return FailDtype(call, *out);
  bp_status_t st = ReadIndex(call, *index, SizeAt(*self, dim), dim, &idx);
  if (st != BP_STATUS_OK) return st;
  st = CopyTensor(*out, *self);
  if (st != BP_STATUS_OK) return FailDtype(call, *out);
  const int d = static_cast<int>(dim);
  char* dst = DataPtr(*out);
  const char* from = DataPtr(*src);
  if (reduce == Reduce::kNone) {
    const int64_t es = ItemSize(*out);
    ForEach(*index, *out, *src, d, idx, [&](int64_t, int64_t moved, int64_t same) {
      std::memcpy(dst + moved * es, from + same * es, static_cast<size_t>(es));
    });
    return BP_STATUS_OK;
  }
  return Dispatch(DtypeOf(out->dtype), BP_STATUS_INTERNAL, [&](auto tag) -> bp_status_t {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same<T, bool>::value) {
      return FailDtype(call, *out);
    } else {
      // Each element reached combines in opmath_t (float for float16 and
      // bfloat16) and is rounded once at the end. include_self=False: the
      // first value landing on an element replaces self's.
      std::unordered_map<int64_t, opmath_t<T>> acc;
      T* o = reinterpret_cast<T*>(dst);
      const T* s = reinterpret_cast<const T*>(from);
      ForEach(*index, *out, *src, d, idx, [&](int64_t, int64_t moved, int64_t same) {
        const opmath_t<T> v = Load(s[same]);
        auto it = acc.find(moved);
        if (it == acc.end()) {
          acc.emplace(moved, include_self ? Combine(reduce, Load(o[moved]), v) : v);
        } else {
          it->second = Combine(reduce, it->second, v);
        }
      });
      for (const auto& kv : acc) o[kv.first] = Store<T>(kv.second);
      return BP_STATUS_OK;
    }
  });
}

bp_status_t Scatter(const bp_kernel_call_t* call) { return ScatterImpl(call, Reduce::kNone, true); }

bp_status_t ScatterReduce(const bp_kernel_call_t* call) {
  const char* r = bp_kit_string_arg(call, BP_ARG_SCATTER_REDUCE_TWO_REDUCE);
  const std::string mode = r != nullptr ? r : "";
  const Reduce red = mode == "sum"    ? Reduce::kSum
                     : mode == "prod" ? Reduce::kProd
                     : mode == "amax" ? Reduce::kAmax
                     : mode == "amin" ? Reduce::kAmin
                                      : Reduce::kNone;
  if (red == Reduce::kNone)
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "argument 'reduce': expected 'sum', 'prod', 'amax' or 'amin'");
  return ScatterImpl(call, red, bp_kit_bool_arg(call, BP_ARG_SCATTER_REDUCE_TWO_INCLUDE_SELF, true));
}

const KernelDef kKernels[] = {
    {BP_OP_GATHER, Gather, nullptr},
    {BP_OP_SCATTER_SRC, Scatter, nullptr},
    {BP_OP_SCATTER_REDUCE_TWO, ScatterReduce, nullptr},
};

}  // namespace

const KernelDef* GatherScatterKernels(size_t* count) {
  *count = sizeof(kKernels) / sizeof(kKernels[0]);
  return kKernels;
}

}  // namespace bp_cpu
