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
    ASSERT_EQ(host_.Call("mean.dim", {TensorArg(xf), IntListArg(d0), BoolArg(false), NoneArg()}, {&of}), BP_STATUS_OK);
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
    for (int i = 0; i < M * N; ++i)
      ASSERT_EQ(r[bi * M * N + i], want[i]) << M << "x" << K << "x" << N << " " << bi << " " << i;
  }
  host.Free(&A);
  host.Free(&Bb);
  host.Free(&O);
}

TEST_F(OpenclLinalg, MatmulBatchedAndOddSizes) {
  auto* backend = static_cast<bpcl::Backend*>(host_.backend().backend_data);
  bpcl::Device* dev = backend->devices[0].get();
  const bool native = dev->local_mem_is_global;
  // CLBlast (when built with it), then our own two kernels.
  for (int path : {0, 1, 2}) {
    backend->use_clblast = path == 0 ? bpcl::Backend::ClblastUse::kAlways : bpcl::Backend::ClblastUse::kNever;
    dev->local_mem_is_global = path != 2;
    SCOPED_TRACE(path == 0 ? "CLBlast" : path == 1 ? "register-blocked kernel" : "tiled kernel");
    CheckMatmul(host_, 19, 23, 17, F32());
    CheckMatmul(host_, 37, 29, 70, F32());  // interior blocks take the vector path
    if (dev->fp64) CheckMatmul(host_, 37, 29, 70, F64());
  }
  dev->local_mem_is_global = native;
  backend->use_clblast = bpcl::Backend::ClblastUse::kAuto;
}

// Reproducible values with fractions (multiples of 1/512 in [-2, 2]), so the
// order of rounding shows against a double reference.
std::vector<double> Values(size_t n, uint32_t seed) {
  std::vector<double> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (double& e : v) {
    x = x * 1664525u + 1013904223u;
    e = static_cast<double>(static_cast<int>((x >> 8) % 2001) - 1000) / 512.0;
  }
  return v;
}

// A strided view over a buffer of Values, on the device and on the host.
struct Operand {
  std::vector<double> base;
  std::vector<int64_t> shape, strides;
  int64_t offset = 0;
  double at(int64_t i, int64_t j, int64_t k) const {  // rank 3
    return base[offset + i * strides[0] + j * strides[1] + k * strides[2]];
  }
};

class OpenclGemmPaths : public OpenclTest {
 protected:
  bpcl::Backend* backend() { return static_cast<bpcl::Backend*>(host_.backend().backend_data); }
  DevTensor Upload(const Operand& o, DLDataType dt) {
    const int64_t n = static_cast<int64_t>(o.base.size());
    DevTensor& b = dt.bits == 64 ? Make<double>({n}, dt, o.base)
                                 : Make<float>({n}, dt, std::vector<float>(o.base.begin(), o.base.end()));
    return FakeHost::View(b, o.shape, o.strides, o.offset);
  }
  std::vector<double> Download(DevTensor& t, DLDataType dt) {
    if (dt.bits == 64) return host_.ToHost<double>(t);
    auto f = host_.ToHost<float>(t);
    return std::vector<double>(f.begin(), f.end());
  }
  // Runs `op` on CLBlast and on our own kernel; both must match `want`
  // (double) within float (or double) rounding of a K-term sum of magnitude
  // `mag`. On the CLBlast run, the plugin's counter says which path ran.
  void Check(const char* op, const std::vector<bp_kernel_arg_t>& args, DevTensor& out, const std::vector<double>& want,
             const std::vector<double>& mag, DLDataType dt) {
    for (bool clblast : {true, false}) {
      SCOPED_TRACE(std::string(op) + (clblast ? " CLBlast" : " own kernel"));
      backend()->use_clblast = clblast ? bpcl::Backend::ClblastUse::kAlways : bpcl::Backend::ClblastUse::kNever;
      const uint64_t before = backend()->clblast_gemms;
      ASSERT_EQ(host_.Call(op, args, {&out}), BP_STATUS_OK) << FakeHost::last_error();
      const std::vector<double> got = Download(out, dt);
      ASSERT_EQ(got.size(), want.size());
      const double eps = dt.bits == 64 ? 1e-13 : 1e-5;
      for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], eps * (mag[i] + 1)) << "element " << i;
#ifdef BPCL_HAVE_CLBLAST
      EXPECT_EQ(backend()->clblast_gemms - before, clblast ? 1u : 0u) << "which path ran";
#else
      EXPECT_EQ(backend()->clblast_gemms - before, 0u);
#endif
    }
    backend()->use_clblast = bpcl::Backend::ClblastUse::kAuto;
  }
};

// matmul out[b] = A[b] @ B[b] for rank-3 operands against a double reference.
void MatmulRef(const Operand& a, const Operand& b, std::vector<double>* want, std::vector<double>* mag) {
  const int64_t nb = a.shape[0], M = a.shape[1], K = a.shape[2], N = b.shape[2];
  want->assign(nb * M * N, 0);
  mag->assign(nb * M * N, 0);
  for (int64_t i = 0; i < nb; ++i)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k) {
          (*want)[(i * M + m) * N + n] += a.at(i, m, k) * b.at(i, k, n);
          (*mag)[(i * M + m) * N + n] += std::fabs(a.at(i, m, k) * b.at(i, k, n));
        }
}

