// upsample_nearest2d and upsample_bilinear2d: each output row's and column's
// source taps are computed once per call with torch's index rules (in the
// op's compute type: float for float32/bfloat16, double for float64), then
// every (n, c) plane is gathered with them. Nearest copies elements as bytes,
// so it serves every dtype.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "backplane/op_args.h"
#include "common.h"

namespace bp_cpu {
namespace {

// The caller's scale factor (output / input) or 0 when None or not > 0.
double ScaleArg(const bp_kernel_call_t* call, int i) {
  const double s = bp_kit_double_arg(call, i, 0.0);
  return s > 0.0 ? s : 0.0;
}

// torch's nearest source index along one axis (its multi-channel kernel's
// rule; torch 1.13 special-cases out == in and out == 2 * in for a single
// plane, which only differs with explicit scale factors).
std::vector<int64_t> NearestIndices(int64_t in, int64_t out, double scale_factor) {
  std::vector<int64_t> idx(static_cast<size_t>(out));
  const float scale =
      scale_factor > 0.0 ? static_cast<float>(1.0 / scale_factor) : static_cast<float>(in) / static_cast<float>(out);
  for (int64_t o = 0; o < out; ++o) {
    idx[static_cast<size_t>(o)] = std::min(static_cast<int64_t>(std::floor(static_cast<float>(o) * scale)), in - 1);
  }
  return idx;
}

bp_status_t UpsampleNearest(const bp_kernel_call_t* call) {
  const DLTensor* x = bp_kit_tensor_arg(call, BP_ARG_UPSAMPLE_NEAREST2D_SELF);
  DLTensor* y = call->outputs[0];
  if (x == nullptr || x->ndim != 4 || y->ndim != 4 || x->dtype.bits != y->dtype.bits)
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "expected a 4-D input [N, C, H, W] and output of one dtype");
  const int64_t N = y->shape[0], C = y->shape[1], OH = y->shape[2], OW = y->shape[3];
  const int64_t H = x->shape[2], W = x->shape[3];
  const std::vector<int64_t> rows = NearestIndices(H, OH, ScaleArg(call, BP_ARG_UPSAMPLE_NEAREST2D_SCALES_H));
  const std::vector<int64_t> cols = NearestIndices(W, OW, ScaleArg(call, BP_ARG_UPSAMPLE_NEAREST2D_SCALES_W));
  const int64_t es = x->dtype.bits / 8;
  ParallelFor(N * C, N * C * OH * OW, [&](int64_t lo, int64_t hi) {
    for (int64_t nc = lo; nc < hi; ++nc) {
      const int64_t n = nc / C, c = nc % C;
      const char* xp = DataPtr(*x) + (n * x->strides[0] + c * x->strides[1]) * es;
      char* yp = DataPtr(*y) + (n * y->strides[0] + c * y->strides[1]) * es;
      for (int64_t oh = 0; oh < OH; ++oh) {
        const char* xr = xp + rows[static_cast<size_t>(oh)] * x->strides[2] * es;
        char* yr = yp + oh * y->strides[2] * es;
        for (int64_t ow = 0; ow < OW; ++ow) {
          std::memcpy(yr + ow * y->strides[3] * es, xr + cols[static_cast<size_t>(ow)] * x->strides[3] * es,
                      static_cast<size_t>(es));
        }
      }
    }
  });
  return BP_STATUS_OK;
}

// One output position's two taps along an axis: i0 and i0 + step, weights l0, l1.
template <typename C>
struct Tap {
  int64_t i0, step;
  C l0, l1;
};

// torch's linear source position: align_corners maps corner to corner; else
// pixel centres, clamped at 0 (the scale in the compute type C).
template <typename C>
std::vector<Tap<C>> LinearTaps(int64_t in, int64_t out, bool align_corners, double scale_factor) {
  C scale;
  if (align_corners) {
    scale = out > 1 ? static_cast<C>(in - 1) / static_cast<C>(out - 1) : C(0);
  } else {
    scale = scale_factor > 0.0 ? static_cast<C>(1.0 / scale_factor) : static_cast<C>(in) / static_cast<C>(out);
  }
  std::vector<Tap<C>> taps(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    if (out == in) {  // torch copies an axis whose size does not change, whatever the scale factor
      taps[static_cast<size_t>(o)] = Tap<C>{o, 0, C(1), C(0)};
      continue;
    }
    C src = align_corners ? scale * static_cast<C>(o) : scale * (static_cast<C>(o) + C(0.5)) - C(0.5);
    if (src < C(0)) src = C(0);
    const int64_t i0 = static_cast<int64_t>(src);
    const C l1 = std::min(std::max(src - static_cast<C>(i0), C(0)), C(1));
    taps[static_cast<size_t>(o)] = Tap<C>{i0, i0 < in - 1 ? 1 : 0, C(1) - l1, l1};
  }
  return taps;
}

template <typename T>
void BilinearLoop(const DLTensor& x, const DLTensor& y, bool align_corners, double sh, double sw) {
  using C = opmath_t<T>;
  const int64_t N = y.shape[0], Ch = y.shape[1], OH = y.shape[2], OW = y.shape[3];
  const std::vector<Tap<C>> rows = LinearTaps<C>(x.shape[2], OH, align_corners, sh);
  const std::vector<Tap<C>> cols = LinearTaps<C>(x.shape[3], OW, align_corners, sw);
  const int64_t xs2 = x.strides[2], xs3 = x.strides[3];
  ParallelFor(N * Ch, N * Ch * OH * OW * 4, [&](int64_t lo, int64_t hi) {
    for (int64_t nc = lo; nc < hi; ++nc) {
      const int64_t n = nc / Ch, c = nc % Ch;
      const T* xp = reinterpret_cast<const T*>(DataPtr(x)) + n * x.strides[0] + c * x.strides[1];
      T* yp = reinterpret_cast<T*>(DataPtr(y)) + n * y.strides[0] + c * y.strides[1];
      for (int64_t oh = 0; oh < OH; ++oh) {
        const Tap<C>& r = rows[static_cast<size_t>(oh)];
        const T* x0 = xp + r.i0 * xs2;
        const T* x1 = x0 + r.step * xs2;
        for (int64_t ow = 0; ow < OW; ++ow) {
          const Tap<C>& q = cols[static_cast<size_t>(ow)];
          const int64_t a = q.i0 * xs3, b = (q.i0 + q.step) * xs3;
          const C top = q.l0 * static_cast<C>(Load(x0[a])) + q.l1 * static_cast<C>(Load(x0[b]));
          const C bottom = q.l0 * static_cast<C>(Load(x1[a])) + q.l1 * static_cast<C>(Load(x1[b]));
          yp[oh * y.strides[2] + ow * y.strides[3]] = Store<T>(r.l0 * top + r.l1 * bottom);
        }
      }
    }
  });
}

bp_status_t UpsampleBilinear(const bp_kernel_call_t* call) {
  const DLTensor* x = bp_kit_tensor_arg(call, BP_ARG_UPSAMPLE_BILINEAR2D_SELF);
  DLTensor* y = call->outputs[0];
  if (x == nullptr || x->ndim != 4 || y->ndim != 4 || DtypeOf(x->dtype) != DtypeOf(y->dtype))
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "expected a 4-D input [N, C, H, W] and output of one dtype");
  const bool ac = bp_kit_bool_arg(call, BP_ARG_UPSAMPLE_BILINEAR2D_ALIGN_CORNERS, false);
  const double sh = ScaleArg(call, BP_ARG_UPSAMPLE_BILINEAR2D_SCALES_H);
  const double sw = ScaleArg(call, BP_ARG_UPSAMPLE_BILINEAR2D_SCALES_W);
  switch (DtypeOf(y->dtype)) {
    case DType::kFloat32:
      BilinearLoop<float>(*x, *y, ac, sh, sw);
      return BP_STATUS_OK;
    case DType::kFloat64:
      BilinearLoop<double>(*x, *y, ac, sh, sw);
      return BP_STATUS_OK;
    case DType::kBFloat16:
      BilinearLoop<BFloat16>(*x, *y, ac, sh, sw);
      return BP_STATUS_OK;
    case DType::kFloat16:
      BilinearLoop<Half>(*x, *y, ac, sh, sw);
      return BP_STATUS_OK;
    default:
      return FailDtype(call, *y);
  }
}

const KernelDef kKernels[] = {
    {BP_OP_UPSAMPLE_NEAREST2D, UpsampleNearest, nullptr},
    {BP_OP_UPSAMPLE_BILINEAR2D, UpsampleBilinear, nullptr},
};

}  // namespace

const KernelDef* ResampleKernels(size_t* count) {
  *count = sizeof(kKernels) / sizeof(kKernels[0]);
  return kKernels;
}

}  // namespace bp_cpu
