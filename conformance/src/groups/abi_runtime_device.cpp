// The ABI and runtime group, device half: the allocator (alignment, empty
// tensors, impossible sizes, statistics), stream order and threads, device
// properties against what runs, and strict mode with a masked kernel. Copies
// are in abi_runtime_copies.cpp; the suite is instantiated in
// abi_runtime_group.cpp.
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "backplane/backplane.h"
#include "dtype.h"
#include "groups/abi_runtime_fixture.h"

namespace bpc {
namespace {

using abirt::kCpu;


bp_allocator_stats_t Stats(bp_context_t* ctx, bp_device_t d) {
  bp_allocator_stats_t s{};
  s.struct_size = sizeof(s);
  EXPECT_EQ(bp_allocator_stats(ctx, d, &s), BP_STATUS_OK) << LastError();
  return s;
}

// Restores what a test changed on the shared context, also on an early return.
class ContextRestorer {
 public:
  ContextRestorer(bp_context_t* ctx, bp_op_t* op, int32_t backend) : ctx_(ctx), op_(op), backend_(backend) {}
  ~ContextRestorer() {
    bp_context_set_strict_fallback(ctx_, 0);
    if (op_ != nullptr) bp_op_set_kernel_masked(ctx_, op_, backend_, 0);
  }
  ContextRestorer(const ContextRestorer&) = delete;
  ContextRestorer& operator=(const ContextRestorer&) = delete;

 private:
  bp_context_t* ctx_;
  bp_op_t* op_;
  int32_t backend_;
};

// ---- allocator --------------------------------------------------------------------

TEST_P(AbiRuntimeTest, EmptyTensorStorageIsAlignedAsTheDeviceReports) {
  const bp_device_properties_t p = Props();
  ASSERT_GT(p.alignment_bytes, 0u);
  ASSERT_EQ(p.alignment_bytes & (p.alignment_bytes - 1), 0u) << "alignment_bytes " << p.alignment_bytes;
  bp_backend_info_t info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(bp_backend_info(ctx(), dev().backend, &info), BP_STATUS_OK) << LastError();
  const int32_t t = info.device_type;
  const bool addresses = t == kDLCPU || t == kDLCUDA || t == kDLCUDAHost || t == kDLROCM || t == kDLROCMHost ||
                         t == kDLCUDAManaged || (p.capabilities & BP_DEVICE_CAP_UNIFIED) != 0;
  if (!addresses) {
    GTEST_SKIP() << "device pointers of backend '" << GetParam().backend_name << "' (DLPack device type " << t
                 << ") are opaque handles, not addresses: their alignment cannot be seen from the host";
  }
  for (DType d : {DType::kUInt8, DType::kFloat32, DType::kFloat64}) {
    for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{64}, int64_t{511}, int64_t{513}, int64_t{4097},
                      int64_t{(1 << 20) + 1}}) {
      Held x;
      ASSERT_EQ(bp_tensor_empty(ctx(), dev(), 1, &n, dtype_to_dl(d), x.out()), BP_STATUS_OK) << LastError();
      DLManagedTensor* m = nullptr;
      ASSERT_EQ(bp_tensor_to_dlpack(x.get(), &m), BP_STATUS_OK) << LastError();
      const uintptr_t addr = reinterpret_cast<uintptr_t>(m->dl_tensor.data) + m->dl_tensor.byte_offset;
      EXPECT_EQ(addr % p.alignment_bytes, 0u) << n << " x " << dtype_name(d) << " at " << std::hex << addr;
      m->deleter(m);
    }
  }
}

