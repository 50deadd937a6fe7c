// CPU backend reduction, linear-algebra and NN kernels (reductions, matmul,
// addmm/linear, conv2d, pools, softmax, norms), called through the shared
// fake host with DLTensors in the exact form the kernel contract describes:
// keepdim-sized reduction outputs, transposed and expanded operands, strided
// outputs.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "cpu_kernels_fixture.h"

using namespace bp_test;

namespace {

TEST_F(CpuKernels, ReductionsWithKeepdimSizes) {
  // x: [2, 3, 2] = 0..11; reduce dims {0, 2} -> out [1, 3, 1].
  HostTensor x(F32(), {2, 3, 2}), out(F32(), {1, 3, 1});
  std::vector<float> v(12);
  for (int i = 0; i < 12; ++i) v[i] = static_cast<float>(i);
  x.Set(v);
  const std::vector<int64_t> dims = {0, 2};
  ASSERT_EQ(Call("sum.dim_IntList", {TArg(x), LArg(dims), BArg(false), NoneArg()}, {&out}), BP_STATUS_OK)
      << LastError();
  EXPECT_EQ(out.Get<float>(3), (std::vector<float>{0 + 1 + 6 + 7, 2 + 3 + 8 + 9, 4 + 5 + 10 + 11}));
  ASSERT_EQ(Call("mean.dim", {TArg(x), LArg(dims), BArg(true), NoneArg()}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(out.Get<float>(3), (std::vector<float>{3.5f, 5.5f, 7.5f}));
  ASSERT_EQ(Call("amax", {TArg(x), LArg(dims), BArg(false)}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(out.Get<float>(3), (std::vector<float>{7, 9, 11}));
  ASSERT_EQ(Call("amin", {TArg(x), LArg(dims), BArg(false)}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(out.Get<float>(3), (std::vector<float>{0, 2, 4}));
  // All dims of a transposed view, into a [1, 1, 1] output.
  HostTensor all(F32(), {1, 1, 1});
  x.SetView({2, 2, 3}, {6, 1, 2});
  const std::vector<int64_t> every = {0, 1, 2};
  ASSERT_EQ(Call("sum.dim_IntList", {TArg(x), LArg(every), BArg(false), NoneArg()}, {&all}), BP_STATUS_OK)
      << LastError();
  EXPECT_EQ(all.Get<float>(1)[0], 66.f);
}

TEST_F(CpuKernels, ProdAlongOneDimWrapsIntegersAndEmptyIsOne) {
  // x [2, 3] = [[1, 2, 3], [-4, 5, 0.5]]; prod over dim 1 -> [6, -10].
  HostTensor x(F32(), {2, 3}), out(F32(), {2, 1});
  x.Set<float>({1, 2, 3, -4, 5, 0.5f});
  const std::vector<int64_t> d1 = {1};
  ASSERT_EQ(Call("prod.dim_int", {TArg(x), LArg(d1), BArg(false), NoneArg()}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(out.Get<float>(2), (std::vector<float>{6, -10}));
  // int64 multiplies modulo 2^64: 2^62 * 4 = 0.
  HostTensor xi(I64(), {2}), oi(I64(), {1});
  xi.Set<int64_t>({int64_t{1} << 62, 4});
  const std::vector<int64_t> d0 = {0};
  ASSERT_EQ(Call("prod.dim_int", {TArg(xi), LArg(d0), BArg(false), NoneArg()}, {&oi}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(oi.Get<int64_t>(1)[0], 0);
  // A zero-size reduced dim gives the empty product.
  HostTensor e(F32(), {3, 0}), eo(F32(), {3, 1});
  ASSERT_EQ(Call("prod.dim_int", {TArg(e), LArg(d1), BArg(false), NoneArg()}, {&eo}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(eo.Get<float>(3), (std::vector<float>{1, 1, 1}));
}

TEST_F(CpuKernels, ArgmaxRowMajorIndexFirstOccurrenceAndNaN) {
  // x [2, 3] transposed view of [3, 2]; argmax over dim 1 -> [2, 1].
  HostTensor x(F32(), {3, 2}), out(I64(), {2, 1});
  x.Set<float>({1, 5, 7, 5, 7, 0});  // x^T = [[1,7,7],[5,5,0]]
  x.SetView({2, 3}, {1, 2});
  const std::vector<int64_t> d1 = {1};
  ASSERT_EQ(Call("argmax", {TArg(x), LArg(d1), BArg(false)}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(out.Get<int64_t>(2), (std::vector<int64_t>{1, 0}));
  // Flattened over all dims of x^T: row-major index of the first 7 is 1.
  HostTensor flat(I64(), {1, 1});
  const std::vector<int64_t> all = {0, 1};
  ASSERT_EQ(Call("argmax", {TArg(x), LArg(all), BArg(false)}, {&flat}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(flat.Get<int64_t>(1)[0], 1);
  HostTensor n(F64(), {4}), one(I64(), {1});
  n.Set<double>({1, std::nan(""), 9, std::nan("")});
  const std::vector<int64_t> d0 = {0};
  ASSERT_EQ(Call("argmax", {TArg(n), LArg(d0), BArg(false)}, {&one}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(one.Get<int64_t>(1)[0], 1);
  HostTensor m(F64(), {1});
  ASSERT_EQ(Call("amax", {TArg(n), LArg(d0), BArg(false)}, {&m}), BP_STATUS_OK) << LastError();
  EXPECT_TRUE(std::isnan(m.Get<double>(1)[0]));
}

TEST_F(CpuKernels, LargeReductionsSplitAcrossThreads) {
  const int64_t n = 1 << 20;
  HostTensor x(F32(), {n}), s(F32(), {1}), am(I64(), {1});
  float* p = x.data<float>();
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(i % 7);
  p[777777] = 100.f;
  p[900000] = 100.f;
  const std::vector<int64_t> d0 = {0};
  ASSERT_EQ(Call("sum.dim_IntList", {TArg(x), LArg(d0), BArg(false), NoneArg()}, {&s}), BP_STATUS_OK) << LastError();
  double expect = 0;
  for (int64_t i = 0; i < n; ++i) expect += p[i];
  EXPECT_EQ(s.Get<float>(1)[0], static_cast<float>(expect));
  ASSERT_EQ(Call("argmax", {TArg(x), LArg(d0), BArg(false)}, {&am}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(am.Get<int64_t>(1)[0], 777777);
  // Empty reduction: sum is 0, amax has no identity.
  HostTensor e(F32(), {0, 3}), es(F32(), {1, 3});
  ASSERT_EQ(Call("sum.dim_IntList", {TArg(e), LArg(d0), BArg(true), NoneArg()}, {&es}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(es.Get<float>(3), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(Call("amax", {TArg(e), LArg(d0), BArg(true)}, {&es}), BP_STATUS_INVALID_ARGUMENT);
}

// Reference product for small dense row-major matrices.
std::vector<double> RefMm(const std::vector<double>& a, const std::vector<double>& b, int M, int K, int N) {
  std::vector<double> c(static_cast<size_t>(M * N), 0.0);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n)
      for (int k = 0; k < K; ++k) c[m * N + n] += a[m * K + k] * b[k * N + n];
  return c;
}

TEST_F(CpuKernels, MatmulBatchBroadcastAndTransposes) {
  for (DLDataType dt : {F32(), F64(), BF16(), F16()}) {
    SCOPED_TRACE(static_cast<int>(dt.code) * 100 + dt.bits);
    // A: [2, 2, 3] (two batches), B: one [3, 2] matrix broadcast over the batch
    // (stride 0), stored transposed ([2, 3] buffer); out: [2, 2, 2].
    std::vector<double> av = {1, 2, 3, 4, 5, 6, -1, 0, 2, 3, -2, 1};
    std::vector<double> bt = {1, 0, 2, -1, 3, 1};  // B^T rows: B = [[1,-1],[0,3],[2,1]]
    HostTensor a(F64(), {2, 2, 3}), b(F64(), {2, 3}), a_t(dt, {2, 2, 3}), b_t(dt, {2, 3}), out(dt, {2, 2, 2});
    a.Set(av);
    b.Set(bt);
    ASSERT_EQ(Call("copy_", {TArg(a_t), TArg(a), BArg(false)}, {&a_t}), BP_STATUS_OK) << LastError();
    ASSERT_EQ(Call("copy_", {TArg(b_t), TArg(b), BArg(false)}, {&b_t}), BP_STATUS_OK) << LastError();
    b_t.SetView({2, 3, 2}, {0, 1, 3});
    ASSERT_EQ(Call("matmul", {TArg(a_t), TArg(b_t)}, {&out}), BP_STATUS_OK) << LastError();
    HostTensor o64(F64(), {2, 2, 2});
    ASSERT_EQ(Call("copy_", {TArg(o64), TArg(out), BArg(false)}, {&o64}), BP_STATUS_OK) << LastError();
    const std::vector<double> bm = {1, -1, 0, 3, 2, 1};
    std::vector<double> expect = RefMm({av.begin(), av.begin() + 6}, bm, 2, 3, 2);
    std::vector<double> e2 = RefMm({av.begin() + 6, av.end()}, bm, 2, 3, 2);
    expect.insert(expect.end(), e2.begin(), e2.end());
    EXPECT_EQ(o64.Get<double>(8), expect);
  }
}

// [..., M, K] @ one [K, N] (broadcast over the batch): the kernel folds the
// batch into rows when A's and the output's rows step evenly (a token batch
// [65, 1, 64]), and keeps the batched product when they do not (A a
// permuted view, or the output one); every case against the reference.
TEST_F(CpuKernels, MatmulBatchAgainstOneWeightFoldedOrNot) {
  const int64_t K = 24, N = 10;
  std::vector<double> bv(K * N);
  for (int64_t i = 0; i < K * N; ++i) bv[i] = ((i * 11) % 13) / 4.0 - 1.5;
  struct Case {
    int64_t b0, b1;     // A's and the output's batch and row sizes: [b0, b1, K] and [b0, b1, N]
    bool a_permuted;    // A read through a [b1, b0, K] buffer
    bool out_permuted;  // the output written through a [b1, b0, N] buffer
  };
  for (const Case& c : {Case{65, 1, false, false}, Case{3, 4, true, false}, Case{3, 4, false, true}}) {
    SCOPED_TRACE(std::to_string(c.b0) + "x" + std::to_string(c.b1) + (c.a_permuted ? " A permuted" : "") +
                 (c.out_permuted ? " out permuted" : ""));
    const int64_t rows = c.b0 * c.b1;
    std::vector<double> av(rows * K);  // logical [b0, b1, K]
    for (int64_t i = 0; i < rows * K; ++i) av[i] = ((i * 37) % 17) / 8.0 - 1.0;
    for (DLDataType dt : {F32(), F64()}) {
      HostTensor a(dt, {rows, K}), b(F64(), {K, N}), bt(dt, {K, N}), out(dt, {rows, N});
      std::vector<double> stored(rows * K);
      for (int64_t i0 = 0; i0 < c.b0; ++i0)
        for (int64_t i1 = 0; i1 < c.b1; ++i1)
          for (int64_t k = 0; k < K; ++k) {
            const int64_t at = c.a_permuted ? (i1 * c.b0 + i0) * K + k : (i0 * c.b1 + i1) * K + k;
            stored[at] = av[(i0 * c.b1 + i1) * K + k];
          }
      HostTensor a64(F64(), {rows, K});
      a64.Set(stored);
      b.Set(bv);
      ASSERT_EQ(Call("copy_", {TArg(a), TArg(a64), BArg(false)}, {&a}), BP_STATUS_OK) << LastError();
      ASSERT_EQ(Call("copy_", {TArg(bt), TArg(b), BArg(false)}, {&bt}), BP_STATUS_OK) << LastError();
      if (c.a_permuted)
        a.SetView({c.b0, c.b1, K}, {K, c.b0 * K, 1});
      else
        a.SetView({c.b0, c.b1, K}, {c.b1 * K, K, 1});
      bt.SetView({c.b0, K, N}, {0, N, 1});
      if (c.out_permuted)
        out.SetView({c.b0, c.b1, N}, {N, c.b0 * N, 1});
      else
        out.SetView({c.b0, c.b1, N}, {c.b1 * N, N, 1});
      ASSERT_EQ(Call("matmul", {TArg(a), TArg(bt)}, {&out}), BP_STATUS_OK) << LastError();
      HostTensor o64(F64(), {c.b0, c.b1, N});
      ASSERT_EQ(Call("copy_", {TArg(o64), TArg(out), BArg(false)}, {&o64}), BP_STATUS_OK) << LastError();
      const std::vector<double> got = o64.Get<double>(rows * N);
      const std::vector<double> ref = RefMm(av, bv, static_cast<int>(rows), static_cast<int>(K), static_cast<int>(N));
      for (int64_t i = 0; i < rows * N; ++i) ASSERT_NEAR(got[i], ref[i], 1e-4 * (1 + std::fabs(ref[i]))) << i;
    }
  }
}

TEST_F(CpuKernels, MatmulLargeMatchesReferenceAndStridedOutput) {
  const int M = 70, K = 65, N = 33;
  std::vector<double> av(M * K), bv(K * N);
  for (int i = 0; i < M * K; ++i) av[i] = ((i * 37) % 17) / 8.0 - 1.0;
  for (int i = 0; i < K * N; ++i) bv[i] = ((i * 11) % 13) / 4.0 - 1.5;
  const std::vector<double> ref = RefMm(av, bv, M, K, N);
  for (DLDataType dt : {F32(), F64()}) {
    HostTensor a(F64(), {M, K}), b(F64(), {K, N}), at(dt, {M, K}), bt(dt, {K, N}), out(dt, {N, M});
    a.Set(av);
    b.Set(bv);
    ASSERT_EQ(Call("copy_", {TArg(at), TArg(a), BArg(false)}, {&at}), BP_STATUS_OK);
    ASSERT_EQ(Call("copy_", {TArg(bt), TArg(b), BArg(false)}, {&bt}), BP_STATUS_OK);
    out.SetView({M, N}, {1, M});  // write through a transposed view
    ASSERT_EQ(Call("matmul", {TArg(at), TArg(bt)}, {&out}), BP_STATUS_OK) << LastError();
    HostTensor o64(F64(), {M, N});
    ASSERT_EQ(Call("copy_", {TArg(o64), TArg(out), BArg(false)}, {&o64}), BP_STATUS_OK);
    const std::vector<double> got = o64.Get<double>(M * N);
    for (int i = 0; i < M * N; ++i) ASSERT_NEAR(got[i], ref[i], 1e-4 * (1 + std::fabs(ref[i]))) << i;
  }
}

TEST_F(CpuKernels, AddmmAndLinear) {
  HostTensor self(F32(), {2}), m1(F32(), {2, 2}), m2(F32(), {2, 2}), out(F32(), {2, 2});
  self.Set<float>({10, 20});
  self.SetView({2, 2}, {0, 1});  // row vector broadcast to [M, N]
  m1.Set<float>({1, 2, 3, 4});
  m2.Set<float>({1, 0, 0, 1});
  ASSERT_EQ(Call("addmm", {TArg(self), TArg(m1), TArg(m2), DArg(0.5), IArg(2)}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(out.Get<float>(4), (std::vector<float>{7, 14, 11, 18}));
  // beta = 0 ignores self, even NaN.
  self.Set<float>({std::nanf(""), 1});
  ASSERT_EQ(Call("addmm", {TArg(self), TArg(m1), TArg(m2), IArg(0), IArg(1)}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(out.Get<float>(4), (std::vector<float>{1, 2, 3, 4}));
  // linear: input [2, 2, 3] @ weight[2, 3]^T + bias[2].
  HostTensor in(F64(), {2, 2, 3}), w(F64(), {2, 3}), bias(F64(), {2}), lo(F64(), {2, 2, 2});
  in.Set<double>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  w.Set<double>({1, 0, 0, 0, 1, 1});
  bias.Set<double>({100, 200});
  ASSERT_EQ(Call("linear", {TArg(in), TArg(w), TArg(bias)}, {&lo}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(lo.Get<double>(8), (std::vector<double>{101, 205, 104, 211, 107, 217, 110, 223}));
  HostTensor in1(F32(), {3}), w1(F32(), {2, 3}), o1(F32(), {2});
  in1.Set<float>({1, 2, 3});
  w1.Set<float>({1, 1, 1, 0, 0, 2});
  ASSERT_EQ(Call("linear", {TArg(in1), TArg(w1), NoneArg()}, {&o1}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(o1.Get<float>(2), (std::vector<float>{6, 6}));
}

// Direct double-precision conv2d reference over dense NCHW / OIHW data.
std::vector<double> RefConv(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& b,
                            int N, int C, int H, int W, int OC, int KH, int KW, int s, int p, int d, int g, int OH,
                            int OW) {
  std::vector<double> y(static_cast<size_t>(N * OC * OH * OW));
  const int icg = C / g, ocg = OC / g;
  for (int n = 0; n < N; ++n)
    for (int oc = 0; oc < OC; ++oc)
      for (int oh = 0; oh < OH; ++oh)
        for (int ow = 0; ow < OW; ++ow) {
          double acc = b.empty() ? 0 : b[oc];
          for (int ic = 0; ic < icg; ++ic)
            for (int kh = 0; kh < KH; ++kh)
              for (int kw = 0; kw < KW; ++kw) {
                const int ih = oh * s - p + kh * d, iw = ow * s - p + kw * d;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc +=
                    x[((n * C + (oc / ocg) * icg + ic) * H + ih) * W + iw] * w[((oc * icg + ic) * KH + kh) * KW + kw];
              }
          y[((n * OC + oc) * OH + oh) * OW + ow] = acc;
        }
  return y;
}

TEST_F(CpuKernels, Conv2dGroupsDilationPaddingBias) {
  // Grouped, dilated, strided; then ungrouped with 16 and 32 channels (the
  // float32 path that runs oneDNN on nChw16c activations).
  struct Shape {
    int N, C, H, W, OC, G, KH, KW, S, P, D;
  };
  for (const Shape& sh : {Shape{2, 4, 7, 6, 6, 2, 3, 2, 2, 1, 2}, Shape{2, 16, 9, 7, 32, 1, 3, 3, 1, 1, 1}}) {
    const int N = sh.N, C = sh.C, H = sh.H, W = sh.W, OC = sh.OC, G = sh.G, KH = sh.KH, KW = sh.KW, S = sh.S, P = sh.P,
              D = sh.D;
    SCOPED_TRACE("conv2d C" + std::to_string(C) + " OC" + std::to_string(OC) + " G" + std::to_string(G));
    const int OH = (H + 2 * P - D * (KH - 1) - 1) / S + 1, OW = (W + 2 * P - D * (KW - 1) - 1) / S + 1;
    std::vector<double> xv(N * C * H * W), wv(OC * (C / G) * KH * KW), bv(OC);
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<double>((i * 7) % 11) - 5;
    for (size_t i = 0; i < wv.size(); ++i) wv[i] = static_cast<double>((i * 5) % 7) - 3;
    for (size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<double>(i);
    const std::vector<double> ref = RefConv(xv, wv, bv, N, C, H, W, OC, KH, KW, S, P, D, G, OH, OW);
    const std::vector<int64_t> stride = {S, S}, pad = {P, P}, dil = {D, D};
    for (DLDataType dt : {F32(), F64(), BF16()}) {
      SCOPED_TRACE(dt.bits);
      HostTensor x64(F64(), {N, C, H, W}), w64(F64(), {OC, C / G, KH, KW}), b64(F64(), {OC});
      x64.Set(xv);
      w64.Set(wv);
      b64.Set(bv);
      HostTensor x(dt, {N, C, H, W}), w(dt, {OC, C / G, KH, KW}), b(dt, {OC}), y(dt, {N, OC, OH, OW});
      ASSERT_EQ(Call("copy_", {TArg(x), TArg(x64), BArg(false)}, {&x}), BP_STATUS_OK);
      ASSERT_EQ(Call("copy_", {TArg(w), TArg(w64), BArg(false)}, {&w}), BP_STATUS_OK);
      ASSERT_EQ(Call("copy_", {TArg(b), TArg(b64), BArg(false)}, {&b}), BP_STATUS_OK);
      ASSERT_EQ(Call("conv2d", {TArg(x), TArg(w), TArg(b), LArg(stride), LArg(pad), LArg(dil), IArg(G)}, {&y}),
                BP_STATUS_OK)
          << LastError();
      HostTensor y64(F64(), {N, OC, OH, OW});
      ASSERT_EQ(Call("copy_", {TArg(y64), TArg(y), BArg(false)}, {&y64}), BP_STATUS_OK);
      const std::vector<double> got = y64.Get<double>(ref.size());
      // Small integers: exact in float32/float64; bfloat16 rounds sums above 256.
      const double tol = dt.code == kDLBfloat ? 1.6e-2 : 0.0;
      for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(got[i], ref[i], tol * std::fabs(ref[i])) << i;
    }
  }
}

TEST_F(CpuKernels, Pools) {
  // x: [1, 1, 4, 5] = 0..19.
  HostTensor x(F32(), {1, 1, 4, 5});
  std::vector<float> xv(20);
  for (int i = 0; i < 20; ++i) xv[i] = static_cast<float>(i);
  x.Set(xv);
  const std::vector<int64_t> k2 = {2, 2}, s2 = {2, 2}, p0 = {0, 0}, p1 = {1, 1}, d1 = {1, 1};
  HostTensor m(F32(), {1, 1, 2, 2});
  ASSERT_EQ(Call("max_pool2d", {TArg(x), LArg(k2), LArg(s2), LArg(p0), LArg(d1), BArg(false)}, {&m}), BP_STATUS_OK)
      << LastError();
  EXPECT_EQ(m.Get<float>(4), (std::vector<float>{6, 8, 16, 18}));
  // ceil_mode: [1, 1, 2, 3], the last column window is partial.
  HostTensor mc(F32(), {1, 1, 2, 3});
  ASSERT_EQ(Call("max_pool2d", {TArg(x), LArg(k2), LArg(s2), LArg(p0), LArg(d1), BArg(true)}, {&mc}), BP_STATUS_OK)
      << LastError();
  EXPECT_EQ(mc.Get<float>(6), (std::vector<float>{6, 8, 9, 16, 18, 19}));
  // avg with padding 1: output [1, 1, 3, 3]; corner window holds x[0][0] only.
  HostTensor a(F32(), {1, 1, 3, 3});
  ASSERT_EQ(Call("avg_pool2d", {TArg(x), LArg(k2), LArg(s2), LArg(p1), BArg(false), BArg(true), NoneArg()}, {&a}),
            BP_STATUS_OK)
      << LastError();
  std::vector<float> av = a.Get<float>(9);
  EXPECT_FLOAT_EQ(av[0], 0.0f / 4);
  EXPECT_FLOAT_EQ(av[1], (1 + 2) / 4.0f);
  ASSERT_EQ(Call("avg_pool2d", {TArg(x), LArg(k2), LArg(s2), LArg(p1), BArg(false), BArg(false), NoneArg()}, {&a}),
            BP_STATUS_OK)
      << LastError();
  av = a.Get<float>(9);
  EXPECT_FLOAT_EQ(av[1], (1 + 2) / 2.0f);
  EXPECT_FLOAT_EQ(av[4], (6 + 7 + 11 + 12) / 4.0f);
  ASSERT_EQ(Call("avg_pool2d", {TArg(x), LArg(k2), LArg(s2), LArg(p1), BArg(false), BArg(true), IArg(3)}, {&a}),
            BP_STATUS_OK)
      << LastError();
  EXPECT_FLOAT_EQ(a.Get<float>(9)[4], (6 + 7 + 11 + 12) / 3.0f);
  // NaN propagates through max pooling.
  xv[6] = std::nanf("");
  x.Set(xv);
  ASSERT_EQ(Call("max_pool2d", {TArg(x), LArg(k2), LArg(s2), LArg(p0), LArg(d1), BArg(false)}, {&m}), BP_STATUS_OK);
  EXPECT_TRUE(std::isnan(m.Get<float>(4)[0]));
}

// max_pool2d's whole-window columns (a vectorized loop) and edge columns (a
// loop over each column's valid taps) against a naive loop over every tap,
// for torch's common windows (3x3 stride 2 pad 1, stride 1, dilation 2) on a
// row length that leaves partial windows at both ends, with a NaN inside.
TEST_F(CpuKernels, MaxPoolWindowsMatchNaiveLoop) {
  const int64_t N = 1, C = 2, H = 9, W = 13;
  HostTensor x(F32(), {N, C, H, W});
  std::vector<float> xv(static_cast<size_t>(N * C * H * W));
  uint32_t state = 12345;
  for (float& v : xv) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(static_cast<int32_t>(state >> 8) % 2001 - 1000) / 100.0f;
  }
  xv[3 * W + 6] = std::nanf("");  // channel 0, row 3, column 6: inside several windows
  x.Set(xv);
  struct Case {
    int64_t k, s, p, d;
  };
  for (const Case& c : {Case{3, 2, 1, 1}, Case{3, 1, 1, 1}, Case{3, 2, 0, 1}, Case{3, 1, 2, 2}, Case{2, 1, 0, 1}}) {
    const int64_t OH = (H + 2 * c.p - c.d * (c.k - 1) - 1) / c.s + 1,
                  OW = (W + 2 * c.p - c.d * (c.k - 1) - 1) / c.s + 1;
    const std::vector<int64_t> k = {c.k, c.k}, s = {c.s, c.s}, p = {c.p, c.p}, d = {c.d, c.d};
    HostTensor y(F32(), {N, C, OH, OW});
    ASSERT_EQ(Call("max_pool2d", {TArg(x), LArg(k), LArg(s), LArg(p), LArg(d), BArg(false)}, {&y}), BP_STATUS_OK)
        << LastError();
    const std::vector<float> got = y.Get<float>(static_cast<size_t>(N * C * OH * OW));
    for (int64_t ch = 0; ch < C; ++ch)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          float m = -std::numeric_limits<float>::infinity();
          for (int64_t kh = 0; kh < c.k; ++kh)
            for (int64_t kw = 0; kw < c.k; ++kw) {
              const int64_t ih = oh * c.s - c.p + kh * c.d, iw = ow * c.s - c.p + kw * c.d;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              const float v = xv[static_cast<size_t>((ch * H + ih) * W + iw)];
              if (v > m || std::isnan(v)) m = std::isnan(m) ? m : v;
            }
          const float g = got[static_cast<size_t>((ch * OH + oh) * OW + ow)];
          if (std::isnan(m)) {
            EXPECT_TRUE(std::isnan(g)) << "k" << c.k << " s" << c.s << " p" << c.p << " d" << c.d << " at " << ch << ","
                                       << oh << "," << ow;
          } else {
            EXPECT_EQ(g, m) << "k" << c.k << " s" << c.s << " p" << c.p << " d" << c.d << " at " << ch << "," << oh
                            << "," << ow;
          }
        }
  }
}

TEST_F(CpuKernels, SoftmaxLogSoftmaxStable) {
  // Rows along dim 0 of a [3, 2] tensor (strided rows); huge values stay finite.
  HostTensor x(F32(), {3, 2}), y(F32(), {3, 2});
  x.Set<float>({1000, 0, 1001, 1, 1002, 2});
  ASSERT_EQ(Call("softmax.int", {TArg(x), IArg(0), NoneArg()}, {&y}), BP_STATUS_OK) << LastError();
  const double e = std::exp(1.0), z = 1 + e + e * e;
  std::vector<float> r = y.Get<float>(6);
  EXPECT_NEAR(r[0], 1 / z, 1e-7);
  EXPECT_NEAR(r[4], e * e / z, 1e-7);
  EXPECT_NEAR(r[1], 1 / z, 1e-7);
  ASSERT_EQ(Call("log_softmax.int", {TArg(x), IArg(0), NoneArg()}, {&y}), BP_STATUS_OK) << LastError();
  r = y.Get<float>(6);
  EXPECT_NEAR(r[2], 1 - std::log(z), 1e-6);
}

TEST_F(CpuKernels, LayerNormAndBatchNorm) {
  HostTensor x(F64(), {2, 4}), w(F64(), {4}), b(F64(), {4}), y(F64(), {2, 4});
  x.Set<double>({1, 2, 3, 4, 0, 0, 4, 4});
  w.Set<double>({1, 1, 2, 2});
  b.Set<double>({0, 0, 0, 1});
  const std::vector<int64_t> ns = {4};
  ASSERT_EQ(Call("layer_norm", {TArg(x), LArg(ns), TArg(w), TArg(b), DArg(0.0), BArg(true)}, {&y}), BP_STATUS_OK)
      << LastError();
  std::vector<double> r = y.Get<double>(8);
  const double sd = std::sqrt(1.25);
  EXPECT_NEAR(r[0], -1.5 / sd, 1e-12);
  EXPECT_NEAR(r[3], 2 * 1.5 / sd + 1, 1e-12);
  EXPECT_NEAR(r[4], -1, 1e-12);
  EXPECT_NEAR(r[7], 3, 1e-12);
  // batch_norm inference: x [2, 2, 2], per-channel stats.
  HostTensor bx(F32(), {2, 2, 2}), rm(F32(), {2}), rv(F32(), {2}), by(F32(), {2, 2, 2});
  bx.Set<float>({1, 2, 3, 4, 5, 6, 7, 8});
  rm.Set<float>({1, 2});
  rv.Set<float>({4, 16});
  ASSERT_EQ(
      Call("batch_norm",
           {TArg(bx), NoneArg(), NoneArg(), TArg(rm), TArg(rv), BArg(false), DArg(0.1), DArg(0.0), BArg(false)}, {&by}),
      BP_STATUS_OK)
      << LastError();
  EXPECT_EQ(by.Get<float>(8), (std::vector<float>{0, 0.5f, 0.25f, 0.5f, 2, 2.5f, 1.25f, 1.5f}));
}

// batch_norm with batch statistics (training), big enough that channels run
// in parallel: float32 contiguous (SIMD plane sums) and channels-last
// (gathered), each against a double reference; an offset mean checks the
// two-pass variance does not cancel.
TEST_F(CpuKernels, BatchNormTrainingStatisticsMatchADoubleReference) {
  const int64_t N = 8, C = 16, H = 32, W = 32, plane = H * W, total = N * C * plane;
  std::vector<float> xs(static_cast<size_t>(total));
  for (int64_t i = 0; i < total; ++i) {
    const int64_t c = (i / plane) % C;
    xs[static_cast<size_t>(i)] = 10.0f * static_cast<float>(c) + static_cast<float>((i * 7919) % 1013) / 101.0f;
  }
  std::vector<double> expect(static_cast<size_t>(total));
  for (int64_t c = 0; c < C; ++c) {
    double m = 0, v = 0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < plane; ++k) m += xs[static_cast<size_t>((n * C + c) * plane + k)];
    m /= static_cast<double>(N * plane);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < plane; ++k) {
        const double d = xs[static_cast<size_t>((n * C + c) * plane + k)] - m;
        v += d * d;
      }
    v /= static_cast<double>(N * plane);
    ASSERT_GT(v, 1.0);  // a varying input
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < plane; ++k) {
        const size_t i = static_cast<size_t>((n * C + c) * plane + k);
        expect[i] = (xs[i] - m) / std::sqrt(v + 1e-5);
      }
  }
  for (bool channels_last : {false, true}) {
    SCOPED_TRACE(channels_last ? "channels-last" : "contiguous");
    HostTensor x(F32(), {N, C, H, W}), y(F32(), {N, C, H, W});
    x.Set<float>(xs);
    y.Set<float>(std::vector<float>(static_cast<size_t>(total), -1.0f));
    if (channels_last) {
      // The same logical values laid out NHWC: element (n, c, h, w) at n*HWC + (h*W + w)*C + c.
      std::vector<float> nhwc(static_cast<size_t>(total));
      for (int64_t i = 0; i < total; ++i) {
        const int64_t n = i / (C * plane), c = (i / plane) % C, k = i % plane;
        nhwc[static_cast<size_t>(n * C * plane + k * C + c)] = xs[static_cast<size_t>(i)];
      }
      x.Set<float>(nhwc);
      x.SetView({N, C, H, W}, {C * plane, 1, W * C, C});
    }
    ASSERT_EQ(Call("batch_norm", {TArg(x), NoneArg(), NoneArg(), NoneArg(), NoneArg(), BArg(true), DArg(0.1),
                                  DArg(1e-5), BArg(false)},
                   {&y}),
              BP_STATUS_OK)
        << LastError();
    const std::vector<float> got = y.Get<float>(static_cast<size_t>(total));
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - expect[i]));
    EXPECT_LT(worst, 2e-5);
  }
}

TEST_F(CpuKernels, MatmulWithExpandedMatrixOperand) {
  // A = a row [1, 2] expanded to [3, 2] (stride 0 along M); B = [[1, 0], [1, 1]].
  for (DLDataType dt : {F32(), F64()}) {
    HostTensor a(dt, {2}), b(dt, {2, 2}), out(dt, {3, 2});
    HostTensor a64(F64(), {2}), b64(F64(), {2, 2});
    a64.Set<double>({1, 2});
    b64.Set<double>({1, 0, 1, 1});
    ASSERT_EQ(Call("copy_", {TArg(a), TArg(a64), BArg(false)}, {&a}), BP_STATUS_OK);
    ASSERT_EQ(Call("copy_", {TArg(b), TArg(b64), BArg(false)}, {&b}), BP_STATUS_OK);
    a.SetView({3, 2}, {0, 1});
    ASSERT_EQ(Call("matmul", {TArg(a), TArg(b)}, {&out}), BP_STATUS_OK) << LastError();
    HostTensor o64(F64(), {3, 2});
    ASSERT_EQ(Call("copy_", {TArg(o64), TArg(out), BArg(false)}, {&o64}), BP_STATUS_OK);
    EXPECT_EQ(o64.Get<double>(6), (std::vector<double>{3, 2, 3, 2, 3, 2}));
  }
}

// Kernels are free-threaded: cached oneDNN primitives run on several host
// threads at once (user scratchpads), results stay exact.
TEST_F(CpuKernels, ConcurrentMatmulsFromHostThreads) {
  auto worker = [](int64_t m, int* bad) {
    HostTensor a(F32(), {m, 48}), b(F32(), {48, 40}), c(F32(), {m, 40});
    for (int64_t i = 0; i < m * 48; ++i) a.data<float>()[i] = static_cast<float>(i % 5);
    for (int64_t i = 0; i < 48 * 40; ++i) b.data<float>()[i] = static_cast<float>(i % 3);
    for (int rep = 0; rep < 40; ++rep) {
      if (Call("matmul", {TArg(a), TArg(b)}, {&c}) != BP_STATUS_OK) ++*bad;
      for (int64_t i = 0; i < m; i += 7) {
        float e = 0;
        for (int64_t k = 0; k < 48; ++k) e += static_cast<float>(((i * 48 + k) % 5) * ((k * 40 + 3) % 3));
        if (c.data<float>()[i * 40 + 3] != e) ++*bad;
      }
    }
  };
  int bad[3] = {0, 0, 0};
  std::thread t1(worker, 33, &bad[0]), t2(worker, 64, &bad[1]);
  worker(17, &bad[2]);
  t1.join();
  t2.join();
  EXPECT_EQ(bad[0] + bad[1] + bad[2], 0);
}

}  // namespace
