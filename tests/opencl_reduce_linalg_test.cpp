// Reductions, softmax and the matmul family of the OpenCL backend against
// simple expected values (strided inputs, reductions over several dims, both
// the per-item and the per-group kernels).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>

#include "opencl_test_util.h"
#include "plugin.h"

namespace bpcl_test {
namespace {

using OpenclReduce = OpenclTest;
using OpenclLinalg = OpenclTest;

TEST_F(OpenclReduce, SumMeanOverDims) {
  // x: [2, 3, 4] = 0..23
  std::vector<float> v(24);
  std::iota(v.begin(), v.end(), 0.0f);
  DevTensor& x = Make<float>({2, 3, 4}, F32(), v);
  DevTensor& o = Empty({2, 1, 4}, F32());
  const std::vector<int64_t> d1 = {1};
  ASSERT_EQ(host_.Call("sum.dim_IntList", {TensorArg(x), IntListArg(d1), BoolArg(false), NoneArg()}, {&o}),
            BP_STATUS_OK)
      << FakeHost::last_error();
  EXPECT_EQ(host_.ToHost<float>(o), (std::vector<float>{12, 15, 18, 21, 48, 51, 54, 57}));
  DevTensor& o2 = Empty({1, 3, 1}, F32());
  const std::vector<int64_t> d02 = {0, 2};
  ASSERT_EQ(host_.Call("mean.dim", {TensorArg(x), IntListArg(d02), BoolArg(false), NoneArg()}, {&o2}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<float>(o2), (std::vector<float>{7.5f, 11.5f, 15.5f}));
  DevTensor& all = Empty({1, 1, 1}, F32());
  const std::vector<int64_t> d012 = {0, 1, 2};
  ASSERT_EQ(host_.Call("sum.dim_IntList", {TensorArg(x), IntListArg(d012), BoolArg(false), NoneArg()}, {&all}),
            BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<float>(all), (std::vector<float>{276}));
  // Transposed view: sum over dim 1 of x^T [4, 3, 2] (strides 1, 4, 12).
  DevTensor xt = FakeHost::View(x, {4, 3, 2}, {1, 4, 12}, 0);
  DevTensor& ot = Empty({4, 3, 1}, F32());
  const std::vector<int64_t> d2 = {2};
  ASSERT_EQ(host_.Call("sum.dim_IntList", {TensorArg(xt), IntListArg(d2), BoolArg(true), NoneArg()}, {&ot}),
            BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<float>(ot), (std::vector<float>{12, 20, 28, 14, 22, 30, 16, 24, 32, 18, 26, 34}));
}

// Long reductions: split over all compute units on CPU drivers, one
// work-group tree per output otherwise (forced by flipping the device flag).
TEST_F(OpenclReduce, LongReductionsSplitOrUseGroups) {
  const int n = 100000;
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), int64_t{1});
  DevTensor& x = Make<int64_t>({n}, I64(), v);
  DevTensor& o = Empty({1}, I64());
  std::vector<float> f(n, 0.1f);
  f[777] = 5.0f;
  DevTensor& xf = Make<float>({n}, F32(), f);
  DevTensor& of = Empty({1}, F32());
  const std::vector<int64_t> d0 = {0};
  auto* dev = static_cast<bpcl::Backend*>(host_.backend().backend_data)->devices[0].get();
  const bool native = dev->local_mem_is_global;
  for (bool cpu_path : {true, false}) {
    dev->local_mem_is_global = cpu_path;
    SCOPED_TRACE(cpu_path ? "split" : "group");
    ASSERT_EQ(host_.Call("sum.dim_IntList", {TensorArg(x), IntListArg(d0), BoolArg(false), NoneArg()}, {&o}),
              BP_STATUS_OK)
        << FakeHost::last_error();
    EXPECT_EQ(host_.ToHost<int64_t>(o)[0], int64_t{n} * (n + 1) / 2);
    ASSERT_EQ(host_.Call("amax", {TensorArg(x), IntListArg(d0), BoolArg(false)}, {&o}), BP_STATUS_OK);
    EXPECT_EQ(host_.ToHost<int64_t>(o)[0], n);
    ASSERT_EQ(host_.Call("amin", {TensorArg(x), IntListArg(d0), BoolArg(false)}, {&o}), BP_STATUS_OK);
    EXPECT_EQ(host_.ToHost<int64_t>(o)[0], 1);
    ASSERT_EQ(host_.Call("argmax", {TensorArg(x), IntListArg(d0), BoolArg(false)}, {&o}), BP_STATUS_OK);
    EXPECT_EQ(host_.ToHost<int64_t>(o)[0], n - 1);
    ASSERT_EQ(host_.Call("argmax", {TensorArg(xf), IntListArg(d0), BoolArg(false)}, {&o}), BP_STATUS_OK);
    EXPECT_EQ(host_.ToHost<int64_t>(o)[0], 777);
    // Float mean over many elements: accurate (double accumulator when possible).
    ASSERT_EQ(host_.Call("mean.dim", {TensorArg(xf), IntListArg(d0), BoolArg(false), NoneArg()}, {&of}),
              BP_STATUS_OK);
    EXPECT_NEAR(host_.ToHost<float>(of)[0], (0.1 * (n - 1) + 5.0) / n, 1e-6);
  }
  dev->local_mem_is_global = native;
}

TEST_F(OpenclReduce, MinMaxNaNAndArgmaxTies) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  DevTensor& x = Make<float>({2, 4}, F32(), {1, 5, 5, 2, 3, nan, 9, nan});
  DevTensor& o = Empty({2, 1}, F32());
  DevTensor& oi = Empty({2, 1}, I64());
  const std::vector<int64_t> d1 = {1};
  ASSERT_EQ(host_.Call("amax", {TensorArg(x), IntListArg(d1), BoolArg(true)}, {&o}), BP_STATUS_OK);
  auto r = host_.ToHost<float>(o);
  EXPECT_EQ(r[0], 5.0f);
  EXPECT_TRUE(std::isnan(r[1]));
  ASSERT_EQ(host_.Call("amin", {TensorArg(x), IntListArg(d1), BoolArg(true)}, {&o}), BP_STATUS_OK);
  r = host_.ToHost<float>(o);
  EXPECT_EQ(r[0], 1.0f);
  EXPECT_TRUE(std::isnan(r[1]));
  ASSERT_EQ(host_.Call("argmax", {TensorArg(x), IntArg(1), BoolArg(true)}, {&oi}), BP_STATUS_OK)
      << FakeHost::last_error();
  EXPECT_EQ(host_.ToHost<int64_t>(oi), (std::vector<int64_t>{1, 1}));  // first 5; first NaN
  // argmax over all dims: row-major index within the reduced dims.
  DevTensor& o0 = Empty({1, 1}, I64());
  const std::vector<int64_t> d01 = {0, 1};
  DevTensor& y = Make<int32_t>({2, 3}, I32(), {1, 2, 3, 9, 0, 9});
  ASSERT_EQ(host_.Call("argmax", {TensorArg(y), IntListArg(d01), BoolArg(false)}, {&o0}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<int64_t>(o0)[0], 3);
  DevTensor& bo = Empty({1, 1}, Bool());
  DevTensor& b = Make<uint8_t>({2, 2}, Bool(), {0, 0, 1, 0});
  ASSERT_EQ(host_.Call("amax", {TensorArg(b), IntListArg(d01), BoolArg(false)}, {&bo}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<uint8_t>(bo)[0], 1);
}

TEST_F(OpenclReduce, EmptyReductionGivesIdentity) {
  DevTensor& x = Empty({3, 0}, F32());
  DevTensor& o = Make<float>({3, 1}, F32(), {7, 7, 7});
  const std::vector<int64_t> d1 = {1};
  ASSERT_EQ(host_.Call("sum.dim_IntList", {TensorArg(x), IntListArg(d1), BoolArg(false), NoneArg()}, {&o}),
            BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<float>(o), (std::vector<float>{0, 0, 0}));
}

TEST_F(OpenclReduce, SoftmaxAndLogSoftmax) {
  // Rows of [2, 3] along dim 1, and along dim 0 (strided).
  DevTensor& x = Make<float>({2, 3}, F32(), {1, 2, 3, 1000, 1000, 1000});
  DevTensor& o = Empty({2, 3}, F32());
  ASSERT_EQ(host_.Call("softmax.int", {TensorArg(x), IntArg(1), NoneArg()}, {&o}), BP_STATUS_OK)
      << FakeHost::last_error();
  auto r = host_.ToHost<float>(o);
  const double s = std::exp(-2.0) + std::exp(-1.0) + 1.0;
  EXPECT_NEAR(r[0], std::exp(-2.0) / s, 1e-6);
  EXPECT_NEAR(r[2], 1.0 / s, 1e-6);
  EXPECT_NEAR(r[4], 1.0 / 3, 1e-6);  // stable for large inputs
  ASSERT_EQ(host_.Call("log_softmax.int", {TensorArg(x), IntArg(1), NoneArg()}, {&o}), BP_STATUS_OK);
  r = host_.ToHost<float>(o);
  EXPECT_NEAR(r[2], -std::log(s), 1e-6);
  EXPECT_NEAR(r[3], -std::log(3.0), 1e-6);
  ASSERT_EQ(host_.Call("softmax.int", {TensorArg(x), IntArg(0), NoneArg()}, {&o}), BP_STATUS_OK);
  r = host_.ToHost<float>(o);
  EXPECT_NEAR(r[0], 0.0, 1e-6);
  EXPECT_NEAR(r[3], 1.0, 1e-6);
  // One long row: the vectorized per-row kernel CPU drivers get, and the
  // work-group kernel for GPUs (forced by flipping the device flag).
  const int n = 5003;
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<float>(i % 7);
  DevTensor& lx = Make<float>({1, n}, F32(), v);
  DevTensor& lo = Empty({1, n}, F32());
  auto* dev = static_cast<bpcl::Backend*>(host_.backend().backend_data)->devices[0].get();
  const bool native = dev->local_mem_is_global;
  for (bool cpu_path : {true, false}) {
    dev->local_mem_is_global = cpu_path;
    ASSERT_EQ(host_.Call("softmax.int", {TensorArg(lx), IntArg(1), NoneArg()}, {&lo}), BP_STATUS_OK);
    r = host_.ToHost<float>(lo);
    double total = 0, denom = 0;
    for (int i = 0; i < n; ++i) {
      total += r[i];
      denom += std::exp((i % 7) - 6.0);
    }
    EXPECT_NEAR(total, 1.0, 1e-4) << cpu_path;
    EXPECT_NEAR(r[6], 1.0 / denom, 1e-9) << cpu_path;
    EXPECT_NEAR(r[n - 1], std::exp((n - 1) % 7 - 6.0) / denom, 1e-9) << cpu_path;  // the tail past n / 8 * 8
    ASSERT_EQ(host_.Call("log_softmax.int", {TensorArg(lx), IntArg(1), NoneArg()}, {&lo}), BP_STATUS_OK);
    EXPECT_NEAR(host_.ToHost<float>(lo)[n - 1], ((n - 1) % 7 - 6.0) - std::log(denom), 1e-5) << cpu_path;
  }
  dev->local_mem_is_global = native;
}

std::vector<float> Ref(const std::vector<float>& a, const std::vector<float>& b, int M, int K, int N) {
  std::vector<float> c(M * N, 0);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += double(a[m * K + k]) * b[k * N + n];
      c[m * N + n] = float(s);
    }
  return c;
}

// Both matmul kernels: the register-blocked one CPU drivers get, and the
// local-memory tiled one for GPUs (forced here by flipping the device flag).
void CheckMatmul(FakeHost& host, int M, int K, int N, DLDataType dt) {
  std::vector<float> a(2 * M * K), b(K * N);
  for (size_t i = 0; i < a.size(); ++i) a[i] = float((i * 7) % 11) - 5;
  for (size_t i = 0; i < b.size(); ++i) b[i] = float((i * 5) % 13) - 6;
  const bool f64 = dt.bits == 64;
  std::vector<double> ad(a.begin(), a.end()), bd(b.begin(), b.end());
  DevTensor A = f64 ? host.FromHost<double>({2, M, K}, dt, ad) : host.FromHost<float>({2, M, K}, dt, a);
  DevTensor Bb = f64 ? host.FromHost<double>({K, N}, dt, bd) : host.FromHost<float>({K, N}, dt, b);
  DevTensor B = FakeHost::View(Bb, {2, K, N}, {0, N, 1}, 0);  // broadcast batch
  DevTensor O = host.Empty({2, M, N}, dt);
  ASSERT_EQ(host.Call("matmul", {TensorArg(A), TensorArg(B)}, {&O}), BP_STATUS_OK) << FakeHost::last_error();
  std::vector<double> r;
  if (f64) {
    r = host.ToHost<double>(O);
  } else {
    auto rf = host.ToHost<float>(O);
    r.assign(rf.begin(), rf.end());
  }
  for (int bi = 0; bi < 2; ++bi) {
    std::vector<float> ab(a.begin() + bi * M * K, a.begin() + (bi + 1) * M * K);
    auto want = Ref(ab, b, M, K, N);
    for (int i = 0; i < M * N; ++i) ASSERT_EQ(r[bi * M * N + i], want[i]) << M << "x" << K << "x" << N << " " << bi << " " << i;
  }
  host.Free(&A);
  host.Free(&Bb);
  host.Free(&O);
}

TEST_F(OpenclLinalg, MatmulBatchedAndOddSizes) {
  auto* backend = static_cast<bpcl::Backend*>(host_.backend().backend_data);
  bpcl::Device* dev = backend->devices[0].get();
  const bool native = dev->local_mem_is_global;
  for (bool tiled : {false, true}) {
    dev->local_mem_is_global = !tiled;
    SCOPED_TRACE(tiled ? "tiled kernel" : "register-blocked kernel");
    CheckMatmul(host_, 19, 23, 17, F32());
    CheckMatmul(host_, 37, 29, 70, F32());  // interior blocks take the vector path
    if (dev->fp64) CheckMatmul(host_, 37, 29, 70, F64());
  }
  dev->local_mem_is_global = native;
}

TEST_F(OpenclLinalg, AddmmAndTransposedOperands) {
  // mat1 = [[1,2],[3,4]] given transposed; mat2 = [[1,0],[1,1]]; self row [10, 20] broadcast.
  DevTensor& m1t = Make<float>({2, 2}, F32(), {1, 3, 2, 4});
  DevTensor m1 = FakeHost::View(m1t, {2, 2}, {1, 2}, 0);
  DevTensor& m2 = Make<float>({2, 2}, F32(), {1, 0, 1, 1});
  DevTensor& row = Make<float>({2}, F32(), {10, 20});
  DevTensor self = FakeHost::View(row, {2, 2}, {0, 1}, 0);
  DevTensor& o = Empty({2, 2}, F32());
  ASSERT_EQ(host_.Call("addmm", {TensorArg(self), TensorArg(m1), TensorArg(m2), DoubleArg(0.5), IntArg(2)}, {&o}),
            BP_STATUS_OK)
      << FakeHost::last_error();
  // m1 @ m2 = [[3,2],[7,4]] -> 2 * that + 0.5 * self
  EXPECT_EQ(host_.ToHost<float>(o), (std::vector<float>{11, 14, 19, 18}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  DevTensor& nself = Make<float>({2, 2}, F32(), {nan, nan, nan, nan});
  ASSERT_EQ(host_.Call("addmm", {TensorArg(nself), TensorArg(m1), TensorArg(m2), IntArg(0), IntArg(1)}, {&o}),
            BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<float>(o), (std::vector<float>{3, 2, 7, 4})) << "beta=0 ignores self";
}

TEST_F(OpenclLinalg, LinearWithAndWithoutBias) {
  // input [2, 2, 3], weight [2, 3], bias [2]
  std::vector<float> x(12);
  std::iota(x.begin(), x.end(), 1.0f);
  DevTensor& X = Make<float>({2, 2, 3}, F32(), x);
  DevTensor& W = Make<float>({2, 3}, F32(), {1, 0, 0, 0, 1, 1});
  DevTensor& Bv = Make<float>({2}, F32(), {100, 200});
  DevTensor& O = Empty({2, 2, 2}, F32());
  ASSERT_EQ(host_.Call("linear", {TensorArg(X), TensorArg(W), TensorArg(Bv)}, {&O}), BP_STATUS_OK)
      << FakeHost::last_error();
  EXPECT_EQ(host_.ToHost<float>(O), (std::vector<float>{101, 205, 104, 211, 107, 217, 110, 223}));
  ASSERT_EQ(host_.Call("linear", {TensorArg(X), TensorArg(W), NoneArg()}, {&O}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<float>(O), (std::vector<float>{1, 5, 4, 11, 7, 17, 10, 23}));
  // Non-coalescable leading dims: input is a [2, 2, 3] view with a gap.
  DevTensor& big = Make<float>({2, 3, 3}, F32(), std::vector<float>(18, 1.0f));
  DevTensor Xv = FakeHost::View(big, {2, 2, 3}, {9, 3, 1}, 0);
  ASSERT_EQ(host_.Call("linear", {TensorArg(Xv), TensorArg(W), TensorArg(Bv)}, {&O}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<float>(O), (std::vector<float>{101, 202, 101, 202, 101, 202, 101, 202}));
  // 1-d input.
  DevTensor& x1 = Make<float>({3}, F32(), {1, 2, 3});
  DevTensor& o1 = Empty({2}, F32());
  ASSERT_EQ(host_.Call("linear", {TensorArg(x1), TensorArg(W), TensorArg(Bv)}, {&o1}), BP_STATUS_OK);
  EXPECT_EQ(host_.ToHost<float>(o1), (std::vector<float>{101, 205}));
}

TEST_F(OpenclLinalg, IntegerMatmulFallsBack) {
  DevTensor& a = Make<int32_t>({2, 2}, I32(), {1, 2, 3, 4});
  DevTensor& o = Empty({2, 2}, I32());
  EXPECT_EQ(host_.Call("matmul", {TensorArg(a), TensorArg(a)}, {&o}), BP_STATUS_UNIMPLEMENTED);
}

}  // namespace
}  // namespace bpcl_test
