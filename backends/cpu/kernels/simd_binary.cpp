// Highway implementations of the binary pointwise functions of simd.h
// (arithmetic, comparisons, where), compiled once per target instruction set
// (foreach_target.h re-includes this file) and dispatched at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd_binary.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h
#include <hwy/highway.h>

#include "kernels/simd.h"

HWY_BEFORE_NAMESPACE();
namespace bp_cpu {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;
using M = hn::Mask<D>;
using D8 = hn::Rebind<uint8_t, D>;  // bool lanes, one per float lane
using DI = hn::RebindToSigned<D>;
using DU = hn::RebindToUnsigned<D>;
constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(float);

// One input: a unit-stride row, or one element read at step 0 from a buffer
// filled with it, so the loop below has no branch per shape.
template <typename T>
struct In {
  const T* p;
  int64_t step;
  HWY_ALIGN T splat[kMaxLanes];
  In(const T* src, int64_t s) : p(src), step(s) {
    if (s == 0) {
      for (size_t k = 0; k < kMaxLanes; ++k) splat[k] = src[0];
      p = splat;
    }
  }
};

HWY_INLINE M CondMask(const uint8_t* c) {
  return hn::RebindMask(D(), hn::Ne(hn::PromoteTo(DU(), hn::LoadU(D8(), c)), hn::Zero(DU())));
}

// The one driver of every function here: y[i] = body(a[i], b[i], c[i]) over
// n lanes, c read only when kCond. The tail goes through padded buffers, so
// every element takes the same vector code. To is float or uint8_t (bool).
template <bool kCond, typename To, class Body>
HWY_INLINE void Zip(const float* a, int64_t sa, const float* b, int64_t sb, const uint8_t* c, int64_t sc, To* y,
                    int64_t n, Body body) {
  const D d;
  const hn::Rebind<To, D> dto;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const In<float> ia(a, sa), ib(b, sb);
  const In<uint8_t> ic(kCond ? c : reinterpret_cast<const uint8_t*>(a), kCond ? sc : 0);
  auto step = [&](const float* pa, const float* pb, const uint8_t* pc, To* py) HWY_ATTR {
    const M m = kCond ? CondMask(pc) : hn::FirstN(d, 0);
    hn::StoreU(body(hn::LoadU(d, pa), hn::LoadU(d, pb), m), dto, py);
  };
  int64_t i = 0;
  for (; i + L <= n; i += L) step(ia.p + i * ia.step, ib.p + i * ib.step, ic.p + i * ic.step, y + i);
  if (i < n) {
    HWY_ALIGN float ba[kMaxLanes] = {}, bb[kMaxLanes] = {};
    HWY_ALIGN uint8_t bc[kMaxLanes] = {};
    HWY_ALIGN To by[kMaxLanes] = {};
    for (int64_t k = i; k < n; ++k) {
      ba[k - i] = ia.p[k * ia.step];
      bb[k - i] = ib.p[k * ib.step];
      bc[k - i] = ic.p[k * ic.step];
    }
    step(ba, bb, bc, by);
    for (int64_t k = i; k < n; ++k) y[k] = by[k - i];
  }
}

void BinaryImpl(BinOp op, const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n) {
  switch (op) {
    case BinOp::kAdd:
      return Zip<false>(a, sa, b, sb, nullptr, 0, y, n, [](V x, V z, M) HWY_ATTR { return hn::Add(x, z); });
    case BinOp::kSub:
      return Zip<false>(a, sa, b, sb, nullptr, 0, y, n, [](V x, V z, M) HWY_ATTR { return hn::Sub(x, z); });
    case BinOp::kMul:
      return Zip<false>(a, sa, b, sb, nullptr, 0, y, n, [](V x, V z, M) HWY_ATTR { return hn::Mul(x, z); });
    case BinOp::kDiv:
      return Zip<false>(a, sa, b, sb, nullptr, 0, y, n, [](V x, V z, M) HWY_ATTR { return hn::Div(x, z); });
  }
}

void BinaryRowsImpl(BinOp op, const float* dense, const float* row, bool row_first, float* y, int64_t rows,
                    int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = dense + r * cols;
    if (row_first) {
      BinaryImpl(op, row, 1, x, 1, y + r * cols, cols);
    } else {
      BinaryImpl(op, x, 1, row, 1, y + r * cols, cols);
    }
  }
}

