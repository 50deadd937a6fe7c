// Reductions: sum, mean, prod, amax, amin, argmax over any set of dims. The output
// comes with keepdim sizes (1 in reduced dims). Floating sums accumulate in
// double (float16/bfloat16/float32 as well), integer sums in int64.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "common.h"
#include "parallel.h"
#include "simd.h"

namespace bp_cpu {
namespace {

template <typename T>
using SumAcc = std::conditional_t<kIsFloating<T>, double, int64_t>;

// Each reducer: A (accumulator), Init(), Step(a, x, index), Combine(earlier,
// later), and Finish(a, count) -> the output element.
template <typename T, bool kMean>
struct SumReducer {
  using A = SumAcc<T>;
  using Out = T;
  static constexpr bool kNeedsIndex = false;
  A Init() const { return A(0); }
  void Step(A& a, opmath_t<T> x, int64_t) const { a += static_cast<A>(x); }
  A Combine(A a, A b) const { return a + b; }
  Out Finish(A a, int64_t count) const {
    if constexpr (kMean) {
      return Store<T>(static_cast<double>(a) / static_cast<double>(count));
    } else {
      return Store<T>(a);
    }
  }
};

// prod: floats multiply in double; integers (cast to int64 by the core) in
// uint64, which wraps modulo 2^64 as torch's int64 product does.
template <typename T>
struct ProdReducer {
  using A = std::conditional_t<kIsFloating<T>, double, uint64_t>;
  using Out = T;
  static constexpr bool kNeedsIndex = false;
  A Init() const { return A(1); }
  void Step(A& a, opmath_t<T> x, int64_t) const {
    if constexpr (kIsFloating<T>) {
      a *= static_cast<double>(x);
    } else {
      a *= static_cast<uint64_t>(static_cast<int64_t>(x));
    }
  }
  A Combine(A a, A b) const { return a * b; }
  Out Finish(A a, int64_t) const {
    if constexpr (kIsFloating<T>) {
      return Store<T>(a);
    } else {
      return static_cast<T>(static_cast<int64_t>(a));
    }
  }
};

template <typename T, bool kMax>
struct MinMaxReducer {
  using C = opmath_t<T>;
  using A = C;
  using Out = T;
  static constexpr bool kNeedsIndex = false;
  A Init() const {
    if constexpr (kIsFloating<T>) {
      return kMax ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
    } else {
      return kMax ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
    }
  }
  void Step(A& a, C x, int64_t) const {
    if (a != a) return;  // NaN is sticky
    if (x != x || (kMax ? a < x : x < a)) a = x;
  }
  A Combine(A a, A b) const {
    Step(a, b, 0);
    return a;
  }
  Out Finish(A a, int64_t) const { return Store<T>(a); }
};

template <typename T>
struct ArgMaxReducer {
  using C = opmath_t<T>;
  struct A {
    C v;
    int64_t i;
  };
  using Out = int64_t;
  static constexpr bool kNeedsIndex = true;
  A Init() const { return A{C(0), -1}; }
  // First occurrence of the maximum; the first NaN counts as the maximum.
  void Step(A& a, C x, int64_t i) const {
    if (a.i < 0) {
      a = A{x, i};
      return;
    }
    if (a.v != a.v) return;
    if (x != x || a.v < x) a = A{x, i};
  }
  A Combine(A a, A b) const {
    if (b.i < 0) return a;
    Step(a, b.v, b.i);
    return a;
  }
  Out Finish(A a, int64_t) const { return a.i; }
};

// Sum of a contiguous run with 8 independent accumulators (vectorizable,
// and a little more accurate than one serial chain).
template <typename T, typename A>
A ContiguousSum(const T* x, int64_t n) {
  A acc[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) acc[k] += static_cast<A>(Load(x[i + k]));
  A total = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; i < n; ++i) total += static_cast<A>(Load(x[i]));
  return total;
}

// Sum or mean over dims that leave one kept dim `c` contiguous in x and in
// out (stride 1), every other kept dim of size 1 or dim 0: a global average
// pool of a channels-last [N, C, H, W], for one. Each reduced position adds a
// row of C contiguous values into C accumulators (a loop GCC vectorizes),
// where the generic path walks each output's reduction with stride C.
// False (nothing written) when the layout does not fit.
template <typename T, typename R>
bool SumRows(const DLTensor& x, const DLTensor& out, const bool* reduced, const StridedLoop<1>& inner, int64_t count,
             const R& r) {
  int c = -1;
  for (int d = 0; d < x.ndim; ++d) {
    if (reduced[d] || x.shape[d] == 1) continue;
    if (x.strides[d] == 1 && out.strides[d] == 1 && c < 0) {
      c = d;
    } else if (d != 0) {
      return false;
    }
  }
  if (c <= 0 || count < 2) return false;
  using A = typename R::A;
  using Out = typename R::Out;
  const int64_t C = x.shape[c], N = reduced[0] ? 1 : x.shape[0];
  ParallelFor(C, N * C * count, [&](int64_t lo, int64_t hi) {
    std::vector<A> acc(static_cast<size_t>(hi - lo));
    for (int64_t n = 0; n < N; ++n) {
      std::fill(acc.begin(), acc.end(), A(0));
      char* base = DataPtr(x) + (n * x.strides[0] + lo) * static_cast<int64_t>(sizeof(T));
      inner.ForRangeAt(&base, 0, count, [&](char* const* p, const int64_t* s, int64_t len) {
        if constexpr (std::is_same<T, float>::value && std::is_same<A, double>::value) {
          if (s[0] % static_cast<int64_t>(sizeof(float)) == 0) {
            simd::SumRowsF32(reinterpret_cast<const float*>(p[0]), s[0] / static_cast<int64_t>(sizeof(float)), len,
                             hi - lo, acc.data());
            return;
          }
        }
        for (int64_t i = 0; i < len; ++i) {
          const T* row = reinterpret_cast<const T*>(p[0] + i * s[0]);
          A* a = acc.data();
          for (int64_t k = 0; k < hi - lo; ++k) a[k] += static_cast<A>(Load(row[k]));
        }
      });
      Out* o = reinterpret_cast<Out*>(DataPtr(out)) + n * out.strides[0] + lo;
      for (int64_t k = 0; k < hi - lo; ++k) o[k] = r.Finish(acc[static_cast<size_t>(k)], count);
    }
  });
  return true;
}

template <typename T, typename R>
bp_status_t Reduce(const bp_kernel_call_t* call, const DLTensor& x, const DLTensor& out, const int64_t* dims,
                   int64_t ndims, R r) {
  using A = typename R::A;
  if (out.ndim != x.ndim)
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "output rank %d differs from input rank %d (keepdim sizes expected)",
                out.ndim, x.ndim);
  // Inner loop: the reduced dims of x. Outer loop: every output element.
  bool reduced[BP_MAX_NDIM] = {};
  for (int64_t k = 0; k < ndims; ++k) {
    if (dims[k] < 0 || dims[k] >= x.ndim)
      return Fail(call, BP_STATUS_OUT_OF_RANGE, "dim %lld out of range for rank %d", static_cast<long long>(dims[k]),
                  x.ndim);
    reduced[dims[k]] = true;
  }
  int64_t inner_shape[BP_MAX_NDIM];
  int64_t count = 1;
  for (int d = 0; d < x.ndim; ++d) {
    if (!reduced[d] && out.shape[d] != x.shape[d])
      return Fail(call, BP_STATUS_INVALID_ARGUMENT, "output size %lld at dim %d differs from input size %lld",
                  static_cast<long long>(out.shape[d]), d, static_cast<long long>(x.shape[d]));
    inner_shape[d] = reduced[d] ? x.shape[d] : 1;
    count *= inner_shape[d];
  }
  const int64_t num_out = Numel(out);
  if (num_out == 0) return BP_STATUS_OK;
  if (count == 0 && !std::is_same<R, SumReducer<T, false>>::value && !std::is_same<R, SumReducer<T, true>>::value &&
      !std::is_same<R, ProdReducer<T>>::value)
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "cannot reduce over a zero-size dimension (no identity)");

  const DLTensor* in_ops[1] = {&x};
  StridedLoop<1> inner;
  inner.Init(x.ndim, inner_shape, in_ops, /*sort=*/!R::kNeedsIndex);
  if constexpr (std::is_same<R, SumReducer<T, false>>::value || std::is_same<R, SumReducer<T, true>>::value) {
    if (SumRows<T>(x, out, reduced, inner, count, r)) return BP_STATUS_OK;
  }
  const DLTensor* out_ops[2] = {&out, &x};
  StridedLoop<2> outer;
  outer.Init(out.ndim, out.shape, out_ops);

  using Out = typename R::Out;
  // Reduces inner positions [begin, end) starting at x pointer `base`.
  auto reduce_range = [&](char* base, int64_t begin, int64_t end) {
    A a = r.Init();
    int64_t pos = begin;
    inner.ForRangeAt(&base, begin, end, [&](char* const* p, const int64_t* s, int64_t n) {
      if constexpr (std::is_same<R, SumReducer<T, false>>::value || std::is_same<R, SumReducer<T, true>>::value) {
        if constexpr (std::is_same<T, float>::value) {
          if (s[0] == sizeof(float)) {
            a += static_cast<A>(simd::SumF32(reinterpret_cast<const float*>(p[0]), n));
            pos += n;
            return;
          }
        }
        if (s[0] == sizeof(T)) {
          a += ContiguousSum<T, A>(reinterpret_cast<const T*>(p[0]), n);
          pos += n;
          return;
        }
      }
      for (int64_t i = 0; i < n; ++i) r.Step(a, Load(*reinterpret_cast<const T*>(p[0] + i * s[0])), pos + i);
      pos += n;
    });
    return a;
  };

  const int max_threads = omp_get_max_threads();
  const bool big = num_out * count >= kParallelGrain && max_threads > 1;
  if (big && num_out < max_threads) {
    // Few outputs, long reductions: split each reduction across threads and
    // combine the partial results in order (deterministic).
    std::vector<A> partial(static_cast<size_t>(max_threads));
    outer.ForRange(0, num_out, [&](char* const* p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        char* xb = p[1] + i * s[1];
        int used = 1;
        ParallelRegion([&](int64_t t, int64_t nt) {
          if (t == 0) used = static_cast<int>(nt);
          partial[static_cast<size_t>(t)] = reduce_range(xb, count * t / nt, count * (t + 1) / nt);
        });
        A a = partial[0];
        for (int t = 1; t < used; ++t) a = r.Combine(a, partial[static_cast<size_t>(t)]);
        *reinterpret_cast<Out*>(p[0] + i * s[0]) = r.Finish(a, count);
      }
    });
    return BP_STATUS_OK;
  }
  auto run_outputs = [&](int64_t begin, int64_t end) {
    outer.ForRange(begin, end, [&](char* const* p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<Out*>(p[0] + i * s[0]) = r.Finish(reduce_range(p[1] + i * s[1], 0, count), count);
    });
  };
  if (!big) {
    run_outputs(0, num_out);
  } else {
    ParallelRegion([&](int64_t t, int64_t nt) { run_outputs(num_out * t / nt, num_out * (t + 1) / nt); });
  }
  return BP_STATUS_OK;
}