TEST_F(OpenclGemmPaths, MatmulPlainTransposedBroadcastAndOddSizes) {
  const int64_t M = 33, K = 47, N = 29;
  bpcl::Device* dev = backend()->devices[0].get();
  for (DLDataType dt : {F32(), F64()}) {
    if (dt.bits == 64 && !dev->fp64) continue;
    struct Case {
      const char* name;
      Operand a, b;
      bool out_transposed;
    };
    const Case cases[] = {
        {"plain",
         {Values(M * K, 1), {1, M, K}, {M * K, K, 1}, 0},
         {Values(K * N, 2), {1, K, N}, {K * N, N, 1}, 0},
         false},
        // A and B given transposed (column-major views), A at an offset.
        {"transposed",
         {Values(M * K + 5, 3), {1, M, K}, {M * K, 1, M}, 5},
         {Values(K * N, 4), {1, K, N}, {K * N, 1, K}, 0},
         false},
        // Three batches of A against one B broadcast (batch stride 0).
        {"batch broadcast",
         {Values(3 * M * K, 5), {3, M, K}, {M * K, K, 1}, 0},
         {Values(K * N, 6), {3, K, N}, {0, N, 1}, 0},
         false},
        // out itself transposed: CLBlast's column-major layout.
        {"out transposed",
         {Values(M * K, 7), {1, M, K}, {M * K, K, 1}, 0},
         {Values(K * N, 8), {1, K, N}, {K * N, N, 1}, 0},
         true},
    };
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(c.name) + " " + (dt.bits == 64 ? "float64" : "float32"));
      DevTensor A = Upload(c.a, dt), B = Upload(c.b, dt);
      const int64_t nb = c.a.shape[0];
      DevTensor& ob = Empty({nb, M, N}, dt);
      DevTensor O = c.out_transposed ? FakeHost::View(ob, {nb, M, N}, {M * N, 1, M}, 0) : ob;
      std::vector<double> want, mag;
      MatmulRef(c.a, c.b, &want, &mag);
      Check("matmul", {TensorArg(A), TensorArg(B)}, O, want, mag, dt);
    }
  }
}

TEST_F(OpenclGemmPaths, AddmmAndLinearEpilogues) {
  const int64_t M = 21, K = 35, N = 19;
  const DLDataType dt = F32();
  // addmm: beta * self + alpha * (mat1 @ mat2), mat1 transposed, self a row broadcast.
  const Operand a{Values(M * K, 11), {1, M, K}, {M * K, 1, M}, 0}, b{Values(K * N, 12), {1, K, N}, {K * N, N, 1}, 0};
  const std::vector<double> row = Values(N, 13);
  std::vector<double> mm, mag;
  MatmulRef(a, b, &mm, &mag);
  DevTensor A = Upload(a, dt), B = Upload(b, dt);
  DevTensor A2 = FakeHost::View(A, {M, K}, {1, M}, 0), B2 = FakeHost::View(B, {K, N}, {N, 1}, 0);
  DevTensor& rowt = Make<float>({N}, dt, std::vector<float>(row.begin(), row.end()));
  DevTensor self = FakeHost::View(rowt, {M, N}, {0, 1}, 0);
  DevTensor& o = Empty({M, N}, dt);
  std::vector<double> want(M * N), wmag(M * N);
  for (int64_t i = 0; i < M * N; ++i) {
    want[i] = 0.5 * row[i % N] + 1.5 * mm[i];
    wmag[i] = 0.5 * std::fabs(row[i % N]) + 1.5 * mag[i];
  }
  Check("addmm", {TensorArg(self), TensorArg(A2), TensorArg(B2), DoubleArg(0.5), DoubleArg(1.5)}, o, want, wmag, dt);

  // linear: input [2, 3, K] (leading dims fold into M) and a [2, 3, K] view
  // of [2, 4, K] (they do not: a strided batch), weight [N, K], bias [N].
  const Operand w{Values(N * K, 14), {1, K, N}, {0, 1, K}, 0};  // weight^T as B
  DevTensor& W = Make<float>({N, K}, dt, std::vector<float>(w.base.begin(), w.base.end()));
  const std::vector<double> bias = Values(N, 15);
  DevTensor& Bias = Make<float>({N}, dt, std::vector<float>(bias.begin(), bias.end()));
  for (int64_t rows_per_batch : {3, 4}) {
    SCOPED_TRACE(rows_per_batch == 3 ? "contiguous input" : "input with gaps");
    const std::vector<double> xs = Values(2 * rows_per_batch * K, 16);
    DevTensor& xb = Make<float>({2 * rows_per_batch * K}, dt, std::vector<float>(xs.begin(), xs.end()));
    DevTensor X = FakeHost::View(xb, {2, 3, K}, {rows_per_batch * K, K, 1}, 0);
    DevTensor& O = Empty({2, 3, N}, dt);
    std::vector<double> lw(6 * N), lmag(6 * N);
    for (int64_t r = 0; r < 6; ++r) {
      const int64_t xrow = (r / 3) * rows_per_batch * K + (r % 3) * K;
      for (int64_t n = 0; n < N; ++n) {
        double s = bias[n], m = std::fabs(bias[n]);
        for (int64_t k = 0; k < K; ++k) {
          s += xs[xrow + k] * w.base[n * K + k];
          m += std::fabs(xs[xrow + k] * w.base[n * K + k]);
        }
        lw[r * N + n] = s;
        lmag[r * N + n] = m;
      }
    }
    Check("linear", {TensorArg(X), TensorArg(W), TensorArg(Bias)}, O, lw, lmag, dt);
  }
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
