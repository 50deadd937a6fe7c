// The shared GPU image kernels, conv2d, conv2d_fused, max_pool2d, avg_pool2d
// (backends/gpu_common/kernels/conv_pool.cu), upsample_nearest2d and
// upsample_bilinear2d (resample.cu), through their real entry points
// on the host-thread emulator, against naive double-precision references:
// groups, stride, padding and dilation over strided (channels-last) views,
// the fused residual and activations, NaN in max pooling, and the average's
// divisor rules (count_include_pad, divisor_override, windows reaching past
// the input as ceil_mode makes them), the resize rules of torch (scale
// factors, align_corners, half-pixel centres clamped at 0). On a GPU the conformance suite runs
// the same kernels against its own references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gpu_emulated_fixture.h"
// The kernel sources, compiled as plain C++ against the emulator (the 1x1
// convolution runs on matmul.cu's RunGemm, whose addmm uses copy.cu).
#include "kernels/conv_pool.cu"
#include "kernels/copy.cu"
#include "kernels/matmul.cu"
#include "kernels/resample.cu"

namespace bp_gpu {
namespace platform {
// No vendor GEMM here: the 1x1 convolution's product runs the shared tiled kernel.
bp_status_t Gemm(const bp_kernel_call_t*, PlatformState*, const GemmProblem&) { return BP_STATUS_UNIMPLEMENTED; }
}  // namespace platform
}  // namespace bp_gpu

