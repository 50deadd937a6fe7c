// Highway implementations of simd.h, compiled once per target instruction set
// (foreach_target.h re-includes this file) and dispatched at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd.cpp"
// clang-format off
#include <hwy/foreach_target.h>  // must come before highway.h
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

#include <cmath>
#include <limits>

#include "kernels/simd.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace bp_cpu {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;

// Runs body(v) -> vector over x[0..n) into y, the tail through a padded
// buffer, so every element goes through the same vector code.
template <class F>
HWY_INLINE void Map(const float* HWY_RESTRICT x, float* y, int64_t n, F body) {
  const D d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    const V a = hn::LoadU(d, x + i), b = hn::LoadU(d, x + i + L);
    hn::StoreU(body(a), d, y + i);
    hn::StoreU(body(b), d, y + i + L);
  }
  for (; i + L <= n; i += L) hn::StoreU(body(hn::LoadU(d, x + i)), d, y + i);
  if (i < n) {
    HWY_ALIGN float buf[hn::MaxLanes(d)] = {};
    for (int64_t k = i; k < n; ++k) buf[k - i] = x[k];
    hn::Store(body(hn::Load(d, buf)), d, buf);
    for (int64_t k = i; k < n; ++k) y[k] = buf[k - i];
  }
}

// Highway's Exp with the edges made exact: above ln(FLT_MAX) -> +inf (its
// valid range ends at 104), NaN -> NaN.
HWY_INLINE V ExpV(D d, V x) {
  const V kOverflow = hn::Set(d, 88.72283935546875f);
  const V y = hn::Exp(d, hn::Min(x, hn::Set(d, 100.0f)));
  const V big = hn::IfThenElse(hn::Gt(x, kOverflow), hn::Set(d, std::numeric_limits<float>::infinity()), y);
  return hn::IfThenElse(hn::IsNaN(x), x, big);
}

// erf(z) for any z: 1 - t*(a1 + t*(a2 + ...)) * exp(-z^2), t = 1/(1 + p|z|),
// Abramowitz and Stegun 7.1.26 (|error| <= 1.5e-7); sign restored.
HWY_INLINE V ErfV(D d, V z) {
  const V az = hn::Abs(z);
  const V one = hn::Set(d, 1.0f);
  const V t = hn::Div(one, hn::MulAdd(hn::Set(d, 0.3275911f), az, one));
  V p = hn::Set(d, 1.061405429f);
  p = hn::MulAdd(p, t, hn::Set(d, -1.453152027f));
  p = hn::MulAdd(p, t, hn::Set(d, 1.421413741f));
  p = hn::MulAdd(p, t, hn::Set(d, -0.284496736f));
  p = hn::MulAdd(p, t, hn::Set(d, 0.254829592f));
  p = hn::Mul(p, t);
  const V e = hn::Exp(d, hn::Neg(hn::Mul(az, az)));  // -z^2 <= 0: in Exp's range (0 below -104)
  const V r = hn::NegMulAdd(p, e, one);
  return hn::CopySign(r, z);
}

void ExpImpl(const float* x, float* y, int64_t n) {
  const D d;
  Map(x, y, n, [d](V v) HWY_ATTR { return ExpV(d, v); });
}

void ReluImpl(const float* x, float* y, int64_t n) {
  const D d;
  Map(x, y, n, [d](V v) HWY_ATTR {
    // x <= 0 -> 0 (also -0.0); NaN compares false and stays.
    return hn::IfThenZeroElse(hn::Le(v, hn::Zero(d)), v);
  });
}

void GeluErfImpl(const float* x, float* y, int64_t n) {
  const D d;
  Map(x, y, n, [d](V v) HWY_ATTR {
    const V erf = ErfV(d, hn::Mul(v, hn::Set(d, 0.70710678118654752f)));
    return hn::Mul(hn::Mul(v, hn::Set(d, 0.5f)), hn::Add(hn::Set(d, 1.0f), erf));
  });
}

