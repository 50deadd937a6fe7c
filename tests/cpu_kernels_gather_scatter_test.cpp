// CPU backend gather / scatter kernels through the shared fake host:
// torch.gather and torch.scatter(_reduce) semantics on small tensors worked
// out by hand, and indices out of range rejected before anything is written.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cpu_kernels_fixture.h"

using namespace bp_test;

namespace {

TEST_F(CpuKernels, GatherPicksAlongDim) {
  // x [2, 3] = [[0, 1, 2], [3, 4, 5]]; dim 1, index [[2, 0], [1, 1]] -> [[2, 0], [4, 4]].
  HostTensor x(F32(), {2, 3}), y(F32(), {2, 2}), idx(I64(), {2, 2});
  x.Set<float>({0, 1, 2, 3, 4, 5});
  idx.Set<int64_t>({2, 0, 1, 1});
  ASSERT_EQ(Call("gather", {TArg(x), IArg(1), TArg(idx)}, {&y}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(y.Get<float>(4), (std::vector<float>{2, 0, 4, 4}));
  // dim 0 with an int32 index [1, 3]: [[x[1][0], x[0][1], x[1][2]]] = [[3, 1, 5]].
  HostTensor i32(I32(), {1, 3}), y0(F32(), {1, 3});
  i32.Set<int32_t>({1, 0, 1});
  ASSERT_EQ(Call("gather", {TArg(x), IArg(0), TArg(i32)}, {&y0}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(y0.Get<float>(3), (std::vector<float>{3, 1, 5}));
}

TEST_F(CpuKernels, GatherRejectsAnIndexOutOfRangeWithoutWriting) {
  HostTensor x(F32(), {2, 3}), y(F32(), {2, 2}), idx(I64(), {2, 2});
  x.Set<float>({0, 1, 2, 3, 4, 5});
  y.Set<float>({9, 9, 9, 9});
  idx.Set<int64_t>({0, 1, 3, 0});
  EXPECT_EQ(Call("gather", {TArg(x), IArg(1), TArg(idx)}, {&y}), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("holds 3 at position 2; expected an index in [0, 3) for dim 1"), std::string::npos)
      << LastError();
  EXPECT_EQ(y.Get<float>(4), (std::vector<float>{9, 9, 9, 9}));
}

TEST_F(CpuKernels, ScatterWritesSrcIntoACopyOfSelf) {
  // self zeros [3, 2]; dim 0, index [[2, 0]], src [[7, 8]] -> [[0, 8], [0, 0], [7, 0]].
  HostTensor self(F32(), {3, 2}), src(F32(), {1, 2}), idx(I64(), {1, 2}), y(F32(), {3, 2});
  self.Set<float>({0, 0, 0, 0, 0, 0});
  src.Set<float>({7, 8});
  idx.Set<int64_t>({2, 0});
  ASSERT_EQ(Call("scatter.src", {TArg(self), IArg(0), TArg(idx), TArg(src)}, {&y}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(y.Get<float>(6), (std::vector<float>{0, 8, 0, 0, 7, 0}));
  EXPECT_EQ(self.Get<float>(6), (std::vector<float>{0, 0, 0, 0, 0, 0}));  // self untouched
}

TEST_F(CpuKernels, ScatterReduceCombinesRepeatedIndices) {
  // self [1, 2, 3]; index [0, 0, 2], src [10, 20, 30] along dim 0.
  HostTensor self(F32(), {3}), src(F32(), {3}), idx(I64(), {3}), y(F32(), {3});
  self.Set<float>({1, 2, 3});
  src.Set<float>({10, 20, 30});
  idx.Set<int64_t>({0, 0, 2});
  auto run = [&](const char* reduce, bool include_self) {
    EXPECT_EQ(
        Call("scatter_reduce.two", {TArg(self), IArg(0), TArg(idx), TArg(src), SArg(reduce), BArg(include_self)}, {&y}),
        BP_STATUS_OK)
        << LastError();
    return y.Get<float>(3);
  };
  EXPECT_EQ(run("sum", true), (std::vector<float>{31, 2, 33}));
  EXPECT_EQ(run("sum", false), (std::vector<float>{30, 2, 30}));
  EXPECT_EQ(run("prod", true), (std::vector<float>{200, 2, 90}));
  EXPECT_EQ(run("amax", true), (std::vector<float>{20, 2, 30}));
  EXPECT_EQ(run("amin", false), (std::vector<float>{10, 2, 30}));
  // int8 sums wrap as torch's do: 100 + 100 + 100 = 300 - 256 = 44.
  HostTensor s8(I8(), {1}), src8(I8(), {2}), i2(I64(), {2}), y8(I8(), {1});
  s8.Set<int8_t>({100});
  src8.Set<int8_t>({100, 100});
  i2.Set<int64_t>({0, 0});
  ASSERT_EQ(Call("scatter_reduce.two", {TArg(s8), IArg(0), TArg(i2), TArg(src8), SArg("sum"), BArg(true)}, {&y8}),
            BP_STATUS_OK)
      << LastError();
  EXPECT_EQ(y8.Get<int8_t>(1), (std::vector<int8_t>{44}));
}

TEST_F(CpuKernels, ScatterRejectsANegativeIndexWithoutWriting) {
  HostTensor self(F32(), {3}), src(F32(), {2}), idx(I64(), {2}), y(F32(), {3});
  self.Set<float>({1, 2, 3});
  src.Set<float>({5, 6});
  idx.Set<int64_t>({1, -1});
  y.Set<float>({9, 9, 9});
  EXPECT_EQ(Call("scatter.src", {TArg(self), IArg(0), TArg(idx), TArg(src)}, {&y}), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("holds -1 at position 1"), std::string::npos) << LastError();
  EXPECT_EQ(y.Get<float>(3), (std::vector<float>{9, 9, 9}));
}

}  // namespace
