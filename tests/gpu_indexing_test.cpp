// The shared GPU kernels' indexing logic, checked on the host: the offset
// calculator, the launch configurations and the element conversions are the
// very headers the CUDA and HIP kernels compile (BP_HOST_DEVICE is empty in
// plain C++). Each is compared with a naive reference. Needs no device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "kernels/dtype_dispatch.h"
#include "kernels/dtype_fill.h"
#include "kernels/launch_config.h"
#include "kernels/numeric.h"
#include "kernels/offset_calc.h"

namespace bp_gpu {
namespace {

// Naive reference: unravel `linear` row-major over `sizes`, dot with strides.
int64_t NaiveOffset(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                    int64_t linear) {
  int64_t off = 0;
  for (int d = static_cast<int>(sizes.size()) - 1; d >= 0; --d) {
    off += (linear % sizes[d]) * strides[d];
    linear /= sizes[d];
  }
  return off;
}

std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> s(sizes.size(), 1);
  for (int d = static_cast<int>(sizes.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * sizes[d + 1];
  return s;
}

template <int N>
void ExpectMatchesNaive(const std::vector<int64_t>& sizes,
                        const std::vector<std::vector<int64_t>>& strides) {
  const int64_t* ptrs[N];
  for (int k = 0; k < N; ++k) ptrs[k] = strides[k].data();
  const OffsetCalculator<N> calc =
      MakeOffsetCalculator<N>(static_cast<int32_t>(sizes.size()), sizes.data(), ptrs);
  const int64_t numel = Numel(static_cast<int32_t>(sizes.size()), sizes.data());
  for (int64_t i = 0; i < numel; ++i) {
    int64_t off[N];
    calc.get(i, off);
    for (int k = 0; k < N; ++k) {
      ASSERT_EQ(off[k], NaiveOffset(sizes, strides[k], i)) << "operand " << k << " index " << i;
    }
  }
}

TEST(GpuOffsetCalculator, ContiguousCoalescesToOneDimAndFlagsIt) {
  const std::vector<int64_t> sizes = {4, 5, 6};
  const std::vector<int64_t> s = ContiguousStrides(sizes);
  const int64_t* ptrs[2] = {s.data(), s.data()};
  const OffsetCalculator<2> calc = MakeOffsetCalculator<2>(3, sizes.data(), ptrs);
  EXPECT_EQ(calc.ndim, 1);
  EXPECT_EQ(calc.sizes[0], 120);
  EXPECT_EQ(calc.contiguous, 1);
  ExpectMatchesNaive<2>(sizes, {s, s});
}

TEST(GpuOffsetCalculator, BroadcastOperandsUseZeroStrides) {
  // out [3, 4, 5] = a [3, 1, 5] (broadcast dim 1) op b [5] (broadcast dims 0, 1).
  const std::vector<int64_t> sizes = {3, 4, 5};
  const std::vector<int64_t> out = ContiguousStrides(sizes);
  const std::vector<int64_t> a = {5, 0, 1};
  const std::vector<int64_t> b = {0, 0, 1};
  ExpectMatchesNaive<3>(sizes, {out, a, b});
  const int64_t* ptrs[3] = {out.data(), a.data(), b.data()};
  const OffsetCalculator<3> calc = MakeOffsetCalculator<3>(3, sizes.data(), ptrs);
  EXPECT_EQ(calc.contiguous, 0);
  EXPECT_LE(calc.ndim, 3);
}

TEST(GpuOffsetCalculator, TransposedAndSlicedViews) {
  // A transposed [6, 4] view of a [4, 6] tensor, and every other column of [6, 8].
  ExpectMatchesNaive<2>({6, 4}, {{4, 1}, {1, 6}});
  ExpectMatchesNaive<2>({6, 4}, {{4, 1}, {8, 2}});
  // Size-1 dims with arbitrary strides must not matter.
  ExpectMatchesNaive<2>({1, 7, 1, 3}, {{21, 3, 3, 1}, {999, 3, 12345, 1}});
}

TEST(GpuOffsetCalculator, ZeroDimAndEmptyTensors) {
  const OffsetCalculator<2> scalar = MakeOffsetCalculator<2>(0, nullptr, {nullptr, nullptr});
  int64_t off[2] = {7, 7};
  scalar.get(0, off);
  EXPECT_EQ(off[0], 0);
  EXPECT_EQ(off[1], 0);
  const int64_t sizes[2] = {3, 0};
  EXPECT_EQ(Numel(2, sizes), 0);
}

TEST(GpuOffsetCalculator, RandomStridedBroadcastShapesMatchNaive) {
  std::mt19937 rng(1234);
  for (int iter = 0; iter < 300; ++iter) {
    const int ndim = 1 + static_cast<int>(rng() % 5);
    std::vector<int64_t> sizes(ndim);
    for (auto& s : sizes) s = 1 + static_cast<int64_t>(rng() % 4);
    std::vector<std::vector<int64_t>> strides(3);
    strides[0] = ContiguousStrides(sizes);
    for (int k = 1; k < 3; ++k) {
      // A permuted, padded base layout, then random broadcast dims.
      std::vector<int> perm(ndim);
      for (int d = 0; d < ndim; ++d) perm[d] = d;
      std::shuffle(perm.begin(), perm.end(), rng);
      std::vector<int64_t> st(ndim);
      int64_t running = 1 + static_cast<int64_t>(rng() % 2);
      for (int d = ndim - 1; d >= 0; --d) {
        st[perm[d]] = running;
        running *= sizes[perm[d]] + static_cast<int64_t>(rng() % 2);
      }
      for (int d = 0; d < ndim; ++d) {
        if (rng() % 4 == 0) st[d] = 0;
      }
      strides[k] = st;
    }
    ExpectMatchesNaive<3>(sizes, strides);
  }
}

// Reductions walk the reduced dims through a calculator; argmax reports the
// linear index, so it must be the row-major index within the reduced dims
// even after coalescing drops and merges dims.
TEST(GpuOffsetCalculator, ReducedDimsKeepRowMajorOrder) {
  // input [2, 1, 3, 4] strides of a permuted layout; reduce dims {1, 2, 3}.
  const std::vector<int64_t> in_strides = {1, 24, 2, 6};
  const int64_t row_sizes[3] = {1, 3, 4};
  const int64_t row_strides[3] = {24, 2, 6};
  const int64_t* rs[1] = {row_strides};
  const OffsetCalculator<1> calc = MakeOffsetCalculator<1>(3, row_sizes, rs);
  for (int64_t j = 0; j < 12; ++j) {
    int64_t off[1];
    calc.get(j, off);
    const int64_t i2 = j / 4, i3 = j % 4;
    EXPECT_EQ(off[0], i2 * 2 + i3 * 6) << j;
  }
}

TEST(GpuLaunchConfig, PointwiseGridStrideCoversEveryElementOnce) {
  for (int64_t n :
       {int64_t{1}, int64_t{255}, int64_t{256}, int64_t{257}, int64_t{100000}, int64_t{3} << 20}) {
    for (int32_t sms : {0, 1, 7, 132}) {
      const LaunchConfig cfg = PointwiseLaunch(n, sms);
      ASSERT_GT(cfg.grid, 0u);
      ASSERT_EQ(cfg.block, kPointwiseBlock);
      ASSERT_LE(cfg.grid, static_cast<uint32_t>((sms > 0 ? sms : 1) * kBlocksPerSm));
      // Simulate the grid-stride loop.
      std::vector<uint8_t> seen(static_cast<size_t>(n), 0);
      const int64_t total = static_cast<int64_t>(cfg.grid) * cfg.block;
      for (int64_t t = 0; t < total; ++t) {
        for (int64_t i = t; i < n; i += total) ++seen[static_cast<size_t>(i)];
      }
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(seen[static_cast<size_t>(i)], 1) << n << " " << i;
    }
  }
  EXPECT_EQ(PointwiseLaunch(0, 10).grid, 0u);
}

TEST(GpuLaunchConfig, RowReduceBlocksArePowersOfTwoOfBothWarpSizes) {
  EXPECT_TRUE(RowReduceLaunch(1000, 4, 10).serial);
  EXPECT_EQ(RowReduceLaunch(0, 100, 10).cfg.grid, 0u);
  for (int64_t len : {17, 63, 64, 65, 200, 256, 1000, 1 << 20}) {
    const ReduceLaunch r = RowReduceLaunch(10, len, 4);
    EXPECT_FALSE(r.serial);
    EXPECT_GE(r.cfg.block, 64u);
    EXPECT_LE(r.cfg.block, 256u);
    EXPECT_EQ(r.cfg.block & (r.cfg.block - 1), 0u) << "block " << r.cfg.block;
    EXPECT_EQ(r.cfg.block % 64, 0u);
    EXPECT_EQ(r.cfg.grid, 10u);
  }
  EXPECT_EQ(RowReduceLaunch(1 << 20, 1000, 4).cfg.grid, 4u * 32u);
}

float HalfRef(float f) { return static_cast<float>(static_cast<_Float16>(f)); }

TEST(GpuNumeric, HalfBitsRoundTripExhaustively) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const uint16_t h = static_cast<uint16_t>(b);
    const float f = HalfBitsToFloat(h);
    _Float16 ref;
    std::memcpy(&ref, &h, sizeof ref);
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(static_cast<float>(ref)));
      ASSERT_TRUE(std::isnan(HalfBitsToFloat(FloatToHalfBits(f))));
      continue;
    }
    ASSERT_EQ(f, static_cast<float>(ref)) << std::hex << b;
    ASSERT_EQ(FloatToHalfBits(f), h) << std::hex << b;
  }
}

