// Constant tensors (bp_tensor_set_constant, ABI 1.5): Backplane never writes
// them (every write path refuses, nothing changes), kernels see them with
// BP_KERNEL_ARG_CONSTANT and a storage id that is stable across calls and
// views and never reused, and the CPU backend's convolution, which keeps
// constant weights in oneDNN's layout, gives the same values as with plain
// weights, also when a new constant takes a freed one's memory.
#include <sys/stat.h>

#include <cstring>
#include <string>
#include <vector>

#include "backplane/plugin_kit.h"
#include "bp_test_util.h"

using namespace bptest;
using ::testing::HasSubstr;

namespace {

// What the recording matmul kernel saw of its two tensor arguments.
struct SeenArg {
  int32_t flags = -1;
  uint64_t id = 0;
};
SeenArg g_seen[2];

bp_status_t RecordingMatmul(const bp_kernel_call_t* call) {
  for (int i = 0; i < 2; ++i) {
    g_seen[i].flags = call->args[i].flags;
    g_seen[i].id = bp_kit_constant_id(call, i);
  }
  DLTensor* o = call->outputs[0];
  for (int64_t i = 0, n = Numel(o); i < n; ++i) *HostElem<float>(o, i) = 0.0f;
  return BP_STATUS_OK;
}

class ConstantTensorTest : public ContextTest {
 protected:
  // Loads the real CPU plugin; false (the test skips, saying why) when it
  // was not built.
  bool LoadCpuPlugin() {
    const std::string path = std::string(BP_BUILD_PLUGIN_DIR) + "/libbackplane_cpu.so";
    struct stat sb;
    if (stat(path.c_str(), &sb) != 0) return false;
    EXPECT_EQ(bp_plugin_load(ctx_, path.c_str(), nullptr), BP_STATUS_OK) << LastError();
    return true;
  }
  // Values in [-0.5, 0.5) that vary with `seed`.
  static std::vector<float> Ramp(size_t n, int seed) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 29 + static_cast<size_t>(seed) * 7) % 61) / 61 - 0.5f;
    return v;
  }
  // The address of t's first element (through a DLPack export).
  static void* DataAddress(bp_tensor_t* t) {
    DLManagedTensor* m = nullptr;
    EXPECT_EQ(bp_tensor_to_dlpack(t, &m), BP_STATUS_OK);
    if (m == nullptr) return nullptr;
    void* data = m->dl_tensor.data;
    m->deleter(m);
    return data;
  }
  const bp_device_t kCpu{0, 0};
};

TEST_F(ConstantTensorTest, KernelsSeeTheFlagAndAStableIdPerStorage) {
  ASSERT_EQ(bp_op_register_kernel(ctx_, Op("matmul"), 0, RecordingMatmul, nullptr, 0, nullptr), BP_STATUS_OK);
  bp_tensor_t* a = F32(kCpu, {2, 3}, {1, 2, 3, 4, 5, 6});
  bp_tensor_t* w = F32(kCpu, {3, 2}, {1, 0, 0, 1, 1, 1});
  EXPECT_EQ(bp_tensor_is_constant(w), 0);
  ASSERT_NE(Call("matmul", {T(a), T(w)}), nullptr);
  EXPECT_EQ(g_seen[1].flags, 0);
  EXPECT_EQ(g_seen[1].id, 0u);

  ASSERT_EQ(bp_tensor_set_constant(w), BP_STATUS_OK);
  EXPECT_EQ(bp_tensor_is_constant(w), 1);
  ASSERT_NE(Call("matmul", {T(a), T(w)}), nullptr);
  EXPECT_EQ(g_seen[0].flags, 0);  // `a` is not constant
  EXPECT_EQ(g_seen[1].flags, BP_KERNEL_ARG_CONSTANT);
  const uint64_t id = g_seen[1].id;
  EXPECT_NE(id, 0u);
  // Idempotent, the same on the next call and for a view of the storage.
  ASSERT_EQ(bp_tensor_set_constant(w), BP_STATUS_OK);
  ASSERT_NE(Call("matmul", {T(a), T(w)}), nullptr);
  EXPECT_EQ(g_seen[1].id, id);
  bp_tensor_t* wv = Call("narrow", {T(w), I(1), I(0), I(1)});
  EXPECT_EQ(bp_tensor_is_constant(wv), 1);
  ASSERT_NE(Call("matmul", {T(a), T(wv)}), nullptr);
  EXPECT_EQ(g_seen[1].id, id);
  // Another storage gets another id.
  bp_tensor_t* w2 = F32(kCpu, {3, 2}, {1, 0, 0, 1, 1, 1});
  ASSERT_EQ(bp_tensor_set_constant(w2), BP_STATUS_OK);
  ASSERT_NE(Call("matmul", {T(a), T(w2)}), nullptr);
  EXPECT_NE(g_seen[1].id, id);
  EXPECT_NE(g_seen[1].id, 0u);
}

