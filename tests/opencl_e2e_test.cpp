// The OpenCL plugin end to end through libbackplane's public API: load the
// CPU and OpenCL plugins, run operators on the OpenCL device and compare with
// the CPU backend; check they ran natively (no fallback), that an operator
// the plugin lacks runs through the CPU fallback, and kernel errors surface.
#include <cmath>
#include <string>

#include "opencl_context_test.h"

namespace bptest {
namespace {

class OpenclE2E : public OpenclContextTest {
 protected:
  void SetUp() override {
    OpenclContextTest::SetUp();
    LoadOpencl();
  }
  bp_tensor_t* ToDev(bp_tensor_t* t) {
    bp_tensor_t* d = nullptr;
    EXPECT_EQ(bp_tensor_to_device(t, dev_, &d), BP_STATUS_OK) << LastError();
    return Own(d);
  }
  void ExpectClose(const std::vector<float>& a, const std::vector<float>& b, double tol = 1e-5) {
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], tol * (1 + std::fabs(b[i]))) << i;
  }
};

std::vector<float> Seq(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(static_cast<int>(i % 17) - 8);
  return v;
}

TEST_F(OpenclE2E, OperatorsMatchTheCpuBackend) {
  bp_tensor_t* a = F32(kCpu, {4, 1}, Seq(4, 0.5f));
  bp_tensor_t* b = F32(kCpu, {3}, Seq(3, 0.25f));
  bp_tensor_t* m1 = F32(kCpu, {5, 7}, Seq(35, 0.1f));
  bp_tensor_t* m2 = F32(kCpu, {7, 6}, Seq(42, 0.2f));
  bp_tensor_t* da = ToDev(a);
  bp_tensor_t* db = ToDev(b);
  bp_tensor_t* dm1 = ToDev(m1);
  bp_tensor_t* dm2 = ToDev(m2);
  ExpectClose(Read(Call("add.Tensor", {T(da), T(db), D(2.0)})), Read(Call("add.Tensor", {T(a), T(b), D(2.0)})));
  ExpectClose(Read(Call("exp", {T(da)})), Read(Call("exp", {T(a)})));
  ExpectClose(Read(Call("matmul", {T(dm1), T(dm2)})), Read(Call("matmul", {T(m1), T(m2)})));
  ExpectClose(Read(Call("softmax.int", {T(dm1), I(1)})), Read(Call("softmax.int", {T(m1), I(1)})));
  const std::vector<int64_t> dims = {0};
  ExpectClose(Read(Call("sum.dim_IntList", {T(dm1), L(dims)})), Read(Call("sum.dim_IntList", {T(m1), L(dims)})));
  // A transposed view as input (the core passes strides, no copy).
  bp_tensor_t* t_cpu = Call("transpose.int", {T(m1), I(0), I(1)});
  bp_tensor_t* t_dev = Call("transpose.int", {T(dm1), I(0), I(1)});
  ExpectClose(Read(Call("mul.Tensor", {T(t_dev), T(t_dev)})), Read(Call("mul.Tensor", {T(t_cpu), T(t_cpu)})));
  // to.dtype runs copy_ with conversion on the device.
  bp_tensor_t* i_dev = Call("to.dtype", {T(dm1), Dt(kI32)});
  ASSERT_NE(i_dev, nullptr);
  EXPECT_EQ(bp_tensor_dtype(i_dev).code, kDLInt);
  EXPECT_GT(Native("add.Tensor"), 0u);
  EXPECT_GT(Native("matmul"), 0u);
  EXPECT_GT(Native("softmax.int"), 0u);
  EXPECT_EQ(Fallback("add.Tensor"), 0u);
  EXPECT_EQ(Fallback("matmul"), 0u);
}

TEST_F(OpenclE2E, InplaceOnAViewAndOutVariant) {
  bp_tensor_t* x = ToDev(F32(kCpu, {2, 3}, {1, 2, 3, 4, 5, 6}));
  bp_tensor_t* row = Call("select.int", {T(x), I(0), I(1)});  // [4, 5, 6]
  bp_tensor_t* one = ToDev(F32(kCpu, {3}, {10, 20, 30}));
  bp_tensor_t* r = nullptr;
  std::vector<bp_value_t> args = {T(row), T(one), I(1)};
  ASSERT_EQ(bp_op_call(ctx_, Op("add_.Tensor"), args.data(), 3, &r, 1), BP_STATUS_OK) << LastError();
  Own(r);
  EXPECT_EQ(Read(x), (std::vector<float>{1, 2, 3, 14, 25, 36}));
}

TEST_F(OpenclE2E, MissingOperatorRunsThroughTheCpuFallback) {
  bp_tensor_t* x = F32(kCpu, {2, 4}, Seq(8, 0.3f));
  bp_tensor_t* dx = ToDev(x);
  const std::vector<int64_t> shape = {4};
  bp_tensor_t* want = Call("layer_norm", {T(x), L(shape)});
  bp_tensor_t* got = Call("layer_norm", {T(dx), L(shape)});
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(bp_tensor_device(got).backend, backend_);
  ExpectClose(Read(got), Read(want));
  EXPECT_GT(Fallback("layer_norm"), 0u);
}

TEST_F(OpenclE2E, KernelErrorsSurfaceWithTheirMessage) {
  const std::vector<int64_t> s = {2};
  const int64_t num[2] = {4, 5}, den[2] = {2, 0};
  bp_tensor_t *n = nullptr, *d = nullptr;
  ASSERT_EQ(bp_tensor_from_host(ctx_, dev_, 1, s.data(), kI64, num, sizeof num, &n), BP_STATUS_OK) << LastError();
  Own(n);
  ASSERT_EQ(bp_tensor_from_host(ctx_, dev_, 1, s.data(), kI64, den, sizeof den, &d), BP_STATUS_OK) << LastError();
  Own(d);
  bp_tensor_t* r = nullptr;
  std::vector<bp_value_t> args = {T(n), T(d), S("floor")};
  EXPECT_NE(bp_op_call(ctx_, Op("div.Tensor_mode"), args.data(), 3, &r, 1), BP_STATUS_OK);
  EXPECT_NE(LastError().find("ZeroDivisionError"), std::string::npos) << LastError();
}

}  // namespace
}  // namespace bptest