void AddScaledImpl(const float* a, int64_t sa, const float* b, int64_t sb, float alpha, float* y, int64_t n) {
  // alpha is splatted inside the body: a vector captured by a lambda is not
  // allowed for every target's vector type.
  Zip<false>(a, sa, b, sb, nullptr, 0, y, n,
             [alpha](V x, V z, M) HWY_ATTR { return hn::Add(x, hn::Mul(hn::Set(D(), alpha), z)); });
}

// A mask as bool lanes (0 or 1).
HWY_INLINE hn::Vec<D8> ToBool(M m) {
  return hn::DemoteTo(D8(), hn::And(hn::BitCast(DI(), hn::VecFromMask(D(), m)), hn::Set(DI(), 1)));
}

void CompareImpl(CmpOp op, const float* a, int64_t sa, const float* b, int64_t sb, uint8_t* y, int64_t n) {
  // Ordered compares: false when either side is NaN, as C++ (and torch);
  // ne is their negation, so NaN != x holds.
  switch (op) {
    case CmpOp::kEq:
      return Zip<false>(a, sa, b, sb, nullptr, 0, y, n, [](V x, V z, M) HWY_ATTR { return ToBool(hn::Eq(x, z)); });
    case CmpOp::kNe:
      return Zip<false>(a, sa, b, sb, nullptr, 0, y, n,
                        [](V x, V z, M) HWY_ATTR { return ToBool(hn::Not(hn::Eq(x, z))); });
    case CmpOp::kLt:
      return Zip<false>(a, sa, b, sb, nullptr, 0, y, n, [](V x, V z, M) HWY_ATTR { return ToBool(hn::Lt(x, z)); });
    case CmpOp::kLe:
      return Zip<false>(a, sa, b, sb, nullptr, 0, y, n, [](V x, V z, M) HWY_ATTR { return ToBool(hn::Le(x, z)); });
    case CmpOp::kGt:
      return Zip<false>(a, sa, b, sb, nullptr, 0, y, n, [](V x, V z, M) HWY_ATTR { return ToBool(hn::Gt(x, z)); });
    case CmpOp::kGe:
      return Zip<false>(a, sa, b, sb, nullptr, 0, y, n, [](V x, V z, M) HWY_ATTR { return ToBool(hn::Ge(x, z)); });
  }
}

void WhereImpl(const uint8_t* c, int64_t sc, const float* a, int64_t sa, const float* b, int64_t sb, float* y,
               int64_t n) {
  Zip<true>(a, sa, b, sb, c, sc, y, n, [](V x, V z, M m) HWY_ATTR { return hn::IfThenElse(m, x, z); });
}

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace bp_cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace bp_cpu {
namespace simd {

HWY_EXPORT(BinaryImpl);
HWY_EXPORT(BinaryRowsImpl);
HWY_EXPORT(AddScaledImpl);
HWY_EXPORT(CompareImpl);
HWY_EXPORT(WhereImpl);

void BinaryF32(BinOp op, const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n) {
  HWY_DYNAMIC_DISPATCH(BinaryImpl)(op, a, sa, b, sb, y, n);
}
void BinaryRowsF32(BinOp op, const float* dense, const float* row, bool row_first, float* y, int64_t rows,
                   int64_t cols) {
  HWY_DYNAMIC_DISPATCH(BinaryRowsImpl)(op, dense, row, row_first, y, rows, cols);
}
void AddScaledF32(const float* a, int64_t sa, const float* b, int64_t sb, float alpha, float* y, int64_t n) {
  HWY_DYNAMIC_DISPATCH(AddScaledImpl)(a, sa, b, sb, alpha, y, n);
}
void CompareF32(CmpOp op, const float* a, int64_t sa, const float* b, int64_t sb, bool* y, int64_t n) {
  static_assert(sizeof(bool) == 1, "bool is stored as one byte");
  HWY_DYNAMIC_DISPATCH(CompareImpl)(op, a, sa, b, sb, reinterpret_cast<uint8_t*>(y), n);
}
void WhereF32(const bool* c, int64_t sc, const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n) {
  HWY_DYNAMIC_DISPATCH(WhereImpl)(reinterpret_cast<const uint8_t*>(c), sc, a, sa, b, sb, y, n);
}

}  // namespace simd
}  // namespace bp_cpu
#endif  // HWY_ONCE