void GeluTanhImpl(const float* x, float* y, int64_t n) {
  const D d;
  Map(x, y, n, [d](V v) HWY_ATTR {
    const V x3 = hn::Mul(hn::Mul(v, v), v);
    const V inner = hn::Mul(hn::Set(d, 0.7978845608028654f), hn::MulAdd(hn::Set(d, 0.044715f), x3, v));
    const V th = hn::Tanh(d, inner);
    return hn::Mul(hn::Mul(hn::Set(d, 0.5f), v), hn::Add(hn::Set(d, 1.0f), th));
  });
}

// 1 / (1 + exp(-x)), the scalar kernel's formula on ExpV: -x above
// ln(FLT_MAX) gives 1/inf = 0, NaN stays NaN.
void SigmoidImpl(const float* x, float* y, int64_t n) {
  const D d;
  Map(x, y, n, [d](V v) HWY_ATTR {
    const V one = hn::Set(d, 1.0f);
    return hn::Div(one, hn::Add(one, ExpV(d, hn::Neg(v))));
  });
}

// x / (1 + exp(-x)), as the scalar kernel (so -inf gives NaN, as torch).
void SiluImpl(const float* x, float* y, int64_t n) {
  const D d;
  Map(x, y, n, [d](V v) HWY_ATTR { return hn::Div(v, hn::Add(hn::Set(d, 1.0f), ExpV(d, hn::Neg(v)))); });
}

// Highway's Tanh; NaN kept explicitly (its polynomial path may not).
void TanhImpl(const float* x, float* y, int64_t n) {
  const D d;
  Map(x, y, n, [d](V v) HWY_ATTR { return hn::IfThenElse(hn::IsNaN(v), v, hn::Tanh(d, v)); });
}

void ScaleShiftImpl(const float* x, float* y, int64_t n, float scale, float shift) {
  const D d;
  const V s = hn::Set(d, scale), t = hn::Set(d, shift);
  Map(x, y, n, [s, t](V v) HWY_ATTR { return hn::MulAdd(v, s, t); });
}

// Sum of one block (n <= kSumBlock): four vector accumulators, tail masked.
HWY_INLINE V BlockSum(D d, const float* HWY_RESTRICT x, int64_t n) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  V a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  int64_t i = 0;
  for (; i + 4 * L <= n; i += 4 * L) {
    a0 = hn::Add(a0, hn::LoadU(d, x + i));
    a1 = hn::Add(a1, hn::LoadU(d, x + i + L));
    a2 = hn::Add(a2, hn::LoadU(d, x + i + 2 * L));
    a3 = hn::Add(a3, hn::LoadU(d, x + i + 3 * L));
  }
  for (; i + L <= n; i += L) a0 = hn::Add(a0, hn::LoadU(d, x + i));
  if (i < n) {
    HWY_ALIGN float buf[hn::MaxLanes(d)] = {};
    for (int64_t k = i; k < n; ++k) buf[k - i] = x[k];
    a1 = hn::Add(a1, hn::Load(d, buf));
  }
  return hn::Add(hn::Add(a0, a1), hn::Add(a2, a3));
}

// out[k] = max over t < ntaps of taps[t][k], k < n, NaN winning (as the
// pooling kernels' MaxNanSelect); -inf for no taps.
void MaxTapsImpl(const float* const* taps, int64_t ntaps, int64_t n, float* out) {
  const D d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  auto step = [&](V m, V v) HWY_ATTR { return hn::IfThenElse(hn::IsNaN(v), v, hn::IfThenElse(hn::Gt(v, m), v, m)); };
  int64_t k = 0;
  for (; k + L <= n; k += L) {
    V m = hn::Set(d, -std::numeric_limits<float>::infinity());
    for (int64_t t = 0; t < ntaps; ++t) m = step(m, hn::LoadU(d, taps[t] + k));
    hn::StoreU(m, d, out + k);
  }
  for (; k < n; ++k) {
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t t = 0; t < ntaps; ++t) {
      const float v = taps[t][k];
      const float r = v > m ? v : m;
      m = v != v ? v : r;
    }
    out[k] = m;
  }
}

