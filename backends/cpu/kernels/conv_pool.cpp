// conv2d (oneDNN convolution for float32/bfloat16, a direct loop for
// float64), conv2d_fused (the same oneDNN primitive with post-ops: sum for the
// residual, eltwise for the activation; else the direct loop, then the
// residual and activation through the pointwise loops; the oneDNN path is
// conv_dnnl.cpp), max_pool2d and avg_pool2d (direct loops with torch's exact window,
// ceil_mode, count_include_pad and divisor_override rules). max_pool2d
// precomputes each output row's and column's valid taps once per call and
// takes the max of whole output rows at a time (vectorizable, no per-tap
// bounds checks).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <unordered_map>
#include <vector>

#include "common.h"
#include "conv.h"
#include "simd.h"

namespace bp_cpu {
namespace {

// The direct path's epilogue: y += residual, then y = act(y), in opmath_t.
// y has type T, the residual R.
template <typename T, typename R = T>
void ApplyFused(const DLTensor& y, const Fused& f) {
  using C = opmath_t<T>;
  if (f.residual != nullptr) BinaryLoop<T, T, R>(y, y, *f.residual, [](C a, C b) { return a + b; });
  const C al = static_cast<C>(f.alpha), be = static_cast<C>(f.beta);
  auto run = [&](auto fn) { UnaryLoop<T, T>(y, y, fn); };
  switch (f.act) {
    case Act::kNone:
      break;
    case Act::kRelu:
      run([](C x) { return (x > C(0) || x != x) ? x : C(0); });
      break;
    case Act::kLeakyRelu:
      run([al](C x) { return x < C(0) ? x * al : x; });
      break;
    case Act::kClip:
      run([al, be](C x) { return x != x ? x : std::min(std::max(x, al), be); });
      break;
    case Act::kHardswish:
      run([](C x) { return x * std::min(std::max(x + C(3), C(0)), C(6)) / C(6); });
      break;
    case Act::kHardsigmoid:
      run([al, be](C x) { return std::min(std::max(al * x + be, C(0)), C(1)); });
      break;
    case Act::kSigmoid:
      run([](C x) { return C(1) / (C(1) + std::exp(-x)); });
      break;
    case Act::kSilu:
      run([](C x) { return x / (C(1) + std::exp(-x)); });
      break;
    case Act::kGelu:
      run([](C x) { return x * C(0.5) * (C(1) + std::erf(x * C(0.7071067811865476))); });
      break;
  }
}

template <typename T>
inline const T& At4(const DLTensor& t, int64_t a, int64_t b, int64_t c, int64_t d) {
  return *reinterpret_cast<const T*>(DataPtr(t) +
                                     (a * t.strides[0] + b * t.strides[1] + c * t.strides[2] + d * t.strides[3]) *
                                         static_cast<int64_t>(sizeof(T)));
}

// Output of type To (T, or float for conv2d_fused's reduced-precision direct path).
template <typename T, typename To = T>
void DirectConv(const Conv& c) {
  const DLTensor &x = *c.x, &w = *c.w, &y = *c.y;
  const int64_t N = y.shape[0], OC = y.shape[1], OH = y.shape[2], OW = y.shape[3];
  const int64_t H = x.shape[2], W = x.shape[3], KH = w.shape[2], KW = w.shape[3];
  const int64_t icg = w.shape[1], ocg = OC / c.groups;
  ParallelFor(N * OC, N * OC * OH * OW * icg * KH * KW, [&](int64_t lo, int64_t hi) {
    for (int64_t no = lo; no < hi; ++no) {
      const int64_t n = no / OC, oc = no % OC, g = oc / ocg;
      const double b = c.bias ? static_cast<double>(Load(*reinterpret_cast<const T*>(
                                    DataPtr(*c.bias) + oc * c.bias->strides[0] * static_cast<int64_t>(sizeof(T)))))
                              : 0.0;
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = b;
          for (int64_t ic = 0; ic < icg; ++ic)
            for (int64_t kh = 0; kh < KH; ++kh) {
              const int64_t ih = oh * c.stride[0] - c.pad[0] + kh * c.dil[0];
              if (ih < 0 || ih >= H) continue;
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t iw = ow * c.stride[1] - c.pad[1] + kw * c.dil[1];
                if (iw < 0 || iw >= W) continue;
                acc += static_cast<double>(Load(At4<T>(x, n, g * icg + ic, ih, iw))) *
                       static_cast<double>(Load(At4<T>(w, oc, ic, kh, kw)));
              }
            }
          *const_cast<To*>(&At4<To>(y, n, oc, oh, ow)) = Store<To>(acc);
        }
    }
  });
}