TEST(GpuNumeric, FloatToHalfRoundsToNearestEven) {
  std::mt19937 rng(99);
  for (int i = 0; i < 200000; ++i) {
    uint32_t u = static_cast<uint32_t>(rng());
    // Bias toward the half range (|x| < 2^17) including subnormals.
    u = (u & 0x80000000u) | (0x30000000u + (u & 0x7fffffffu) % 0x18000000u);
    float f;
    std::memcpy(&f, &u, sizeof f);
    const float got = HalfBitsToFloat(FloatToHalfBits(f));
    ASSERT_EQ(got, HalfRef(f)) << f;
  }
  EXPECT_EQ(HalfBitsToFloat(FloatToHalfBits(65520.0f)), std::numeric_limits<float>::infinity());
  EXPECT_EQ(HalfBitsToFloat(FloatToHalfBits(65519.0f)), 65504.0f);
}

TEST(GpuNumeric, BFloat16RoundsToNearestEvenAndKeepsNan) {
  EXPECT_EQ(BFloat16BitsToFloat(FloatToBFloat16Bits(1.0f)), 1.0f);
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even mantissa (1) wins.
  EXPECT_EQ(BFloat16BitsToFloat(FloatToBFloat16Bits(1.0f + 1.0f / 256)), 1.0f);
  EXPECT_EQ(BFloat16BitsToFloat(FloatToBFloat16Bits(1.0f + 3.0f / 256)), 1.0f + 4.0f / 256);
  EXPECT_TRUE(std::isnan(BFloat16BitsToFloat(FloatToBFloat16Bits(std::nanf("")))));
  EXPECT_EQ(BFloat16BitsToFloat(FloatToBFloat16Bits(-std::numeric_limits<float>::infinity())),
            -std::numeric_limits<float>::infinity());
}