// acc[k] += sum over r < rows of x[r * stride + k], k < cols: blocks of
// kRowsBlock rows summed in float32 vectors, each block's sums added into
// the double accumulators.
void SumRowsImpl(const float* x, int64_t stride, int64_t rows, int64_t cols, double* acc) {
  const D d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  constexpr int64_t kRowsBlock = 64;
  HWY_ALIGN float part[256];
  for (int64_t c0 = 0; c0 < cols; c0 += 256) {
    const int64_t cn = cols - c0 < 256 ? cols - c0 : 256;
    const int64_t cv = cn - cn % L;  // columns in whole vectors; the rest scalar
    for (int64_t r0 = 0; r0 < rows; r0 += kRowsBlock) {
      const int64_t rn = rows - r0 < kRowsBlock ? rows - r0 : kRowsBlock;
      for (int64_t k = 0; k < cn; ++k) part[k] = 0.0f;
      for (int64_t r = r0; r < r0 + rn; ++r) {
        const float* row = x + r * stride + c0;
        for (int64_t k = 0; k < cv; k += L)
          hn::Store(hn::Add(hn::Load(d, part + k), hn::LoadU(d, row + k)), d, part + k);
        for (int64_t k = cv; k < cn; ++k) part[k] += row[k];
      }
      for (int64_t k = 0; k < cn; ++k) acc[c0 + k] += static_cast<double>(part[k]);
    }
  }
}

// Pairwise over blocks, in one forward pass: block sums are combined like a
// binary counter (after block k, a stack holds the sums of runs of 2^j
// blocks for each set bit j of k), which adds the same pairs as recursive
// halving without leaving the streaming loop.
float SumImpl(const float* x, int64_t n) {
  const D d;
  if (n <= 0) return 0.0f;
  V stack[64];
  int top = 0;
  int64_t k = 0;
  for (int64_t i = 0; i < n; i += kSumBlock, ++k) {
    V s = BlockSum(d, x + i, n - i < kSumBlock ? n - i : kSumBlock);
    for (int64_t c = k; c & 1; c >>= 1) s = hn::Add(stack[--top], s);
    stack[top++] = s;
  }
  V total = stack[--top];
  while (top > 0) total = hn::Add(stack[--top], total);
  return hn::GetLane(hn::SumOfLanes(d, total));
}

// Max of a row (NaN, if any, need not win: the exp pass turns it into NaN).
HWY_INLINE float RowMax(D d, const float* HWY_RESTRICT x, int64_t n) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const float kNegInf = -std::numeric_limits<float>::infinity();
  V m0 = hn::Set(d, kNegInf), m1 = m0;
  int64_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    m0 = hn::Max(m0, hn::LoadU(d, x + i));
    m1 = hn::Max(m1, hn::LoadU(d, x + i + L));
  }
  float m = hn::GetLane(hn::MaxOfLanes(d, hn::Max(m0, m1)));
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

void SoftmaxRowImpl(const float* x, float* y, int64_t n, bool log) {
  const D d;
  float m = RowMax(d, x, n);
  if (std::isinf(m) && m < 0) m = 0.0f;  // all -inf: exp(-inf - 0) = 0, as torch
  const V vm = hn::Set(d, m);
  if (log) {
    // log_softmax = x - m - log(sum(exp(x - m))): exp values are not stored.
    const int64_t L = static_cast<int64_t>(hn::Lanes(d));
    V acc = hn::Zero(d);
    int64_t i = 0;
    for (; i + L <= n; i += L) acc = hn::Add(acc, ExpV(d, hn::Sub(hn::LoadU(d, x + i), vm)));
    float sum = hn::GetLane(hn::SumOfLanes(d, acc));
    for (; i < n; ++i) sum += std::exp(x[i] - m);
    const float shift = m + static_cast<float>(std::log(static_cast<double>(sum)));
    const V vs = hn::Set(d, shift);
    Map(x, y, n, [vs](V v) HWY_ATTR { return hn::Sub(v, vs); });
    return;
  }
  // softmax: y = exp(x - m), stored and summed in one pass, then scaled by
  // 1 / sum.
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  V acc = hn::Zero(d);
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    const V e = ExpV(d, hn::Sub(hn::LoadU(d, x + i), vm));
    hn::StoreU(e, d, y + i);
    acc = hn::Add(acc, e);
  }
  float sum = hn::GetLane(hn::SumOfLanes(d, acc));
  for (; i < n; ++i) {
    y[i] = std::exp(x[i] - m);
    sum += y[i];
  }
  const float inv = 1.0f / sum;
  const V vi = hn::Set(d, inv);
  Map(y, y, n, [vi](V v) HWY_ATTR { return hn::Mul(v, vi); });
}