// dims: the contract's INT_LIST; absent (or an INT) is accepted too.
int64_t Dims(const bp_kernel_call_t* call, const DLTensor& x, int64_t* storage, const int64_t** out) {
  const int64_t n = bp_kit_int_list_arg(call, BP_ARG_SUM_DIM_INTLIST_DIM, out);
  if (n > 0) {
    for (int64_t k = 0; k < n && k < BP_MAX_NDIM; ++k) storage[k] = (*out)[k] < 0 ? (*out)[k] + x.ndim : (*out)[k];
    *out = storage;
    return n < BP_MAX_NDIM ? n : BP_MAX_NDIM;
  }
  for (int d = 0; d < x.ndim; ++d) storage[d] = d;  // all dims
  *out = storage;
  return x.ndim;
}

template <template <typename> class MakeReducer, template <typename> class Allowed>
bp_status_t RunReduce(const bp_kernel_call_t* call) {
  const DLTensor* x = bp_kit_tensor_arg(call, BP_ARG_SUM_DIM_INTLIST_SELF);
  DLTensor* out = call->outputs[0];
  if (x == nullptr) return Fail(call, BP_STATUS_INVALID_ARGUMENT, "argument 'self' expected a tensor");
  int64_t storage[BP_MAX_NDIM];
  const int64_t* dims = nullptr;
  const int64_t nd = Dims(call, *x, storage, &dims);
  const DType dt = DtypeOf(x->dtype);
  if (dt == DType::kInvalid) return FailDtype(call, *x);
  return Dispatch(dt, BP_STATUS_INTERNAL, [&](auto tag) -> bp_status_t {
    using T = typename decltype(tag)::type;
    if constexpr (Allowed<T>::value) {
      using R = typename MakeReducer<T>::type;
      if (DtypeOf(out->dtype) != dt && !std::is_same<typename R::Out, int64_t>::value)
        return Fail(call, BP_STATUS_INVALID_ARGUMENT, "output dtype %s differs from input dtype %s",
                    DtypeName(DtypeOf(out->dtype)), DtypeName(dt));
      return Reduce<T>(call, *x, *out, dims, nd, R{});
    } else {
      return FailDtype(call, *x);
    }
  });
}