// conv2d, and conv2d_fused when `fused` is not null (its arguments 0..6 are conv2d's).
bp_status_t RunConv(const bp_kernel_call_t* call, const Fused* fused) {
  Conv c{bp_kit_tensor_arg(call, BP_ARG_CONV2D_INPUT),
         bp_kit_tensor_arg(call, BP_ARG_CONV2D_WEIGHT),
         bp_kit_tensor_arg(call, BP_ARG_CONV2D_BIAS),
         call->outputs[0],
         {},
         {},
         {},
         1};
  if (c.x == nullptr || c.w == nullptr) return Fail(call, BP_STATUS_INVALID_ARGUMENT, "expected 'input' and 'weight'");
  IntPairArg(call, BP_ARG_CONV2D_STRIDE, 1, c.stride);
  IntPairArg(call, BP_ARG_CONV2D_PADDING, 0, c.pad);
  IntPairArg(call, BP_ARG_CONV2D_DILATION, 1, c.dil);
  c.groups = bp_kit_int_arg(call, BP_ARG_CONV2D_GROUPS, 1);
  c.weight_id = bp_kit_constant_id(call, BP_ARG_CONV2D_WEIGHT);
  if (c.x->ndim != 4 || c.w->ndim != 4 || c.y->ndim != 4 || c.groups < 1 || c.y->shape[1] % c.groups != 0)
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "expected 4-D input, weight and output and groups dividing channels");
  const DType dt = DtypeOf(c.y->dtype);
  if (Numel(*c.y) == 0) return BP_STATUS_OK;
  // oneDNN takes neither broadcast (stride 0) nor overlapping layouts.
  auto broadcast = [](const DLTensor* t) {
    for (int d = 0; t != nullptr && d < t->ndim; ++d)
      if (t->strides[d] == 0 && t->shape[d] > 1) return true;
    return false;
  };
  if ((dt == DType::kFloat32 || dt == DType::kBFloat16) && !broadcast(c.x) && !broadcast(c.w) && !broadcast(c.bias) &&
      !broadcast(fused != nullptr ? fused->residual : nullptr)) {
    try {
      DnnlConv(c, dt == DType::kFloat32 ? dnnl::memory::data_type::f32 : dnnl::memory::data_type::bf16, fused);
      return BP_STATUS_OK;
    } catch (const dnnl::error&) {
      // fall back to the direct loop
    } catch (const std::bad_alloc&) {
      return Fail(call, BP_STATUS_OUT_OF_MEMORY, "out of memory");
    }
  }
  auto direct = [&](auto tag) -> bp_status_t {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same<T, BFloat16>::value || std::is_same<T, Half>::value) {
      if (fused != nullptr) {  // rounded once, as oneDNN does: conv, residual and activation in float32
        const DLTensor& y = *c.y;
        int64_t strides[4] = {y.shape[1] * y.shape[2] * y.shape[3], y.shape[2] * y.shape[3], y.shape[3], 1};
        std::vector<float> buf;
        try {
          buf.resize(static_cast<size_t>(Numel(y)));
        } catch (const std::bad_alloc&) {
          return Fail(call, BP_STATUS_OUT_OF_MEMORY, "out of memory");
        }
        DLTensor tmp = y;
        tmp.data = buf.data();
        tmp.byte_offset = 0;
        tmp.dtype = DLDataType{kDLFloat, 32, 1};
        tmp.strides = strides;
        Conv f32 = c;
        f32.y = &tmp;
        DirectConv<T, float>(f32);
        ApplyFused<float, T>(tmp, *fused);
        return CopyTensor(y, tmp);
      }
    }
    DirectConv<T>(c);
    if (fused != nullptr) ApplyFused<T>(*c.y, *fused);
    return BP_STATUS_OK;
  };
  switch (dt) {
    case DType::kFloat32:
      return direct(Tag<float>{});
    case DType::kFloat64:
      return direct(Tag<double>{});
    case DType::kBFloat16:
      return direct(Tag<BFloat16>{});
    case DType::kFloat16:
      return direct(Tag<Half>{});
    default:
      return FailDtype(call, *c.y);
  }
}

