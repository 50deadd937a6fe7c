// CPU backend pointwise-family kernels (binary, unary, compare/where,
// copy/fill/cat, dtype conversions), plus loading, registration and fork
// safety, called through the shared fake host with DLTensors in the exact
// form the kernel contract describes: broadcast inputs with stride 0, strided
// outputs, 0-dim and zero-size tensors.
#include <gtest/gtest.h>
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "cpu_kernels_fixture.h"

using namespace bp_test;

namespace {

TEST_F(CpuKernels, LoadsAndDescribesItsDevice) {
  ASSERT_NE(plugin_->handle, nullptr) << dlerror();
  ASSERT_EQ(plugin_->init_status, BP_STATUS_OK) << LastError();
  EXPECT_STREQ(plugin_->backend.name, "cpu");
  EXPECT_EQ(plugin_->backend.device_type, kDLCPU);
  EXPECT_EQ(plugin_->backend.allocate, nullptr);  // host memory is the core's
  int32_t count = 0;
  ASSERT_EQ(plugin_->backend.device_count(plugin_->backend.backend_data, &count), BP_STATUS_OK);
  EXPECT_EQ(count, 1);
  bp_device_properties_t props{};
  props.struct_size = sizeof props;
  ASSERT_EQ(plugin_->backend.device_properties(plugin_->backend.backend_data, 0, &props), BP_STATUS_OK);
  EXPECT_GT(std::string(props.name).size(), 0u);
  EXPECT_GT(props.total_memory_bytes, 0u);
  EXPECT_TRUE(props.capabilities & BP_DEVICE_CAP_UNIFIED);
  EXPECT_NE(plugin_->backend.device_properties(plugin_->backend.backend_data, 1, &props), BP_STATUS_OK);
  for (const char* op : {"add.Tensor", "relu", "where.self", "copy_", "cat", "fill_.Scalar"})
    EXPECT_EQ(plugin_->kernels().count(op), 1u) << op;
}

TEST_F(CpuKernels, NegotiateRejectsOtherMajor) {
  auto entry = reinterpret_cast<bp_plugin_entry_fn>(dlsym(plugin_->handle, BP_PLUGIN_ENTRY_SYMBOL));
  ASSERT_NE(entry, nullptr);
  uint32_t v = BP_MAKE_ABI_VERSION(2, 0);
  EXPECT_EQ(entry()->negotiate(&v), BP_STATUS_INCOMPATIBLE_VERSION);
  v = BP_MAKE_ABI_VERSION(1, 7);
  EXPECT_EQ(entry()->negotiate(&v), BP_STATUS_OK);
  EXPECT_EQ(v, BP_ABI_VERSION);
}

TEST_F(CpuKernels, AddContiguousWithAlpha) {
  HostTensor a(F32(), {2, 3}), b(F32(), {2, 3}), out(F32(), {2, 3});
  a.Set<float>({1, 2, 3, 4, 5, 6});
  b.Set<float>({10, 20, 30, 40, 50, 60});
  ASSERT_EQ(Call("add.Tensor", {TArg(a), TArg(b), DArg(0.5)}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(out.Get<float>(6), (std::vector<float>{6, 12, 18, 24, 30, 36}));
  ASSERT_EQ(Call("sub.Tensor", {TArg(a), TArg(b), IArg(2)}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(out.Get<float>(6), (std::vector<float>{-19, -38, -57, -76, -95, -114}));
}

TEST_F(CpuKernels, AddBroadcastStrideZero) {
  HostTensor a(F32(), {2, 3}), row(F32(), {3}), out(F32(), {2, 3});
  a.Set<float>({1, 2, 3, 4, 5, 6});
  row.Set<float>({100, 200, 300});
  row.SetView({2, 3}, {0, 1});  // [3] broadcast to [2, 3]
  ASSERT_EQ(Call("add.Tensor", {TArg(a), TArg(row), IArg(1)}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(out.Get<float>(6), (std::vector<float>{101, 202, 303, 104, 205, 306}));
  HostTensor col(F32(), {2});
  col.Set<float>({1000, 2000});
  col.SetView({2, 3}, {1, 0});  // a column broadcast along dim 1
  ASSERT_EQ(Call("mul.Tensor", {TArg(col), TArg(a)}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(out.Get<float>(6), (std::vector<float>{1000, 2000, 3000, 8000, 10000, 12000}));
}

TEST_F(CpuKernels, TransposedInputsAndStridedOutput) {
  // a is the transpose of a contiguous [3, 2]; out is a transposed view of a
  // [3, 2] buffer, so out[i][j] lands at storage[j * 2 + i].
  HostTensor a(F64(), {3, 2}), b(F64(), {2, 3}), out(F64(), {3, 2});
  a.Set<double>({1, 2, 3, 4, 5, 6});  // a^T = [[1,3,5],[2,4,6]]
  a.SetView({2, 3}, {1, 2});
  b.Set<double>({10, 20, 30, 40, 50, 60});
  out.SetView({2, 3}, {1, 2});
  ASSERT_EQ(Call("add.Tensor", {TArg(a), TArg(b), IArg(1)}, {&out}), BP_STATUS_OK) << LastError();
  // out (logical) = [[11,23,35],[42,54,66]]; storage order: out^T row-major.
  EXPECT_EQ(out.Get<double>(6), (std::vector<double>{11, 42, 23, 54, 35, 66}));
}

TEST_F(CpuKernels, OffsetViewAndEveryOtherElement) {
  HostTensor a(I32(), {8}), out(I32(), {8});
  a.Set<int32_t>({0, 1, 2, 3, 4, 5, 6, 7});
  out.Set<int32_t>({-1, -1, -1, -1, -1, -1, -1, -1});
  a.SetView({3}, {2}, 2 * sizeof(int32_t));  // a[2::2] -> 2, 4, 6
  out.SetView({3}, {2}, 1 * sizeof(int32_t));
  ASSERT_EQ(Call("mul.Tensor", {TArg(a), TArg(a)}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(out.Get<int32_t>(8), (std::vector<int32_t>{-1, 4, -1, 16, -1, 36, -1, -1}));
}

TEST_F(CpuKernels, ZeroDimAndZeroSize) {
  HostTensor a(F32(), {}), b(F32(), {}), out(F32(), {});
  a.Set<float>({1.5f});
  b.Set<float>({2.0f});
  ASSERT_EQ(Call("mul.Tensor", {TArg(a), TArg(b)}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(out.Get<float>(1)[0], 3.0f);
  HostTensor e(F32(), {0, 3}), eo(F32(), {0, 3});
  EXPECT_EQ(Call("add.Tensor", {TArg(e), TArg(e), IArg(1)}, {&eo}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(Call("exp", {TArg(e)}, {&eo}), BP_STATUS_OK) << LastError();
}

TEST_F(CpuKernels, IntegerArithmeticWraps) {
  HostTensor a(I8(), {3}), b(I8(), {3}), out(I8(), {3});
  a.Set<int8_t>({127, -128, 100});
  b.Set<int8_t>({1, -1, 100});
  ASSERT_EQ(Call("add.Tensor", {TArg(a), TArg(b), IArg(1)}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(out.Get<int8_t>(3), (std::vector<int8_t>{-128, 127, -56}));
  HostTensor u(U8(), {2}), uo(U8(), {2});
  u.Set<uint8_t>({0, 3});
  ASSERT_EQ(Call("neg", {TArg(u)}, {&uo}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(uo.Get<uint8_t>(2), (std::vector<uint8_t>{0, 253}));
}

TEST_F(CpuKernels, Float16RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and the next half (1 + 2^-10): ties go to
  // the even mantissa (1.0). 1 + 3 * 2^-11 goes up to 1 + 2^-9.
  HostTensor a(F32(), {6}), h(F16(), {6});
  a.Set<float>({1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 65504.0f, 65520.0f, 0x1p-24f, 0x1p-26f});
  ASSERT_EQ(Call("copy_", {TArg(h), TArg(a), BArg(false)}, {&h}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(h.Get<uint16_t>(6), (std::vector<uint16_t>{0x3c00, 0x3c02, 0x7bff, 0x7c00, 0x0001, 0x0000}));
  // Half arithmetic: 0.1 + 0.2 computed in float, rounded once.
  HostTensor x(F16(), {2}), y(F16(), {2}), z(F16(), {2});
  x.Set<uint16_t>({0x2e66 /*0.1*/, 0x7c00 /*inf*/});
  y.Set<uint16_t>({0x3266 /*0.2*/, 0xfc00 /*-inf*/});
  ASSERT_EQ(Call("add.Tensor", {TArg(x), TArg(y), IArg(1)}, {&z}), BP_STATUS_OK) << LastError();
  const std::vector<uint16_t> zr = z.Get<uint16_t>(2);
  EXPECT_EQ(zr[0], 0x34cc);  // 4914/16384 is a tie: even mantissa, 0.2998046875
  EXPECT_EQ(zr[1] & 0x7c00, 0x7c00);
  EXPECT_NE(zr[1] & 0x3ff, 0);  // inf - inf = NaN
  // Back to float32 exactly, subnormals included.
  HostTensor back(F32(), {2});
  HostTensor hs(F16(), {2});
  hs.Set<uint16_t>({0x0001, 0xc000});
  ASSERT_EQ(Call("copy_", {TArg(back), TArg(hs), BArg(false)}, {&back}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(back.Get<float>(2), (std::vector<float>{0x1p-24f, -2.0f}));
}

TEST_F(CpuKernels, BFloat16RoundsToNearestEven) {
  HostTensor a(F32(), {3}), h(BF16(), {3});
  a.Set<float>({1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, std::numeric_limits<float>::quiet_NaN()});
  ASSERT_EQ(Call("copy_", {TArg(h), TArg(a), BArg(false)}, {&h}), BP_STATUS_OK) << LastError();
  const std::vector<uint16_t> r = h.Get<uint16_t>(3);
  EXPECT_EQ(r[0], 0x3f80);
  EXPECT_EQ(r[1], 0x3f82);
  EXPECT_EQ(r[2] & 0x7f80, 0x7f80);
  EXPECT_NE(r[2] & 0x7f, 0);
}

TEST_F(CpuKernels, IntegerDivisionByZeroFailsWithoutWriting) {
  HostTensor a(I32(), {3}), b(I32(), {3}), out(I32(), {3});
  a.Set<int32_t>({-7, 7, 1});
  b.Set<int32_t>({2, 0, 1});
  out.Set<int32_t>({99, 99, 99});
  EXPECT_EQ(Call("div.Tensor_mode", {TArg(a), TArg(b), SArg("floor")}, {&out}), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("ZeroDivisionError"), std::string::npos) << LastError();
  EXPECT_NE(LastError().find("div.Tensor_mode"), std::string::npos) << LastError();
  EXPECT_EQ(out.Get<int32_t>(3), (std::vector<int32_t>{99, 99, 99}));
  b.Set<int32_t>({2, -2, 1});
  ASSERT_EQ(Call("div.Tensor_mode", {TArg(a), TArg(b), SArg("floor")}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(out.Get<int32_t>(3), (std::vector<int32_t>{-4, -4, 1}));
  ASSERT_EQ(Call("div.Tensor_mode", {TArg(a), TArg(b), SArg("trunc")}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(out.Get<int32_t>(3), (std::vector<int32_t>{-3, -3, 1}));
  EXPECT_EQ(Call("div.Tensor_mode", {TArg(a), TArg(b), SArg("round")}, {&out}), BP_STATUS_INVALID_ARGUMENT);
}

TEST_F(CpuKernels, FloatFloorDivisionMatchesTorch) {
  HostTensor a(F32(), {4}), b(F32(), {4}), out(F32(), {4});
  a.Set<float>({-7.f, 7.f, 5.f, -0.f});
  b.Set<float>({2.f, -2.f, 0.f, 3.f});
  ASSERT_EQ(Call("div.Tensor_mode", {TArg(a), TArg(b), SArg("floor")}, {&out}), BP_STATUS_OK) << LastError();
  const std::vector<float> r = out.Get<float>(4);
  EXPECT_EQ(r[0], -4.f);
  EXPECT_EQ(r[1], -4.f);
  EXPECT_TRUE(std::isinf(r[2]) && r[2] > 0);
  EXPECT_TRUE(r[3] == 0.f && std::signbit(r[3]));
}

TEST_F(CpuKernels, IntegerPowNegativeExponentFails) {
  HostTensor a(I64(), {3}), b(I64(), {3}), out(I64(), {3});
  a.Set<int64_t>({2, 3, -2});
  b.Set<int64_t>({10, -1, 3});
  out.Set<int64_t>({5, 5, 5});
  EXPECT_EQ(Call("pow.Tensor_Tensor", {TArg(a), TArg(b)}, {&out}), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(out.Get<int64_t>(3), (std::vector<int64_t>{5, 5, 5}));
  b.Set<int64_t>({10, 0, 3});
  ASSERT_EQ(Call("pow.Tensor_Tensor", {TArg(a), TArg(b)}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(out.Get<int64_t>(3), (std::vector<int64_t>{1024, 1, -8}));
}

TEST_F(CpuKernels, MaximumMinimumPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  HostTensor a(F32(), {3}), b(F32(), {3}), out(F32(), {3});
  a.Set<float>({1, nan, 5});
  b.Set<float>({2, 0, nan});
  ASSERT_EQ(Call("maximum", {TArg(a), TArg(b)}, {&out}), BP_STATUS_OK) << LastError();
  std::vector<float> r = out.Get<float>(3);
  EXPECT_EQ(r[0], 2.f);
  EXPECT_TRUE(std::isnan(r[1]) && std::isnan(r[2]));
  ASSERT_EQ(Call("minimum", {TArg(a), TArg(b)}, {&out}), BP_STATUS_OK) << LastError();
  r = out.Get<float>(3);
  EXPECT_EQ(r[0], 1.f);
  EXPECT_TRUE(std::isnan(r[1]) && std::isnan(r[2]));
}

TEST_F(CpuKernels, ComparisonsAndWhere) {
  HostTensor a(F32(), {4}), b(F32(), {4}), c(Bool(), {4});
  a.Set<float>({1, 2, 3, std::numeric_limits<float>::quiet_NaN()});
  b.Set<float>({2, 2, 2, 2});
  ASSERT_EQ(Call("lt.Tensor", {TArg(a), TArg(b)}, {&c}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(c.Get<uint8_t>(4), (std::vector<uint8_t>{1, 0, 0, 0}));
  ASSERT_EQ(Call("ne.Tensor", {TArg(a), TArg(b)}, {&c}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(c.Get<uint8_t>(4), (std::vector<uint8_t>{1, 0, 1, 1}));
  ASSERT_EQ(Call("ge.Tensor", {TArg(a), TArg(b)}, {&c}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(c.Get<uint8_t>(4), (std::vector<uint8_t>{0, 1, 1, 0}));
  HostTensor out(F32(), {4});
  ASSERT_EQ(Call("where.self", {TArg(c), TArg(a), TArg(b)}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(out.Get<float>(3), (std::vector<float>{2, 2, 3}));
}

TEST_F(CpuKernels, UnaryMath) {
  HostTensor a(F64(), {4}), out(F64(), {4});
  a.Set<double>({0.0, 1.0, -1.0, 2.0});
  ASSERT_EQ(Call("exp", {TArg(a)}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_DOUBLE_EQ(out.Get<double>(4)[1], std::exp(1.0));
  ASSERT_EQ(Call("sigmoid", {TArg(a)}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_DOUBLE_EQ(out.Get<double>(4)[0], 0.5);
  ASSERT_EQ(Call("gelu", {TArg(a), SArg("none")}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_NEAR(out.Get<double>(4)[1], 0.8413447460685429, 1e-15);
  ASSERT_EQ(Call("gelu", {TArg(a), SArg("tanh")}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_NEAR(out.Get<double>(4)[1], 0.8411919906082768, 1e-15);
  ASSERT_EQ(Call("relu", {TArg(a)}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(out.Get<double>(4), (std::vector<double>{0, 1, 0, 2}));
  ASSERT_EQ(Call("rsqrt", {TArg(a)}, {&out}), BP_STATUS_OK) << LastError();
  EXPECT_DOUBLE_EQ(out.Get<double>(4)[3], 1.0 / std::sqrt(2.0));
  HostTensor i(I32(), {2}), io(I32(), {2});
  i.Set<int32_t>({-5, 5});
  ASSERT_EQ(Call("abs", {TArg(i)}, {&io}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(io.Get<int32_t>(2), (std::vector<int32_t>{5, 5}));
  // Floating math on an integer tensor is the core's promotion job.
  EXPECT_EQ(Call("exp", {TArg(i)}, {&io}), BP_STATUS_UNIMPLEMENTED);
}

TEST_F(CpuKernels, LargeBroadcastAddRunsInParallelChunks) {
  const int64_t rows = 300, cols = 1001;  // > 64K elements, odd row length
  HostTensor a(F32(), {rows, cols}), b(F32(), {cols}), out(F32(), {rows, cols});
  float* pa = a.data<float>();
  for (int64_t i = 0; i < rows * cols; ++i) pa[i] = static_cast<float>(i % 977);
  float* pb = b.data<float>();
  for (int64_t j = 0; j < cols; ++j) pb[j] = static_cast<float>(j);
  b.SetView({rows, cols}, {0, 1});
  ASSERT_EQ(Call("add.Tensor", {TArg(a), TArg(b), IArg(1)}, {&out}), BP_STATUS_OK) << LastError();
  const float* po = out.data<float>();
  int64_t bad = 0;
  for (int64_t i = 0; i < rows * cols; ++i)
    bad += po[i] != static_cast<float>(i % 977) + static_cast<float>(i % cols);
  EXPECT_EQ(bad, 0);
}

TEST_F(CpuKernels, FillCopyCat) {
  HostTensor t(BF16(), {2, 2});
  ASSERT_EQ(Call("fill_.Scalar", {TArg(t), DArg(1.5)}, {&t}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(t.Get<uint16_t>(4), (std::vector<uint16_t>{0x3fc0, 0x3fc0, 0x3fc0, 0x3fc0}));
  // copy_ with conversion from a transposed int64 source into float32.
  HostTensor src(I64(), {2, 3}), dst(F32(), {3, 2});
  src.Set<int64_t>({1, 2, 3, 4, 5, 6});
  src.SetView({3, 2}, {1, 3});
  ASSERT_EQ(Call("copy_", {TArg(dst), TArg(src), BArg(false)}, {&dst}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(dst.Get<float>(6), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  // float -> bool and -> uint8 follow torch (nonzero; truncation).
  HostTensor f(F32(), {3}), bo(Bool(), {3});
  f.Set<float>({0.f, -0.5f, std::numeric_limits<float>::quiet_NaN()});
  ASSERT_EQ(Call("copy_", {TArg(bo), TArg(f), BArg(false)}, {&bo}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(bo.Get<uint8_t>(3), (std::vector<uint8_t>{0, 1, 1}));
  // cat along dim 1 of [2,1] and [2,2].
  HostTensor x(I32(), {2, 1}), y(I32(), {2, 2}), c(I32(), {2, 3});
  x.Set<int32_t>({1, 2});
  y.Set<int32_t>({3, 4, 5, 6});
  const DLTensor* list[2] = {&x.dl, &y.dl};
  bp_kernel_arg_t l{};
  l.kind = BP_VALUE_TENSOR_LIST;
  l.u.tensor_list.data = list;
  l.u.tensor_list.size = 2;
  ASSERT_EQ(Call("cat", {l, IArg(1)}, {&c}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(c.Get<int32_t>(6), (std::vector<int32_t>{1, 3, 4, 2, 5, 6}));
}

// Every operator in ops.yaml that is not a view or composite has a CPU kernel.
TEST_F(CpuKernels, RegistersEveryKernelOpOfOpsYaml) {
  std::FILE* f = std::fopen(BP_OPS_YAML, "r");
  ASSERT_NE(f, nullptr) << BP_OPS_YAML;
  char line[1024];
  std::string name;
  int checked = 0;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    const std::string l(line);
    const size_t at = l.find("- schema: \"");
    if (at != std::string::npos) {
      const size_t b = at + 11;
      name = l.substr(b, l.find('(', b) - b);
      continue;
    }
    const size_t k = l.find("kind: ");
    if (k != std::string::npos && !name.empty()) {
      const std::string kind = l.substr(k + 6, l.find_first_of(" \n", k + 6) - (k + 6));
      if (kind != "view" && kind != "composite") {
        EXPECT_EQ(plugin_->kernels().count(name), 1u) << name << " (" << kind << ")";
        ++checked;
      }
      name.clear();
    }
  }
  std::fclose(f);
  EXPECT_GE(checked, 40);
}

// A host that forks (bp-conformance isolates crashes in child processes)
// can still run parallel kernels in the child after running them in the
// parent: GNU OpenMP's pool would otherwise hang there.
TEST_F(CpuKernels, ParallelKernelsWorkInAForkedChild) {
  const int64_t n = 1 << 20;
  HostTensor a(F32(), {n}), out(F32(), {n});
  for (int64_t i = 0; i < n; ++i) a.data<float>()[i] = 1.0f;
  ASSERT_EQ(Call("add.Tensor", {TArg(a), TArg(a), IArg(1)}, {&out}), BP_STATUS_OK);
  HostTensor m(F32(), {128, 128}), mo(F32(), {128, 128});
  ASSERT_EQ(Call("matmul", {TArg(m), TArg(m)}, {&mo}), BP_STATUS_OK);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(60);  // a hang fails the test instead of blocking it
    int rc = Call("add.Tensor", {TArg(a), TArg(a), IArg(2)}, {&out}) == BP_STATUS_OK ? 0 : 1;
    rc |= out.data<float>()[n - 1] == 3.0f ? 0 : 2;
    rc |= Call("matmul", {TArg(m), TArg(m)}, {&mo}) == BP_STATUS_OK ? 0 : 4;
    _exit(rc);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// float64 -> float16/bfloat16 rounds once (no double rounding through float).
TEST_F(CpuKernels, Float64ToHalfRoundsOnce) {
  // 1 + 2^-11 + 2^-40: just above the half tie; via float (24 bits) it would
  // first become exactly the tie and then round down to 1.0.
  HostTensor d(F64(), {2}), h(F16(), {2}), b(BF16(), {2});
  d.Set<double>({1.0 + 0x1p-11 + 0x1p-40, 1.0 + 0x1p-8 + 0x1p-40});
  ASSERT_EQ(Call("copy_", {TArg(h), TArg(d), BArg(false)}, {&h}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(h.Get<uint16_t>(1)[0], 0x3c01);
  ASSERT_EQ(Call("copy_", {TArg(b), TArg(d), BArg(false)}, {&b}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(b.Get<uint16_t>(2)[1], 0x3f81);
  ASSERT_EQ(Call("fill_.Scalar", {TArg(h), DArg(1.0 + 0x1p-11 + 0x1p-40)}, {&h}), BP_STATUS_OK) << LastError();
  EXPECT_EQ(h.Get<uint16_t>(2), (std::vector<uint16_t>{0x3c01, 0x3c01}));
}

}  // namespace
