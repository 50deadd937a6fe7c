// softmax / log_softmax (stable: max subtracted), layer_norm and batch_norm
// (inference with running statistics). float32 rows that are contiguous in
// both tensors run through the Highway kernels of simd.h (float32 lanes; the
// error bounds are written there). Other rows are gathered into double
// scratch, so any input and output strides work and float16/bfloat16 round
// once.
#include <cmath>
#include <vector>

#include "common.h"
#include "simd.h"

namespace bp_cpu {
namespace {

// Scratch for one row: on the stack for rows up to 512 elements, so small
// calls do not allocate.
class RowBuffer {
 public:
  explicit RowBuffer(int64_t n) : n_(static_cast<size_t>(n)) {
    if (n_ > kInline) heap_.resize(n_);
    p_ = n_ > kInline ? heap_.data() : inline_;
  }
  double* data() { return p_; }
  double* begin() { return p_; }
  double* end() { return p_ + n_; }
  size_t size() const { return n_; }
  double& operator[](size_t i) { return p_[i]; }

 private:
  static constexpr size_t kInline = 512;
  size_t n_;
  double inline_[kInline];
  std::vector<double> heap_;
  double* p_;
};

// Splits the dims of x/out (same sizes) into an outer loop over the dims
// where `inner[d]` is false and a row-major inner loop over the others.
struct RowSplit {
  int64_t outer_shape[BP_MAX_NDIM], inner_shape[BP_MAX_NDIM];
  StridedLoop<2> outer, inner;
  int64_t rows = 0, row_len = 0;

  RowSplit(const DLTensor& out, const DLTensor& x, const bool* inner_dim) {
    for (int d = 0; d < out.ndim; ++d) {
      outer_shape[d] = inner_dim[d] ? 1 : out.shape[d];
      inner_shape[d] = inner_dim[d] ? out.shape[d] : 1;
    }
    const DLTensor* ops[2] = {&out, &x};
    outer.Init(out.ndim, outer_shape, ops);
    inner.Init(out.ndim, inner_shape, ops, /*sort=*/false);
    rows = outer.numel;
    row_len = inner.numel;
  }

  // True when each row is contiguous in both tensors (the vector kernels'
  // case) for elements of `item` bytes.
  bool UnitRows(int64_t item) const {
    return inner.ndim == 1 && inner.strides[0][0] == item && inner.strides[0][1] == item;
  }

  // f(out_base, x_base) for each row in [lo, hi).
  template <typename F>
  void ForRows(int64_t lo, int64_t hi, F f) const {
    outer.ForRange(lo, hi, [&](char* const* p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) f(p[0] + i * s[0], p[1] + i * s[1]);
    });
  }
  // Gathers x's row at x_base into buf (row-major order).
  template <typename T>
  void Gather(char* out_base, char* x_base, double* buf) const {
    char* bases[2] = {out_base, x_base};
    int64_t pos = 0;
    inner.ForRangeAt(bases, 0, row_len, [&](char* const* p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) buf[pos + i] = static_cast<double>(Load(*reinterpret_cast<const T*>(p[1] + i * s[1])));
      pos += n;
    });
  }
  template <typename T>
  void Scatter(char* out_base, char* x_base, const double* buf) const {
    char* bases[2] = {out_base, x_base};
    int64_t pos = 0;
    inner.ForRangeAt(bases, 0, row_len, [&](char* const* p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p[0] + i * s[0]) = Store<T>(buf[pos + i]);
      pos += n;
    });
  }
};

template <typename Body>
bp_status_t FloatDispatch(const bp_kernel_call_t* call, const DLTensor& out, Body body) {
  switch (DtypeOf(out.dtype)) {
    case DType::kFloat32: body(Tag<float>{}); return BP_STATUS_OK;
    case DType::kFloat64: body(Tag<double>{}); return BP_STATUS_OK;
    case DType::kFloat16: body(Tag<Half>{}); return BP_STATUS_OK;
    case DType::kBFloat16: body(Tag<BFloat16>{}); return BP_STATUS_OK;
    default: return FailDtype(call, out);
  }
}