bp_status_t Conv2d(const bp_kernel_call_t* call) { return RunConv(call, nullptr); }

static_assert(BP_ARG_CONV2D_FUSED_INPUT == BP_ARG_CONV2D_INPUT && BP_ARG_CONV2D_FUSED_WEIGHT == BP_ARG_CONV2D_WEIGHT &&
                  BP_ARG_CONV2D_FUSED_BIAS == BP_ARG_CONV2D_BIAS &&
                  BP_ARG_CONV2D_FUSED_STRIDE == BP_ARG_CONV2D_STRIDE &&
                  BP_ARG_CONV2D_FUSED_PADDING == BP_ARG_CONV2D_PADDING &&
                  BP_ARG_CONV2D_FUSED_DILATION == BP_ARG_CONV2D_DILATION &&
                  BP_ARG_CONV2D_FUSED_GROUPS == BP_ARG_CONV2D_GROUPS,
              "conv2d_fused starts with conv2d's arguments");

bp_status_t Conv2dFused(const bp_kernel_call_t* call) {
  Fused f{bp_kit_tensor_arg(call, BP_ARG_CONV2D_FUSED_RESIDUAL), Act::kNone,
          bp_kit_double_arg(call, BP_ARG_CONV2D_FUSED_ALPHA, 0.0),
          bp_kit_double_arg(call, BP_ARG_CONV2D_FUSED_BETA, 0.0)};
  const char* act = bp_kit_string_arg(call, BP_ARG_CONV2D_FUSED_ACTIVATION);
  if (act != nullptr) {
    size_t k = 0;
    while (k < sizeof(kActNames) / sizeof(kActNames[0]) && std::strcmp(kActNames[k], act) != 0) ++k;
    if (k == sizeof(kActNames) / sizeof(kActNames[0]))
      return Fail(call, BP_STATUS_INVALID_ARGUMENT, "argument 'activation': unknown activation '%s'", act);
    f.act = static_cast<Act>(k);
  }
  return RunConv(call, &f);
}

struct Pool {
  int64_t k[2], s[2], p[2], d[2];
  bool count_include_pad;
  int64_t divisor;  // 0: none
};

// The valid taps [lo, hi) of one output position along one axis, and the
// input index of tap 0 (tap t reads i0 + t * dilation).
struct Taps {
  int64_t lo, hi, i0;
};

std::vector<Taps> Windows(int64_t out, int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  std::vector<Taps> w(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    const int64_t i0 = o * s - p;
    int64_t lo = i0 >= 0 ? 0 : (-i0 + d - 1) / d;
    int64_t hi = in - 1 - i0 < 0 ? 0 : std::min(k, (in - 1 - i0) / d + 1);
    lo = std::min(lo, k);
    w[static_cast<size_t>(o)] = Taps{lo, std::max(lo, hi), i0};
  }
  return w;
}

// NaN wins (as torch): once m is NaN no value replaces it.
template <typename C>
inline C MaxNan(C m, C v) {
  return (v > m || v != v) ? v : m;
}

// MaxNan as selects (no branch): the form GCC vectorizes.
template <typename C>
inline C MaxNanSelect(C m, C v) {
  const C r = v > m ? v : m;
  return v != v ? v : r;
}

