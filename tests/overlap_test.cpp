// Issue 23, items 1-4 and "refused although valid": writes that overlap
// their inputs or themselves, custom view operators, kernels that repoint
// their outputs, and promotion the dtype claims used to refuse. The call
// tests run on cpu, vendor_sim and opencl (each skipped, with the reason,
// only where its plugin is not built or has no device, and failed instead
// when BACKPLANE_EXPECT_BACKENDS names it).
#include <sys/stat.h>

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "bp_test_util.h"
#include "expected_backends.h"

namespace bptest {
namespace {

using ::testing::HasSubstr;

constexpr const char* kPartial =
    "some elements of the input tensor and the written-to tensor refer to a single memory location";
constexpr const char* kInternal = "more than one element of the written-to tensor refers to a single memory location";

bool FileExists(const std::string& path) {
  struct stat sb;
  return stat(path.c_str(), &sb) == 0;
}

std::string BuiltPlugin(const std::string& name) { return std::string(BP_BUILD_PLUGIN_DIR) + "/lib" + name + ".so"; }

// The CPU plugin, plus the backend under test when it is not cpu; dev_ is
// its device 0.
class OverlapTest : public ContextTest, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    const std::string cpu = BuiltPlugin("backplane_cpu");
    if (!FileExists(cpu)) BP_SKIP_UNLESS_EXPECTED("cpu", "the CPU plugin is not built (" + cpu + ")");
    ASSERT_EQ(bp_plugin_load(ctx_, cpu.c_str(), nullptr), BP_STATUS_OK) << LastError();
    const std::string backend = GetParam();
    if (backend != "cpu") {
      const std::string path = BuiltPlugin("backplane_" + backend);
      if (!FileExists(path)) BP_SKIP_UNLESS_EXPECTED(backend, "the " + backend + " plugin is not built (" + path + ")");
      ASSERT_EQ(bp_plugin_load(ctx_, path.c_str(), nullptr), BP_STATUS_OK) << LastError();
    }
    if (bp_device_parse(ctx_, (backend + ":0").c_str(), &dev_) != BP_STATUS_OK) {
      BP_SKIP_UNLESS_EXPECTED(backend, "backend " + backend + " has no device 0: " + LastError());
    }
  }

  // 3x3 float32 [0..8] on the device.
  bp_tensor_t* Square() { return F32(dev_, {3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8}); }
  bp_tensor_t* Transposed(bp_tensor_t* t) { return Call("transpose.int", {T(t), I(0), I(1)}); }
  bp_tensor_t* Row(bp_tensor_t* t, int64_t i) { return Call("select.int", {T(t), I(0), I(i)}); }
  bp_tensor_t* Expanded(bp_tensor_t* t, const std::vector<int64_t>& sizes) { return Call("expand", {T(t), L(sizes)}); }
  // A refused call: INVALID_ARGUMENT whose message names the operator and says `what`.
  void ExpectRefused(const char* op, std::vector<bp_value_t> args, const char* what) {
    bp_tensor_t* r = nullptr;
    EXPECT_EQ(bp_op_call(ctx_, Op(op), args.data(), static_cast<int32_t>(args.size()), &r, 1),
              BP_STATUS_INVALID_ARGUMENT)
        << op;
    EXPECT_THAT(LastError(), HasSubstr(op));
    EXPECT_THAT(LastError(), HasSubstr(what));
    EXPECT_EQ(r, nullptr);
  }

  bp_device_t dev_{};
};

const std::vector<float> kSquare = {0, 1, 2, 3, 4, 5, 6, 7, 8};

// Item 1: partial overlap of the written tensor with an input is refused,
// and nothing is written (libtorch gives the same message).
TEST_P(OverlapTest, InPlaceWithTransposeOfSelfIsRefused) {
  bp_tensor_t* s = Square();
  ExpectRefused("add_.Tensor", {T(s), T(Transposed(s))}, kPartial);
  EXPECT_THAT(LastError(), HasSubstr("'self'"));
  EXPECT_THAT(LastError(), HasSubstr("'other'"));
  EXPECT_EQ(Read(s), kSquare);
}

TEST_P(OverlapTest, InPlaceWithARowOfSelfIsRefused) {
  bp_tensor_t* s = Square();
  ExpectRefused("mul_.Tensor", {T(s), T(Row(s, 1))}, kPartial);
  EXPECT_EQ(Read(s), kSquare);
}

TEST_P(OverlapTest, OutEqualToTheTransposedInputIsRefused) {
  bp_tensor_t* s = Square();
  ExpectRefused("exp.out", {T(Transposed(s)), T(s)}, kPartial);
  EXPECT_THAT(LastError(), HasSubstr("'out'"));
  EXPECT_EQ(Read(s), kSquare);
}

