// The channels-last memory format end to end, with the real CPU plugin: a
// 4-D tensor with NHWC strides (sizes still [N, C, H, W]) gives results in
// the same format through convolution, pooling, pointwise operators and cat, as
// torch's do, and the values equal those of the contiguous (NCHW) run.
// Skipped (with the reason) when the CPU plugin was not built.
#include <sys/stat.h>

#include <cmath>
#include <string>
#include <vector>

#include "bp_test_util.h"

using namespace bptest;

namespace {

class ChannelsLastTest : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    const std::string path = std::string(BP_BUILD_PLUGIN_DIR) + "/libbackplane_cpu.so";
    struct stat sb;
    if (stat(path.c_str(), &sb) != 0) GTEST_SKIP() << "the CPU plugin is not built (" << path << ")";
    ASSERT_EQ(bp_plugin_load(ctx_, path.c_str(), nullptr), BP_STATUS_OK) << LastError();
  }
  // Values that vary (no two neighbours equal), so a layout mix-up shows.
  bp_tensor_t* Ramp(const std::vector<int64_t>& sizes, float scale) {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = scale * static_cast<float>((i * 37) % 101 - 50);
    return F32(kCpu, sizes, v);
  }
  // x with the same values, in the channels-last format.
  bp_tensor_t* ChannelsLast(bp_tensor_t* x) {
    bp_tensor_t* nhwc = Call("contiguous", {T(Call("permute", {T(x), L({0, 2, 3, 1})}))});
    return Call("permute", {T(nhwc), L({0, 3, 1, 2})});
  }
  static std::vector<int64_t> Strides(const bp_tensor_t* t) {
    return std::vector<int64_t>(bp_tensor_strides(t), bp_tensor_strides(t) + bp_tensor_ndim(t));
  }
  static std::vector<int64_t> NhwcStrides(int64_t c, int64_t h, int64_t w) { return {h * w * c, 1, w * c, c}; }
  void ExpectNear(const std::vector<float>& got, const std::vector<float>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4f * (1.0f + std::abs(want[i]))) << i;
  }
  const bp_device_t kCpu{0, 0};
};

TEST_F(ChannelsLastTest, ConvolutionKeepsTheFormatAndTheValues) {
  bp_tensor_t* x = Ramp({2, 16, 7, 6}, 0.01f);
  bp_tensor_t* w = Ramp({32, 16, 3, 3}, 0.003f);
  bp_tensor_t* b = Ramp({32}, 0.1f);
  bp_tensor_t* xl = ChannelsLast(x);
  ASSERT_EQ(Strides(xl), NhwcStrides(16, 7, 6));
  auto conv = [&](bp_tensor_t* in, bp_tensor_t* weight, int64_t groups) {
    return Call("conv2d", {T(in), T(weight), T(b), L({1}), L({1}), L({1}), I(groups)});
  };
  bp_tensor_t* y = conv(x, w, 1);
  bp_tensor_t* yl = conv(xl, w, 1);
  ASSERT_NE(yl, nullptr);
  EXPECT_EQ(Strides(y), (std::vector<int64_t>{32 * 42, 42, 6, 1}));  // a contiguous input stays contiguous
  EXPECT_EQ(Strides(yl), NhwcStrides(32, 7, 6));
  ExpectNear(Read(yl), Read(y));
  // Depthwise (groups = channels), oneDNN's other NHWC kernel.
  bp_tensor_t* dw = Ramp({16, 1, 3, 3}, 0.02f);
  b = Ramp({16}, 0.1f);
  bp_tensor_t* d = conv(x, dw, 16);
  bp_tensor_t* dl = conv(xl, dw, 16);
  EXPECT_EQ(Strides(dl), NhwcStrides(16, 7, 6));
  ExpectNear(Read(dl), Read(d));
}

