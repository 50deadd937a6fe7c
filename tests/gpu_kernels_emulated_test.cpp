// The shared GPU kernels (backends/gpu_common/kernels/*.cu) run through their real
// entry points on the host-thread emulator (gpu_emulator.h), against naive
// double-precision references: broadcasting and strided views, reductions
// over several dims (argmax ties and NaN), softmax, layer_norm, the tiled
// matmul (batch broadcast, transposed operands), copy_ with dtype
// conversion, cat, fill_. What a real device adds (the compilers' device
// passes, cuBLAS, timing) is covered by the -Werror builds and, on a machine
// with a GPU, by gpu_plugin_test.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

// The kernel sources, compiled as plain C++ against the emulator.
#include "gpu_emulated_fixture.h"
#include "kernels/copy.cu"
#include "kernels/matmul.cu"
#include "kernels/nn.cu"
#include "kernels/pointwise.cu"
#include "kernels/reduce.cu"

namespace bp_gpu {
namespace platform {
// No vendor GEMM here: matmul runs the shared tiled kernel.
bp_status_t Gemm(const bp_kernel_call_t*, PlatformState*, const GemmProblem&) { return BP_STATUS_UNIMPLEMENTED; }
}  // namespace platform
}  // namespace bp_gpu

namespace {

TEST_F(EmulatedKernels, AddBroadcastsIntoAStridedOutputWithAlpha) {
  // out [3, 4, 5] written through a transposed-storage view; b broadcast [1, 4, 1].
  Tensor a = Make(kF32, {3, 4, 5}), b = Make(kF32, {3, 4, 5}, {0, 1, 0});
  Tensor out = Make(kF32, {3, 4, 5}, {1, 15, 3});
  FillPattern(a, 1);
  FillPattern(b, 2);
  ASSERT_EQ(Call(bp_gpu::BinaryEntry, "add.Tensor", bp_gpu::kAdd, {TArg(a), TArg(b), DArg(0.5)}, out), BP_STATUS_OK)
      << g_error;
  ForEach(out.shape,
          [&](const std::vector<int64_t>& i) { ExpectNear(out.Get(i), a.Get(i) + 0.5 * b.Get(i), 1e-6, "add"); });
}

TEST_F(EmulatedKernels, BinaryOpsAcrossDtypes) {
  for (DLDataType dt : {kF16, kBF16, kI32, kF64}) {
    Tensor a = Make(dt, {2, 33}), b = Make(dt, {2, 33}, {33, 1});
    FillPattern(a, 3, dt.code == kDLInt);
    FillPattern(b, 4, dt.code == kDLInt);
    Tensor out = Make(dt, {2, 33});
    const double tol = dt.bits == 16 ? 1e-2 : 1e-9;
    ASSERT_EQ(Call(bp_gpu::BinaryEntry, "mul.Tensor", bp_gpu::kMul, {TArg(a), TArg(b)}, out), BP_STATUS_OK) << g_error;
    ForEach(out.shape, [&](const std::vector<int64_t>& i) { ExpectNear(out.Get(i), a.Get(i) * b.Get(i), tol, "mul"); });
    ASSERT_EQ(Call(bp_gpu::BinaryEntry, "maximum", bp_gpu::kMaximum, {TArg(a), TArg(b)}, out), BP_STATUS_OK);
    ForEach(out.shape,
            [&](const std::vector<int64_t>& i) { ExpectNear(out.Get(i), std::max(a.Get(i), b.Get(i)), tol, "max"); });
  }
  // bool add is logical or.
  Tensor x = Make(kBool, {4}), y = Make(kBool, {4}), o = Make(kBool, {4});
  x.Set({1}, 1);
  x.Set({3}, 1);
  y.Set({2}, 1);
  y.Set({3}, 1);
  ASSERT_EQ(Call(bp_gpu::BinaryEntry, "add.Tensor", bp_gpu::kAdd, {TArg(x), TArg(y), IArg(1)}, o), BP_STATUS_OK);
  EXPECT_EQ(o.Get({0}), 0);
  EXPECT_EQ(o.Get({1}), 1);
  EXPECT_EQ(o.Get({2}), 1);
  EXPECT_EQ(o.Get({3}), 1);
}

// Contiguous, aligned operands take the four-at-a-time kernel; 1027 elements
// leave a tail of three for the one-by-one loop.
TEST_F(EmulatedKernels, ContiguousBinaryOpsWithATail) {
  for (DLDataType dt : {kF32, kF16, kI64, kF64}) {
    Tensor a = Make(dt, {1027}), b = Make(dt, {1027}), out = Make(dt, {1027});
    FillPattern(a, 5, dt.code == kDLInt);
    FillPattern(b, 6, dt.code == kDLInt);
    const double tol = dt.bits == 16 ? 1e-2 : 1e-9;
    ASSERT_EQ(Call(bp_gpu::BinaryEntry, "sub.Tensor", bp_gpu::kSub, {TArg(a), TArg(b), IArg(2)}, out), BP_STATUS_OK)
        << g_error;
    ForEach(out.shape,
            [&](const std::vector<int64_t>& i) { ExpectNear(out.Get(i), a.Get(i) - 2 * b.Get(i), tol, "sub"); });
  }
}

TEST_F(EmulatedKernels, FloorDivisionAndNanPropagation) {
  Tensor a = Make(kF64, {6}), b = Make(kF64, {6}), out = Make(kF64, {6});
  const double av[6] = {7, -7, 7, -7, 1, NAN}, bv[6] = {2, 2, -2, -2, 0, 1};
  for (int i = 0; i < 6; ++i) {
    a.Set({i}, av[i]);
    b.Set({i}, bv[i]);
  }
  ASSERT_EQ(Call(bp_gpu::DivModeEntry, "div.Tensor_mode", 0, {TArg(a), TArg(b), SArg("floor")}, out), BP_STATUS_OK);
  for (int i = 0; i < 6; ++i) ExpectNear(out.Get({i}), std::floor(av[i] / bv[i]), 0, "floor " + std::to_string(i));
  ASSERT_EQ(Call(bp_gpu::BinaryEntry, "maximum", bp_gpu::kMaximum, {TArg(a), TArg(b)}, out), BP_STATUS_OK);
  EXPECT_TRUE(std::isnan(out.Get({5})));
  // Integer division goes to the CPU fallback (it validates the divisor).
  Tensor ia = Make(kI32, {3}), ib = Make(kI32, {3}), io = Make(kI32, {3});
  EXPECT_EQ(Call(bp_gpu::DivModeEntry, "div.Tensor_mode", 0, {TArg(ia), TArg(ib), SArg("trunc")}, io),
            BP_STATUS_UNIMPLEMENTED);
}

TEST_F(EmulatedKernels, ComparisonAndWhere) {
  Tensor a = Make(kF16, {3, 7}), b = Make(kF16, {3, 7}, {0, 1});
  FillPattern(a, 5);
  FillPattern(b, 6);
  Tensor mask = Make(kBool, {3, 7});
  ASSERT_EQ(Call(bp_gpu::CompareEntry, "lt.Tensor", bp_gpu::kLt, {TArg(a), TArg(b)}, mask), BP_STATUS_OK) << g_error;
  ForEach(mask.shape, [&](const std::vector<int64_t>& i) { EXPECT_EQ(mask.Get(i), a.Get(i) < b.Get(i) ? 1 : 0); });
  Tensor out = Make(kF16, {3, 7});
  ASSERT_EQ(Call(bp_gpu::WhereEntry, "where.self", 0, {TArg(mask), TArg(a), TArg(b)}, out), BP_STATUS_OK) << g_error;
  ForEach(out.shape, [&](const std::vector<int64_t>& i) { EXPECT_EQ(out.Get(i), std::min(a.Get(i), b.Get(i))); });
}

TEST_F(EmulatedKernels, UnaryMath) {
  Tensor x = Make(kF32, {50}), out = Make(kF32, {50});
  FillPattern(x, 7);
  ASSERT_EQ(Call(bp_gpu::UnaryEntry, "gelu", bp_gpu::kGelu, {TArg(x), SArg("tanh")}, out), BP_STATUS_OK);
  ForEach(x.shape, [&](const std::vector<int64_t>& i) {
    const double v = x.Get(i);
    ExpectNear(out.Get(i), 0.5 * v * (1 + std::tanh(0.7978845608 * (v + 0.044715 * v * v * v))), 1e-5, "gelu");
  });
  ASSERT_EQ(Call(bp_gpu::UnaryEntry, "sigmoid", bp_gpu::kSigmoid, {TArg(x)}, out), BP_STATUS_OK);
  ForEach(x.shape, [&](const std::vector<int64_t>& i) {
    ExpectNear(out.Get(i), 1 / (1 + std::exp(-x.Get(i))), 1e-6, "sigmoid");
  });
  Tensor xi = Make(kI32, {5}), oi = Make(kI32, {5});
  FillPattern(xi, 1, true);
  ASSERT_EQ(Call(bp_gpu::UnaryEntry, "abs", bp_gpu::kAbs, {TArg(xi)}, oi), BP_STATUS_OK);
  ForEach(xi.shape, [&](const std::vector<int64_t>& i) { EXPECT_EQ(oi.Get(i), std::fabs(xi.Get(i))); });
  ASSERT_EQ(Call(bp_gpu::UnaryEntry, "round", bp_gpu::kRound, {TArg(xi)}, oi), BP_STATUS_OK);
  ForEach(xi.shape, [&](const std::vector<int64_t>& i) { EXPECT_EQ(oi.Get(i), xi.Get(i)); });
  // round: halves go to the even neighbour.
  Tensor h = Make(kF32, {6}), oh = Make(kF32, {6});
  const double halves[] = {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5}, even[] = {-2, -2, -0, 0, 2, 2};
  for (int64_t k = 0; k < 6; ++k) h.Set({k}, halves[k]);
  ASSERT_EQ(Call(bp_gpu::UnaryEntry, "round", bp_gpu::kRound, {TArg(h)}, oh), BP_STATUS_OK);
  for (int64_t k = 0; k < 6; ++k) EXPECT_EQ(oh.Get({k}), even[k]) << halves[k];
  // exp of an integer tensor: not a kernel case (the meta promotes) -> fallback.
  EXPECT_EQ(Call(bp_gpu::UnaryEntry, "exp", bp_gpu::kExp, {TArg(xi)}, oi), BP_STATUS_UNIMPLEMENTED);
}

// Reference reduction over `dims` of `in` into keepdim-shaped output indices.
void CheckReduce(const Tensor& in, const Tensor& out, const std::vector<int64_t>& dims, int32_t op, double tol) {
  ForEach(out.shape, [&](const std::vector<int64_t>& oi) {
    std::vector<int64_t> rshape;
    for (int64_t d : dims) rshape.push_back(in.shape[d]);
    double acc = op == bp_gpu::kAmax || op == bp_gpu::kArgmax ? -INFINITY : op == bp_gpu::kAmin ? INFINITY : 0;
    int64_t best = -1, r = 0;
    bool nan = false;
    ForEach(rshape, [&](const std::vector<int64_t>& ri) {
      std::vector<int64_t> idx = oi;
      for (size_t k = 0; k < dims.size(); ++k) idx[dims[k]] = ri[k];
      const double v = in.Get(idx);
      if (op == bp_gpu::kSum || op == bp_gpu::kMean) acc += v;
      if (op == bp_gpu::kAmax) acc = std::isnan(v) || std::isnan(acc) ? NAN : std::max(acc, v);
      if (op == bp_gpu::kAmin) acc = std::isnan(v) || std::isnan(acc) ? NAN : std::min(acc, v);
      if (op == bp_gpu::kArgmax && !nan && (std::isnan(v) || v > acc || best < 0)) {
        nan = std::isnan(v);
        acc = v;
        best = r;
      }
      ++r;
    });
    if (op == bp_gpu::kMean) acc /= static_cast<double>(r);
    if (op == bp_gpu::kArgmax) {
      EXPECT_EQ(out.Get(oi), static_cast<double>(best));
    } else {
      ExpectNear(out.Get(oi), acc, tol, "reduce op " + std::to_string(op));
    }
  });
}

TEST_F(EmulatedKernels, ReductionsOverSeveralDimsOfAPermutedInput) {
  // input [4, 3, 40] stored as [40, 4, 3] (permuted strides).
  for (int64_t len : {int64_t{2}, int64_t{40}}) {  // serial path and block path
    Tensor in = Make(kF32, {4, 3, len}, {3, 1, 12});
    FillPattern(in, 8);
    const std::vector<int64_t> dims = {0, 2};
    for (int32_t op : {bp_gpu::kSum, bp_gpu::kMean, bp_gpu::kAmax, bp_gpu::kAmin}) {
      Tensor out = Make(kF32, {1, 3, 1});
      ASSERT_EQ(Call(bp_gpu::ReduceEntry, "reduce", op, {TArg(in), LArg(dims), IArg(0)}, out), BP_STATUS_OK) << g_error;
      CheckReduce(in, out, dims, op, 1e-5);
    }
    Tensor idx = Make(kI64, {1, 3, 1});
    ASSERT_EQ(Call(bp_gpu::ReduceEntry, "argmax", bp_gpu::kArgmax, {TArg(in), LArg(dims), IArg(0)}, idx), BP_STATUS_OK)
        << g_error;
    CheckReduce(in, idx, dims, bp_gpu::kArgmax, 0);
  }
}

TEST_F(EmulatedKernels, ArgmaxTakesTheFirstMaximumAndNanWins) {
  Tensor in = Make(kF32, {2, 300});
  for (int64_t j = 0; j < 300; ++j) {
    in.Set({0, j}, j % 7 == 3 ? 5.0 : 1.0);
    in.Set({1, j}, 1.0);
  }
  in.Set({1, 250}, NAN);
  in.Set({1, 280}, NAN);
  Tensor idx = Make(kI64, {2, 1});
  const std::vector<int64_t> dims = {1};
  ASSERT_EQ(Call(bp_gpu::ReduceEntry, "argmax", bp_gpu::kArgmax, {TArg(in), LArg(dims), IArg(0)}, idx), BP_STATUS_OK);
  EXPECT_EQ(idx.Get({0, 0}), 3);
  EXPECT_EQ(idx.Get({1, 0}), 250);
  Tensor mx = Make(kF32, {2, 1});
  ASSERT_EQ(Call(bp_gpu::ReduceEntry, "amax", bp_gpu::kAmax, {TArg(in), LArg(dims)}, mx), BP_STATUS_OK);
  EXPECT_EQ(mx.Get({0, 0}), 5.0);
  EXPECT_TRUE(std::isnan(mx.Get({1, 0})));
}

TEST_F(EmulatedKernels, SumOfIntegersAccumulatesExactly) {
  Tensor in = Make(kI64, {5, 100}), out = Make(kI64, {1, 100});
  FillPattern(in, 9, true);
  const std::vector<int64_t> dims = {0};
  ASSERT_EQ(Call(bp_gpu::ReduceEntry, "sum", bp_gpu::kSum, {TArg(in), LArg(dims)}, out), BP_STATUS_OK);
  CheckReduce(in, out, dims, bp_gpu::kSum, 0);
}

TEST_F(EmulatedKernels, SoftmaxAndLogSoftmaxAlongAStridedDim) {
  for (int64_t len : {int64_t{5}, int64_t{130}}) {
    Tensor in = Make(kF32, {3, len, 2}, {1, 6, 3});
    FillPattern(in, 10);
    for (int32_t log : {0, 1}) {
      Tensor out = Make(kF32, {3, len, 2});
      ASSERT_EQ(Call(bp_gpu::SoftmaxEntry, "softmax.int", log, {TArg(in), IArg(1)}, out), BP_STATUS_OK) << g_error;
      for (int64_t i = 0; i < 3; ++i) {
        for (int64_t k = 0; k < 2; ++k) {
          double m = -INFINITY, s = 0;
          for (int64_t j = 0; j < len; ++j) m = std::max(m, in.Get({i, j, k}));
          for (int64_t j = 0; j < len; ++j) s += std::exp(in.Get({i, j, k}) - m);
          for (int64_t j = 0; j < len; ++j) {
            const double x = in.Get({i, j, k}) - m;
            ExpectNear(out.Get({i, j, k}), log ? x - std::log(s) : std::exp(x) / s, 1e-5, "softmax");
          }
        }
      }
    }
  }
}

TEST_F(EmulatedKernels, LayerNormWithWeightAndBias) {
  for (int64_t len : {int64_t{3}, int64_t{70}}) {
    Tensor in = Make(kF64, {4, 2, len}), w = Make(kF64, {2, len}), b = Make(kF64, {2, len}, {1, 2});
    FillPattern(in, 11);
    FillPattern(w, 12);
    FillPattern(b, 13);
    Tensor out = Make(kF64, {4, 2, len});
    const std::vector<int64_t> ns = {2, len};
    ASSERT_EQ(Call(bp_gpu::LayerNormEntry, "layer_norm", 0, {TArg(in), LArg(ns), TArg(w), TArg(b), DArg(1e-5)}, out),
              BP_STATUS_OK)
        << g_error;
    for (int64_t r = 0; r < 4; ++r) {
      double mean = 0, var = 0;
      ForEach({2, len}, [&](const std::vector<int64_t>& i) { mean += in.Get({r, i[0], i[1]}); });
      mean /= 2.0 * len;
      ForEach({2, len}, [&](const std::vector<int64_t>& i) { var += std::pow(in.Get({r, i[0], i[1]}) - mean, 2); });
      var /= 2.0 * len;
      ForEach({2, len}, [&](const std::vector<int64_t>& i) {
        const double want = (in.Get({r, i[0], i[1]}) - mean) / std::sqrt(var + 1e-5) * w.Get(i) + b.Get(i);
        ExpectNear(out.Get({r, i[0], i[1]}), want, 1e-9, "layer_norm");
      });
    }
  }
}

TEST_F(EmulatedKernels, BatchedMatmulWithBroadcastBatchAndTransposedOperand) {
  const int64_t B = 3, M = 17, K = 20, N = 18;
  Tensor a = Make(kF32, {B, M, K});
  Tensor b = Make(kF32, {B, K, N}, {0, 1, K});  // one [K, N] matrix stored transposed, broadcast over B
  Tensor c = Make(kF32, {B, M, N});
  FillPattern(a, 14);
  FillPattern(b, 15);
  ASSERT_EQ(Call(bp_gpu::MatmulEntry, "matmul", 0, {TArg(a), TArg(b)}, c), BP_STATUS_OK) << g_error;
  ForEach(c.shape, [&](const std::vector<int64_t>& i) {
    double ref = 0;
    for (int64_t k = 0; k < K; ++k) ref += a.Get({i[0], i[1], k}) * b.Get({i[0], k, i[2]});
    ExpectNear(c.Get(i), ref, 1e-5, "matmul");
  });
}

TEST_F(EmulatedKernels, AddmmAndLinear) {
  const int64_t M = 5, K = 7, N = 4;
  Tensor self = Make(kF32, {M, N}, {0, 1}), m1 = Make(kF32, {M, K}), m2 = Make(kF32, {K, N});
  FillPattern(self, 16);
  FillPattern(m1, 17);
  FillPattern(m2, 18);
  Tensor out = Make(kF32, {M, N});
  ASSERT_EQ(Call(bp_gpu::AddmmEntry, "addmm", 0, {TArg(self), TArg(m1), TArg(m2), DArg(0.5), IArg(2)}, out),
            BP_STATUS_OK)
      << g_error;
  ForEach(out.shape, [&](const std::vector<int64_t>& i) {
    double ref = 0;
    for (int64_t k = 0; k < K; ++k) ref += m1.Get({i[0], k}) * m2.Get({k, i[1]});
    ExpectNear(out.Get(i), 0.5 * self.Get(i) + 2 * ref, 1e-5, "addmm");
  });
  // linear: input [2, 3, K], weight [N, K], bias [N].
  Tensor in = Make(kBF16, {2, 3, K}), w = Make(kBF16, {N, K}), bias = Make(kBF16, {N});
  FillPattern(in, 19);
  FillPattern(w, 20);
  FillPattern(bias, 21);
  Tensor y = Make(kBF16, {2, 3, N});
  ASSERT_EQ(Call(bp_gpu::LinearEntry, "linear", 0, {TArg(in), TArg(w), TArg(bias)}, y), BP_STATUS_OK) << g_error;
  ForEach(y.shape, [&](const std::vector<int64_t>& i) {
    double ref = bias.Get({i[2]});
    for (int64_t k = 0; k < K; ++k) ref += in.Get({i[0], i[1], k}) * w.Get({i[2], k});
    ExpectNear(y.Get(i), ref, 2e-2, "linear");
  });
}

TEST_F(EmulatedKernels, CopyConvertsDtypesAndBroadcasts) {
  // src arrives broadcast to self's sizes (stride 0), as the contract says.
  Tensor src = Make(kF32, {3, 6}, {0, 1});
  for (int j = 0; j < 6; ++j) src.Set({0, j}, -2.75 + 1.1 * j);
  Tensor dst = Make(kI32, {3, 6}, {1, 3});
  ASSERT_EQ(Call(bp_gpu::CopyEntry, "copy_", 0, {TArg(dst), TArg(src), IArg(0)}, dst), BP_STATUS_OK) << g_error;
  ForEach(dst.shape, [&](const std::vector<int64_t>& i) { EXPECT_EQ(dst.Get(i), std::trunc(src.Get({0, i[1]}))); });
  Tensor h = Make(kF16, {3, 6});
  ASSERT_EQ(Call(bp_gpu::CopyEntry, "copy_", 0, {TArg(h), TArg(dst)}, h), BP_STATUS_OK);
  ForEach(h.shape, [&](const std::vector<int64_t>& i) { EXPECT_EQ(h.Get(i), dst.Get(i)); });
  Tensor u = Make(kU8, {3, 6}), bo = Make(kBool, {3, 6});
  ASSERT_EQ(Call(bp_gpu::CopyEntry, "copy_", 0, {TArg(bo), TArg(h)}, bo), BP_STATUS_OK);
  ForEach(bo.shape, [&](const std::vector<int64_t>& i) { EXPECT_EQ(bo.Get(i), h.Get(i) != 0 ? 1 : 0); });
  ASSERT_EQ(Call(bp_gpu::CopyEntry, "copy_", 0, {TArg(u), TArg(bo)}, u), BP_STATUS_OK);
  ForEach(u.shape, [&](const std::vector<int64_t>& i) { EXPECT_EQ(u.Get(i), bo.Get(i)); });
}

TEST_F(EmulatedKernels, CatAlongAnInnerDimAndFill) {
  Tensor a = Make(kI64, {2, 3}), b = Make(kI64, {2, 1}), c = Make(kI64, {2, 2}, {1, 2});
  FillPattern(a, 22, true);
  FillPattern(b, 23, true);
  FillPattern(c, 24, true);
  Tensor out = Make(kI64, {2, 6});
  Fix(a);
  Fix(b);
  Fix(c);
  const DLTensor* list[3] = {&a.dl, &b.dl, &c.dl};
  bp_kernel_arg_t tl{};
  tl.kind = BP_VALUE_TENSOR_LIST;
  tl.u.tensor_list.data = list;
  tl.u.tensor_list.size = 3;
  ASSERT_EQ(Call(bp_gpu::CatEntry, "cat", 0, {tl, IArg(1)}, out), BP_STATUS_OK) << g_error;
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 6; ++j) {
      const double want = j < 3 ? a.Get({i, j}) : j < 4 ? b.Get({i, 0}) : c.Get({i, j - 4});
      EXPECT_EQ(out.Get({i, j}), want) << i << "," << j;
    }
  }
  Tensor f = Make(kBF16, {4, 5}, {1, 4});
  ASSERT_EQ(Call(bp_gpu::FillEntry, "fill_.Scalar", 0, {TArg(f), DArg(-1.5)}, f), BP_STATUS_OK);
  ForEach(f.shape, [&](const std::vector<int64_t>& i) { EXPECT_EQ(f.Get(i), -1.5); });
}