TEST_P(OverlapTest, CopyFromTheTransposeOfSelfIsRefused) {
  bp_tensor_t* s = Square();
  ExpectRefused("copy_", {T(s), T(Transposed(s))}, kPartial);
  EXPECT_EQ(Read(s), kSquare);
}

// The exact alias stays allowed for pointwise operators: the same tensor, or
// another view with the same offset, sizes and strides.
TEST_P(OverlapTest, ExactAliasIsAllowed) {
  bp_tensor_t* s = Square();
  Call("add_.Tensor", {T(s), T(s)});
  EXPECT_EQ(Read(s), (std::vector<float>{0, 2, 4, 6, 8, 10, 12, 14, 16}));
  bp_tensor_t* same = Call("narrow", {T(s), I(0), I(0), I(3)});
  Call("mul_.Tensor", {T(s), T(same)});
  EXPECT_EQ(Read(s), (std::vector<float>{0, 4, 16, 36, 64, 100, 144, 196, 256}));
  bp_tensor_t* a = F32(dev_, {2}, {1, 2});
  bp_tensor_t* b = F32(dev_, {2}, {10, 20});
  Call("add.out", {T(a), T(b), I(1), T(a)});
  EXPECT_EQ(Read(a), (std::vector<float>{11, 22}));
}

// Views of one storage that do not share an element are no overlap.
TEST_P(OverlapTest, DisjointViewsOfOneStorageAreAllowed) {
  bp_tensor_t* s = Square();
  Call("add_.Tensor", {T(Row(s, 0)), T(Row(s, 2))});
  EXPECT_EQ(Read(s), (std::vector<float>{6, 8, 10, 3, 4, 5, 6, 7, 8}));
}

// Item 2: a written tensor with a broadcast (stride-0) dim is refused.
TEST_P(OverlapTest, InPlaceIntoABroadcastViewIsRefused) {
  bp_tensor_t* base = F32(dev_, {1, 4}, {0, 0, 0, 0});
  bp_tensor_t* rows = F32(dev_, {3, 4}, {1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3});
  ExpectRefused("add_.Tensor", {T(Expanded(base, {3, 4})), T(rows)}, kInternal);
  EXPECT_EQ(Read(base), (std::vector<float>{0, 0, 0, 0}));
  ExpectRefused("exp_", {T(Expanded(base, {3, 4}))}, kInternal);
  EXPECT_EQ(Read(base), (std::vector<float>{0, 0, 0, 0}));
  ExpectRefused("exp.out", {T(rows), T(Expanded(base, {3, 4}))}, kInternal);
  EXPECT_EQ(Read(base), (std::vector<float>{0, 0, 0, 0}));
}

// fill_ writes one value everywhere, so a broadcast self is fine (as torch).
TEST_P(OverlapTest, FillIntoABroadcastViewIsAllowed) {
  bp_tensor_t* base = F32(dev_, {1, 4}, {0, 0, 0, 0});
  Call("fill_.Scalar", {T(Expanded(base, {3, 4})), D(2.5)});
  EXPECT_EQ(Read(base), (std::vector<float>{2.5, 2.5, 2.5, 2.5}));
}

// A reduction whose out= shares storage with its input is computed through a
// temporary: row sums of [[1, 2], [10, 20]] written over the second row.
TEST_P(OverlapTest, ReductionIntoItsOwnInputIsComputedCorrectly) {
  bp_tensor_t* s = F32(dev_, {2, 2}, {1, 2, 10, 20});
  const int64_t dim = 1;
  Call("sum.dim_IntList_out", {T(s), L({dim}), B(false), bp_box::None<bp_value_t>(), T(Row(s, 1))});
  EXPECT_EQ(Read(s), (std::vector<float>{1, 2, 3, 30}));
}