template <typename T>
void MaxPoolLoop(const DLTensor& x, const DLTensor& y, const Pool& P) {
  using C = opmath_t<T>;  // float or double: max is exact in either
  const int64_t N = y.shape[0], Ch = y.shape[1], OH = y.shape[2], OW = y.shape[3];
  const int64_t H = x.shape[2], W = x.shape[3];
  const std::vector<Taps> rows = Windows(OH, H, P.k[0], P.s[0], P.p[0], P.d[0]);
  const std::vector<Taps> cols = Windows(OW, W, P.k[1], P.s[1], P.p[1], P.d[1]);
  const int64_t es = static_cast<int64_t>(sizeof(T));
  // The common 2x2 / stride 2 window over unit-stride rows: two loads per row.
  // GCC vectorizes this loop at -O3; a Highway version (ConcatEven/ConcatOdd)
  // measured 760 us against this loop's 395 us on 8x64x56x56, one thread.
  const bool pairs = x.strides[3] == 1 && P.k[1] == 2 && P.s[1] == 2 && P.d[1] == 1 && P.p[1] == 0 && 2 * OW <= W;
  // The output columns [in_lo, in_hi) whose whole window is inside the row.
  int64_t in_lo = 0, in_hi = 0;
  while (in_lo < OW && (cols[static_cast<size_t>(in_lo)].lo != 0 || cols[static_cast<size_t>(in_lo)].hi != P.k[1]))
    ++in_lo;
  in_hi = in_lo;
  while (in_hi < OW && cols[static_cast<size_t>(in_hi)].lo == 0 && cols[static_cast<size_t>(in_hi)].hi == P.k[1])
    ++in_hi;
  ParallelFor(N * Ch, N * Ch * OH * OW * P.k[0] * P.k[1], [&](int64_t lo, int64_t hi) {
    std::vector<C> acc(static_cast<size_t>(OW));
    for (int64_t nc = lo; nc < hi; ++nc) {
      const int64_t n = nc / Ch, ch = nc % Ch;
      const char* xp = DataPtr(x) + (n * x.strides[0] + ch * x.strides[1]) * es;
      char* yp = DataPtr(y) + (n * y.strides[0] + ch * y.strides[1]) * es;
      for (int64_t oh = 0; oh < OH; ++oh) {
        const Taps r = rows[static_cast<size_t>(oh)];
        C* a = acc.data();
        for (int64_t ow = 0; ow < OW; ++ow) a[ow] = -std::numeric_limits<C>::infinity();
        for (int64_t kh = r.lo; kh < r.hi; ++kh) {
          const T* xr = reinterpret_cast<const T*>(xp + (r.i0 + kh * P.d[0]) * x.strides[2] * es);
          if (pairs) {
            for (int64_t ow = 0; ow < OW; ++ow)
              a[ow] = MaxNan(MaxNan(a[ow], static_cast<C>(Load(xr[2 * ow]))), static_cast<C>(Load(xr[2 * ow + 1])));
            continue;
          }
          // Columns whose window lies inside the row: tap by tap over all of
          // them (unit-stride rows), a branch-free loop GCC vectorizes; the
          // same kh-then-kw order as the edge loop below.
          if (x.strides[3] == 1 && in_lo < in_hi) {
            for (int64_t kw = 0; kw < P.k[1]; ++kw) {
              const T* xc = xr + kw * P.d[1] - P.p[1];
              for (int64_t ow = in_lo; ow < in_hi; ++ow)
                a[ow] = MaxNanSelect(a[ow], static_cast<C>(Load(xc[ow * P.s[1]])));
            }
          }
          for (int64_t ow = 0; ow < OW; ++ow) {
            if (x.strides[3] == 1 && ow >= in_lo && ow < in_hi) continue;
            const Taps c = cols[static_cast<size_t>(ow)];
            C m = a[ow];
            for (int64_t kw = c.lo; kw < c.hi; ++kw)
              m = MaxNan(m, static_cast<C>(Load(xr[(c.i0 + kw * P.d[1]) * x.strides[3]])));
            a[ow] = m;
          }
        }
        T* yr = reinterpret_cast<T*>(yp + oh * y.strides[2] * es);
        for (int64_t ow = 0; ow < OW; ++ow) yr[ow * y.strides[3]] = Store<T>(a[ow]);
      }
    }
  });
}