TEST_F(ChannelsLastTest, PoolingAndPointwiseFollowAChannelsLastInput) {
  bp_tensor_t* x = Ramp({1, 8, 6, 5}, 0.1f);
  bp_tensor_t* xl = ChannelsLast(x);
  bp_tensor_t* p = Call("max_pool2d", {T(xl), L({2, 2}), L({2, 2}), L({0, 0}), L({1, 1}), B(false)});
  EXPECT_EQ(Strides(p), NhwcStrides(8, 3, 2));
  ExpectNear(Read(p), Read(Call("max_pool2d", {T(x), L({2, 2}), L({2, 2}), L({0, 0}), L({1, 1}), B(false)})));
  // A padded, dilated window over edges, with a NaN (it wins, as torch's).
  std::vector<float> v(2 * 8 * 7 * 7);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 53) % 97) - 40.0f;
  v[107] = std::nanf("");  // n 0, c 2, h 1, w 2: inside some window
  bp_tensor_t* z = F32(kCpu, {2, 8, 7, 7}, v);
  // The boxed int lists point into these: they must outlive the calls.
  const std::vector<int64_t> k3 = {3, 3}, s2 = {2, 2}, p1 = {1, 1}, d21 = {2, 1};
  const std::vector<bp_value_t> win = {L(k3), L(s2), L(p1), L(d21), B(true)};
  auto pool = [&](bp_tensor_t* in) {
    std::vector<bp_value_t> a = {T(in)};
    a.insert(a.end(), win.begin(), win.end());
    return Read(Call("max_pool2d", a));
  };
  const std::vector<float> want = pool(z), got = pool(ChannelsLast(z));
  ASSERT_EQ(got.size(), want.size());
  int nans = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << i;
      ++nans;
    } else {
      EXPECT_EQ(got[i], want[i]) << i;
    }
  }
  EXPECT_GT(nans, 0);
  // Unary, binary of two channels-last tensors, and binary with a
  // per-channel [1, C, 1, 1] operand broadcast (a squeeze-excitation scale).
  bp_tensor_t* r = Call("relu", {T(xl)});
  EXPECT_EQ(Strides(r), NhwcStrides(8, 6, 5));
  ExpectNear(Read(r), Read(Call("relu", {T(x)})));
  bp_tensor_t* s = Call("add.Tensor", {T(xl), T(r)});
  EXPECT_EQ(Strides(s), NhwcStrides(8, 6, 5));
  ExpectNear(Read(s), Read(Call("add.Tensor", {T(x), T(Call("relu", {T(x)}))})));
  bp_tensor_t* scale = Ramp({1, 8, 1, 1}, 0.5f);
  bp_tensor_t* m = Call("mul.Tensor", {T(scale), T(xl)});
  EXPECT_EQ(Strides(m), NhwcStrides(8, 6, 5));
  ExpectNear(Read(m), Read(Call("mul.Tensor", {T(scale), T(x)})));
  // contiguous() still means the default layout.
  bp_tensor_t* c = Call("contiguous", {T(s)});
  EXPECT_EQ(Strides(c), (std::vector<int64_t>{240, 30, 5, 1}));
  ExpectNear(Read(c), Read(s));
}

TEST_F(ChannelsLastTest, MeanAndSumOverTheImageOfAChannelsLastInput) {
  // A global average pool (mean over H and W) and a sum over W alone, on a
  // batch of two: the CPU backend sums rows of contiguous channels here.
  bp_tensor_t* x = Ramp({2, 24, 5, 7}, 0.01f);
  bp_tensor_t* xl = ChannelsLast(x);
  const std::vector<int64_t> hw = {2, 3}, w = {3};
  for (const char* op : {"mean.dim", "sum.dim_IntList"}) {
    for (const std::vector<int64_t>* dims : {&hw, &w}) {
      for (bool keep : {true, false}) {
        const std::vector<float> got = Read(Call(op, {T(xl), L(*dims), B(keep)}));
        const std::vector<float> want = Read(Call(op, {T(x), L(*dims), B(keep)}));
        SCOPED_TRACE(std::string(op) + (dims == &hw ? " over H, W" : " over W") + (keep ? " keepdim" : ""));
        ExpectNear(got, want);
      }
    }
  }
}

TEST_F(ChannelsLastTest, CatOfChannelsLastInputsIsChannelsLast) {
  // The two branches of a fire module joined along C (and along H): the
  // result is channels-last, as torch.cat's, with the NCHW run's values.
  bp_tensor_t* a = Ramp({2, 3, 4, 5}, 0.1f);
  bp_tensor_t* b = Ramp({2, 6, 4, 5}, 0.2f);
  auto cat = [&](bp_tensor_t* x, bp_tensor_t* y, int64_t dim) {
    bp_tensor_t* list[2] = {x, y};
    bp_value_t tl{};
    tl.kind = BP_VALUE_TENSOR_LIST;
    tl.u.tensor_list.data = list;
    tl.u.tensor_list.size = 2;
    return Call("cat", {tl, I(dim)});
  };
  bp_tensor_t* al = ChannelsLast(a);
  bp_tensor_t* bl = ChannelsLast(b);
  bp_tensor_t* c = cat(al, bl, 1);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(Strides(c), NhwcStrides(9, 4, 5));
  ExpectNear(Read(c), Read(cat(a, b, 1)));
  bp_tensor_t* h = cat(al, ChannelsLast(Ramp({2, 3, 2, 5}, 0.3f)), 2);
  EXPECT_EQ(Strides(h), NhwcStrides(3, 6, 5));
  ExpectNear(Read(h), Read(cat(a, Ramp({2, 3, 2, 5}, 0.3f), 2)));
  // One input in the default layout: the result is contiguous.
  bp_tensor_t* m = cat(al, b, 1);
  EXPECT_EQ(bp_tensor_is_contiguous(m), 1);
  ExpectNear(Read(m), Read(cat(a, b, 1)));
}

TEST_F(ChannelsLastTest, AmbiguousLayoutsStayContiguous) {
  // One channel, or a 1 x 1 image: NCHW and NHWC strides describe the same
  // memory order, and the result keeps the default strides.
  for (const std::vector<int64_t>& sizes : {std::vector<int64_t>{2, 1, 4, 3}, std::vector<int64_t>{2, 5, 1, 1}}) {
    bp_tensor_t* x = Ramp(sizes, 0.1f);
    bp_tensor_t* r = Call("relu", {T(ChannelsLast(x))});
    EXPECT_EQ(bp_tensor_is_contiguous(r), 1);
  }
}

}  // namespace