// "Refused although valid": the dtype claims are the dtypes the kernel
// computes in, after promotion.
TEST_P(OverlapTest, PowOfBoolAndInt64PromotesToInt64) {
  const uint8_t b[2] = {1, 0};
  const int64_t e[2] = {3, 2};
  const int64_t n = 2;
  bp_tensor_t *self = nullptr, *exponent = nullptr;
  ASSERT_EQ(bp_tensor_from_host(ctx_, dev_, 1, &n, kBool, b, sizeof(b), &self), BP_STATUS_OK) << LastError();
  Own(self);
  ASSERT_EQ(bp_tensor_from_host(ctx_, dev_, 1, &n, kI64, e, sizeof(e), &exponent), BP_STATUS_OK) << LastError();
  Own(exponent);
  bp_tensor_t* r = Call("pow.Tensor_Tensor", {T(self), T(exponent)});
  ASSERT_NE(r, nullptr);
  const DLDataType dtype = bp_tensor_dtype(r);
  EXPECT_EQ(dtype.code, kI64.code);
  EXPECT_EQ(dtype.bits, 64);
  int64_t got[2] = {-1, -1};
  ASSERT_EQ(bp_tensor_to_host(r, got, sizeof(got)), BP_STATUS_OK) << LastError();
  EXPECT_EQ(got[0], 1);
  EXPECT_EQ(got[1], 0);
  // bool ** bool computes in bool, which pow does not take.
  bp_tensor_t* out = nullptr;
  std::vector<bp_value_t> args = {T(self), T(self)};
  EXPECT_EQ(bp_op_call(ctx_, Op("pow.Tensor_Tensor"), args.data(), 2, &out, 1), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("argument 'self' has dtype bool"));
}

TEST_P(OverlapTest, MeanOfInt32WithFloat32Dtype) {
  const int32_t v[2] = {1, 2};
  const int64_t n = 2;
  bp_tensor_t* x = nullptr;
  ASSERT_EQ(bp_tensor_from_host(ctx_, dev_, 1, &n, kI32, v, sizeof(v), &x), BP_STATUS_OK) << LastError();
  Own(x);
  bp_tensor_t* r = Call("mean.dim", {T(x), bp_box::None<bp_value_t>(), B(false), Dt(kF32)});
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(Read(r), (std::vector<float>{1.5f}));
  // Without dtype= an integral mean has no output dtype (torch refuses it too).
  bp_tensor_t* out = nullptr;
  std::vector<bp_value_t> args = {T(x), bp_box::None<bp_value_t>(), B(false)};
  EXPECT_EQ(bp_op_call(ctx_, Op("mean.dim"), args.data(), 3, &out, 1), BP_STATUS_INVALID_ARGUMENT);
}

INSTANTIATE_TEST_SUITE_P(Backends, OverlapTest, ::testing::Values("cpu", "vendor_sim", "opencl"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

// ---- item 3: custom operators cannot be views ---------------------------------

bp_status_t NoMeta(const bp_meta_call_t*) { return BP_STATUS_OK; }

TEST_F(ContextTest, CustomViewOperatorIsRefusedAtDefinition) {
  bp_op_t* op = nullptr;
  EXPECT_EQ(bp_op_define(ctx_, "ns::myview(Tensor(a) x) -> Tensor(a)", nullptr, nullptr, NoMeta, nullptr, &op),
            BP_STATUS_UNIMPLEMENTED);
  EXPECT_THAT(LastError(), HasSubstr("ns::myview"));
  EXPECT_THAT(LastError(), HasSubstr("declared as a view of argument 'x'"));
  EXPECT_THAT(LastError(), HasSubstr("custom operators cannot define views"));
  EXPECT_EQ(op, nullptr);
  EXPECT_NE(bp_op_find(ctx_, "ns::myview", &op), BP_STATUS_OK);
}

// ---- item 4: a kernel that repoints its output --------------------------------

float g_elsewhere[4];

// Returns OK after writing into a buffer of its own instead of the output it
// was handed (as a kernel writing through a pointer of another device would).
bp_status_t RepointingAdd(const bp_kernel_call_t* call) {
  DLTensor* o = call->outputs[0];
  o->data = g_elsewhere;
  o->byte_offset = 0;
  for (float& v : g_elsewhere) v = 42.0f;
  return BP_STATUS_OK;
}

// Moves the output to another device in its DLTensor (same address).
bp_status_t RedeviceAdd(const bp_kernel_call_t* call) {
  call->outputs[0]->device.device_id += 1;
  return BP_STATUS_OK;
}

TEST_F(ContextTest, KernelThatRepointsItsOutputFails) {
  bp_device_t dev = LoadTestdev();
  for (bp_kernel_fn kernel : {RepointingAdd, RedeviceAdd}) {
    bp_registration_t* reg = nullptr;
    ASSERT_EQ(bp_op_register_kernel(ctx_, Op("add.Tensor"), dev.backend, kernel, nullptr, BP_REGISTER_OVERRIDE, &reg),
              BP_STATUS_OK)
        << LastError();
    bp_tensor_t* a = F32(dev, {4}, {1, 2, 3, 4});
    bp_tensor_t* out = F32(dev, {4}, {0, 0, 0, 0});
    // The fast path (fresh output), the generic path (out=) and in-place.
    for (const char* op : {"add.Tensor", "add.out", "add_.Tensor"}) {
      std::vector<bp_value_t> args = {T(a), T(a), I(1)};
      if (std::string(op) == "add.out") args.push_back(T(out));
      bp_tensor_t* r = nullptr;
      EXPECT_EQ(bp_op_call(ctx_, Op(op), args.data(), static_cast<int32_t>(args.size()), &r, 1), BP_STATUS_INTERNAL)
          << op;
      EXPECT_EQ(r, nullptr);
      EXPECT_THAT(LastError(),
                  HasSubstr(std::string(op) + ": kernel on backend 'testdev' returned OK but changed outputs[0]"));
      EXPECT_THAT(LastError(), HasSubstr("never repoint"));
    }
    ASSERT_EQ(bp_registration_remove(ctx_, reg), BP_STATUS_OK) << LastError();
  }
}

// Issue 42 item 10: two DLPack imports of one host buffer are storages of
// their own; the overlap check compares the memory they cover, not storage
// identity. Views over `data` (float32) starting at element `first`.
class DlpackOverlapTest : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    const std::string cpu = BuiltPlugin("backplane_cpu");
    if (!FileExists(cpu)) BP_SKIP_UNLESS_EXPECTED("cpu", "the CPU plugin is not built (" + cpu + ")");
    ASSERT_EQ(bp_plugin_load(ctx_, cpu.c_str(), nullptr), BP_STATUS_OK) << LastError();
  }
  bp_tensor_t* Import(float* data, int64_t first, int64_t n) {
    shapes_.push_back({n});
    DLManagedTensor* m = &managed_[used_++];
    m->dl_tensor.data = data;
    m->dl_tensor.device = {kDLCPU, 0};
    m->dl_tensor.ndim = 1;
    m->dl_tensor.dtype = DLDataType{kDLFloat, 32, 1};
    m->dl_tensor.shape = shapes_.back().data();
    m->dl_tensor.byte_offset = static_cast<uint64_t>(first) * sizeof(float);
    bp_tensor_t* t = nullptr;
    EXPECT_EQ(bp_tensor_from_dlpack(ctx_, m, &t), BP_STATUS_OK) << LastError();
    owned_.push_back(t);
    return t;
  }
  DLManagedTensor managed_[8] = {};  // no deleter: the buffers are the test's
  int used_ = 0;
  std::deque<std::vector<int64_t>> shapes_;  // a deque: shape pointers stay valid
};