TEST_F(ConstantTensorTest, EveryWriteIsRefusedAndChangesNothing) {
  // Host kernels, so the calls reach the write check (relu's never runs).
  ASSERT_EQ(bp_op_register_kernel(ctx_, Op("add.Tensor"), 0, HostAddF32, nullptr, 0, nullptr), BP_STATUS_OK);
  ASSERT_EQ(bp_op_register_kernel(ctx_, Op("relu"), 0, HostAddF32, nullptr, 0, nullptr), BP_STATUS_OK);
  bp_tensor_t* w = F32(kCpu, {2, 2}, {1, 2, 3, 4});
  bp_tensor_t* a = F32(kCpu, {2, 2}, {10, 20, 30, 40});
  ASSERT_EQ(bp_tensor_set_constant(w), BP_STATUS_OK);
  // Reading is fine.
  EXPECT_EQ(Read(Call("add.Tensor", {T(w), T(a)})), (std::vector<float>{11, 22, 33, 44}));
  // In place (the pointwise fast path and the generic one), out=, copy_,
  // a view of it, an asynchronous copy from the host.
  Call("add_.Tensor", {T(w), T(a)}, BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("add_.Tensor: argument 'self' is a constant tensor"));
  Call("add.out", {T(a), T(a), D(1.0), T(w)}, BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("argument 'out' is a constant tensor"));
  Call("copy_", {T(w), T(a)}, BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("copy_: argument 'self' is a constant tensor"));
  bp_tensor_t* row = Call("narrow", {T(w), I(0), I(1), I(1)});
  Call("relu_", {T(row)}, BP_STATUS_INVALID_ARGUMENT);
  void* pinned = nullptr;
  ASSERT_EQ(bp_host_alloc(ctx_, kCpu, 4 * sizeof(float), &pinned), BP_STATUS_OK) << LastError();
  const float host[4] = {5, 6, 7, 8};
  std::memcpy(pinned, host, sizeof(host));
  EXPECT_EQ(bp_tensor_from_host_async(w, pinned, sizeof(host)), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("bp_tensor_from_host_async: argument 'tensor' is a constant tensor"));
  EXPECT_EQ(bp_host_free(ctx_, pinned), BP_STATUS_OK);
  EXPECT_EQ(Read(w), (std::vector<float>{1, 2, 3, 4}));
  // A copy is an ordinary tensor.
  bp_tensor_t* c = Call("clone", {T(w)});
  EXPECT_EQ(bp_tensor_is_constant(c), 0);
  EXPECT_NE(Call("add_.Tensor", {T(c), T(a)}), nullptr);
}

TEST_F(ConstantTensorTest, NullIsAnError) {
  EXPECT_EQ(bp_tensor_set_constant(nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("bp_tensor_set_constant: tensor is NULL"));
  EXPECT_EQ(bp_tensor_is_constant(nullptr), 0);
}

// The CPU backend keeps constant convolution weights reordered (its packed
// weights cache). Same values as plain weights; a new constant in a freed
// constant's memory is not mistaken for it.
TEST_F(ConstantTensorTest, CpuConvolutionWithConstantWeightsMatchesPlainWeights) {
  if (!LoadCpuPlugin()) GTEST_SKIP() << "the CPU plugin is not built (" << BP_BUILD_PLUGIN_DIR << ")";
  auto ramp = Ramp;
  bp_tensor_t* x = F32(kCpu, {1, 16, 9, 9}, ramp(16 * 81, 1));
  const std::vector<int64_t> wsizes = {32, 16, 3, 3}, one = {1};
  auto conv = [&](bp_tensor_t* w) {
    std::vector<bp_value_t> args = {T(x), T(w), bp_box::None<bp_value_t>(), L(one), L(one), L(one), I(1)};
    bp_tensor_t* y = nullptr;
    EXPECT_EQ(bp_op_call(ctx_, Op("conv2d"), args.data(), static_cast<int32_t>(args.size()), &y, 1), BP_STATUS_OK)
        << LastError();
    std::vector<float> v = y != nullptr ? Read(y) : std::vector<float>();
    bp_tensor_release(y);
    return v;
  };
  auto upload = [&](const std::vector<float>& v) {
    bp_tensor_t* t = nullptr;
    EXPECT_EQ(bp_tensor_from_host(ctx_, kCpu, 4, wsizes.data(), kF32, v.data(), v.size() * sizeof(float), &t),
              BP_STATUS_OK);
    return t;
  };
  void* previous = nullptr;
  int same_memory = 0;
  for (int seed = 2; seed < 6; ++seed) {
    const std::vector<float> wv = ramp(32 * 16 * 9, seed);
    // The reference first, its weights freed again: the caching allocator
    // then hands the constant weights the block the previous ones had.
    bp_tensor_t* plain = upload(wv);
    const std::vector<float> want = conv(plain);
    bp_tensor_release(plain);
    bp_tensor_t* w = upload(wv);
    ASSERT_EQ(bp_tensor_set_constant(w), BP_STATUS_OK);
    void* data = DataAddress(w);
    same_memory += data == previous ? 1 : 0;
    previous = data;
    for (int call = 0; call < 2; ++call) {  // the first call packs, the second reuses
      const std::vector<float> got = conv(w);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4f) << "seed " << seed << " at " << i;
    }
    bp_tensor_release(w);
  }
  // The case the id exists for did happen: new constant weights in the
  // memory of freed ones, with other values.
  EXPECT_GT(same_memory, 0);
}