TEST_P(AbiRuntimeTest, ZeroElementTensorsWorkAndRoundTrip) {
  const unsigned char dummy = 0;
  for (const std::vector<int64_t>& sizes : {std::vector<int64_t>{0}, {3, 0}, {0, 4, 2}}) {
    for (DType d : {DType::kFloat32, DType::kInt64, DType::kBool}) {
      SCOPED_TRACE(std::string(dtype_name(d)) + " with " + std::to_string(sizes.size()) + " dims");
      const int32_t nd = static_cast<int32_t>(sizes.size());
      Held e;
      ASSERT_EQ(bp_tensor_empty(ctx(), dev(), nd, sizes.data(), dtype_to_dl(d), e.out()), BP_STATUS_OK) << LastError();
      EXPECT_EQ(bp_tensor_numel(e.get()), 0);
      EXPECT_EQ(abirt::SizesOf(e.get()), sizes);
      Held h;
      ASSERT_EQ(bp_tensor_from_host(ctx(), dev(), nd, sizes.data(), dtype_to_dl(d), &dummy, 0, h.out()), BP_STATUS_OK)
          << LastError();
      unsigned char sink = 7;
      EXPECT_EQ(bp_tensor_to_host(h.get(), &sink, 0), BP_STATUS_OK) << LastError();
      EXPECT_EQ(sink, 7) << "bp_tensor_to_host wrote bytes for a tensor with no element";
      Held on_cpu, back;
      ASSERT_EQ(bp_tensor_to_device(h.get(), kCpu, on_cpu.out()), BP_STATUS_OK) << LastError();
      ASSERT_EQ(bp_tensor_to_device(on_cpu.get(), dev(), back.out()), BP_STATUS_OK) << LastError();
      EXPECT_EQ(abirt::SizesOf(back.get()), sizes);
      EXPECT_EQ(bp_tensor_device(back.get()).backend, dev().backend);
      if (d != DType::kBool) {
        Held sum;
        ASSERT_EQ(CallOp(ctx(), "add.Tensor", {vt(h.get()), vt(back.get())}, &sum), BP_STATUS_OK) << LastError();
        EXPECT_EQ(abirt::SizesOf(sum.get()), sizes);
      }
    }
  }
  // A 0-dim tensor has one element.
  Held s = Make({}, DType::kFloat32, {2.5});
  ASSERT_TRUE(s);
  EXPECT_EQ(bp_tensor_numel(s.get()), 1);
  EXPECT_EQ(Read(s.get(), DType::kFloat32), (std::vector<double>{2.5}));
}

TEST_P(AbiRuntimeTest, ImpossibleAllocationIsRefusedWithoutACrash) {
  const bp_allocator_stats_t before = Stats(ctx(), dev());
  // 2^62 bytes: representable, never available.
  const int64_t huge = int64_t{1} << 59;
  Held t;
  EXPECT_EQ(bp_tensor_empty(ctx(), dev(), 1, &huge, dtype_to_dl(DType::kFloat64), t.out()), BP_STATUS_OUT_OF_MEMORY)
      << LastError();
  EXPECT_FALSE(t);
  EXPECT_NE(std::string(bp_last_error_message()), "");
  // Element count times item size overflows int64: OUT_OF_RANGE (backplane.h).
  const int64_t over[2] = {int64_t{1} << 40, int64_t{1} << 40};
  EXPECT_EQ(bp_tensor_empty(ctx(), dev(), 2, over, dtype_to_dl(DType::kFloat32), t.out()), BP_STATUS_OUT_OF_RANGE)
      << LastError();
  const int64_t negative = -1;
  EXPECT_EQ(bp_tensor_empty(ctx(), dev(), 1, &negative, dtype_to_dl(DType::kFloat32), t.out()),
            BP_STATUS_INVALID_ARGUMENT)
      << LastError();
  EXPECT_FALSE(t);
  EXPECT_EQ(Stats(ctx(), dev()).allocated_bytes, before.allocated_bytes) << "a refused allocation stayed counted";
  // The device still allocates.
  Held ok = Make({4}, DType::kFloat32, {1, 2, 3, 4});
  ASSERT_TRUE(ok);
  EXPECT_EQ(Read(ok.get(), DType::kFloat32), (std::vector<double>{1, 2, 3, 4}));
}