TEST_F(DlpackOverlapTest, PartialOverlapOfTwoImportsIsRefused) {
  float data[6] = {0, 1, 2, 3, 4, 5};
  bp_tensor_t* out = Import(data, 1, 5);
  bp_tensor_t* in = Import(data, 0, 5);
  bp_value_t args[] = {T(out), T(in), I(1)};
  EXPECT_EQ(bp_op_call(ctx_, Op("add_.Tensor"), args, 3, nullptr, 0), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("add_.Tensor"));
  EXPECT_THAT(LastError(), HasSubstr(kPartial));
  EXPECT_EQ(std::vector<float>(data, data + 6), (std::vector<float>{0, 1, 2, 3, 4, 5}));  // nothing written
  bp_value_t out_args[] = {T(in), T(out)};  // neg.out(self, out) over shifted views
  EXPECT_EQ(bp_op_call(ctx_, Op("neg.out"), out_args, 2, nullptr, 0), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("'out'"));
  EXPECT_EQ(std::vector<float>(data, data + 6), (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

TEST_F(DlpackOverlapTest, IdenticalImportsAreTheExactAlias) {
  float data[4] = {1, 2, 3, 4};
  bp_tensor_t* a = Import(data, 0, 4);
  bp_tensor_t* b = Import(data, 0, 4);
  bp_value_t args[] = {T(a), T(b), I(1)};
  ASSERT_EQ(bp_op_call(ctx_, Op("add_.Tensor"), args, 3, nullptr, 0), BP_STATUS_OK) << LastError();
  EXPECT_EQ(std::vector<float>(data, data + 4), (std::vector<float>{2, 4, 6, 8}));
}

TEST_F(DlpackOverlapTest, DisjointImportsOfOneBufferAreAllowed) {
  float data[6] = {1, 2, 3, 10, 20, 30};
  bp_tensor_t* lo = Import(data, 0, 3);
  bp_tensor_t* hi = Import(data, 3, 3);
  bp_value_t args[] = {T(lo), T(hi), I(1)};
  ASSERT_EQ(bp_op_call(ctx_, Op("add_.Tensor"), args, 3, nullptr, 0), BP_STATUS_OK) << LastError();
  EXPECT_EQ(std::vector<float>(data, data + 6), (std::vector<float>{11, 22, 33, 10, 20, 30}));
}

}  // namespace
}  // namespace bptest