template <bool kLog>
bp_status_t Softmax(const bp_kernel_call_t* call) {
  const DLTensor* x = bp_kit_tensor_arg(call, BP_ARG_SOFTMAX_INT_SELF);
  DLTensor* out = call->outputs[0];
  if (x == nullptr) return Fail(call, BP_STATUS_INVALID_ARGUMENT, "argument 'self' expected a tensor");
  int64_t dim = bp_kit_int_arg(call, BP_ARG_SOFTMAX_INT_DIM, 0);
  if (out->ndim == 0) dim = 0;
  if (dim < 0 || (out->ndim > 0 && dim >= out->ndim))
    return Fail(call, BP_STATUS_OUT_OF_RANGE, "dim %lld out of range for rank %d", static_cast<long long>(dim),
                out->ndim);
  if (DtypeOf(x->dtype) != DtypeOf(out->dtype))
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "input dtype %s differs from output dtype %s",
                DtypeName(DtypeOf(x->dtype)), DtypeName(DtypeOf(out->dtype)));
  bool inner[BP_MAX_NDIM] = {};
  if (out->ndim > 0) inner[dim] = true;
  const RowSplit split(*out, *x, inner);
  if (split.rows == 0 || split.row_len == 0) return BP_STATUS_OK;
  try {
    return FloatDispatch(call, *out, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (std::is_same<T, float>::value && split.UnitRows(sizeof(float))) {
        ParallelFor(split.rows, split.rows * split.row_len, [&](int64_t lo, int64_t hi) {
          split.ForRows(lo, hi, [&](char* ob, char* xb) {
            simd::SoftmaxRowF32(reinterpret_cast<const float*>(xb), reinterpret_cast<float*>(ob), split.row_len, kLog);
          });
        });
        return;
      }
      ParallelFor(split.rows, split.rows * split.row_len, [&](int64_t lo, int64_t hi) {
        RowBuffer buf(split.row_len);
        split.ForRows(lo, hi, [&](char* ob, char* xb) {
          split.Gather<T>(ob, xb, buf.data());
          double m = -INFINITY;
          for (double v : buf) m = v > m || v != v ? v : m;
          if (std::isinf(m) && m < 0) m = 0;  // all -inf: exp(-inf - 0) = 0, as torch
          double sum = 0;
          for (double v : buf) sum += std::exp(v - m);
          if (kLog) {
            const double ls = std::log(sum);
            for (double& v : buf) v = v - m - ls;
          } else {
            for (double& v : buf) v = std::exp(v - m) / sum;
          }
          split.Scatter<T>(ob, xb, buf.data());
        });
      });
    });
  } catch (const std::bad_alloc&) {
    return Fail(call, BP_STATUS_OUT_OF_MEMORY, "out of memory");
  }
}

// Reads an optional 1-D-or-N-D parameter tensor as doubles in row-major order.
template <typename T>
std::vector<double> ReadParam(const DLTensor* t, int64_t n, double dflt) {
  std::vector<double> v(static_cast<size_t>(n), dflt);
  if (t == nullptr) return v;
  // Row-major walk over t's own sizes.
  int64_t idx[BP_MAX_NDIM] = {};
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (int d = 0; d < t->ndim; ++d) off += idx[d] * t->strides[d];
    v[static_cast<size_t>(i)] =
        static_cast<double>(Load(*reinterpret_cast<const T*>(DataPtr(*t) + off * static_cast<int64_t>(sizeof(T)))));
    for (int d = t->ndim - 1; d >= 0; --d) {
      if (++idx[d] < t->shape[d]) break;
      idx[d] = 0;
    }
  }
  return v;
}