// Channels-last (NHWC) input and output: each window's taps are rows of C
// contiguous channels, so the max runs across channels, a loop GCC
// vectorizes (the NCHW loop above would stride by C for every tap).
// Taps of one window the float32 channels-last path takes at once.
constexpr int64_t kMaxTaps = 64;

template <typename T>
void MaxPoolNhwc(const DLTensor& x, const DLTensor& y, const Pool& P) {
  using C = opmath_t<T>;
  const int64_t N = y.shape[0], Ch = y.shape[1], OH = y.shape[2], OW = y.shape[3];
  const std::vector<Taps> rows = Windows(OH, x.shape[2], P.k[0], P.s[0], P.p[0], P.d[0]);
  const std::vector<Taps> cols = Windows(OW, x.shape[3], P.k[1], P.s[1], P.p[1], P.d[1]);
  ParallelFor(N * OH, N * Ch * OH * OW * P.k[0] * P.k[1], [&](int64_t lo, int64_t hi) {
    std::vector<C> acc(static_cast<size_t>(Ch));
    for (int64_t row = lo; row < hi; ++row) {
      const int64_t n = row / OH, oh = row % OH;
      const Taps r = rows[static_cast<size_t>(oh)];
      const T* xn = reinterpret_cast<const T*>(DataPtr(x)) + n * x.strides[0];
      T* yr = reinterpret_cast<T*>(DataPtr(y)) + n * y.strides[0] + oh * y.strides[2];
      for (int64_t ow = 0; ow < OW; ++ow) {
        const Taps c = cols[static_cast<size_t>(ow)];
        if constexpr (std::is_same<T, float>::value) {
          if ((r.hi - r.lo) * (c.hi - c.lo) <= kMaxTaps) {  // vector rows of channels
            const float* taps[kMaxTaps];
            int64_t nt = 0;
            for (int64_t kh = r.lo; kh < r.hi; ++kh)
              for (int64_t kw = c.lo; kw < c.hi; ++kw)
                taps[nt++] = xn + (r.i0 + kh * P.d[0]) * x.strides[2] + (c.i0 + kw * P.d[1]) * x.strides[3];
            simd::MaxTapsF32(taps, nt, Ch, yr + ow * y.strides[3]);
            continue;
          }
        }
        C* a = acc.data();
        for (int64_t ch = 0; ch < Ch; ++ch) a[ch] = -std::numeric_limits<C>::infinity();
        for (int64_t kh = r.lo; kh < r.hi; ++kh) {
          for (int64_t kw = c.lo; kw < c.hi; ++kw) {
            const T* xt = xn + (r.i0 + kh * P.d[0]) * x.strides[2] + (c.i0 + kw * P.d[1]) * x.strides[3];
            for (int64_t ch = 0; ch < Ch; ++ch) a[ch] = MaxNanSelect(a[ch], static_cast<C>(Load(xt[ch])));
          }
        }
        T* yt = yr + ow * y.strides[3];
        for (int64_t ch = 0; ch < Ch; ++ch) yt[ch] = Store<T>(a[ch]);
      }
    }
  });
}

template <typename T>
void AvgPoolLoop(const DLTensor& x, const DLTensor& y, const Pool& P) {
  const int64_t N = y.shape[0], C = y.shape[1], OH = y.shape[2], OW = y.shape[3];
  const int64_t H = x.shape[2], W = x.shape[3];
  ParallelFor(N * C, N * C * OH * OW * P.k[0] * P.k[1], [&](int64_t lo, int64_t hi) {
    for (int64_t nc = lo; nc < hi; ++nc) {
      const int64_t n = nc / C, ch = nc % C;
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          T* out = const_cast<T*>(&At4<T>(y, n, ch, oh, ow));
          int64_t hs = oh * P.s[0] - P.p[0], ws = ow * P.s[1] - P.p[1];
          int64_t he = std::min(hs + P.k[0], H + P.p[0]), we = std::min(ws + P.k[1], W + P.p[1]);
          const int64_t pool_size = (he - hs) * (we - ws);
          hs = std::max<int64_t>(hs, 0);
          ws = std::max<int64_t>(ws, 0);
          he = std::min(he, H);
          we = std::min(we, W);
          if (hs >= he || ws >= we) {
            *out = Store<T>(0.0);
            continue;
          }
          double sum = 0;
          for (int64_t ih = hs; ih < he; ++ih)
            for (int64_t iw = ws; iw < we; ++iw) sum += static_cast<double>(Load(At4<T>(x, n, ch, ih, iw)));
          const int64_t div = P.divisor != 0 ? P.divisor : P.count_include_pad ? pool_size : (he - hs) * (we - ws);
          *out = Store<T>(sum / static_cast<double>(div));
        }
    }
  });
}

