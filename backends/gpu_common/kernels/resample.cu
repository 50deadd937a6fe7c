// upsample_nearest2d and upsample_bilinear2d: one thread per output element,
// any strides, the source positions as torch computes them (the nearest
// index in float32; the linear position in the compute type, float or
// double), so results match the CPU backend's kernels bit for bit where the
// arithmetic allows.
#include <cmath>

#include "image_index.h"
#include "kernel_util.h"
#include "kernels.h"

namespace bp_gpu {
namespace {

struct ResampleProblem {
  int64_t in_size[4], in_stride[4];
  int64_t out_size[4], out_stride[4];
  double scale_h, scale_w;  // the caller's output / input factor, 0: none
  int32_t align_corners;
};

// torch's nearest source index along one axis: min(floor(o * scale), in - 1)
// with scale = 1 / factor or in / out, in float32.
__device__ inline int64_t NearestIndex(int64_t o, int64_t in, int64_t out, double factor) {
  const float scale =
      factor > 0.0 ? static_cast<float>(1.0 / factor) : static_cast<float>(in) / static_cast<float>(out);
  const int64_t i = static_cast<int64_t>(floorf(static_cast<float>(o) * scale));
  return i < in - 1 ? i : in - 1;
}

// Moves raw elements: only the dtype's width matters.
template <typename U>
__global__ void NearestKernel(int64_t total, ResampleProblem p, U* y, const U* x) {
  BP_GRID_STRIDE_LOOP(i, total) {
    const Nchw o = NchwOf(i, p.out_size);
    const Nchw src{o.n, o.c, NearestIndex(o.h, p.in_size[2], p.out_size[2], p.scale_h),
                   NearestIndex(o.w, p.in_size[3], p.out_size[3], p.scale_w)};
    y[OffsetOf(o, p.out_stride)] = x[OffsetOf(src, p.in_stride)];
  }
}

// torch's linear source position along one axis: corner to corner with
// align_corners, else pixel centres clamped at 0; an axis whose size does
// not change is copied. Gives the first tap, the step to the second (0 at
// the edge) and the second tap's weight.
template <typename A>
__device__ inline void LinearTap(int64_t o, int64_t in, int64_t out, int32_t align_corners, double factor, int64_t* i0,
                                 int64_t* step, A* l1) {
  if (out == in) {
    *i0 = o;
    *step = 0;
    *l1 = A(0);
    return;
  }
  A scale;
  if (align_corners) {
    scale = out > 1 ? static_cast<A>(in - 1) / static_cast<A>(out - 1) : A(0);
  } else {
    scale = factor > 0.0 ? static_cast<A>(1.0 / factor) : static_cast<A>(in) / static_cast<A>(out);
  }
  A src = align_corners ? scale * static_cast<A>(o) : scale * (static_cast<A>(o) + A(0.5)) - A(0.5);
  if (src < A(0)) src = A(0);
  *i0 = static_cast<int64_t>(src);
  const A w = src - static_cast<A>(*i0);
  *l1 = w < A(0) ? A(0) : (w > A(1) ? A(1) : w);
  *step = *i0 < in - 1 ? 1 : 0;
}

template <typename T>
__global__ void BilinearKernel(int64_t total, ResampleProblem p, T* y, const T* x) {
  using A = OpMath<T>;
  BP_GRID_STRIDE_LOOP(i, total) {
    const Nchw o = NchwOf(i, p.out_size);
    const int64_t n = o.n, c = o.c, oh = o.h, ow = o.w;
    int64_t h0, hs, w0, ws;
    A lh, lw;
    LinearTap<A>(oh, p.in_size[2], p.out_size[2], p.align_corners, p.scale_h, &h0, &hs, &lh);
    LinearTap<A>(ow, p.in_size[3], p.out_size[3], p.align_corners, p.scale_w, &w0, &ws, &lw);
    const T* x0 = x + n * p.in_stride[0] + c * p.in_stride[1] + h0 * p.in_stride[2];
    const T* x1 = x0 + hs * p.in_stride[2];
    const int64_t a = w0 * p.in_stride[3], b = (w0 + ws) * p.in_stride[3];
    const A top = (A(1) - lw) * static_cast<A>(Load(x0 + a)) + lw * static_cast<A>(Load(x0 + b));
    const A bottom = (A(1) - lw) * static_cast<A>(Load(x1 + a)) + lw * static_cast<A>(Load(x1 + b));
    Store(y + OffsetOf(o, p.out_stride), (A(1) - lh) * top + lh * bottom);
  }
}

// The caller's scale factor (output / input) or 0 when None or not > 0.
double ScaleFactor(const bp_kernel_call_t* call, int i) {
  const double s = bp_kit_double_arg(call, i, 0.0);
  return s > 0.0 ? s : 0.0;
}

static_assert(BP_ARG_UPSAMPLE_NEAREST2D_SELF == BP_ARG_UPSAMPLE_BILINEAR2D_SELF,
              "both upsample operators take self first");

// Shapes, strides and the launch shared by both operators; false with the
// status in *s when there is nothing to launch or the arguments are wrong.
bool Prepare(const bp_kernel_call_t* call, ResampleProblem* p, LaunchConfig* cfg, int64_t* total, bp_status_t* s) {
  const DLTensor* x = bp_kit_tensor_arg(call, BP_ARG_UPSAMPLE_NEAREST2D_SELF);
  if (call->num_outputs < 1 || x == nullptr || x->ndim != 4 || call->outputs[0]->ndim != 4) {
    *s = KernelError(call, BP_STATUS_INVALID_ARGUMENT, "expected a 4-D input [N, C, H, W] and output");
    return false;
  }
  const DLTensor* y = call->outputs[0];
  if (!SameDtype(x, y)) {
    *s = KernelError(call, BP_STATUS_UNIMPLEMENTED, "self and out differ in dtype");
    return false;
  }
  for (int d = 0; d < 4; ++d) {
    p->in_size[d] = x->shape[d];
    p->in_stride[d] = x->strides[d];
    p->out_size[d] = y->shape[d];
    p->out_stride[d] = y->strides[d];
  }
  *total = TensorNumel(y);
  *cfg = PointwiseLaunch(*total, SmCount(call));
  *s = BP_STATUS_OK;
  if (cfg->grid == 0) return false;
  *s = EnterDevice(call);
  return *s == BP_STATUS_OK;
}

}  // namespace

bp_status_t UpsampleNearestEntry(const bp_kernel_call_t* call) {
  ResampleProblem p{};
  LaunchConfig cfg;
  int64_t total = 0;
  bp_status_t s = BP_STATUS_OK;
  p.scale_h = ScaleFactor(call, BP_ARG_UPSAMPLE_NEAREST2D_SCALES_H);
  p.scale_w = ScaleFactor(call, BP_ARG_UPSAMPLE_NEAREST2D_SCALES_W);
  if (!Prepare(call, &p, &cfg, &total, &s)) return s;
  const DLTensor* x = bp_kit_tensor_arg(call, BP_ARG_UPSAMPLE_NEAREST2D_SELF);
  const DLTensor* y = call->outputs[0];
  switch (x->dtype.bits) {
    case 8:
      BP_GPU_LAUNCH(NearestKernel<uint8_t>, cfg.grid, cfg.block, 0, StreamOf(call))
      (total, p, DataPtr<uint8_t>(y), DataPtr<const uint8_t>(x));
      break;
    case 16:
      BP_GPU_LAUNCH(NearestKernel<uint16_t>, cfg.grid, cfg.block, 0, StreamOf(call))
      (total, p, DataPtr<uint16_t>(y), DataPtr<const uint16_t>(x));
      break;
    case 32:
      BP_GPU_LAUNCH(NearestKernel<uint32_t>, cfg.grid, cfg.block, 0, StreamOf(call))
      (total, p, DataPtr<uint32_t>(y), DataPtr<const uint32_t>(x));
      break;
    case 64:
      BP_GPU_LAUNCH(NearestKernel<uint64_t>, cfg.grid, cfg.block, 0, StreamOf(call))
      (total, p, DataPtr<uint64_t>(y), DataPtr<const uint64_t>(x));
      break;
    default:
      return KernelError(call, BP_STATUS_UNIMPLEMENTED, "no kernel for elements of %d bits", x->dtype.bits);
  }
  return CheckLaunch(call, "NearestKernel");
}

bp_status_t UpsampleBilinearEntry(const bp_kernel_call_t* call) {
  ResampleProblem p{};
  LaunchConfig cfg;
  int64_t total = 0;
  bp_status_t s = BP_STATUS_OK;
  p.align_corners = bp_kit_bool_arg(call, BP_ARG_UPSAMPLE_BILINEAR2D_ALIGN_CORNERS, false) ? 1 : 0;
  p.scale_h = ScaleFactor(call, BP_ARG_UPSAMPLE_BILINEAR2D_SCALES_H);
  p.scale_w = ScaleFactor(call, BP_ARG_UPSAMPLE_BILINEAR2D_SCALES_W);
  DType st = DType::kInvalid;
  if (call->num_outputs >= 1) {
    if (bp_status_t c = CheckDtype(call, "self", call->outputs[0], false, false, &st)) return c;
  }
  if (!Prepare(call, &p, &cfg, &total, &s)) return s;
  const DLTensor* x = bp_kit_tensor_arg(call, BP_ARG_UPSAMPLE_BILINEAR2D_SELF);
  const DLTensor* y = call->outputs[0];
  s = DispatchFloat(st, [&](auto tag) -> bp_status_t {
    using T = typename decltype(tag)::type;
    BP_GPU_LAUNCH(BilinearKernel<T>, cfg.grid, cfg.block, 0, StreamOf(call))
    (total, p, DataPtr<T>(y), DataPtr<const T>(x));
    return BP_STATUS_OK;
  });
  if (s != BP_STATUS_OK) return KernelError(call, s, "internal dtype dispatch failure");
  return CheckLaunch(call, "BilinearKernel");
}

}  // namespace bp_gpu
