// End to end with the real CPU plugin (backends/cpu): every operator testdev
// lacks runs through the CPU fallback on its private memory and matches the
// same operator run on the CPU. Skipped (with the reason) when the CPU plugin
// was not built.
#include <sys/stat.h>

#include <cmath>
#include <string>

#include "bp_test_util.h"

using namespace bptest;

namespace {

class CpuPluginFallbackTest : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    std::string path = std::string(BP_BUILD_PLUGIN_DIR) + "/libbackplane_cpu.so";
    struct stat sb;
    if (stat(path.c_str(), &sb) != 0) GTEST_SKIP() << "the CPU plugin is not built (" << path << ")";
    ASSERT_EQ(bp_plugin_load(ctx_, path.c_str(), nullptr), BP_STATUS_OK) << LastError();
    dev_ = LoadTestdev();
  }
  // Runs `op` once with CPU tensors and once with their testdev copies and
  // compares the results element by element.
  void Compare(const char* op, std::vector<bp_value_t> cpu_args) {
    std::vector<bp_value_t> dev_args = cpu_args;
    std::vector<bp_tensor_t*> lists;
    for (bp_value_t& v : dev_args) {
      if (v.kind == BP_VALUE_TENSOR) {
        bp_tensor_t* d = nullptr;
        ASSERT_EQ(bp_tensor_to_device(v.u.tensor, dev_, &d), BP_STATUS_OK) << LastError();
        v.u.tensor = Own(d);
      }
    }
    bp_tensor_t* want = Call(op, cpu_args);
    bp_tensor_t* got = Call(op, dev_args);
    ASSERT_NE(want, nullptr);
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(bp_tensor_device(got).backend, dev_.backend) << op;
    ASSERT_EQ(bp_tensor_ndim(got), bp_tensor_ndim(want)) << op;
    bp_tensor_t* w32 = Call("to.dtype", {T(want), Dt(kF32)});
    bp_tensor_t* g32 = Call("to.dtype", {T(got), Dt(kF32)});
    std::vector<float> a = Read(w32), b = Read(g32);
    ASSERT_EQ(a.size(), b.size()) << op;
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5f * (1 + std::fabs(a[i]))) << op << " at " << i;
    uint64_t n = 0;
    ASSERT_EQ(bp_fallback_count(ctx_, Op(op), dev_.backend, &n), BP_STATUS_OK);
    EXPECT_GE(n, 1u) << op;
  }
  bp_device_t dev_{};
};

TEST_F(CpuPluginFallbackTest, PointwiseReductionLinalgNn) {
  bp_tensor_t* x = F32(kCpu, {2, 3}, {1, -2, 3, -4, 5, -6});
  bp_tensor_t* y = F32(kCpu, {3}, {0.5f, 2, -1});
  bp_tensor_t* m = F32(kCpu, {3, 2}, {1, 2, 3, 4, 5, 6});
  std::vector<int64_t> dim1 = {1};
  Compare("mul.Tensor", {T(x), T(y)});
  Compare("sub.Tensor", {T(x), T(y), D(2.0)});
  Compare("relu", {T(x)});
  Compare("exp", {T(x)});
  Compare("sum.dim_IntList", {T(x), L(dim1), B(true)});
  Compare("amax", {T(x), L(dim1)});
  Compare("matmul", {T(x), T(m)});
  Compare("softmax.int", {T(x), I(1)});
  Compare("gt.Tensor", {T(x), T(y)});
}

TEST_F(CpuPluginFallbackTest, CatOfDeviceTensors) {
  bp_tensor_t* a = F32(dev_, {1, 2}, {1, 2});
  bp_tensor_t* b = F32(dev_, {2, 2}, {3, 4, 5, 6});
  bp_tensor_t* list[2] = {a, b};
  bp_value_t tl{};
  tl.kind = BP_VALUE_TENSOR_LIST;
  tl.u.tensor_list.data = list;
  tl.u.tensor_list.size = 2;
  bp_tensor_t* r = Call("cat", {tl, I(0)});
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(bp_tensor_device(r).backend, dev_.backend);
  EXPECT_EQ(Read(r), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST_F(CpuPluginFallbackTest, InplaceOnStridedDeviceViewAndFill) {
  bp_tensor_t* a = F32(dev_, {2, 3}, {1, -2, 3, -4, 5, -6});
  bp_tensor_t* t = Call("transpose.int", {T(a), I(0), I(1)});
  Call("relu_", {T(t)});
  EXPECT_EQ(Read(a), (std::vector<float>{1, 0, 3, 0, 5, 0}));
  bp_tensor_t* col = Call("select.int", {T(a), I(1), I(2)});
  Call("fill_.Scalar", {T(col), D(7.5)});
  EXPECT_EQ(Read(a), (std::vector<float>{1, 0, 7.5f, 0, 5, 7.5f}));
}

TEST_F(CpuPluginFallbackTest, CpuKernelsRunNatively) {
  bp_tensor_t* a = F32(kCpu, {3}, {1, 2, 3});
  bp_tensor_t* r = Call("mul.Tensor", {T(a), T(a)});
  EXPECT_EQ(Read(r), (std::vector<float>{1, 4, 9}));
  uint64_t n = 0;
  ASSERT_EQ(bp_native_count(ctx_, Op("mul.Tensor"), 0, &n), BP_STATUS_OK);
  EXPECT_EQ(n, 1u);
}

}  // namespace
