// conv2d, conv2d_fused, max_pool2d and avg_pool2d: one thread per output
// element (grid-stride), any strides of every tensor, accumulation in float
// (double for float64).
//
// A direct convolution rather than im2col + the vendor GEMM: it needs no
// workspace, serves grouped and depthwise convolutions (most of the convs of
// the mobile CNNs) as they are, and what it replaced was the CPU fallback,
// which copied every activation through the host. The exception is the 1x1
// convolution (stride 1, no padding, one group: the pointwise convs of the
// mobile CNNs, SqueezeNet's squeeze layers, ResNet's bottlenecks), which is a
// matrix product per image and goes to RunGemm (cuBLAS on CUDA), then one
// epilogue kernel adds bias and residual and applies the activation.
// Larger dense convolutions are where an im2col or implicit-GEMM path would
// be faster still.
#include <cstring>

#include "block_reduce.h"
#include "device_math.h"
#include "image_index.h"
#include "kernel_util.h"
#include "kernels.h"

namespace bp_gpu {
namespace {

// conv2d_fused's activations, in the order ops.yaml's doc lists them (the
// meta function checked the name).
enum Activation : int32_t {
  kActNone,
  kActRelu,
  kActClip,
  kActHardswish,
  kActHardsigmoid,
  kActSigmoid,
  kActSilu,
  kActGelu,
  kActLeakyRelu
};
const char* const kActivationNames[] = {"none",    "relu", "clip", "hardswish", "hardsigmoid",
                                        "sigmoid", "silu", "gelu", "leaky_relu"};

// Sizes and element strides of one [N, C, H, W] tensor.
struct Geometry4 {
  int64_t size[4];
  int64_t stride[4];
};

Geometry4 GeometryOf(const DLTensor* t) {
  Geometry4 g{};
  for (int d = 0; d < 4; ++d) {
    g.size[d] = t->shape[d];
    g.stride[d] = t->strides[d];
  }
  return g;
}

struct Window2 {
  int64_t k[2], s[2], p[2], d[2];
};

struct ConvProblem {
  Geometry4 x, w, y, r;  // r: the residual (conv2d_fused), unused otherwise
  Window2 win;
  int64_t groups;
  int64_t bias_stride;
  int32_t act;
  double alpha, beta;
};

template <typename A>
__device__ inline A Activate(int32_t act, A x, A alpha, A beta) {
  switch (act) {
    case kActRelu:
      return ApplyUnary(kRelu, x);
    case kActClip:
      return x < alpha ? alpha : (x > beta ? beta : x);
    case kActHardswish: {
      const A t = x + A(3);
      return x * (t < A(0) ? A(0) : (t > A(6) ? A(6) : t)) / A(6);
    }
    case kActHardsigmoid: {
      const A t = alpha * x + beta;
      return t < A(0) ? A(0) : (t > A(1) ? A(1) : t);
    }
    case kActSigmoid:
      return ApplyUnary(kSigmoid, x);
    case kActSilu:
      return ApplyUnary(kSilu, x);
    case kActGelu:
      return ApplyUnary(kGelu, x);
    case kActLeakyRelu:
      return x < A(0) ? alpha * x : x;
    default:
      return x;
  }
}

template <typename T>
__global__ void Conv2dKernel(int64_t total, ConvProblem p, T* y, const T* x, const T* w, const T* bias,
                             const T* residual) {
  using A = OpMath<T>;
  const int64_t oc_per_group = p.y.size[1] / p.groups;
  const int64_t ic_per_group = p.w.size[1];
  BP_GRID_STRIDE_LOOP(i, total) {
    const Nchw o = NchwOf(i, p.y.size);
    const int64_t n = o.n, oc = o.c, oh = o.h, ow = o.w;
    const int64_t ic0 = (oc / oc_per_group) * ic_per_group;
    const int64_t ih0 = oh * p.win.s[0] - p.win.p[0], iw0 = ow * p.win.s[1] - p.win.p[1];
    A acc = bias ? static_cast<A>(Load(bias + oc * p.bias_stride)) : A(0);
    const T* xn = x + n * p.x.stride[0] + ic0 * p.x.stride[1];
    const T* wo = w + oc * p.w.stride[0];
    for (int64_t c = 0; c < ic_per_group; ++c) {
      const T* xc = xn + c * p.x.stride[1];
      const T* wc = wo + c * p.w.stride[1];
      for (int64_t r = 0; r < p.w.size[2]; ++r) {
        const int64_t ih = ih0 + r * p.win.d[0];
        if (ih < 0 || ih >= p.x.size[2]) continue;
        for (int64_t s = 0; s < p.w.size[3]; ++s) {
          const int64_t iw = iw0 + s * p.win.d[1];
          if (iw < 0 || iw >= p.x.size[3]) continue;
          acc += static_cast<A>(Load(xc + ih * p.x.stride[2] + iw * p.x.stride[3])) *
                 static_cast<A>(Load(wc + r * p.w.stride[2] + s * p.w.stride[3]));
        }
      }
    }
    if (residual) {
      acc += static_cast<A>(Load(residual + OffsetOf(o, p.r.stride)));
    }
    acc = Activate(p.act, acc, static_cast<A>(p.alpha), static_cast<A>(p.beta));
    Store(y + OffsetOf(o, p.y.stride), acc);
  }
}

// conv2d's bias, conv2d_fused's residual and activation over y in place,
// after the 1x1 convolution's matrix product.
template <typename T>
__global__ void ConvEpilogueKernel(int64_t total, ConvProblem p, T* y, const T* bias, const T* residual) {
  using A = OpMath<T>;
  BP_GRID_STRIDE_LOOP(i, total) {
    const Nchw o = NchwOf(i, p.y.size);
    T* yp = y + OffsetOf(o, p.y.stride);
    A acc = static_cast<A>(Load(yp));
    if (bias) acc += static_cast<A>(Load(bias + o.c * p.bias_stride));
    if (residual) {
      acc += static_cast<A>(Load(residual + OffsetOf(o, p.r.stride)));
    }
    Store(yp, Activate(p.act, acc, static_cast<A>(p.alpha), static_cast<A>(p.beta)));
  }
}

// The stride between consecutive pixels of an [N, C, H, W] tensor when its H
// and W dims collapse into one, else 0.
int64_t PixelStride(const Geometry4& g) {
  if (g.size[3] > 1 && g.size[2] > 1 && g.stride[2] != g.size[3] * g.stride[3]) return 0;
  const int64_t s = g.size[3] > 1 ? g.stride[3] : g.stride[2];
  return s > 0 ? s : 1;
}

// The 1x1 convolution as a matrix product per image: [C_out, C_in] @ [C_in,
// H*W], or, when the output is channels-last, [H*W, C_in] @ [C_in, C_out]
// (the vendor GEMM wants unit column strides in C). False when the
// convolution is not of that form; float16/bfloat16 with an epilogue stay on
// the direct kernel, which rounds once.
bool PointwiseConvGemm(const ConvProblem& p, DType st, bool epilogue, const DLTensor* x, const DLTensor* w,
                       const DLTensor* y, GemmProblem* g) {
  if (p.w.size[2] != 1 || p.w.size[3] != 1 || p.groups != 1 || p.win.s[0] != 1 || p.win.s[1] != 1 || p.win.p[0] != 0 ||
      p.win.p[1] != 0 || p.x.size[2] != p.y.size[2] || p.x.size[3] != p.y.size[3]) {
    return false;
  }
  if (epilogue && st != DType::kFloat32 && st != DType::kFloat64) return false;
  const int64_t xps = PixelStride(p.x), yps = PixelStride(p.y);
  if (xps == 0 || yps == 0) return false;
  g->dtype = st;
  g->k = p.w.size[1];
  const int64_t pixels = p.y.size[2] * p.y.size[3];
  int64_t batch_strides[3][1];
  const bool channels_last = p.y.stride[1] == 1 && p.y.size[1] > 1;
  if (channels_last) {
    g->m = pixels;
    g->n = p.y.size[1];
    g->a = DataPtr<const char>(x);
    g->a_rs = xps;
    g->a_cs = p.x.stride[1];
    g->b = DataPtr<const char>(w);
    g->b_rs = p.w.stride[1];
    g->b_cs = p.w.stride[0];
    g->c_rs = yps;
    g->c_cs = p.y.stride[1];
    batch_strides[0][0] = p.x.stride[0];
    batch_strides[1][0] = 0;
  } else {
    g->m = p.y.size[1];
    g->n = pixels;
    g->a = DataPtr<const char>(w);
    g->a_rs = p.w.stride[0];
    g->a_cs = p.w.stride[1];
    g->b = DataPtr<const char>(x);
    g->b_rs = p.x.stride[1];
    g->b_cs = xps;
    g->c_rs = p.y.stride[1];
    g->c_cs = yps;
    batch_strides[0][0] = 0;
    batch_strides[1][0] = p.x.stride[0];
  }
  batch_strides[2][0] = p.y.stride[0];
  g->c = DataPtr<char>(y);
  const int64_t* strides[3] = {batch_strides[0], batch_strides[1], batch_strides[2]};
  g->batch = MakeOffsetCalculator<3>(1, p.y.size, strides);
  g->batch_count = p.y.size[0];
  return true;
}

struct PoolProblem {
  Geometry4 x, y;
  Window2 win;
  int32_t is_max;  // else average
  int32_t count_include_pad;
  int64_t divisor;  // 0: none
};

// Max: padding counts as -inf and NaN wins, as torch.nn.functional.max_pool2d.
// Average: torch's divisor (the window clipped to the padded input, or to the
// input without count_include_pad, or divisor_override); a window wholly in
// the padding gives 0.
template <typename T>
__global__ void Pool2dKernel(int64_t total, PoolProblem p, T* y, const T* x) {
  using A = OpMath<T>;
  const int64_t H = p.x.size[2], W = p.x.size[3];
  BP_GRID_STRIDE_LOOP(i, total) {
    const Nchw o = NchwOf(i, p.y.size);
    const int64_t n = o.n, c = o.c, oh = o.h, ow = o.w;
    const T* xc = x + n * p.x.stride[0] + c * p.x.stride[1];
    const int64_t hs = oh * p.win.s[0] - p.win.p[0], ws = ow * p.win.s[1] - p.win.p[1];
    A v;
    if (p.is_max) {
      v = LowestOf<A>();
      for (int64_t r = 0; r < p.win.k[0]; ++r) {
        const int64_t ih = hs + r * p.win.d[0];
        if (ih < 0 || ih >= H) continue;
        for (int64_t s = 0; s < p.win.k[1]; ++s) {
          const int64_t iw = ws + s * p.win.d[1];
          if (iw < 0 || iw >= W) continue;
          const A e = static_cast<A>(Load(xc + ih * p.x.stride[2] + iw * p.x.stride[3]));
          if (e > v || e != e) v = e;
          if (v != v) break;
        }
        if (v != v) break;
      }
    } else {
      const int64_t he_pad = hs + p.win.k[0] < H + p.win.p[0] ? hs + p.win.k[0] : H + p.win.p[0];
      const int64_t we_pad = ws + p.win.k[1] < W + p.win.p[1] ? ws + p.win.k[1] : W + p.win.p[1];
      const int64_t pool_size = (he_pad - hs) * (we_pad - ws);
      const int64_t h0 = hs > 0 ? hs : 0, w0 = ws > 0 ? ws : 0;
      const int64_t h1 = he_pad < H ? he_pad : H, w1 = we_pad < W ? we_pad : W;
      if (h0 >= h1 || w0 >= w1) {
        v = A(0);
      } else {
        A sum = A(0);
        for (int64_t ih = h0; ih < h1; ++ih)
          for (int64_t iw = w0; iw < w1; ++iw)
            sum += static_cast<A>(Load(xc + ih * p.x.stride[2] + iw * p.x.stride[3]));
        const int64_t div = p.divisor != 0 ? p.divisor : (p.count_include_pad ? pool_size : (h1 - h0) * (w1 - w0));
        v = sum / static_cast<A>(div);
      }
    }
    Store(y + OffsetOf(o, p.y.stride), v);
  }
}

// Reads an int[2] argument (one INT, or a one-element list, serves both dims);
// `dflt` when absent or empty.
void Pair(const bp_kernel_call_t* call, int i, int64_t dflt, int64_t out[2]) {
  const int64_t* v = nullptr;
  const int64_t n = bp_kit_int_list_arg(call, i, &v);
  if (n > 0) {
    out[0] = v[0];
    out[1] = n > 1 ? v[1] : v[0];
    return;
  }
  const bp_kernel_arg_t* a = bp_kit_arg(call, i);
  out[0] = out[1] = (a != nullptr && a->kind == BP_VALUE_INT) ? a->u.i : dflt;
}

bool Is4d(const DLTensor* t) { return t != nullptr && t->ndim == 4; }

// conv2d, and conv2d_fused when `fused` (arguments 0..6 are conv2d's).
bp_status_t RunConv(const bp_kernel_call_t* call, bool fused) {
  const DLTensor* x = bp_kit_tensor_arg(call, BP_ARG_CONV2D_INPUT);
  const DLTensor* w = bp_kit_tensor_arg(call, BP_ARG_CONV2D_WEIGHT);
  const DLTensor* bias = bp_kit_tensor_arg(call, BP_ARG_CONV2D_BIAS);
  const DLTensor* residual = fused ? bp_kit_tensor_arg(call, BP_ARG_CONV2D_FUSED_RESIDUAL) : nullptr;
  if (call->num_outputs < 1 || !Is4d(x) || !Is4d(w) || !Is4d(call->outputs[0]) ||
      (residual != nullptr && !Is4d(residual))) {
    return KernelError(call, BP_STATUS_INVALID_ARGUMENT,
                       "expected 4-D input [N, C, H, W], weight, output (and residual)");
  }
  const DLTensor* y = call->outputs[0];
  DType st = DType::kInvalid;
  if (bp_status_t s = CheckDtype(call, "input", y, false, false, &st)) return s;
  if (bp_status_t s = RequireSameDtype(call, y, "out", x, "input")) return s;
  if (bp_status_t s = RequireSameDtype(call, y, "out", w, "weight")) return s;
  if (bias != nullptr) {
    if (bp_status_t s = RequireSameDtype(call, y, "out", bias, "bias")) return s;
  }
  if (residual != nullptr) {
    if (bp_status_t s = RequireSameDtype(call, y, "out", residual, "residual")) return s;
  }
  ConvProblem p{};
  p.x = GeometryOf(x);
  p.w = GeometryOf(w);
  p.y = GeometryOf(y);
  if (residual != nullptr) p.r = GeometryOf(residual);
  Pair(call, BP_ARG_CONV2D_STRIDE, 1, p.win.s);
  Pair(call, BP_ARG_CONV2D_PADDING, 0, p.win.p);
  Pair(call, BP_ARG_CONV2D_DILATION, 1, p.win.d);
  p.groups = bp_kit_int_arg(call, BP_ARG_CONV2D_GROUPS, 1);
  p.bias_stride = bias != nullptr && bias->ndim > 0 ? bias->strides[0] : 0;
  if (p.groups < 1 || p.y.size[1] % p.groups != 0 || p.w.size[1] * p.groups != p.x.size[1] ||
      p.w.size[0] != p.y.size[1] || p.y.size[0] != p.x.size[0]) {
    return KernelError(call, BP_STATUS_INVALID_ARGUMENT,
                       "weight [%lld, %lld, ...] and groups %lld do not fit input channels %lld",
                       static_cast<long long>(p.w.size[0]), static_cast<long long>(p.w.size[1]),
                       static_cast<long long>(p.groups), static_cast<long long>(p.x.size[1]));
  }
  if (fused) {
    p.alpha = bp_kit_double_arg(call, BP_ARG_CONV2D_FUSED_ALPHA, 0.0);
    p.beta = bp_kit_double_arg(call, BP_ARG_CONV2D_FUSED_BETA, 0.0);
    const char* act = bp_kit_string_arg(call, BP_ARG_CONV2D_FUSED_ACTIVATION);
    p.act = kActNone;
    if (act != nullptr) {
      const int32_t n = static_cast<int32_t>(sizeof kActivationNames / sizeof kActivationNames[0]);
      int32_t k = 0;
      while (k < n && std::strcmp(kActivationNames[k], act) != 0) ++k;
      if (k == n) {
        return KernelError(call, BP_STATUS_INVALID_ARGUMENT, "argument 'activation': unknown activation '%s'", act);
      }
      p.act = k;
    }
  }
  const int64_t total = TensorNumel(y);
  const LaunchConfig cfg = PointwiseLaunch(total, SmCount(call));
  if (cfg.grid == 0) return BP_STATUS_OK;
  if (bp_status_t s = EnterDevice(call)) return s;
  const bool epilogue = bias != nullptr || residual != nullptr || p.act != kActNone;
  GemmProblem gemm;
  if (PointwiseConvGemm(p, st, epilogue, x, w, y, &gemm)) {
    if (bp_status_t s = RunGemm(call, gemm)) return s;
    if (!epilogue) return BP_STATUS_OK;
    const bp_status_t s = DispatchFloat(st, [&](auto tag) -> bp_status_t {
      using T = typename decltype(tag)::type;
      BP_GPU_LAUNCH(ConvEpilogueKernel<T>, cfg.grid, cfg.block, 0, StreamOf(call))
      (total, p, DataPtr<T>(y), bias != nullptr ? DataPtr<const T>(bias) : nullptr,
       residual != nullptr ? DataPtr<const T>(residual) : nullptr);
      return BP_STATUS_OK;
    });
    if (s != BP_STATUS_OK) return KernelError(call, s, "internal dtype dispatch failure");
    return CheckLaunch(call, "ConvEpilogueKernel");
  }
  const bp_status_t s = DispatchFloat(st, [&](auto tag) -> bp_status_t {
    using T = typename decltype(tag)::type;
    BP_GPU_LAUNCH(Conv2dKernel<T>, cfg.grid, cfg.block, 0, StreamOf(call))
    (total, p, DataPtr<T>(y), DataPtr<const T>(x), DataPtr<const T>(w),
     bias != nullptr ? DataPtr<const T>(bias) : nullptr, residual != nullptr ? DataPtr<const T>(residual) : nullptr);
    return BP_STATUS_OK;
  });
  if (s != BP_STATUS_OK) return KernelError(call, s, "internal dtype dispatch failure");
  return CheckLaunch(call, "Conv2dKernel");
}

static_assert(BP_ARG_MAX_POOL2D_SELF == BP_ARG_AVG_POOL2D_SELF &&
                  BP_ARG_MAX_POOL2D_KERNEL_SIZE == BP_ARG_AVG_POOL2D_KERNEL_SIZE &&
                  BP_ARG_MAX_POOL2D_STRIDE == BP_ARG_AVG_POOL2D_STRIDE &&
                  BP_ARG_MAX_POOL2D_PADDING == BP_ARG_AVG_POOL2D_PADDING,
              "max_pool2d and avg_pool2d share their first arguments");

template <bool kMax>
bp_status_t RunPool(const bp_kernel_call_t* call) {
  const DLTensor* x = bp_kit_tensor_arg(call, BP_ARG_MAX_POOL2D_SELF);
  if (call->num_outputs < 1 || !Is4d(x) || !Is4d(call->outputs[0])) {
    return KernelError(call, BP_STATUS_INVALID_ARGUMENT, "expected a 4-D input [N, C, H, W] and output");
  }
  const DLTensor* y = call->outputs[0];
  DType st = DType::kInvalid;
  if (bp_status_t s = CheckDtype(call, "self", y, false, false, &st)) return s;
  if (bp_status_t s = RequireSameDtype(call, y, "out", x, "self")) return s;
  PoolProblem p{};
  p.is_max = kMax ? 1 : 0;
  p.x = GeometryOf(x);
  p.y = GeometryOf(y);
  Pair(call, BP_ARG_MAX_POOL2D_KERNEL_SIZE, 1, p.win.k);
  Pair(call, BP_ARG_MAX_POOL2D_STRIDE, 0, p.win.s);
  if (p.win.s[0] == 0) {  // stride defaults to kernel_size
    p.win.s[0] = p.win.k[0];
    p.win.s[1] = p.win.k[1];
  }
  Pair(call, BP_ARG_MAX_POOL2D_PADDING, 0, p.win.p);
  if (kMax) {
    Pair(call, BP_ARG_MAX_POOL2D_DILATION, 1, p.win.d);
  } else {
    p.win.d[0] = p.win.d[1] = 1;
    p.count_include_pad = bp_kit_bool_arg(call, BP_ARG_AVG_POOL2D_COUNT_INCLUDE_PAD, true) ? 1 : 0;
    p.divisor = bp_kit_int_arg(call, BP_ARG_AVG_POOL2D_DIVISOR_OVERRIDE, 0);
  }
  if (p.win.k[0] <= 0 || p.win.k[1] <= 0 || p.win.s[0] <= 0 || p.win.s[1] <= 0 || p.win.d[0] <= 0 || p.win.d[1] <= 0) {
    return KernelError(call, BP_STATUS_INVALID_ARGUMENT, "kernel_size, stride and dilation must be positive");
  }
  const int64_t total = TensorNumel(y);
  const LaunchConfig cfg = PointwiseLaunch(total, SmCount(call));
  if (cfg.grid == 0) return BP_STATUS_OK;
  if (bp_status_t s = EnterDevice(call)) return s;
  const bp_status_t s = DispatchFloat(st, [&](auto tag) -> bp_status_t {
    using T = typename decltype(tag)::type;
    BP_GPU_LAUNCH(Pool2dKernel<T>, cfg.grid, cfg.block, 0, StreamOf(call))
    (total, p, DataPtr<T>(y), DataPtr<const T>(x));
    return BP_STATUS_OK;
  });
  if (s != BP_STATUS_OK) return KernelError(call, s, "internal dtype dispatch failure");
  return CheckLaunch(call, "Pool2dKernel");
}

}  // namespace

bp_status_t Conv2dEntry(const bp_kernel_call_t* call) { return RunConv(call, OpOf(call) != 0); }
bp_status_t MaxPool2dEntry(const bp_kernel_call_t* call) { return RunPool<true>(call); }
bp_status_t AvgPool2dEntry(const bp_kernel_call_t* call) { return RunPool<false>(call); }

}  // namespace bp_gpu