bp_status_t LayerNorm(const bp_kernel_call_t* call) {
  const DLTensor* x = bp_kit_tensor_arg(call, BP_ARG_LAYER_NORM_INPUT);
  DLTensor* out = call->outputs[0];
  const DLTensor* w = bp_kit_tensor_arg(call, BP_ARG_LAYER_NORM_WEIGHT);
  const DLTensor* b = bp_kit_tensor_arg(call, BP_ARG_LAYER_NORM_BIAS);
  const double eps = bp_kit_double_arg(call, BP_ARG_LAYER_NORM_EPS, 1e-5);
  if (x == nullptr) return Fail(call, BP_STATUS_INVALID_ARGUMENT, "argument 'input' expected a tensor");
  const int64_t* ns = nullptr;
  const int64_t k = bp_kit_int_list_arg(call, BP_ARG_LAYER_NORM_NORMALIZED_SHAPE, &ns);
  if (k > out->ndim) return Fail(call, BP_STATUS_INVALID_ARGUMENT, "normalized_shape longer than the input rank");
  bool inner[BP_MAX_NDIM] = {};
  for (int d = out->ndim - static_cast<int>(k); d < out->ndim; ++d) inner[d] = true;
  const RowSplit split(*out, *x, inner);
  if (split.rows == 0) return BP_STATUS_OK;
  try {
    return FloatDispatch(call, *out, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const std::vector<double> wv = ReadParam<T>(w, split.row_len, 1.0);
      const std::vector<double> bv = ReadParam<T>(b, split.row_len, 0.0);
      const double n = static_cast<double>(split.row_len);
      if (std::is_same<T, float>::value && split.UnitRows(sizeof(float))) {
        const std::vector<float> wf(wv.begin(), wv.end()), bf(bv.begin(), bv.end());
        const float* wp = w != nullptr ? wf.data() : nullptr;
        const float* bp = b != nullptr ? bf.data() : nullptr;
        ParallelFor(split.rows, split.rows * split.row_len, [&](int64_t lo, int64_t hi) {
          split.ForRows(lo, hi, [&](char* ob, char* xb) {
            simd::LayerNormRowF32(reinterpret_cast<const float*>(xb), reinterpret_cast<float*>(ob), split.row_len, wp,
                                  bp, eps);
          });
        });
        return;
      }
      ParallelFor(split.rows, split.rows * split.row_len, [&](int64_t lo, int64_t hi) {
        RowBuffer buf(split.row_len);
        split.ForRows(lo, hi, [&](char* ob, char* xb) {
          split.Gather<T>(ob, xb, buf.data());
          double mean = 0;
          for (double v : buf) mean += v;
          mean /= n;
          double var = 0;
          for (double v : buf) var += (v - mean) * (v - mean);
          var /= n;  // biased, as torch
          const double rstd = 1.0 / std::sqrt(var + eps);
          for (size_t i = 0; i < buf.size(); ++i) buf[i] = (buf[i] - mean) * rstd * wv[i] + bv[i];
          split.Scatter<T>(ob, xb, buf.data());
        });
      });
    });
  } catch (const std::bad_alloc&) {
    return Fail(call, BP_STATUS_OUT_OF_MEMORY, "out of memory");
  }
}