// The CPU backend's matrix products read a constant weight packed (kept in
// oneDNN's layout): matmul's other, linear's weight (a transposed view) and
// addmm's mat2 give the plain weights' values, call after call, and a new
// constant in a freed constant's memory is not mistaken for it.
TEST_F(ConstantTensorTest, CpuMatrixProductsWithConstantWeightsMatchPlainWeights) {
  if (!LoadCpuPlugin()) GTEST_SKIP() << "the CPU plugin is not built (" << BP_BUILD_PLUGIN_DIR << ")";
  auto ramp = Ramp;
  const int64_t K = 24, N = 40;
  bp_tensor_t* x3 = F32(kCpu, {3, 5, K}, ramp(3 * 5 * K, 1));  // a batch of token rows
  bp_tensor_t* x2 = F32(kCpu, {7, K}, ramp(7 * K, 3));
  bp_tensor_t* bias = F32(kCpu, {N}, ramp(N, 4));
  struct Product {
    const char* op;
    std::vector<int64_t> wsizes;
  };
  const Product products[] = {{"matmul", {K, N}}, {"linear", {N, K}}, {"addmm", {K, N}}};
  auto run = [&](const Product& p, bp_tensor_t* w) {
    std::vector<bp_value_t> args;
    if (std::string(p.op) == "matmul") args = {T(x3), T(w)};
    if (std::string(p.op) == "linear") args = {T(x3), T(w), T(bias)};
    if (std::string(p.op) == "addmm") args = {T(bias), T(x2), T(w)};
    bp_tensor_t* y = nullptr;
    EXPECT_EQ(bp_op_call(ctx_, Op(p.op), args.data(), static_cast<int32_t>(args.size()), &y, 1), BP_STATUS_OK)
        << p.op << ": " << LastError();
    std::vector<float> v = y != nullptr ? Read(y) : std::vector<float>();
    bp_tensor_release(y);
    return v;
  };
  int same_memory = 0;
  for (const Product& p : products) {
    void* previous = nullptr;
    for (int seed = 2; seed < 5; ++seed) {
      const std::vector<float> wv = ramp(static_cast<size_t>(K * N), seed);
      bp_tensor_t* plain = F32(kCpu, p.wsizes, wv);
      const std::vector<float> want = run(p, plain);
      bp_tensor_release(plain);
      bp_tensor_t* w = F32(kCpu, p.wsizes, wv);
      ASSERT_EQ(bp_tensor_set_constant(w), BP_STATUS_OK);
      void* data = DataAddress(w);
      same_memory += data == previous ? 1 : 0;
      previous = data;
      for (int call = 0; call < 2; ++call) {  // the first call packs, the second reuses
        const std::vector<float> got = run(p, w);
        ASSERT_EQ(got.size(), want.size()) << p.op;
        for (size_t i = 0; i < got.size(); ++i)
          ASSERT_NEAR(got[i], want[i], 1e-4f) << p.op << " seed " << seed << " call " << call << " at " << i;
      }
      bp_tensor_release(w);
    }
  }
  EXPECT_GT(same_memory, 0);
}

}  // namespace