float SumSqDevImpl(const float* x, int64_t n, float mean) {
  const D d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const V vmean = hn::Set(d, mean);
  V acc0 = hn::Zero(d), acc1 = hn::Zero(d);
  int64_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    const V a = hn::Sub(hn::LoadU(d, x + i), vmean), c = hn::Sub(hn::LoadU(d, x + i + L), vmean);
    acc0 = hn::MulAdd(a, a, acc0);
    acc1 = hn::MulAdd(c, c, acc1);
  }
  float ss = hn::GetLane(hn::SumOfLanes(d, hn::Add(acc0, acc1)));
  for (; i < n; ++i) ss += (x[i] - mean) * (x[i] - mean);
  return ss;
}

void LayerNormRowImpl(const float* x, float* y, int64_t n, const float* w, const float* b, double eps) {
  const D d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const float mean = SumImpl(x, n) / static_cast<float>(n);
  const float ss = SumSqDevImpl(x, n, mean);
  const float rstd = static_cast<float>(1.0 / std::sqrt(static_cast<double>(ss) / static_cast<double>(n) + eps));
  // y = (x * rstd + (-mean * rstd)) * w + b
  const V vr = hn::Set(d, rstd), vsh = hn::Set(d, -mean * rstd);
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    V v = hn::MulAdd(hn::LoadU(d, x + i), vr, vsh);
    if (w != nullptr) v = hn::Mul(v, hn::LoadU(d, w + i));
    if (b != nullptr) v = hn::Add(v, hn::LoadU(d, b + i));
    hn::StoreU(v, d, y + i);
  }
  for (; i < n; ++i) {
    float v = (x[i] - mean) * rstd;
    if (w != nullptr) v *= w[i];
    if (b != nullptr) v += b[i];
    y[i] = v;
  }
}

// dst[c * dst_pitch + r] = src[r * src_pitch + c] for a rows x cols block of
// 32-bit elements, moved as bits (NaN payloads kept): 4x4 blocks through
// 128-bit vectors (two rounds of interleaves), the edges element by element.
void TransposeU32Impl(const uint32_t* src, int64_t src_pitch, uint32_t* dst, int64_t dst_pitch, int64_t rows,
                      int64_t cols) {
  int64_t c = 0;
#if HWY_TARGET != HWY_SCALAR  // the scalar target has no 128-bit vectors
  // Columns outer, rows inner: the four destination rows being written fill
  // whole cache lines before moving on (with power-of-two pitches, lines
  // left half written would be evicted and fetched again).
  const hn::Full128<uint32_t> d;
  const int64_t rows4 = rows & ~int64_t{3};
  for (; c + 4 <= cols; c += 4) {
    for (int64_t r = 0; r < rows4; r += 4) {
      const uint32_t* s = src + r * src_pitch + c;
      const auto r0 = hn::LoadU(d, s), r1 = hn::LoadU(d, s + src_pitch);
      const auto r2 = hn::LoadU(d, s + 2 * src_pitch), r3 = hn::LoadU(d, s + 3 * src_pitch);
      const auto t0 = hn::InterleaveLower(d, r0, r1), t1 = hn::InterleaveLower(d, r2, r3);
      const auto t2 = hn::InterleaveUpper(d, r0, r1), t3 = hn::InterleaveUpper(d, r2, r3);
      uint32_t* o = dst + c * dst_pitch + r;
      hn::StoreU(hn::ConcatLowerLower(d, t1, t0), d, o);
      hn::StoreU(hn::ConcatUpperUpper(d, t1, t0), d, o + dst_pitch);
      hn::StoreU(hn::ConcatLowerLower(d, t3, t2), d, o + 2 * dst_pitch);
      hn::StoreU(hn::ConcatUpperUpper(d, t3, t2), d, o + 3 * dst_pitch);
    }
    for (int64_t r = rows4; r < rows; ++r)
      for (int64_t k = 0; k < 4; ++k) dst[(c + k) * dst_pitch + r] = src[r * src_pitch + c + k];
  }
#endif
  for (; c < cols; ++c)
    for (int64_t r = 0; r < rows; ++r) dst[c * dst_pitch + r] = src[r * src_pitch + c];
}