TEST_P(AbiRuntimeTest, HostCopyOfTheWrongByteCountIsRefusedWithoutAWrite) {
  const std::vector<int64_t> sizes = {3};
  const float src[4] = {1, 2, 3, 4};
  bp_tensor_t* sentinel = reinterpret_cast<bp_tensor_t*>(uintptr_t{0x1234});
  bp_tensor_t* out = sentinel;
  EXPECT_EQ(bp_tensor_from_host(ctx(), dev(), 1, sizes.data(), dtype_to_dl(DType::kFloat32), src, sizeof(src), &out),
            BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(out, sentinel) << "bp_tensor_from_host wrote out_tensor on error";
  EXPECT_NE(std::string(bp_last_error_message()).find("nbytes"), std::string::npos) << LastError();
  Held t = Make(sizes, DType::kFloat32, {1, 2, 3});
  ASSERT_TRUE(t);
  float dst[4] = {-1, -1, -1, -1};
  EXPECT_EQ(bp_tensor_to_host(t.get(), dst, sizeof(dst)), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(bp_last_error_message()).find("nbytes"), std::string::npos) << LastError();
  for (float v : dst) EXPECT_EQ(v, -1.0f) << "bp_tensor_to_host wrote on error";
  bp_backend_info_t info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(bp_backend_info(ctx(), dev().backend, &info), BP_STATUS_OK) << LastError();
  out = sentinel;
  EXPECT_NE(bp_tensor_to_device(t.get(), bp_device_t{dev().backend, info.device_count}, &out), BP_STATUS_OK);
  EXPECT_EQ(out, sentinel) << "bp_tensor_to_device wrote out_tensor on error";
  EXPECT_NE(std::string(bp_last_error_message()), "");
}

TEST_P(AbiRuntimeTest, AllocatorStatsFollowAllocations) {
  const bp_allocator_stats_t s0 = Stats(ctx(), dev());
  EXPECT_LE(s0.allocated_bytes, s0.reserved_bytes);
  EXPECT_LE(s0.allocated_bytes, s0.peak_allocated_bytes);
  const int64_t n = 1000;  // 4000 bytes
  {
    Held t;
    ASSERT_EQ(bp_tensor_empty(ctx(), dev(), 1, &n, dtype_to_dl(DType::kFloat32), t.out()), BP_STATUS_OK) << LastError();
    const bp_allocator_stats_t s1 = Stats(ctx(), dev());
    EXPECT_GE(s1.allocated_bytes, s0.allocated_bytes + 4000);
    EXPECT_LE(s1.allocated_bytes, s1.reserved_bytes);
    EXPECT_GE(s1.peak_allocated_bytes, s1.allocated_bytes);
    EXPECT_EQ(s1.device_allocations + s1.cache_hits, s0.device_allocations + s0.cache_hits + 1)
        << "one request is either a device allocation or a cache hit";
  }
  const bp_allocator_stats_t s2 = Stats(ctx(), dev());
  EXPECT_EQ(s2.allocated_bytes, s0.allocated_bytes) << "the freed block is still counted as allocated";
  EXPECT_GE(s2.reserved_bytes, s2.allocated_bytes);
  {
    Held again;
    ASSERT_EQ(bp_tensor_empty(ctx(), dev(), 1, &n, dtype_to_dl(DType::kFloat32), again.out()), BP_STATUS_OK)
        << LastError();
    const bp_allocator_stats_t s3 = Stats(ctx(), dev());
    EXPECT_EQ(s3.cache_hits, s2.cache_hits + 1) << "the same size just freed was not reused from the cache";
  }
  ASSERT_EQ(bp_allocator_empty_cache(ctx(), dev()), BP_STATUS_OK) << LastError();
  const bp_allocator_stats_t s4 = Stats(ctx(), dev());
  EXPECT_LE(s4.reserved_bytes, s2.reserved_bytes);
  EXPECT_GE(s4.reserved_bytes, s4.allocated_bytes);
  EXPECT_GE(s4.peak_allocated_bytes, s0.allocated_bytes + 4000);
}

// ---- streams ------------------------------------------------------------------------

TEST_P(AbiRuntimeTest, InPlaceOpsAndCopiesOnOneStreamRunInOrder) {
  const int64_t n = 4096;
  Held x = Make({n}, DType::kFloat32, std::vector<double>(n, 0.0));
  Held one = Make({n}, DType::kFloat32, std::vector<double>(n, 1.0));
  ASSERT_TRUE(x && one);
  // x <- 2x + 1, twenty times: 2^20 - 1, exact in float32; any reordering shows.
  Held snapshot;
  for (int k = 0; k < 20; ++k) {
    ASSERT_EQ(CallOp(ctx(), "add_.Tensor", {vt(x.get()), vt(x.get())}, nullptr), BP_STATUS_OK) << LastError();
    ASSERT_EQ(CallOp(ctx(), "add_.Tensor", {vt(x.get()), vt(one.get())}, nullptr), BP_STATUS_OK) << LastError();
    if (k == 9) {  // a device copy between kernels sees exactly the first ten steps
      ASSERT_EQ(bp_tensor_to_device(x.get(), dev(), snapshot.out()), BP_STATUS_OK) << LastError();
    }
  }
  ASSERT_EQ(bp_device_synchronize(ctx(), dev()), BP_STATUS_OK) << LastError();
  EXPECT_EQ(Read(x.get(), DType::kFloat32), std::vector<double>(n, 1048575.0));
  EXPECT_EQ(Read(snapshot.get(), DType::kFloat32), std::vector<double>(n, 1023.0));
  // A host->device copy_ lands between the kernels around it.
  Held host_vals = abirt::FromHost(ctx(), kCpu, {n}, DType::kFloat32, std::vector<double>(n, 5.0));
  ASSERT_TRUE(host_vals) << LastError();
  ASSERT_EQ(CallOp(ctx(), "add_.Tensor", {vt(x.get()), vt(one.get())}, nullptr), BP_STATUS_OK) << LastError();
  ASSERT_EQ(CallOp(ctx(), "copy_", {vt(x.get()), vt(host_vals.get())}, nullptr), BP_STATUS_OK) << LastError();
  ASSERT_EQ(CallOp(ctx(), "add_.Tensor", {vt(x.get()), vt(x.get())}, nullptr), BP_STATUS_OK) << LastError();
  EXPECT_EQ(Read(x.get(), DType::kFloat32), std::vector<double>(n, 10.0));
}

// A fallback call reads and writes device memory with copies on the same
// stream as the native kernels around it; masking the kernel of add in the
// middle of a chain checks that nothing overtakes.
TEST_P(AbiRuntimeTest, NativeAndFallbackCallsInterleaveInOrder) {
  // Alternating needs a native kernel to mask; the CPU backend's cannot be
  // masked (they are the fallback). Without one the chain runs as it is.
  const bool alternate = !IsCpuBackend() && Kind("add_.Tensor") == BP_DISPATCH_NATIVE;
  bp_op_t* add = abirt::FindOp(ctx(), "add.Tensor");
  ContextRestorer restore(ctx(), alternate ? add : nullptr, dev().backend);
  const int64_t n = 1 << 16;
  Held x = Make({n}, DType::kFloat32, std::vector<double>(n, 0.0));
  Held one = Make({n}, DType::kFloat32, std::vector<double>(n, 1.0));
  ASSERT_TRUE(x && one);
  const uint64_t fallbacks = Count("add_.Tensor", false);
  for (int k = 0; k < 12; ++k) {
    if (alternate) {  // every other step through the fallback
      ASSERT_EQ(bp_op_set_kernel_masked(ctx(), add, dev().backend, k % 2), BP_STATUS_OK) << LastError();
    }
    ASSERT_EQ(CallOp(ctx(), "add_.Tensor", {vt(x.get()), vt(x.get())}, nullptr), BP_STATUS_OK) << LastError();
    ASSERT_EQ(CallOp(ctx(), "add_.Tensor", {vt(x.get()), vt(one.get())}, nullptr), BP_STATUS_OK) << LastError();
  }
  if (alternate) {
    EXPECT_EQ(Count("add_.Tensor", false), fallbacks + 12);
  }
  EXPECT_EQ(Read(x.get(), DType::kFloat32), std::vector<double>(n, 4095.0));
}

// backplane.h: operator calls and tensor functions may run concurrently on
// any threads. Each thread runs its own chain on the same device; every
// chain must end as if it ran alone.
TEST_P(AbiRuntimeTest, ConcurrentCallsFromSeveralThreadsGiveSequentialResults) {
  constexpr int kThreads = 4;
  const int64_t n = 2048;
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t]() {
      std::string& fail = failures[static_cast<size_t>(t)];
      Held x = abirt::FromHost(ctx(), dev(), {n}, DType::kFloat32, std::vector<double>(n, t));
      Held one = abirt::FromHost(ctx(), dev(), {n}, DType::kFloat32, std::vector<double>(n, 1.0));
      if (!x || !one) {
        fail = "bp_tensor_from_host: " + LastError();
        return;
      }
      for (int k = 0; k < 10 && fail.empty(); ++k) {  // x <- 2x + 1
        if (CallOp(ctx(), "add_.Tensor", {vt(x.get()), vt(x.get())}, nullptr) != BP_STATUS_OK ||
            CallOp(ctx(), "add_.Tensor", {vt(x.get()), vt(one.get())}, nullptr) != BP_STATUS_OK) {
          fail = "add_.Tensor: " + LastError();
        }
      }
      Held copy;
      if (fail.empty() && bp_tensor_to_device(x.get(), dev(), copy.out()) != BP_STATUS_OK) {
        fail = "bp_tensor_to_device: " + LastError();
      }
      std::vector<double> got;
      if (fail.empty() && !abirt::ReadBack(copy.get(), DType::kFloat32, &got, &fail)) return;
      const double want = 1024.0 * t + 1023.0;
      for (size_t i = 0; i < got.size() && fail.empty(); ++i) {
        if (got[i] != want) fail = "element " + std::to_string(i) + " is " + std::to_string(got[i]);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[static_cast<size_t>(t)], "") << "thread " << t;
}

TEST_P(AbiRuntimeTest, DeviceSynchronizeSucceedsAndRefusesAnUnknownDevice) {
  EXPECT_EQ(bp_device_synchronize(ctx(), dev()), BP_STATUS_OK) << LastError();
  bp_backend_info_t info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(bp_backend_info(ctx(), dev().backend, &info), BP_STATUS_OK) << LastError();
  for (int32_t index : {info.device_count, int32_t{-1}}) {
    const bp_status_t st = bp_device_synchronize(ctx(), bp_device_t{dev().backend, index});
    EXPECT_TRUE(st == BP_STATUS_NOT_FOUND || st == BP_STATUS_OUT_OF_RANGE || st == BP_STATUS_INVALID_ARGUMENT)
        << "device index " << index << ": " << bp_status_name(st);
    EXPECT_NE(std::string(bp_last_error_message()), "") << "device index " << index;
  }
}

// ---- device properties -----------------------------------------------------------------

TEST_P(AbiRuntimeTest, DevicePropertiesAreSane) {
  const bp_device_properties_t p = Props();
  EXPECT_GT(strnlen(p.name, sizeof(p.name)), 0u) << "empty device name";
  EXPECT_LT(strnlen(p.name, sizeof(p.name)), sizeof(p.name));
  EXPECT_LT(strnlen(p.vendor, sizeof(p.vendor)), sizeof(p.vendor));
  EXPECT_LT(strnlen(p.driver_version, sizeof(p.driver_version)), sizeof(p.driver_version));
  EXPECT_LT(strnlen(p.extensions, sizeof(p.extensions)), sizeof(p.extensions));
  EXPECT_GT(p.total_memory_bytes, 0u) << "total_memory_bytes";
  EXPECT_GT(p.alignment_bytes, 0u);
  EXPECT_EQ(p.alignment_bytes & (p.alignment_bytes - 1), 0u) << "alignment_bytes " << p.alignment_bytes;
  EXPECT_GE(p.compute_units, 0);
  const uint64_t known = BP_DEVICE_CAP_FP64 | BP_DEVICE_CAP_FP16 | BP_DEVICE_CAP_BF16 | BP_DEVICE_CAP_UNIFIED;
  EXPECT_EQ(p.capabilities & ~known, 0u) << "capability bits ABI " << BP_ABI_VERSION_MAJOR << "."
                                         << BP_ABI_VERSION_MINOR << " does not define: " << std::hex << p.capabilities;
  bp_backend_info_t info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(bp_backend_info(ctx(), dev().backend, &info), BP_STATUS_OK) << LastError();
  EXPECT_GT(info.device_count, dev().index);
  EXPECT_EQ(info.loaded, 1);
  EXPECT_EQ(info.no_device_reason, nullptr) << "a backend with devices gives no no_device_reason";
  bp_device_properties_t q{};
  q.struct_size = sizeof(q);
  EXPECT_EQ(bp_device_properties(ctx(), bp_device_t{dev().backend, info.device_count}, &q), BP_STATUS_OUT_OF_RANGE);
  const bp_allocator_stats_t s = Stats(ctx(), dev());
  EXPECT_LE(s.allocated_bytes, s.reserved_bytes);
}

TEST_P(AbiRuntimeTest, CapabilityBitsAgreeWithWhatRuns) {
  const bp_device_properties_t p = Props();
  struct Case {
    uint64_t cap;
    DType dtype;
  };
  for (const Case c : {Case{BP_DEVICE_CAP_FP64, DType::kFloat64}, Case{BP_DEVICE_CAP_FP16, DType::kFloat16},
                       Case{BP_DEVICE_CAP_BF16, DType::kBFloat16}}) {
    SCOPED_TRACE(dtype_name(c.dtype));
    const bool has = (p.capabilities & c.cap) != 0;
    const std::vector<double> av = abirt::Values(c.dtype, 8), bv = abirt::Values(c.dtype, 8, 1);
    Held a = Make({8}, c.dtype, av), b = Make({8}, c.dtype, bv);
    ASSERT_TRUE(a && b);
    const uint64_t native_before = Count("add.Tensor", true);
    Held r;
    // Every dtype runs on every device: natively, or through a fallback.
    ASSERT_EQ(CallOp(ctx(), "add.Tensor", {vt(a.get()), vt(b.get())}, &r), BP_STATUS_OK) << LastError();
    std::vector<double> want(8);
    for (size_t i = 0; i < 8; ++i) want[i] = av[i] + bv[i];  // exact in every float dtype
    EXPECT_EQ(Read(r.get(), c.dtype), want);
    const bool ran_native = Count("add.Tensor", true) > native_before;
    // float64 arithmetic needs the hardware: a device without the bit must not
    // run a float64 kernel itself. (float16/bfloat16 may be computed in float32
    // and stored, so they are not held to their bits.)
    if (c.cap == BP_DEVICE_CAP_FP64 && !has) {
      EXPECT_FALSE(ran_native) << "a float64 kernel ran natively on a device without BP_DEVICE_CAP_FP64";
    }
  }
}

// ---- strict mode and kernel masks --------------------------------------------------------

// An operator that may have a native kernel on the target, its in-place and
// out= variants (nullptr: none), how many tensors it takes, whether its out=
// form has an alpha before `out`, and its value (as torch, exact here).
struct Maskable {
  const char* functional;
  const char* inplace;
  const char* out;
  int arity;
  bool alpha;
  double (*value)(double a, double b);
};
constexpr Maskable kMaskables[] = {
    {"add.Tensor", "add_.Tensor", "add.out", 2, true, [](double a, double b) { return a + b; }},
    {"mul.Tensor", "mul_.Tensor", "mul.out", 2, false, [](double a, double b) { return a * b; }},
    {"relu", "relu_", nullptr, 1, false, [](double a, double) { return a > 0 ? a : 0.0; }},
    {"neg", "neg_", "neg.out", 1, false, [](double a, double) { return -a; }},
    {"abs", "abs_", "abs.out", 1, false, [](double a, double) { return a < 0 ? -a : a; }},
    {"sub.Tensor", "sub_.Tensor", "sub.out", 2, true, [](double a, double b) { return a - b; }}};

// The first of kMaskables whose kernel on the target is native, or nullptr.
template <typename KindFn>
const Maskable* PickNative(KindFn kind) {
  for (const Maskable& m : kMaskables) {
    if (kind(m.functional) == BP_DISPATCH_NATIVE) return &m;
  }
  return nullptr;
}

TEST_P(AbiRuntimeTest, StrictModeRefusesAMaskedKernelAndLeavesTheOutputUntouched) {
  bp_op_t* add = abirt::FindOp(ctx(), "add.Tensor");
  ASSERT_NE(add, nullptr);
  if (IsCpuBackend()) {
    // The CPU backend's kernels are the CPU fallback itself: masking them is refused.
    EXPECT_EQ(bp_op_set_kernel_masked(ctx(), add, dev().backend, 1), BP_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(Kind("add.Tensor"), BP_DISPATCH_NATIVE);
    return;
  }
  const Maskable* m = PickNative([this](const char* name) { return Kind(name); });
  if (m == nullptr) GTEST_SKIP() << "no native kernel to mask among add, mul, relu, neg, abs, sub on this backend";
  bp_op_t* op = abirt::FindOp(ctx(), m->functional);
  ContextRestorer restore(ctx(), op, dev().backend);
  const std::vector<double> vals = {-1.5, 2, 0.25, -3, 4};
  Held a = Make({5}, DType::kFloat32, vals), b = Make({5}, DType::kFloat32, abirt::Values(DType::kFloat32, 5, 2));
  ASSERT_TRUE(a && b);
  std::vector<bp_value_t> args = {vt(a.get())};
  if (m->arity == 2) args.push_back(vt(b.get()));

  ASSERT_EQ(bp_op_set_kernel_masked(ctx(), op, dev().backend, 1), BP_STATUS_OK) << LastError();
  ASSERT_EQ(bp_context_set_strict_fallback(ctx(), 1), BP_STATUS_OK) << LastError();
  // The backend's own fallback is no CPU fallback: strict mode lets it run
  // (it may still decline the call, and then strict mode refuses).
  const int32_t kind = Kind(m->functional);
  EXPECT_TRUE(kind == BP_DISPATCH_NONE || kind == BP_DISPATCH_BACKEND_FALLBACK)
      << "bp_op_dispatch_kind of a masked kernel in strict mode: " << kind;
  const uint64_t native = Count(m->functional, true), fallback = Count(m->functional, false);
  Held r;
  const bp_status_t st = CallOp(ctx(), m->functional, args, &r);
  if (kind == BP_DISPATCH_BACKEND_FALLBACK && st == BP_STATUS_OK) return;
  EXPECT_EQ(st, BP_STATUS_FAILED_PRECONDITION) << LastError();
  EXPECT_FALSE(r);
  const std::string msg = bp_last_error_message();
  EXPECT_NE(msg.find(m->functional), std::string::npos) << msg;
  EXPECT_NE(msg.find("'" + GetParam().backend_name + "'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("strict"), std::string::npos) << msg;
  EXPECT_EQ(Count(m->functional, true), native);
  EXPECT_EQ(Count(m->functional, false), fallback);
  if (m->out != nullptr && abirt::FindOp(ctx(), m->out) != nullptr) {
    const std::vector<double> guard(5, 99.0);
    Held out = Make({5}, DType::kFloat32, guard);
    ASSERT_TRUE(out);
    std::vector<bp_value_t> out_args = args;
    if (m->alpha) out_args.push_back(vi(1));
    out_args.push_back(vt(out.get()));
    EXPECT_EQ(CallOp(ctx(), m->out, out_args, nullptr), BP_STATUS_FAILED_PRECONDITION) << LastError();
    EXPECT_EQ(Read(out.get(), DType::kFloat32), guard) << m->out << " wrote out though it was refused";
  }
  if (abirt::FindOp(ctx(), m->inplace) != nullptr) {
    EXPECT_EQ(CallOp(ctx(), m->inplace, args, nullptr), BP_STATUS_FAILED_PRECONDITION) << LastError();
    EXPECT_EQ(Read(a.get(), DType::kFloat32), vals) << m->inplace << " wrote self though it was refused";
  }
}

TEST_P(AbiRuntimeTest, MaskedKernelFallsBackWithTheRightResult) {
  bp_op_t* add = abirt::FindOp(ctx(), "add.Tensor");
  ASSERT_NE(add, nullptr);
  if (IsCpuBackend()) {
    EXPECT_EQ(bp_op_set_kernel_masked(ctx(), add, dev().backend, 1), BP_STATUS_INVALID_ARGUMENT);
    return;
  }
  const Maskable* m = PickNative([this](const char* name) { return Kind(name); });
  if (m == nullptr) GTEST_SKIP() << "no native kernel to mask among add, mul, relu, neg, abs, sub on this backend";
  bp_op_t* op = abirt::FindOp(ctx(), m->functional);
  ContextRestorer restore(ctx(), op, dev().backend);
  const std::vector<double> av = {-1.5, 2, 0.25, -3, 4, 0}, bv = abirt::Values(DType::kFloat32, 6, 2);
  Held a = Make({6}, DType::kFloat32, av), b = Make({6}, DType::kFloat32, bv);
  ASSERT_TRUE(a && b);
  std::vector<bp_value_t> args = {vt(a.get())};
  if (m->arity == 2) args.push_back(vt(b.get()));
  ASSERT_EQ(bp_op_set_kernel_masked(ctx(), op, dev().backend, 1), BP_STATUS_OK) << LastError();
  const int32_t kind = Kind(m->functional);
  EXPECT_TRUE(kind == BP_DISPATCH_BACKEND_FALLBACK || kind == BP_DISPATCH_CPU_FALLBACK) << "kind " << kind;
  const uint64_t n0 = Count(m->functional, true), f0 = Count(m->functional, false);
  Held masked;
  ASSERT_EQ(CallOp(ctx(), m->functional, args, &masked), BP_STATUS_OK) << LastError();
  EXPECT_EQ(Count(m->functional, true), n0) << "the masked kernel ran";
  EXPECT_EQ(Count(m->functional, false), f0 + 1) << "the fallback was not counted";
  EXPECT_EQ(bp_tensor_device(masked.get()).backend, dev().backend);
  std::vector<double> want(av.size());
  for (size_t i = 0; i < av.size(); ++i) want[i] = m->value(av[i], bv[i]);
  EXPECT_EQ(Read(masked.get(), DType::kFloat32), want) << m->functional << " through the fallback";
  // Unmasked, the native kernel serves the next call again. (Its values are
  // the operator group's business.)
  ASSERT_EQ(bp_op_set_kernel_masked(ctx(), op, dev().backend, 0), BP_STATUS_OK) << LastError();
  EXPECT_EQ(Kind(m->functional), BP_DISPATCH_NATIVE);
  Held native;
  ASSERT_EQ(CallOp(ctx(), m->functional, args, &native), BP_STATUS_OK) << LastError();
  EXPECT_EQ(Count(m->functional, true), n0 + 1) << "the unmasked kernel did not run";
}

}  // namespace
}  // namespace bpc
