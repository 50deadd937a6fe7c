// DLPack 1.x versioned tensors (bp_tensor_from_dlpack_versioned,
// bp_tensor_to_dlpack_versioned, bp_tensor_is_read_only): zero-copy round
// trips, the version and flags written and read, a major version other than
// 1 refused with ownership left to the caller, a read-only import refused
// as a write target on every write path, and deleters run exactly once.
#include <cstring>
#include <string>
#include <vector>

#include "backplane/backplane.hpp"
#include "bp_test_util.h"

using namespace bptest;
using ::testing::HasSubstr;

namespace {

// A producer's DLPack 1.x tensor over its own float[4], counting deleter calls.
struct Producer {
  DLManagedTensorVersioned m{};
  int64_t shape[1] = {4};
  float data[4] = {1, 2, 3, 4};
  int deleted = 0;
  explicit Producer(uint64_t flags = 0, uint32_t major = 1, uint32_t minor = 0) {
    m.version = {major, minor};
    m.flags = flags;
    m.manager_ctx = this;
    m.deleter = [](DLManagedTensorVersioned* self) { ++static_cast<Producer*>(self->manager_ctx)->deleted; };
    m.dl_tensor.data = data;
    m.dl_tensor.device = {kDLCPU, 0};
    m.dl_tensor.ndim = 1;
    m.dl_tensor.dtype = kF32;
    m.dl_tensor.shape = shape;
  }
};

class DlpackVersionedTest : public ContextTest {
 protected:
  void SetUp() override {
    ContextTest::SetUp();
    // A host kernel, so that calls reach the write check.
    ASSERT_EQ(bp_op_register_kernel(ctx_, Op("add.Tensor"), 0, HostAddF32, nullptr, 0, nullptr), BP_STATUS_OK);
  }
  const bp_device_t kCpu{0, 0};
};

TEST_F(DlpackVersionedTest, ImportIsZeroCopyAndTheDeleterRunsOnceAtTheLastRelease) {
  Producer p;
  bp_tensor_t* t = nullptr;
  ASSERT_EQ(bp_tensor_from_dlpack_versioned(ctx_, &p.m, &t), BP_STATUS_OK) << LastError();
  EXPECT_EQ(bp_tensor_is_read_only(t), 0);
  EXPECT_EQ(Read(t), (std::vector<float>{1, 2, 3, 4}));
  p.data[2] = 30;  // one memory
  EXPECT_EQ(Read(t), (std::vector<float>{1, 2, 30, 4}));
  // A writable import is written in place.
  bp_tensor_t* ones = F32(kCpu, {4}, {1, 1, 1, 1});
  ASSERT_EQ(Call("add_.Tensor", {T(t), T(ones)}), t);
  owned_.pop_back();  // the call's reference on t
  bp_tensor_release(t);
  EXPECT_EQ(p.data[0], 2.0f);
  // An export of it keeps the storage (and the producer's tensor) alive.
  DLManagedTensorVersioned* out = nullptr;
  ASSERT_EQ(bp_tensor_to_dlpack_versioned(t, 0, &out), BP_STATUS_OK) << LastError();
  EXPECT_EQ(out->dl_tensor.data, static_cast<void*>(p.data));
  bp_tensor_release(t);
  EXPECT_EQ(p.deleted, 0);
  out->deleter(out);
  EXPECT_EQ(p.deleted, 1);
}

TEST_F(DlpackVersionedTest, ExportWritesVersionFlagsAndTheTensor) {
  bp_tensor_t* t = F32(kCpu, {2, 3}, {0, 1, 2, 3, 4, 5});
  bp_tensor_t* col = Call("narrow", {T(t), I(1), I(1), I(2)});
  DLManagedTensorVersioned* m = nullptr;
  ASSERT_EQ(bp_tensor_to_dlpack_versioned(col, DLPACK_FLAG_BITMASK_IS_COPIED, &m), BP_STATUS_OK) << LastError();
  EXPECT_EQ(m->version.major, 1u);
  EXPECT_EQ(m->version.minor, static_cast<uint32_t>(BP_DLPACK_VERSION_MINOR));
  EXPECT_EQ(m->flags, DLPACK_FLAG_BITMASK_IS_COPIED);
  EXPECT_EQ(m->dl_tensor.ndim, 2);
  EXPECT_EQ(m->dl_tensor.shape[0], 2);
  EXPECT_EQ(m->dl_tensor.shape[1], 2);
  EXPECT_EQ(m->dl_tensor.strides[0], 3);
  EXPECT_EQ(m->dl_tensor.strides[1], 1);
  EXPECT_EQ(m->dl_tensor.byte_offset, sizeof(float));
  EXPECT_EQ(m->dl_tensor.device.device_type, kDLCPU);
  // Round trip: the re-import views the same memory and owns the export.
  bp_tensor_t* back = nullptr;
  ASSERT_EQ(bp_tensor_from_dlpack_versioned(ctx_, m, &back), BP_STATUS_OK) << LastError();
  EXPECT_EQ(Read(back), (std::vector<float>{1, 2, 4, 5}));
  bp_tensor_release(back);  // runs the export's deleter
  // Unknown flag bits are refused; nothing is returned.
  DLManagedTensorVersioned* none = nullptr;
  EXPECT_EQ(bp_tensor_to_dlpack_versioned(t, 4, &none), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("flags 0x4"));
  EXPECT_EQ(none, nullptr);
  EXPECT_EQ(bp_tensor_to_dlpack_versioned(nullptr, 0, &none), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(bp_tensor_to_dlpack_versioned(t, 0, nullptr), BP_STATUS_INVALID_ARGUMENT);
}

TEST_F(DlpackVersionedTest, AMajorVersionOtherThanOneIsRefusedAndOwnershipStays) {
  Producer p(0, 2, 3);
  bp_tensor_t* t = nullptr;
  EXPECT_EQ(bp_tensor_from_dlpack_versioned(ctx_, &p.m, &t), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("bp_tensor_from_dlpack_versioned: DLPack version 2.3 is not supported"));
  EXPECT_EQ(t, nullptr);
  EXPECT_EQ(p.deleted, 0);  // the caller still owns it
  Producer zero(0, 0, 6);
  EXPECT_EQ(bp_tensor_from_dlpack_versioned(ctx_, &zero.m, &t), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("DLPack version 0.6"));
  // Any 1.x minor is taken.
  Producer later(0, 1, 7);
  ASSERT_EQ(bp_tensor_from_dlpack_versioned(ctx_, &later.m, &t), BP_STATUS_OK) << LastError();
  bp_tensor_release(t);
  EXPECT_EQ(later.deleted, 1);
  // The checks of bp_tensor_from_dlpack apply, under this function's name.
  Producer bad;
  bad.m.dl_tensor.device = {kDLCPU, 3};
  EXPECT_EQ(bp_tensor_from_dlpack_versioned(ctx_, &bad.m, &t), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("bp_tensor_from_dlpack_versioned: a kDLCPU tensor must have device_id 0"));
  EXPECT_EQ(bad.deleted, 0);
  EXPECT_EQ(bp_tensor_from_dlpack_versioned(ctx_, nullptr, &t), BP_STATUS_INVALID_ARGUMENT);
}

TEST_F(DlpackVersionedTest, AReadOnlyImportIsNeverWritten) {
  Producer p(DLPACK_FLAG_BITMASK_READ_ONLY);
  bp_tensor_t* t = nullptr;
  ASSERT_EQ(bp_tensor_from_dlpack_versioned(ctx_, &p.m, &t), BP_STATUS_OK) << LastError();
  Own(t);
  EXPECT_EQ(bp_tensor_is_read_only(t), 1);
  EXPECT_EQ(bp_tensor_is_constant(t), 0);  // kernels are not told it is constant
  bp_tensor_t* a = F32(kCpu, {4}, {10, 20, 30, 40});
  // Reading is fine.
  EXPECT_EQ(Read(Call("add.Tensor", {T(t), T(a)})), (std::vector<float>{11, 22, 33, 44}));
  // In place, out=, copy_, a view, an asynchronous copy from the host.
  Call("add_.Tensor", {T(t), T(a)}, BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("add_.Tensor: argument 'self' is a read-only tensor"));
  Call("add.out", {T(a), T(a), D(1.0), T(t)}, BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("argument 'out' is a read-only tensor"));
  Call("copy_", {T(t), T(a)}, BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("copy_: argument 'self' is a read-only tensor"));
  bp_tensor_t* part = Call("narrow", {T(t), I(0), I(1), I(2)});
  EXPECT_EQ(bp_tensor_is_read_only(part), 1);
  Call("add_.Tensor", {T(part), T(part)}, BP_STATUS_INVALID_ARGUMENT);
  void* pinned = nullptr;
  ASSERT_EQ(bp_host_alloc(ctx_, kCpu, 4 * sizeof(float), &pinned), BP_STATUS_OK) << LastError();
  std::memset(pinned, 0, 4 * sizeof(float));
  EXPECT_EQ(bp_tensor_from_host_async(t, pinned, 4 * sizeof(float)), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(LastError(), HasSubstr("argument 'tensor' is a read-only tensor"));
  EXPECT_EQ(bp_host_free(ctx_, pinned), BP_STATUS_OK);
  EXPECT_EQ(Read(t), (std::vector<float>{1, 2, 3, 4}));
  // Re-exported, it stays read-only whatever the caller asks.
  DLManagedTensorVersioned* m = nullptr;
  ASSERT_EQ(bp_tensor_to_dlpack_versioned(t, 0, &m), BP_STATUS_OK) << LastError();
  EXPECT_EQ(m->flags, DLPACK_FLAG_BITMASK_READ_ONLY);
  m->deleter(m);
  // A copy is an ordinary tensor.
  bp_tensor_t* c = Call("clone", {T(t)});
  EXPECT_EQ(bp_tensor_is_read_only(c), 0);
  EXPECT_NE(Call("add_.Tensor", {T(c), T(a)}), nullptr);
  EXPECT_EQ(bp_tensor_is_read_only(nullptr), 0);
  // Released (with its view) while `p` lives: the deleter runs once.
  for (bp_tensor_t* x : owned_) bp_tensor_release(x);
  owned_.clear();
  EXPECT_EQ(p.deleted, 1);
}

TEST_F(DlpackVersionedTest, AConstantTensorIsExportedReadOnly) {
  bp_tensor_t* w = F32(kCpu, {2}, {1, 2});
  ASSERT_EQ(bp_tensor_set_constant(w), BP_STATUS_OK);
  DLManagedTensorVersioned* m = nullptr;
  ASSERT_EQ(bp_tensor_to_dlpack_versioned(w, 0, &m), BP_STATUS_OK) << LastError();
  EXPECT_EQ(m->flags & DLPACK_FLAG_BITMASK_READ_ONLY, DLPACK_FLAG_BITMASK_READ_ONLY);
  m->deleter(m);
}

// The C++ wrappers (backplane.hpp): a READ_ONLY export re-imported is read-only.
TEST(DlpackVersionedCppTest, WrappersRoundTrip) {
  bp::Context ctx;
  bp::Tensor t = bp::Tensor::from_vector(ctx, std::vector<float>{1, 2, 3});
  DLManagedTensorVersioned* m = t.to_dlpack_versioned(DLPACK_FLAG_BITMASK_READ_ONLY);
  EXPECT_EQ(m->flags, DLPACK_FLAG_BITMASK_READ_ONLY);
  bp::Tensor back = ctx.from_dlpack_versioned(m);
  EXPECT_TRUE(back.is_read_only());
  EXPECT_FALSE(t.is_read_only());  // the producer's own storage is not marked
  EXPECT_EQ(back.to_host<float>(), (std::vector<float>{1, 2, 3}));
}

}  // namespace