namespace {

using bp_test::BArg;
using bp_test::NoneArg;

// Lists, since boxed list arguments point into them during the call.
struct ConvSpec {
  std::vector<int64_t> stride, pad, dil;
  int64_t groups;
};

// out[n, oc, oh, ow] = bias[oc] + sum over the group's channels and taps.
double ConvRef(const Tensor& x, const Tensor& w, const Tensor* b, const ConvSpec& c, const std::vector<int64_t>& o) {
  const int64_t icg = w.shape[1], ocg = w.shape[0] / c.groups;
  const int64_t ic0 = (o[1] / ocg) * icg;
  double acc = b ? b->Get({o[1]}) : 0.0;
  for (int64_t ci = 0; ci < icg; ++ci)
    for (int64_t r = 0; r < w.shape[2]; ++r)
      for (int64_t s = 0; s < w.shape[3]; ++s) {
        const int64_t ih = o[2] * c.stride[0] - c.pad[0] + r * c.dil[0];
        const int64_t iw = o[3] * c.stride[1] - c.pad[1] + s * c.dil[1];
        if (ih < 0 || ih >= x.shape[2] || iw < 0 || iw >= x.shape[3]) continue;
        acc += x.Get({o[0], ic0 + ci, ih, iw}) * w.Get({o[1], ci, r, s});
      }
  return acc;
}

std::vector<bp_kernel_arg_t> ConvArgs(Tensor& x, Tensor& w, Tensor* b, const ConvSpec& c) {
  return {TArg(x), TArg(w), b ? TArg(*b) : NoneArg(), LArg(c.stride), LArg(c.pad), LArg(c.dil), IArg(c.groups)};
}

// A [N, C, H, W] tensor stored channels-last (strides C*W*H, 1, W*C, C).
Tensor MakeChannelsLast(DLDataType dt, int64_t n, int64_t c, int64_t h, int64_t w) {
  return Make(dt, {n, c, h, w}, {h * w * c, 1, w * c, c});
}

TEST_F(EmulatedKernels, GroupedStridedDilatedConvOverChannelsLastViews) {
  const ConvSpec c{{2, 1}, {1, 2}, {1, 2}, 2};
  Tensor x = MakeChannelsLast(kF32, 2, 4, 7, 6), w = Make(kF32, {6, 2, 3, 2}), b = Make(kF32, {6}, {2});
  FillPattern(x, 1);
  FillPattern(w, 2);
  FillPattern(b, 3);
  // H_out = (7 + 2 - 2 - 1) / 2 + 1 = 4; W_out = (6 + 4 - 2 - 1) / 1 + 1 = 8.
  Tensor out = MakeChannelsLast(kF32, 2, 6, 4, 8);
  ASSERT_EQ(Call(bp_gpu::Conv2dEntry, "conv2d", 0, ConvArgs(x, w, &b, c), out), BP_STATUS_OK) << g_error;
  ForEach(out.shape,
          [&](const std::vector<int64_t>& i) { ExpectNear(out.Get(i), ConvRef(x, w, &b, c, i), 1e-5, "conv2d"); });
}

TEST_F(EmulatedKernels, DepthwiseConvInBfloat16AndWithoutBias) {
  const ConvSpec c{{1, 1}, {1, 1}, {1, 1}, 3};
  Tensor x = Make(kBF16, {1, 3, 5, 5}), w = Make(kBF16, {3, 1, 3, 3});
  FillPattern(x, 4);
  FillPattern(w, 5);
  Tensor out = Make(kBF16, {1, 3, 5, 5});
  ASSERT_EQ(Call(bp_gpu::Conv2dEntry, "conv2d", 0, ConvArgs(x, w, nullptr, c), out), BP_STATUS_OK) << g_error;
  ForEach(out.shape, [&](const std::vector<int64_t>& i) {
    ExpectNear(out.Get(i), ConvRef(x, w, nullptr, c, i), 1e-2, "bf16 depthwise conv2d");
  });
}

double Activation(const std::string& act, double v, double a, double b) {
  if (act == "relu") return v > 0 ? v : 0.0;
  if (act == "clip") return std::min(std::max(v, a), b);
  if (act == "hardswish") return v * std::min(std::max(v + 3.0, 0.0), 6.0) / 6.0;
  if (act == "hardsigmoid") return std::min(std::max(a * v + b, 0.0), 1.0);
  if (act == "sigmoid") return 1.0 / (1.0 + std::exp(-v));
  if (act == "silu") return v / (1.0 + std::exp(-v));
  if (act == "gelu") return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
  if (act == "leaky_relu") return v < 0 ? a * v : v;
  return v;
}

TEST_F(EmulatedKernels, FusedConvAddsTheResidualThenEachActivation) {
  const ConvSpec c{{1, 1}, {1, 1}, {1, 1}, 1};
  Tensor x = Make(kF32, {1, 3, 4, 4}), w = Make(kF32, {2, 3, 3, 3}), b = Make(kF32, {2});
  Tensor res = MakeChannelsLast(kF32, 1, 2, 4, 4);
  FillPattern(x, 6);
  FillPattern(w, 7);
  FillPattern(b, 8);
  FillPattern(res, 9);
  const struct {
    const char* act;
    double alpha, beta;
  } cases[] = {{"none", 0, 0},    {"relu", 0, 0}, {"clip", -1.5, 2.0}, {"hardswish", 0, 0},   {"hardsigmoid", 0.2, 0.5},
               {"sigmoid", 0, 0}, {"silu", 0, 0}, {"gelu", 0, 0},      {"leaky_relu", 0.1, 0}};
  for (const auto& k : cases) {
    Tensor out = Make(kF32, {1, 2, 4, 4});
    std::vector<bp_kernel_arg_t> args = ConvArgs(x, w, &b, c);
    args.push_back(TArg(res));
    args.push_back(SArg(k.act));
    args.push_back(DArg(k.alpha));
    args.push_back(DArg(k.beta));
    ASSERT_EQ(Call(bp_gpu::Conv2dEntry, "conv2d_fused", 1, args, out), BP_STATUS_OK) << k.act << ": " << g_error;
    ForEach(out.shape, [&](const std::vector<int64_t>& i) {
      const double want = Activation(k.act, ConvRef(x, w, &b, c, i) + res.Get(i), k.alpha, k.beta);
      ExpectNear(out.Get(i), want, 1e-5, k.act);
    });
  }
  Tensor out = Make(kF32, {1, 2, 4, 4});
  std::vector<bp_kernel_arg_t> args = ConvArgs(x, w, &b, c);
  args.insert(args.end(), {NoneArg(), SArg("swish"), DArg(0), DArg(0)});
  EXPECT_EQ(Call(bp_gpu::Conv2dEntry, "conv2d_fused", 1, args, out), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(g_error.find("swish"), std::string::npos) << g_error;
}

// The 1x1 convolutions that become matrix products: channels-first with bias
// and relu, channels-last (the transposed product) with a residual, an
// unfused one, and a bfloat16 one with an epilogue (the direct kernel).
TEST_F(EmulatedKernels, PointwiseConvAsAMatrixProductInBothLayouts) {
  const ConvSpec c{{1, 1}, {0, 0}, {1, 1}, 1};
  for (int layout = 0; layout < 2; ++layout) {
    for (int fused = 0; fused < 2; ++fused) {
      const bool cl = layout == 1;
      Tensor x = cl ? MakeChannelsLast(kF32, 2, 5, 3, 4) : Make(kF32, {2, 5, 3, 4});
      Tensor w = Make(kF32, {7, 5, 1, 1}), b = Make(kF32, {7});
      Tensor res = Make(kF32, {2, 7, 3, 4});
      Tensor out = cl ? MakeChannelsLast(kF32, 2, 7, 3, 4) : Make(kF32, {2, 7, 3, 4});
      FillPattern(x, 12 + layout);
      FillPattern(w, 14);
      FillPattern(b, 15);
      FillPattern(res, 16);
      std::vector<bp_kernel_arg_t> args = ConvArgs(x, w, fused ? &b : nullptr, c);
      if (fused) args.insert(args.end(), {TArg(res), SArg("relu"), DArg(0), DArg(0)});
      ASSERT_EQ(Call(bp_gpu::Conv2dEntry, fused ? "conv2d_fused" : "conv2d", fused, args, out), BP_STATUS_OK)
          << g_error;
      ForEach(out.shape, [&](const std::vector<int64_t>& i) {
        double want = ConvRef(x, w, fused ? &b : nullptr, c, i);
        if (fused) want = Activation("relu", want + res.Get(i), 0, 0);
        ExpectNear(out.Get(i), want, 1e-5, cl ? "1x1 conv, channels-last" : "1x1 conv");
      });
    }
  }
  Tensor x = Make(kBF16, {1, 4, 2, 2}), w = Make(kBF16, {3, 4, 1, 1}), b = Make(kBF16, {3});
  FillPattern(x, 17);
  FillPattern(w, 18);
  FillPattern(b, 19);
  Tensor out = Make(kBF16, {1, 3, 2, 2});
  ASSERT_EQ(Call(bp_gpu::Conv2dEntry, "conv2d", 0, ConvArgs(x, w, &b, c), out), BP_STATUS_OK) << g_error;
  ForEach(out.shape, [&](const std::vector<int64_t>& i) {
    ExpectNear(out.Get(i), ConvRef(x, w, &b, c, i), 1e-2, "bf16 1x1 conv with bias");
  });
}

TEST_F(EmulatedKernels, ConvWithAnotherWeightDtypeGoesToTheFallbackWithoutWriting) {
  const ConvSpec c{{1, 1}, {0, 0}, {1, 1}, 1};
  Tensor x = Make(kF32, {1, 1, 2, 2}), w = Make(kF64, {1, 1, 1, 1}), out = Make(kF32, {1, 1, 2, 2});
  out.Set({0, 0, 0, 0}, 42);
  EXPECT_NE(Call(bp_gpu::Conv2dEntry, "conv2d", 0, ConvArgs(x, w, nullptr, c), out), BP_STATUS_OK);
  EXPECT_NE(g_error.find("weight"), std::string::npos) << g_error;
  EXPECT_EQ(out.Get({0, 0, 0, 0}), 42);
}

TEST_F(EmulatedKernels, MaxPoolWithPaddingDilationAndNan) {
  Tensor x = MakeChannelsLast(kF32, 1, 2, 6, 5);
  FillPattern(x, 10);
  x.Set({0, 1, 2, 3}, std::numeric_limits<double>::quiet_NaN());
  const int64_t k[2] = {3, 2}, s[2] = {2, 2}, p[2] = {1, 1}, d[2] = {1, 2};
  // ceil_mode sizes: H_out = ceil((6 + 2 - 2 - 1) / 2) + 1 = 4, W_out = ceil((5 + 2 - 2 - 1) / 2) + 1 = 3.
  Tensor out = Make(kF32, {1, 2, 4, 3});
  ASSERT_EQ(
      Call(bp_gpu::MaxPool2dEntry, "max_pool2d", 0,
           {TArg(x), LArg({k[0], k[1]}), LArg({s[0], s[1]}), LArg({p[0], p[1]}), LArg({d[0], d[1]}), BArg(true)}, out),
      BP_STATUS_OK)
      << g_error;
  ForEach(out.shape, [&](const std::vector<int64_t>& o) {
    double want = -std::numeric_limits<double>::infinity();
    for (int64_t r = 0; r < k[0]; ++r)
      for (int64_t c = 0; c < k[1]; ++c) {
        const int64_t ih = o[2] * s[0] - p[0] + r * d[0], iw = o[3] * s[1] - p[1] + c * d[1];
        if (ih < 0 || ih >= 6 || iw < 0 || iw >= 5) continue;
        const double v = x.Get({o[0], o[1], ih, iw});
        if (std::isnan(v) || std::isnan(want)) {
          want = std::numeric_limits<double>::quiet_NaN();
        } else {
          want = std::max(want, v);
        }
      }
    ExpectNear(out.Get(o), want, 0, "max_pool2d");
  });
  // Rows 1..3 and columns 1, 3 (oh 1, ow 1) read the NaN at (2, 3).
  EXPECT_TRUE(std::isnan(out.Get({0, 1, 1, 1})));
}

TEST_F(EmulatedKernels, AvgPoolDivisorRules) {
  Tensor x = Make(kF64, {1, 1, 5, 5});
  FillPattern(x, 11);
  const int64_t k = 3, s = 2, p = 1, H = 5;
  // ceil_mode: H_out = ceil((5 + 2 - 3) / 2) + 1 = 3; the last window starts at 3 and reaches past the padding.
  for (int mode = 0; mode < 3; ++mode) {
    const bool include_pad = mode != 1;
    const int64_t divisor = mode == 2 ? 7 : 0;
    Tensor out = Make(kF64, {1, 1, 3, 3});
    ASSERT_EQ(Call(bp_gpu::AvgPool2dEntry, "avg_pool2d", 0,
                   {TArg(x), LArg({k, k}), LArg({s, s}), LArg({p, p}), BArg(true), BArg(include_pad),
                    divisor ? IArg(divisor) : NoneArg()},
                   out),
              BP_STATUS_OK)
        << g_error;
    ForEach(out.shape, [&](const std::vector<int64_t>& o) {
      int64_t hs = o[2] * s - p, ws = o[3] * s - p;
      int64_t he = std::min(hs + k, H + p), we = std::min(ws + k, H + p);
      const int64_t pool = (he - hs) * (we - ws);
      hs = std::max<int64_t>(hs, 0);
      ws = std::max<int64_t>(ws, 0);
      he = std::min(he, H);
      we = std::min(we, H);
      double sum = 0;
      for (int64_t ih = hs; ih < he; ++ih)
        for (int64_t iw = ws; iw < we; ++iw) sum += x.Get({0, 0, ih, iw});
      const int64_t div = divisor ? divisor : include_pad ? pool : (he - hs) * (we - ws);
      ExpectNear(out.Get(o), sum / static_cast<double>(div), 1e-12, "avg_pool2d mode " + std::to_string(mode));
    });
  }
}

// torch's rules, written out independently of the kernel: nearest index
// floor(o * scale) in float32, linear source position in the compute type.
int64_t NearestRef(int64_t o, int64_t in, int64_t out, double factor) {
  const float scale = factor > 0 ? static_cast<float>(1.0 / factor) : static_cast<float>(in) / static_cast<float>(out);
  return std::min<int64_t>(static_cast<int64_t>(std::floor(static_cast<float>(o) * scale)), in - 1);
}

double LinearRef(const std::vector<double>& row, int64_t o, int64_t out, bool align_corners, double factor) {
  const int64_t in = static_cast<int64_t>(row.size());
  if (in == out) return row[static_cast<size_t>(o)];
  double scale = align_corners ? (out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0)
                               : (factor > 0 ? 1.0 / factor : static_cast<double>(in) / static_cast<double>(out));
  double src = align_corners ? scale * static_cast<double>(o) : scale * (static_cast<double>(o) + 0.5) - 0.5;
  src = std::max(src, 0.0);
  const int64_t i0 = static_cast<int64_t>(src);
  const int64_t i1 = std::min(i0 + 1, in - 1);
  const double l1 = src - static_cast<double>(i0);
  return (1 - l1) * row[static_cast<size_t>(i0)] + l1 * row[static_cast<size_t>(i1)];
}

TEST_F(EmulatedKernels, UpsampleNearestWithAndWithoutScaleFactors) {
  Tensor x = MakeChannelsLast(kF32, 1, 2, 3, 5);
  FillPattern(x, 20);
  for (int with_scales = 0; with_scales < 2; ++with_scales) {
    Tensor out = Make(kF32, {1, 2, 7, 8});
    const double sh = with_scales ? 2.5 : 0, sw = with_scales ? 1.7 : 0;
    ASSERT_EQ(
        Call(bp_gpu::UpsampleNearestEntry, "upsample_nearest2d", 0,
             {TArg(x), LArg({7, 8}), with_scales ? DArg(sh) : NoneArg(), with_scales ? DArg(sw) : NoneArg()}, out),
        BP_STATUS_OK)
        << g_error;
    ForEach(out.shape, [&](const std::vector<int64_t>& o) {
      const double want = x.Get({o[0], o[1], NearestRef(o[2], 3, 7, sh), NearestRef(o[3], 5, 8, sw)});
      EXPECT_EQ(out.Get(o), want) << o[2] << "," << o[3];
    });
  }
  Tensor u = Make(kU8, {1, 1, 2, 2}), uo = Make(kU8, {1, 1, 4, 4});
  FillPattern(u, 21, true);
  for (int64_t k = 0; k < 4; ++k) u.Set({0, 0, k / 2, k % 2}, static_cast<double>(10 + k));
  ASSERT_EQ(
      Call(bp_gpu::UpsampleNearestEntry, "upsample_nearest2d", 0, {TArg(u), LArg({4, 4}), NoneArg(), NoneArg()}, uo),
      BP_STATUS_OK);
  EXPECT_EQ(uo.Get({0, 0, 3, 1}), 12);
}

TEST_F(EmulatedKernels, UpsampleBilinearCornersAndCentres) {
  Tensor x = Make(kF64, {2, 1, 4, 3});
  FillPattern(x, 22);
  for (int ac = 0; ac < 2; ++ac) {
    // 4 -> 7 rows, 3 -> 3 columns (an unchanged axis is copied).
    Tensor out = Make(kF64, {2, 1, 7, 3});
    ASSERT_EQ(Call(bp_gpu::UpsampleBilinearEntry, "upsample_bilinear2d", 0,
                   {TArg(x), LArg({7, 3}), BArg(ac != 0), NoneArg(), NoneArg()}, out),
              BP_STATUS_OK)
        << g_error;
    ForEach(out.shape, [&](const std::vector<int64_t>& o) {
      std::vector<double> col(4);
      for (int64_t h = 0; h < 4; ++h) col[static_cast<size_t>(h)] = x.Get({o[0], 0, h, o[3]});
      ExpectNear(out.Get(o), LinearRef(col, o[2], 7, ac != 0, 0), 1e-12, ac ? "align_corners" : "half-pixel");
    });
  }
  // Downscaling along both axes with an explicit factor, float32.
  Tensor y = Make(kF32, {1, 1, 6, 6});
  FillPattern(y, 23);
  Tensor out = Make(kF32, {1, 1, 3, 2});
  ASSERT_EQ(Call(bp_gpu::UpsampleBilinearEntry, "upsample_bilinear2d", 0,
                 {TArg(y), LArg({3, 2}), BArg(false), DArg(0.5), DArg(0.4)}, out),
            BP_STATUS_OK);
  ForEach(out.shape, [&](const std::vector<int64_t>& o) {
    std::vector<double> rows(6);
    for (int64_t h = 0; h < 6; ++h) {
      std::vector<double> r(6);
      for (int64_t w = 0; w < 6; ++w) r[static_cast<size_t>(w)] = y.Get({0, 0, h, w});
      rows[static_cast<size_t>(h)] = LinearRef(r, o[3], 2, false, 0.4);
    }
    ExpectNear(out.Get(o), LinearRef(rows, o[2], 3, false, 0.5), 1e-5, "downscale");
  });
}

}  // namespace