template <typename T, bool kMax>
void PoolLoop(const DLTensor& x, const DLTensor& y, const Pool& P) {
  if constexpr (kMax) {
    if (x.shape[1] > 1 && x.strides[1] == 1 && y.strides[1] == 1) {
      MaxPoolNhwc<T>(x, y, P);
      return;
    }
    MaxPoolLoop<T>(x, y, P);
  } else {
    AvgPoolLoop<T>(x, y, P);
  }
}

template <bool kMax>
bp_status_t Pool2d(const bp_kernel_call_t* call) {
  const DLTensor* x = bp_kit_tensor_arg(call, BP_ARG_MAX_POOL2D_SELF);
  DLTensor* y = call->outputs[0];
  if (x == nullptr || x->ndim != 4 || y->ndim != 4)
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "expected a 4-D input [N, C, H, W] and output");
  Pool P{};
  IntPairArg(call, BP_ARG_MAX_POOL2D_KERNEL_SIZE, 1, P.k);
  if (!IntPairArg(call, BP_ARG_MAX_POOL2D_STRIDE, 0, P.s) || P.s[0] == 0) {
    P.s[0] = P.k[0];
    P.s[1] = P.k[1];
  }
  IntPairArg(call, BP_ARG_MAX_POOL2D_PADDING, 0, P.p);
  if (kMax) {
    IntPairArg(call, BP_ARG_MAX_POOL2D_DILATION, 1, P.d);
  } else {
    P.d[0] = P.d[1] = 1;
    P.count_include_pad = bp_kit_bool_arg(call, BP_ARG_AVG_POOL2D_COUNT_INCLUDE_PAD, true);
    P.divisor = bp_kit_int_arg(call, BP_ARG_AVG_POOL2D_DIVISOR_OVERRIDE, 0);
  }
  if (P.k[0] <= 0 || P.k[1] <= 0 || P.s[0] <= 0 || P.s[1] <= 0)
    return Fail(call, BP_STATUS_INVALID_ARGUMENT, "kernel_size and stride must be positive");
  switch (DtypeOf(y->dtype)) {
    case DType::kFloat32:
      PoolLoop<float, kMax>(*x, *y, P);
      return BP_STATUS_OK;
    case DType::kFloat64:
      PoolLoop<double, kMax>(*x, *y, P);
      return BP_STATUS_OK;
    case DType::kBFloat16:
      PoolLoop<BFloat16, kMax>(*x, *y, P);
      return BP_STATUS_OK;
    case DType::kFloat16:
      PoolLoop<Half, kMax>(*x, *y, P);
      return BP_STATUS_OK;
    default:
      return FailDtype(call, *y);
  }
}

const KernelDef kKernels[] = {
    {BP_OP_CONV2D, Conv2d, nullptr},
    {BP_OP_CONV2D_FUSED, Conv2dFused, nullptr},
    {BP_OP_MAX_POOL2D, Pool2d<true>, nullptr},
    {BP_OP_AVG_POOL2D, Pool2d<false>, nullptr},
};

}  // namespace

const KernelDef* ConvPoolKernels(size_t* count) {
  *count = sizeof(kKernels) / sizeof(kKernels[0]);
  return kKernels;
}

}  // namespace bp_cpu