TEST(GpuNumeric, FillPatternsMatchTheDtype) {
  EXPECT_EQ(FillPattern(DType::kBool, true, 0.5, 0), 1u);
  EXPECT_EQ(FillPattern(DType::kBool, false, 0.0, 0), 0u);
  EXPECT_EQ(FillPattern(DType::kInt8, false, 0.0, -1), 0xffu);
  EXPECT_EQ(FillPattern(DType::kInt32, true, -2.7, 0), 0xfffffffeu);  // truncation
  EXPECT_EQ(FillPattern(DType::kInt64, false, 0.0, -3), static_cast<uint64_t>(-3));
  EXPECT_EQ(FillPattern(DType::kFloat16, true, 1.0, 0), 0x3c00u);
  EXPECT_EQ(FillPattern(DType::kBFloat16, true, -2.0, 0), 0xc000u);
  EXPECT_EQ(FillPattern(DType::kFloat32, false, 0.0, 1), 0x3f800000u);
  const double d = 0.1;
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  EXPECT_EQ(FillPattern(DType::kFloat64, true, 0.1, 0), bits);
}

TEST(GpuDtype, DLPackCodesMapToDTypes) {
  EXPECT_EQ(DtypeOf(DLDataType{kDLFloat, 32, 1}), DType::kFloat32);
  EXPECT_EQ(DtypeOf(DLDataType{kDLFloat, 16, 1}), DType::kFloat16);
  EXPECT_EQ(DtypeOf(DLDataType{kDLBfloat, 16, 1}), DType::kBFloat16);
  EXPECT_EQ(DtypeOf(DLDataType{BP_DTYPE_CODE_BOOL, 8, 1}), DType::kBool);
  EXPECT_EQ(DtypeOf(DLDataType{kDLUInt, 8, 1}), DType::kUInt8);
  EXPECT_EQ(DtypeOf(DLDataType{kDLInt, 16, 1}), DType::kInvalid);
  EXPECT_EQ(DtypeOf(DLDataType{kDLFloat, 32, 4}), DType::kInvalid);
  EXPECT_EQ(DtypeSize(DType::kInt64), 8u);
  EXPECT_EQ(DtypeSize(DType::kBool), 1u);
}

}  // namespace
}  // namespace bp_gpu