TEST_F(EmulatedKernels, BatchNormInference) {
  Tensor in = Make(kF32, {2, 3, 4, 5}), w = Make(kF32, {3}), b = Make(kF32, {3});
  Tensor mean = Make(kF32, {3}), var = Make(kF32, {3}, {2});
  FillPattern(in, 25);
  FillPattern(w, 26);
  FillPattern(b, 27);
  FillPattern(mean, 28);
  for (int64_t c = 0; c < 3; ++c) var.Set({c}, 0.5 + static_cast<double>(c));
  Tensor out = Make(kF32, {2, 3, 4, 5});
  bp_kernel_arg_t training{};
  training.kind = BP_VALUE_BOOL;
  ASSERT_EQ(Call(bp_gpu::BatchNormEntry, "batch_norm", 0,
                 {TArg(in), TArg(w), TArg(b), TArg(mean), TArg(var), training, DArg(0.1), DArg(1e-5)}, out),
            BP_STATUS_OK)
      << g_error;
  ForEach(out.shape, [&](const std::vector<int64_t>& i) {
    const int64_t c = i[1];
    const double want = (in.Get(i) - mean.Get({c})) / std::sqrt(var.Get({c}) + 1e-5) * w.Get({c}) + b.Get({c});
    ExpectNear(out.Get(i), want, 1e-5, "batch_norm");
  });
  training.u.b = 1;
  EXPECT_EQ(Call(bp_gpu::BatchNormEntry, "batch_norm", 0,
                 {TArg(in), TArg(w), TArg(b), TArg(mean), TArg(var), training, DArg(0.1), DArg(1e-5)}, out),
            BP_STATUS_UNIMPLEMENTED);
}

TEST_F(EmulatedKernels, MismatchedDtypesGoToTheFallbackWithoutWriting) {
  Tensor a = Make(kF32, {4}), b = Make(kF64, {4}), out = Make(kF32, {4});
  out.Set({0}, 42);
  EXPECT_EQ(Call(bp_gpu::BinaryEntry, "add.Tensor", bp_gpu::kAdd, {TArg(a), TArg(b)}, out), BP_STATUS_UNIMPLEMENTED);
  EXPECT_NE(g_error.find("add.Tensor"), std::string::npos) << g_error;
  EXPECT_EQ(out.Get({0}), 42);
}

}  // namespace