const char* TargetNameImpl() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace bp_cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace bp_cpu {
namespace simd {

HWY_EXPORT(ExpImpl);
HWY_EXPORT(ReluImpl);
HWY_EXPORT(GeluErfImpl);
HWY_EXPORT(GeluTanhImpl);
HWY_EXPORT(SigmoidImpl);
HWY_EXPORT(SiluImpl);
HWY_EXPORT(TanhImpl);
HWY_EXPORT(ScaleShiftImpl);
HWY_EXPORT(SumImpl);
HWY_EXPORT(SumSqDevImpl);
HWY_EXPORT(SumRowsImpl);
HWY_EXPORT(MaxTapsImpl);
HWY_EXPORT(SoftmaxRowImpl);
HWY_EXPORT(LayerNormRowImpl);
HWY_EXPORT(TargetNameImpl);
HWY_EXPORT(TransposeU32Impl);

void ExpF32(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(ExpImpl)(x, y, n); }
void ReluF32(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(ReluImpl)(x, y, n); }
void GeluErfF32(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(GeluErfImpl)(x, y, n); }
void GeluTanhF32(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(GeluTanhImpl)(x, y, n); }
void SigmoidF32(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(SigmoidImpl)(x, y, n); }
void SiluF32(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(SiluImpl)(x, y, n); }
void TanhF32(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(TanhImpl)(x, y, n); }
void ScaleShiftF32(const float* x, float* y, int64_t n, float scale, float shift) {
  HWY_DYNAMIC_DISPATCH(ScaleShiftImpl)(x, y, n, scale, shift);
}
float SumF32(const float* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(SumImpl)(x, n); }
float SumSqDevF32(const float* x, int64_t n, float mean) { return HWY_DYNAMIC_DISPATCH(SumSqDevImpl)(x, n, mean); }
void MaxTapsF32(const float* const* taps, int64_t ntaps, int64_t n, float* out) {
  HWY_DYNAMIC_DISPATCH(MaxTapsImpl)(taps, ntaps, n, out);
}
void SumRowsF32(const float* x, int64_t stride, int64_t rows, int64_t cols, double* acc) {
  HWY_DYNAMIC_DISPATCH(SumRowsImpl)(x, stride, rows, cols, acc);
}
void SoftmaxRowF32(const float* x, float* y, int64_t n, bool log) {
  HWY_DYNAMIC_DISPATCH(SoftmaxRowImpl)(x, y, n, log);
}
void LayerNormRowF32(const float* x, float* y, int64_t n, const float* w, const float* b, double eps) {
  HWY_DYNAMIC_DISPATCH(LayerNormRowImpl)(x, y, n, w, b, eps);
}
void TransposeU32(const uint32_t* src, int64_t src_pitch, uint32_t* dst, int64_t dst_pitch, int64_t rows,
                  int64_t cols) {
  HWY_DYNAMIC_DISPATCH(TransposeU32Impl)(src, src_pitch, dst, dst_pitch, rows, cols);
}
const char* TargetName() { return HWY_DYNAMIC_DISPATCH(TargetNameImpl)(); }

}  // namespace simd
}  // namespace bp_cpu
#endif  // HWY_ONCE