template <typename T>
struct Any : std::true_type {};
template <typename T>
struct FloatOnly : std::integral_constant<bool, kIsFloating<T>> {};
template <typename T>
struct NoBool : std::integral_constant<bool, !std::is_same<T, bool>::value> {};

template <typename T>
struct MakeSum {
  using type = SumReducer<T, false>;
};
template <typename T>
struct MakeMean {
  using type = SumReducer<T, true>;
};
template <typename T>
struct MakeProd {
  using type = ProdReducer<T>;
};
template <typename T>
struct MakeAmax {
  using type = MinMaxReducer<T, true>;
};
template <typename T>
struct MakeAmin {
  using type = MinMaxReducer<T, false>;
};
template <typename T>
struct MakeArgmax {
  using type = ArgMaxReducer<T>;
};

bp_status_t Sum(const bp_kernel_call_t* c) { return RunReduce<MakeSum, Any>(c); }
bp_status_t Mean(const bp_kernel_call_t* c) { return RunReduce<MakeMean, FloatOnly>(c); }
bp_status_t Prod(const bp_kernel_call_t* c) { return RunReduce<MakeProd, Any>(c); }
bp_status_t Amax(const bp_kernel_call_t* c) { return RunReduce<MakeAmax, Any>(c); }
bp_status_t Amin(const bp_kernel_call_t* c) { return RunReduce<MakeAmin, Any>(c); }
bp_status_t Argmax(const bp_kernel_call_t* c) {
  if (DtypeOf(c->outputs[0]->dtype) != DType::kInt64)
    return Fail(c, BP_STATUS_INVALID_ARGUMENT, "output expected dtype int64 but got %s",
                DtypeName(DtypeOf(c->outputs[0]->dtype)));
  return RunReduce<MakeArgmax, NoBool>(c);
}

const KernelDef kKernels[] = {
    {BP_OP_SUM_DIM_INTLIST, Sum, nullptr}, {BP_OP_MEAN_DIM, Mean, nullptr}, {BP_OP_AMAX, Amax, nullptr},
    {BP_OP_AMIN, Amin, nullptr},           {BP_OP_ARGMAX, Argmax, nullptr}, {BP_OP_PROD_DIM_INT, Prod, nullptr},
};

}  // namespace

const KernelDef* ReduceKernels(size_t* count) {
  *count = sizeof(kKernels) / sizeof(kKernels[0]);
  return kKernels;
}

}  // namespace bp_cpu
