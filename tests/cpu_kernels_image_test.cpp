// CPU backend image kernels beyond convolution and pooling (upsampling,
// transposed convolution, index_select),
// called through the shared fake host with DLTensors in the form the kernel
// contract describes. Expected values are worked out by hand in comments.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cpu_kernels_fixture.h"

using namespace bp_test;

namespace {

TEST_F(CpuKernels, UpsampleNearestTakesTorchsFloorIndex) {
  // x [1, 1, 2, 3] = 0..5 -> [3, 4]. Rows: scale 2/3, floor(0, 0.67, 1.33) = 0, 0, 1;
  // columns: scale 3/4, floor(0, 0.75, 1.5, 2.25) = 0, 0, 1, 2.
  HostTensor x(F32(), {1, 1, 2, 3}), y(F32(), {1, 1, 3, 4});
  x.Set<float>({0, 1, 2, 3, 4, 5});
  const std::vector<int64_t> size = {3, 4};
  ASSERT_EQ(Call("upsample_nearest2d", {TArg(x), LArg(size), NoneArg(), NoneArg()}, {&y}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(y.Get<float>(12), (std::vector<float>{0, 0, 1, 2, 0, 0, 1, 2, 3, 3, 4, 5}));
  // A scale factor changes the index: width 3 -> 4 with factor 1.2 uses 1 / 1.2
  // (floor(0, 0.83, 1.67, 2.5) = 0, 0, 1, 2), factor 1.0 uses 1 (0, 1, 2, min(3, 2)).
  ASSERT_EQ(Call("upsample_nearest2d", {TArg(x), LArg(size), NoneArg(), DArg(1.0)}, {&y}), BP_STATUS_OK);
  EXPECT_EQ(y.Get<float>(4), (std::vector<float>{0, 1, 2, 2}));
  // Bytes are copied as they are: uint8 works the same.
  HostTensor xb(U8(), {1, 1, 2, 3}), yb(U8(), {1, 1, 3, 4});
  xb.Set<uint8_t>({10, 11, 12, 13, 14, 255});
  ASSERT_EQ(Call("upsample_nearest2d", {TArg(xb), LArg(size), NoneArg(), NoneArg()}, {&yb}), BP_STATUS_OK);
  EXPECT_EQ(yb.Get<uint8_t>(12), (std::vector<uint8_t>{10, 10, 11, 12, 10, 10, 11, 12, 13, 13, 14, 255}));
}

TEST_F(CpuKernels, UpsampleBilinearAlignCornersAndHalfPixel) {
  // x [[0, 1], [2, 3]]. align_corners to 3 x 3 samples at 0, 0.5, 1.
  HostTensor x(F32(), {1, 1, 2, 2}), y3(F32(), {1, 1, 3, 3}), y4(F32(), {1, 1, 4, 4});
  x.Set<float>({0, 1, 2, 3});
  const std::vector<int64_t> s3 = {3, 3}, s4 = {4, 4};
  ASSERT_EQ(Call("upsample_bilinear2d", {TArg(x), LArg(s3), BArg(true), NoneArg(), NoneArg()}, {&y3}), BP_STATUS_OK)
      << LastError();
  EXPECT_EQ(y3.Get<float>(9), (std::vector<float>{0, 0.5f, 1, 1, 1.5f, 2, 2, 2.5f, 3}));
  // Half-pixel centres to 4 x 4: (d + 0.5) / 2 - 0.5 = -0.25 (clamped to 0), 0.25, 0.75, 1.25
  // (past the last pixel: its value), so each axis weighs 0, 0.25, 0.75, 1.
  ASSERT_EQ(Call("upsample_bilinear2d", {TArg(x), LArg(s4), BArg(false), NoneArg(), NoneArg()}, {&y4}), BP_STATUS_OK);
  const float w[4] = {0, 0.25f, 0.75f, 1};
  std::vector<float> want;
  for (float r : w)
    for (float c : w) want.push_back(2 * r + c);
  EXPECT_EQ(y4.Get<float>(16), want);
  // A strided (transposed) input view reads the same logical values.
  HostTensor xt(F32(), {1, 1, 2, 2});
  xt.Set<float>({0, 2, 1, 3});
  xt.SetView({1, 1, 2, 2}, {4, 4, 1, 2});
  ASSERT_EQ(Call("upsample_bilinear2d", {TArg(xt), LArg(s4), BArg(false), NoneArg(), NoneArg()}, {&y4}), BP_STATUS_OK);
  EXPECT_EQ(y4.Get<float>(16), want);
}

TEST_F(CpuKernels, ConvTranspose2dScattersEachInputOverTheKernel) {
  // x [[1, 2], [3, 4]], a 2 x 2 kernel of ones. Stride 2: each input fills
  // its own 2 x 2 block. Stride 1: overlapping blocks add up.
  HostTensor x(F32(), {1, 1, 2, 2}), w(F32(), {1, 1, 2, 2}), b(F32(), {1});
  x.Set<float>({1, 2, 3, 4});
  w.Set<float>({1, 1, 1, 1});
  b.Set<float>({0.5f});
  HostTensor y4(F32(), {1, 1, 4, 4}), y3(F32(), {1, 1, 3, 3});
  const std::vector<int64_t> s2 = {2, 2}, s1 = {1, 1}, p0 = {0, 0}, d1 = {1, 1};
  ASSERT_EQ(Call("conv_transpose2d.input",
                 {TArg(x), TArg(w), NoneArg(), LArg(s2), LArg(p0), LArg(p0), IArg(1), LArg(d1)}, {&y4}),
            BP_STATUS_OK)
      << LastError();
  EXPECT_EQ(y4.Get<float>(16), (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
  ASSERT_EQ(Call("conv_transpose2d.input", {TArg(x), TArg(w), TArg(b), LArg(s1), LArg(p0), LArg(p0), IArg(1), LArg(d1)},
                 {&y3}),
            BP_STATUS_OK);
  EXPECT_EQ(y3.Get<float>(9), (std::vector<float>{1.5f, 3.5f, 2.5f, 4.5f, 10.5f, 6.5f, 3.5f, 7.5f, 4.5f}));
}

TEST_F(CpuKernels, IndexSelectCopiesSlicesAndRejectsBadIndices) {
  // x [3, 2] = 0..5; rows 2, 0, 2 along dim 0; then column 1 along dim 1.
  HostTensor x(F32(), {3, 2}), rows(F32(), {3, 2}), col(F32(), {3, 1}), idx(I64(), {3}), one(I32(), {1});
  x.Set<float>({0, 1, 2, 3, 4, 5});
  idx.Set<int64_t>({2, 0, 2});
  one.Set<int32_t>({1});
  ASSERT_EQ(Call("index_select", {TArg(x), IArg(0), TArg(idx)}, {&rows}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(rows.Get<float>(6), (std::vector<float>{4, 5, 0, 1, 4, 5}));
  ASSERT_EQ(Call("index_select", {TArg(x), IArg(1), TArg(one)}, {&col}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(col.Get<float>(3), (std::vector<float>{1, 3, 5}));
  // An index past the end fails before anything is written.
  rows.Set<float>({9, 9, 9, 9, 9, 9});
  idx.Set<int64_t>({0, 3, 1});
  EXPECT_EQ(Call("index_select", {TArg(x), IArg(0), TArg(idx)}, {&rows}), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("holds 3 at position 1"), std::string::npos) << LastError();
  EXPECT_EQ(rows.Get<float>(6), (std::vector<float>{9, 9, 9, 9, 9, 9}));
}

}  // namespace