bp_status_t BatchNorm(const bp_kernel_call_t* call) {
  const DLTensor* x = bp_kit_tensor_arg(call, BP_ARG_BATCH_NORM_INPUT);
  DLTensor* out = call->outputs[0];
  const DLTensor* w = bp_kit_tensor_arg(call, BP_ARG_BATCH_NORM_WEIGHT);
  const DLTensor* b = bp_kit_tensor_arg(call, BP_ARG_BATCH_NORM_BIAS);
  const DLTensor* rm = bp_kit_tensor_arg(call, BP_ARG_BATCH_NORM_RUNNING_MEAN);
  const DLTensor* rv = bp_kit_tensor_arg(call, BP_ARG_BATCH_NORM_RUNNING_VAR);
  const bool training = bp_kit_bool_arg(call, BP_ARG_BATCH_NORM_TRAINING, false);
  const double eps = bp_kit_double_arg(call, BP_ARG_BATCH_NORM_EPS, 1e-5);
  if (x == nullptr || out->ndim < 2) return Fail(call, BP_STATUS_INVALID_ARGUMENT, "expected input [N, C, ...]");
  // Rows are (n, c) planes: the inner loop covers dims 2...
  bool inner[BP_MAX_NDIM] = {};
  for (int d = 2; d < out->ndim; ++d) inner[d] = true;
  const RowSplit split(*out, *x, inner);
  const int64_t C = out->shape[1];
  if (split.rows == 0) return BP_STATUS_OK;
  try {
    return FloatDispatch(call, *out, [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::vector<double> mean = ReadParam<T>(rm, C, 0.0), var = ReadParam<T>(rv, C, 1.0);
      const std::vector<double> wv = ReadParam<T>(w, C, 1.0), bv = ReadParam<T>(b, C, 0.0);
      // Plane r of [N, C] (dims 2.. form its row).
      auto plane = [&](int64_t r, char** ob, char** xb) {
        const int64_t n = r / C, c = r % C;
        *ob = DataPtr(*out) + (n * out->strides[0] + c * out->strides[1]) * static_cast<int64_t>(sizeof(T));
        *xb = DataPtr(*x) + (n * x->strides[0] + c * x->strides[1]) * static_cast<int64_t>(sizeof(T));
      };
      if (training || rm == nullptr || rv == nullptr) {
        // No running statistics: normalize with the batch's (biased) ones,
        // two passes (mean, then squared deviations) in double, channels in
        // parallel: each channel's N planes are summed by one thread in a
        // fixed order, so the result does not depend on the thread count.
        const int64_t N = split.rows / C;
        const double count = static_cast<double>(N * split.row_len);
        const bool unit_f32 = std::is_same<T, float>::value && split.UnitRows(sizeof(float));
        ParallelFor(C, split.rows * split.row_len, [&](int64_t lo, int64_t hi) {
          RowBuffer buf(unit_f32 ? 0 : split.row_len);
          char *ob, *xb;
          // Sum over channel c's planes of x (centre empty) or of (x - m)^2:
          // a float32 plane in SIMD lanes, the planes added in double.
          auto channel_sum = [&](int64_t c, const double* centre) {
            double s = 0;
            for (int64_t n = 0; n < N; ++n) {
              plane(n * C + c, &ob, &xb);
              if (unit_f32) {
                const float* p = reinterpret_cast<const float*>(xb);
                s += centre == nullptr ? simd::SumF32(p, split.row_len)
                                       : simd::SumSqDevF32(p, split.row_len, static_cast<float>(*centre));
              } else {
                split.Gather<T>(ob, xb, buf.data());
                for (double v : buf) s += centre == nullptr ? v : (v - *centre) * (v - *centre);
              }
            }
            return s;
          };
          for (int64_t c = lo; c < hi; ++c) {
            const double m = channel_sum(c, nullptr) / count;
            mean[static_cast<size_t>(c)] = m;
            var[static_cast<size_t>(c)] = channel_sum(c, &m) / count;
          }
        });
      }
      std::vector<double> scale(static_cast<size_t>(C)), shift(static_cast<size_t>(C));
      for (size_t c = 0; c < static_cast<size_t>(C); ++c) {
        scale[c] = wv[c] / std::sqrt(var[c] + eps);
        shift[c] = bv[c] - mean[c] * scale[c];
      }
      if (std::is_same<T, float>::value && split.UnitRows(sizeof(float))) {
        // Per channel y = x * scale + shift, scale and shift rounded once to
        // float32 from double; one fused multiply-add per element.
        ParallelFor(split.rows, split.rows * split.row_len, [&](int64_t lo, int64_t hi) {
          char *ob, *xb;
          for (int64_t r = lo; r < hi; ++r) {
            const size_t c = static_cast<size_t>(r % C);
            plane(r, &ob, &xb);
            simd::ScaleShiftF32(reinterpret_cast<const float*>(xb), reinterpret_cast<float*>(ob), split.row_len,
                                static_cast<float>(scale[c]), static_cast<float>(shift[c]));
          }
        });
        return;
      }
      ParallelFor(split.rows, split.rows * split.row_len, [&](int64_t lo, int64_t hi) {
        RowBuffer local(split.row_len);
        char *ob, *xb;
        for (int64_t r = lo; r < hi; ++r) {
          const int64_t c = r % C;
          plane(r, &ob, &xb);
          split.Gather<T>(ob, xb, local.data());
          for (double& v : local) v = v * scale[static_cast<size_t>(c)] + shift[static_cast<size_t>(c)];
          split.Scatter<T>(ob, xb, local.data());
        }
      });
    });
  } catch (const std::bad_alloc&) {
    return Fail(call, BP_STATUS_OUT_OF_MEMORY, "out of memory");
  }
}

const KernelDef kKernels[] = {
    {BP_OP_SOFTMAX_INT, Softmax<false>, nullptr},
    {BP_OP_LOG_SOFTMAX_INT, Softmax<true>, nullptr},
    {BP_OP_LAYER_NORM, LayerNorm, nullptr},
    {BP_OP_BATCH_NORM, BatchNorm, nullptr},
};

}  // namespace

const KernelDef* SoftmaxNormKernels(size_t* count) {
  *count = sizeof(kKernels) / sizeof(kKernels[0]);
  return kKernels;
}

}  // namespace bp_cpu
