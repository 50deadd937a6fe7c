// The ABI and runtime group, copies: views of every dtype copied
// host->device, device->host, device->device and to every other target, with
// storage offsets, skipped columns, stride-0 and empty views; DLPack export
// and import of views; device mixes in one call. The suite is instantiated in
// abi_runtime_group.cpp.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backplane/backplane.h"
#include "dtype.h"
#include "groups/abi_runtime_fixture.h"

namespace bpc {
namespace {

using abirt::kAllDtypes;
using abirt::kCpu;

// ---- copies of views --------------------------------------------------------------

// A view of a [4, 6] contiguous base, made with the core's view operators,
// and the geometry it must have.
struct ViewCase {
  const char* name;
  std::function<bp_status_t(bp_context_t*, bp_tensor_t*, Held*)> make;
  std::vector<int64_t> sizes, strides;
  int64_t offset;
  bool writable = true;  // false: elements alias (stride 0), so it is only read
};

const std::vector<ViewCase>& ViewCases() {
  static const std::vector<ViewCase> cases = {
      {"slice(1, 1:5:2)",
       [](bp_context_t* c, bp_tensor_t* b, Held* o) {
         return CallOp(c, "slice.Tensor", {vt(b), vi(1), vi(1), vi(5), vi(2)}, o);
       },
       {4, 2}, {6, 2}, 1},
      {"transpose(0, 1)",
       [](bp_context_t* c, bp_tensor_t* b, Held* o) { return CallOp(c, "transpose.int", {vt(b), vi(0), vi(1)}, o); },
       {6, 4}, {1, 6}, 0},
      {"select(0, 2)",
       [](bp_context_t* c, bp_tensor_t* b, Held* o) { return CallOp(c, "select.int", {vt(b), vi(0), vi(2)}, o); },
       {6}, {1}, 12},
      {"narrow(0, 1, 2).transpose(0, 1)",
       [](bp_context_t* c, bp_tensor_t* b, Held* o) {
         Held n;
         const bp_status_t st = CallOp(c, "narrow", {vt(b), vi(0), vi(1), vi(2)}, &n);
         return st != BP_STATUS_OK ? st : CallOp(c, "transpose.int", {vt(n.get()), vi(0), vi(1)}, o);
       },
       {6, 2}, {1, 6}, 6},
      {"select(0, 2).unsqueeze(0).expand(3, 6)",
       [](bp_context_t* c, bp_tensor_t* b, Held* o) {
         Held row, one;
         bp_status_t st = CallOp(c, "select.int", {vt(b), vi(0), vi(2)}, &row);
         if (st == BP_STATUS_OK) st = CallOp(c, "unsqueeze", {vt(row.get()), vi(0)}, &one);
         static const std::vector<int64_t> kTo = {3, 6};
         return st != BP_STATUS_OK ? st : CallOp(c, "expand", {vt(one.get()), vl(kTo)}, o);
       },
       {3, 6}, {0, 1}, 12, false},
      {"slice(0, 4:4) (empty, offset at the end)",
       [](bp_context_t* c, bp_tensor_t* b, Held* o) {
         return CallOp(c, "slice.Tensor", {vt(b), vi(0), vi(4), vi(4), vi(1)}, o);
       },
       {0, 6}, {6, 1}, 24},
  };
  return cases;
}

// `base` (contiguous, row-major) with the view's elements replaced by `values`.
std::vector<double> Scatter(std::vector<double> base, const ViewCase& v, const std::vector<double>& values) {
  for (size_t i = 0; i < values.size(); ++i) {
    int64_t rest = static_cast<int64_t>(i), at = v.offset;
    for (int d = static_cast<int>(v.sizes.size()) - 1; d >= 0; --d) {
      at += (rest % v.sizes[d]) * v.strides[d];
      rest /= v.sizes[d];
    }
    base[static_cast<size_t>(at)] = values[i];
  }
  return base;
}

int64_t Numel(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

// Makes the view of `base`, checking its geometry; empty on failure.
Held MakeView(bp_context_t* ctx, bp_tensor_t* base, const ViewCase& v) {
  Held view;
  EXPECT_EQ(v.make(ctx, base, &view), BP_STATUS_OK) << v.name << ": " << LastError();
  if (!view) return view;
  EXPECT_EQ(abirt::SizesOf(view.get()), v.sizes) << v.name;
  EXPECT_EQ(abirt::StridesOf(view.get()), v.strides) << v.name;
  EXPECT_EQ(bp_tensor_storage_offset(view.get()), v.offset) << v.name;
  return view;
}

// A [4, 6] tensor of `d` on `device` holding Values(d, 24, salt), the view `v`
// of it (geometry checked) and the values that view must read.
struct BaseAndView {
  std::vector<double> vals, want;
  Held base, view;
  explicit operator bool() const { return base && view; }
};

BaseAndView MakeBaseAndView(bp_context_t* ctx, bp_device_t device, DType d, const ViewCase& v, int salt = 0) {
  BaseAndView b;
  b.vals = abirt::Values(d, 24, salt);
  b.base = abirt::FromHost(ctx, device, {4, 6}, d, b.vals);
  EXPECT_TRUE(b.base) << "a [4, 6] " << dtype_name(d) << " tensor: " << LastError();
  if (!b.base) return b;
  b.view = MakeView(ctx, b.base.get(), v);
  b.want = abirt::Gather(b.vals, v.sizes, v.strides, v.offset);
  return b;
}

TEST_P(AbiRuntimeTest, DeviceViewsCopyToTheHostExactly) {
  for (DType d : kAllDtypes) {
    for (const ViewCase& v : ViewCases()) {
      SCOPED_TRACE(std::string(dtype_name(d)) + " " + v.name);
      BaseAndView dv = MakeBaseAndView(ctx(), dev(), d, v);
      ASSERT_TRUE(dv);
      EXPECT_EQ(Read(dv.view.get(), d), dv.want) << "bp_tensor_to_host of the view";
      Held on_cpu;
      ASSERT_EQ(bp_tensor_to_device(dv.view.get(), kCpu, on_cpu.out()), BP_STATUS_OK) << LastError();
      EXPECT_EQ(Read(on_cpu.get(), d), dv.want) << "bp_tensor_to_device(cpu) of the view";
      if (!v.writable) continue;
      // copy_ into a CPU view of the same shape: only the view changes.
      BaseAndView cv = MakeBaseAndView(ctx(), kCpu, d, v, 3);
      ASSERT_TRUE(cv);
      ASSERT_EQ(CallOp(ctx(), "copy_", {vt(cv.view.get()), vt(dv.view.get())}, nullptr), BP_STATUS_OK) << LastError();
      EXPECT_EQ(Read(cv.base.get(), d), Scatter(cv.vals, v, dv.want)) << "copy_(cpu view, device view)";
    }
  }
}

TEST_P(AbiRuntimeTest, HostDataCopiesIntoDeviceViewsExactly) {
  for (DType d : kAllDtypes) {
    for (const ViewCase& v : ViewCases()) {
      if (!v.writable) continue;
      SCOPED_TRACE(std::string(dtype_name(d)) + " " + v.name);
      BaseAndView dv = MakeBaseAndView(ctx(), dev(), d, v);
      ASSERT_TRUE(dv);
      // From a contiguous CPU tensor.
      const std::vector<double> src_vals = abirt::Values(d, Numel(v.sizes), 5);
      Held src = abirt::FromHost(ctx(), kCpu, v.sizes, d, src_vals);
      ASSERT_TRUE(src) << LastError();
      ASSERT_EQ(CallOp(ctx(), "copy_", {vt(dv.view.get()), vt(src.get())}, nullptr), BP_STATUS_OK) << LastError();
      const std::vector<double> after = Scatter(dv.vals, v, src_vals);
      EXPECT_EQ(Read(dv.base.get(), d), after) << "copy_(device view, cpu tensor)";
      // From a CPU view of the same geometry.
      BaseAndView cv = MakeBaseAndView(ctx(), kCpu, d, v, 7);
      ASSERT_TRUE(cv);
      ASSERT_EQ(CallOp(ctx(), "copy_", {vt(dv.view.get()), vt(cv.view.get())}, nullptr), BP_STATUS_OK) << LastError();
      EXPECT_EQ(Read(dv.base.get(), d), Scatter(after, v, cv.want)) << "copy_(device view, cpu view)";
      // A CPU view moved to the device becomes a contiguous device tensor.
      Held moved;
      ASSERT_EQ(bp_tensor_to_device(cv.view.get(), dev(), moved.out()), BP_STATUS_OK) << LastError();
      EXPECT_EQ(bp_tensor_device(moved.get()).backend, dev().backend);
      EXPECT_EQ(Read(moved.get(), d), cv.want) << "bp_tensor_to_device(cpu view)";
    }
  }
}

TEST_P(AbiRuntimeTest, DeviceViewsCopyWithinTheDeviceExactly) {
  int32_t devices = 0;
  bp_backend_info_t info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(bp_backend_info(ctx(), dev().backend, &info), BP_STATUS_OK) << LastError();
  devices = info.device_count;
  for (DType d : kAllDtypes) {
    for (const ViewCase& v : ViewCases()) {
      SCOPED_TRACE(std::string(dtype_name(d)) + " " + v.name);
      BaseAndView dv = MakeBaseAndView(ctx(), dev(), d, v);
      ASSERT_TRUE(dv);
      Held same;
      ASSERT_EQ(bp_tensor_to_device(dv.view.get(), dev(), same.out()), BP_STATUS_OK) << LastError();
      EXPECT_TRUE(bp_tensor_is_contiguous(same.get()));
      EXPECT_EQ(Read(same.get(), d), dv.want) << "bp_tensor_to_device(same device) of the view";
      if (devices > 1) {
        const bp_device_t other{dev().backend, (dev().index + 1) % devices};
        Held moved;
        ASSERT_EQ(bp_tensor_to_device(dv.view.get(), other, moved.out()), BP_STATUS_OK) << LastError();
        EXPECT_EQ(Read(moved.get(), d), dv.want) << "to device " << other.index;
      }
      if (!v.writable) continue;
      // copy_ between two views on the device: only the destination view changes.
      BaseAndView dst = MakeBaseAndView(ctx(), dev(), d, v, 9);
      ASSERT_TRUE(dst);
      ASSERT_EQ(CallOp(ctx(), "copy_", {vt(dst.view.get()), vt(dv.view.get())}, nullptr), BP_STATUS_OK) << LastError();
      EXPECT_EQ(Read(dst.base.get(), d), Scatter(dst.vals, v, dv.want)) << "copy_(device view, device view)";
      EXPECT_EQ(Read(dv.base.get(), d), dv.vals) << "the source changed";
    }
  }
}

TEST_P(AbiRuntimeTest, LargeViewsCopyExactlyBothWays) {
  // Over 1 MiB (the allocator's large pool), a view starting past the first
  // row and skipping columns, read back and written into.
  const int64_t rows = 520, cols = 1030;
  std::vector<double> vals(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < vals.size(); ++i) vals[i] = static_cast<double>(static_cast<int64_t>(i % 8191) - 4000);
  Held base = Make({rows, cols}, DType::kFloat32, vals);
  ASSERT_TRUE(base);
  Held view;
  ASSERT_EQ(CallOp(ctx(), "slice.Tensor", {vt(base.get()), vi(0), vi(3), vi(rows - 1), vi(1)}, &view), BP_STATUS_OK)
      << LastError();
  Held cols_view;
  ASSERT_EQ(CallOp(ctx(), "slice.Tensor", {vt(view.get()), vi(1), vi(5), vi(cols - 2), vi(3)}, &cols_view),
            BP_STATUS_OK)
      << LastError();
  const std::vector<int64_t> sizes = abirt::SizesOf(cols_view.get());
  ASSERT_EQ(sizes, (std::vector<int64_t>{rows - 4, (cols - 7 + 2) / 3}));
  const std::vector<int64_t> strides = {cols, 3};
  ASSERT_EQ(abirt::StridesOf(cols_view.get()), strides);
  const int64_t offset = 3 * cols + 5;
  ASSERT_EQ(bp_tensor_storage_offset(cols_view.get()), offset);
  const std::vector<double> want = abirt::Gather(vals, sizes, strides, offset);
  EXPECT_EQ(Read(cols_view.get(), DType::kFloat32), want) << "device view -> host";
  const std::vector<double> fill(want.size(), 0.5);
  Held src = abirt::FromHost(ctx(), kCpu, sizes, DType::kFloat32, fill);
  ASSERT_TRUE(src) << LastError();
  ASSERT_EQ(CallOp(ctx(), "copy_", {vt(cols_view.get()), vt(src.get())}, nullptr), BP_STATUS_OK) << LastError();
  std::vector<double> after = vals;
  for (int64_t r = 0; r < sizes[0]; ++r) {
    for (int64_t c = 0; c < sizes[1]; ++c) after[static_cast<size_t>(offset + r * cols + c * 3)] = 0.5;
  }
  EXPECT_EQ(Read(base.get(), DType::kFloat32), after) << "host -> device view";
}

// Copies between this target and every other (backend, device) of the run,
// both ways, from views: "any backend to any backend" (backplane.h).
TEST_P(AbiRuntimeTest, ViewsCopyToEveryOtherTargetAndBack) {
  std::vector<bp_device_t> others;
  for (const Target& t : suite_targets()) {
    if (t.backend != dev().backend && t.backend != 0) others.push_back(bp_device_t{t.backend, t.device});
  }
  if (others.empty()) GTEST_SKIP() << "no other non-CPU target in this run to copy to";
  for (const bp_device_t& other : others) {
    for (DType d : {DType::kFloat32, DType::kInt64, DType::kBool}) {
      for (const ViewCase& v : ViewCases()) {
        SCOPED_TRACE(std::string(dtype_name(d)) + " " + v.name + " with backend " + std::to_string(other.backend));
        BaseAndView dv = MakeBaseAndView(ctx(), dev(), d, v);
        ASSERT_TRUE(dv);
        Held there, back;
        ASSERT_EQ(bp_tensor_to_device(dv.view.get(), other, there.out()), BP_STATUS_OK) << LastError();
        EXPECT_EQ(Read(there.get(), d), dv.want) << "to the other device";
        ASSERT_EQ(bp_tensor_to_device(there.get(), dev(), back.out()), BP_STATUS_OK) << LastError();
        EXPECT_EQ(Read(back.get(), d), dv.want) << "and back";
        if (!v.writable) continue;
        // copy_ from the other device into this device's view.
        const std::vector<double> src_vals = abirt::Values(d, Numel(v.sizes), 4);
        Held src = abirt::FromHost(ctx(), other, v.sizes, d, src_vals);
        ASSERT_TRUE(src) << LastError();
        ASSERT_EQ(CallOp(ctx(), "copy_", {vt(dv.view.get()), vt(src.get())}, nullptr), BP_STATUS_OK) << LastError();
        EXPECT_EQ(Read(dv.base.get(), d), Scatter(dv.vals, v, src_vals)) << "copy_(view, other device's tensor)";
      }
    }
  }
}

// Tensors of one operator call live on one device; 0-dim CPU tensors join
// any device as scalars (backplane.h, bp_op_call).
TEST_P(AbiRuntimeTest, DeviceMixIsRefusedButCpuScalarsJoin) {
  Held a = Make({4}, DType::kFloat32, {1, 2, 3, 4});
  ASSERT_TRUE(a);
  Held scalar = abirt::FromHost(ctx(), kCpu, {}, DType::kFloat32, {0.5});
  ASSERT_TRUE(scalar) << LastError();
  Held r;
  ASSERT_EQ(CallOp(ctx(), "add.Tensor", {vt(a.get()), vt(scalar.get())}, &r), BP_STATUS_OK) << LastError();
  EXPECT_EQ(bp_tensor_device(r.get()).backend, dev().backend);
  EXPECT_EQ(Read(r.get(), DType::kFloat32), (std::vector<double>{1.5, 2.5, 3.5, 4.5}));
  // A tensor with dims on another device is an error naming both arguments.
  bp_device_t other{0, 0};
  if (IsCpuBackend()) {
    bool found = false;
    for (const Target& t : suite_targets()) {
      if (t.backend != 0 && !found) {
        other = bp_device_t{t.backend, t.device};
        found = true;
      }
    }
    if (!found) GTEST_SKIP() << "no device other than the CPU in this run to mix with";
  }
  Held b = abirt::FromHost(ctx(), other, {4}, DType::kFloat32, {1, 1, 1, 1});
  ASSERT_TRUE(b) << LastError();
  const std::vector<double> guard = {9, 9, 9, 9};
  Held out = Make({4}, DType::kFloat32, guard);
  ASSERT_TRUE(out);
  EXPECT_EQ(CallOp(ctx(), "add.out", {vt(a.get()), vt(b.get()), vi(1), vt(out.get())}, nullptr),
            BP_STATUS_INVALID_ARGUMENT);
  const std::string msg = bp_last_error_message();
  EXPECT_NE(msg.find("add"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'other'"), std::string::npos) << msg;
  EXPECT_EQ(Read(out.get(), DType::kFloat32), guard) << "add.out wrote out on error";
}

// DLPack, zero-copy both ways: an exported view describes the storage base,
// the view's byte offset, sizes and strides in elements and the device; the
// import reads the same elements; each deleter runs exactly once.
struct CountingManaged {
  DLManagedTensor outer;  // handed to bp_tensor_from_dlpack
  DLManagedTensor* inner = nullptr;
  int deletes = 0;
};
void CountingDeleter(DLManagedTensor* m) {
  auto* c = static_cast<CountingManaged*>(m->manager_ctx);
  ++c->deletes;
  c->inner->deleter(c->inner);
}

TEST_P(AbiRuntimeTest, DlpackExportOfAViewDescribesItAndImportsBack) {
  bp_backend_info_t info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(bp_backend_info(ctx(), dev().backend, &info), BP_STATUS_OK) << LastError();
  for (DType d : {DType::kFloat32, DType::kInt64, DType::kFloat16, DType::kBool}) {
    for (const ViewCase& v : ViewCases()) {
      SCOPED_TRACE(std::string(dtype_name(d)) + " " + v.name);
      BaseAndView dv = MakeBaseAndView(ctx(), dev(), d, v);
      ASSERT_TRUE(dv);
      CountingManaged c;
      ASSERT_EQ(bp_tensor_to_dlpack(dv.view.get(), &c.inner), BP_STATUS_OK) << LastError();
      const DLTensor& t = c.inner->dl_tensor;
      EXPECT_EQ(t.ndim, static_cast<int32_t>(v.sizes.size()));
      EXPECT_EQ(std::vector<int64_t>(t.shape, t.shape + t.ndim), v.sizes);
      ASSERT_NE(t.strides, nullptr) << "DLPack export without strides";
      EXPECT_EQ(std::vector<int64_t>(t.strides, t.strides + t.ndim), v.strides);
      EXPECT_EQ(t.byte_offset, static_cast<uint64_t>(v.offset) * dtype_itemsize(d));
      EXPECT_EQ(t.dtype.code, dtype_to_dl(d).code);
      EXPECT_EQ(t.dtype.bits, dtype_to_dl(d).bits);
      EXPECT_EQ(t.dtype.lanes, 1);
      EXPECT_EQ(static_cast<int32_t>(t.device.device_type), info.device_type);
      EXPECT_EQ(t.device.device_id, dev().index);
      c.outer = *c.inner;
      c.outer.manager_ctx = &c;
      c.outer.deleter = CountingDeleter;
      Held imported;
      ASSERT_EQ(bp_tensor_from_dlpack(ctx(), &c.outer, imported.out()), BP_STATUS_OK) << LastError();
      EXPECT_EQ(bp_tensor_device(imported.get()).backend, dev().backend);
      EXPECT_EQ(Read(imported.get(), d), dv.want);
      EXPECT_EQ(c.deletes, 0) << "deleted while the imported tensor lives";
      imported = Held();
      EXPECT_EQ(c.deletes, 1) << "the deleter must run exactly once, when the tensor is released";
    }
  }
}

}  // namespace
}  // namespace bpc
