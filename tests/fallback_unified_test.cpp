// The CPU fallback on a device whose memory the host can address
// (BP_DEVICE_CAP_UNIFIED): vendor_sim with BP_VENDOR_SIM_UNIFIED=1 beside
// vendor_sim as it is (a copying device), one context each. The same calls
// give the same results on both; the unified device moves 0 bytes (its
// tensors are wrapped as host views, fresh outputs are allocated on it), the
// copying one moves each input to the host once and each output back once.
// A call that fails its checks writes nothing on either. Skipped (with the
// reason) when the plugins were not built.
// bp-test: public-api
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bp_test_util.h"

using namespace bptest;
using ::testing::HasSubstr;

namespace {

// One of the two devices under test.
struct Side {
  bp_context_t* ctx = nullptr;
  bp_device_t dev{};
  bool unified = false;
};

class FallbackUnifiedTest : public VendorSimTest {
 protected:
  void SetUp() override {
    VendorSimTest::SetUp();  // ctx_: vendor_sim as it is, a copying device
    if (IsSkipped() || HasFatalFailure()) return;
    copying_ = Side{ctx_, dev_, false};
    bp_context_options_t o{};
    o.struct_size = sizeof(o);
    o.min_log_level = BP_LOG_ERROR;
    ASSERT_EQ(bp_context_create(&o, &uctx_), BP_STATUS_OK) << LastError();
    // The plugin reads its options at init: this context's instance is unified.
    setenv("BP_VENDOR_SIM_UNIFIED", "1", 1);
    const bp_status_t cpu = bp_plugin_load(uctx_, BuiltPlugin("backplane_cpu").c_str(), nullptr);
    const bp_status_t sim = bp_plugin_load(uctx_, BuiltPlugin("backplane_vendor_sim").c_str(), nullptr);
    unsetenv("BP_VENDOR_SIM_UNIFIED");
    ASSERT_EQ(cpu, BP_STATUS_OK) << LastError();
    ASSERT_EQ(sim, BP_STATUS_OK) << LastError();
    unified_.ctx = uctx_;
    unified_.unified = true;
    ASSERT_EQ(bp_device_parse(uctx_, "vendor_sim:0", &unified_.dev), BP_STATUS_OK) << LastError();
    // vendor_sim serves float32 add and exp itself: masked, they run on the fallback.
    for (Side* s : {&copying_, &unified_}) {
      for (const char* name : {"add.Tensor", "exp"}) {
        bp_op_t* op = nullptr;
        ASSERT_EQ(bp_op_find(s->ctx, name, &op), BP_STATUS_OK) << name;
        ASSERT_EQ(bp_op_set_kernel_masked(s->ctx, op, s->dev.backend, 1), BP_STATUS_OK) << LastError();
      }
    }
  }
  void TearDown() override {
    for (bp_tensor_t* t : uowned_) bp_tensor_release(t);
    uowned_.clear();
    if (uctx_ != nullptr) bp_context_destroy(uctx_);
    VendorSimTest::TearDown();
  }

  bp_tensor_t* Make(const Side& s, DLDataType dtype, const std::vector<int64_t>& sizes, const void* data,
                    size_t nbytes) {
    bp_tensor_t* t = nullptr;
    EXPECT_EQ(
        bp_tensor_from_host(s.ctx, s.dev, static_cast<int32_t>(sizes.size()), sizes.data(), dtype, data, nbytes, &t),
        BP_STATUS_OK)
        << LastError();
    return Keep(s, t);
  }
  bp_tensor_t* F(const Side& s, const std::vector<int64_t>& sizes, const std::vector<float>& v) {
    return Make(s, kF32, sizes, v.data(), v.size() * sizeof(float));
  }
  bp_tensor_t* I(const Side& s, const std::vector<int64_t>& sizes, const std::vector<int32_t>& v) {
    return Make(s, kI32, sizes, v.data(), v.size() * sizeof(int32_t));
  }
  bp_tensor_t* Keep(const Side& s, bp_tensor_t* t) {
    if (t != nullptr) (s.unified ? uowned_ : owned_).push_back(t);
    return t;
  }
  // Calls `op` on side s for `nres` results (kept by the fixture).
  std::vector<bp_tensor_t*> CallOn(const Side& s, const char* op, std::vector<bp_value_t> args, int32_t nres = 1,
                                   bp_status_t expect = BP_STATUS_OK) {
    bp_op_t* o = nullptr;
    EXPECT_EQ(bp_op_find(s.ctx, op, &o), BP_STATUS_OK) << op;
    std::vector<bp_tensor_t*> r(nres, nullptr);
    const bp_status_t rc = bp_op_call(s.ctx, o, args.data(), static_cast<int32_t>(args.size()), r.data(), nres);
    EXPECT_EQ(rc, expect) << op << (s.unified ? " (unified)" : " (copying)") << ": " << LastError();
    if (rc != BP_STATUS_OK) return {};
    for (bp_tensor_t* t : r) Keep(s, t);
    return r;
  }
  static std::vector<char> Bytes(const bp_tensor_t* t) {
    std::vector<char> out(static_cast<size_t>(bp_tensor_numel(t)) * (bp_tensor_dtype(t).bits / 8));
    EXPECT_EQ(bp_tensor_to_host(t, out.data(), out.size()), BP_STATUS_OK) << LastError();
    return out;
  }
  static bp_transfer_stats_t Stats(const Side& s) {
    bp_transfer_stats_t st{};
    st.struct_size = sizeof(st);
    EXPECT_EQ(bp_transfer_stats(s.ctx, s.dev.backend, &st), BP_STATUS_OK) << LastError();
    return st;
  }
  static void Reset(const Side& s) { ASSERT_EQ(bp_transfer_stats_reset(s.ctx, s.dev.backend), BP_STATUS_OK); }

  // Runs `make_and_call` on both devices: equal results (sizes, dtype,
  // bytes), all on the device; the unified run moved 0 bytes, the copying run
  // d2h and h2d bytes. `make_and_call` makes its inputs, resets the
  // counters, then calls the operator.
  void SameOnBoth(const char* what, uint64_t d2h, uint64_t h2d,
                  const std::function<std::vector<bp_tensor_t*>(const Side&)>& make_and_call) {
    SCOPED_TRACE(what);
    std::vector<bp_tensor_t*> results[2];
    const Side* sides[2] = {&copying_, &unified_};
    for (int i = 0; i < 2; ++i) {
      const Side& s = *sides[i];
      results[i] = make_and_call(s);
      const bp_transfer_stats_t st = Stats(s);
      if (s.unified) {
        EXPECT_EQ(st.device_to_host_bytes + st.host_to_device_bytes + st.device_to_device_bytes, 0u)
            << "the unified device's memory is wrapped, never copied";
        EXPECT_EQ(st.device_to_host_count + st.host_to_device_count + st.device_to_device_count, 0u);
      } else {
        EXPECT_EQ(st.device_to_host_bytes, d2h) << "each input once to the host";
        EXPECT_EQ(st.host_to_device_bytes, h2d) << "each output once back";
      }
      for (bp_tensor_t* r : results[i]) {
        ASSERT_NE(r, nullptr);
        EXPECT_EQ(bp_tensor_device(r).backend, s.dev.backend);
      }
    }
    ASSERT_EQ(results[0].size(), results[1].size());
    for (size_t k = 0; k < results[0].size(); ++k) {
      const bp_tensor_t *a = results[0][k], *b = results[1][k];
      ASSERT_EQ(bp_tensor_ndim(a), bp_tensor_ndim(b));
      for (int32_t d = 0; d < bp_tensor_ndim(a); ++d) EXPECT_EQ(bp_tensor_sizes(a)[d], bp_tensor_sizes(b)[d]);
      EXPECT_EQ(bp_tensor_dtype(a).code, bp_tensor_dtype(b).code);
      EXPECT_EQ(bp_tensor_dtype(a).bits, bp_tensor_dtype(b).bits);
      EXPECT_EQ(Bytes(a), Bytes(b)) << "result " << k;
    }
  }

  static std::vector<float> Ramp(int64_t n, float scale, float shift) {
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(i % 97) + shift;
    return v;
  }

  Side copying_, unified_;
  bp_context_t* uctx_ = nullptr;
  std::vector<bp_tensor_t*> uowned_;
};

TEST_F(FallbackUnifiedTest, OnlyTheUnifiedInstanceReportsTheCapability) {
  for (const Side* s : {&copying_, &unified_}) {
    bp_device_properties_t p{};
    p.struct_size = sizeof(p);
    ASSERT_EQ(bp_device_properties(s->ctx, s->dev, &p), BP_STATUS_OK) << LastError();
    EXPECT_EQ((p.capabilities & BP_DEVICE_CAP_UNIFIED) != 0, s->unified);
  }
}

TEST_F(FallbackUnifiedTest, FunctionalOperatorsGiveEqualResults) {
  SameOnBoth("exp", 64 * 33 * 4, 64 * 33 * 4, [&](const Side& s) {
    bp_tensor_t* x = F(s, {64, 33}, Ramp(64 * 33, 0.03f, -1.f));
    Reset(s);
    return CallOn(s, "exp", {T(x)});
  });
  SameOnBoth("add.Tensor float32 + int32 (cast on the host)", 100 * 8, 100 * 4, [&](const Side& s) {
    bp_tensor_t* a = F(s, {100}, Ramp(100, 0.5f, 0.f));
    std::vector<int32_t> iv(100);
    for (int i = 0; i < 100; ++i) iv[i] = 3 - i;
    bp_tensor_t* b = I(s, {100}, iv);
    Reset(s);
    return CallOn(s, "add.Tensor", {T(a), T(b), D(2.0)});
  });
  SameOnBoth("softmax.int", 8 * 16 * 4, 8 * 16 * 4, [&](const Side& s) {
    bp_tensor_t* x = F(s, {8, 16}, Ramp(128, 0.1f, -3.f));
    Reset(s);
    return CallOn(s, "softmax.int", {T(x), bptest::I(-1)});
  });
  SameOnBoth("matmul", (35 + 21) * 4, 15 * 4, [&](const Side& s) {
    bp_tensor_t* a = F(s, {5, 7}, Ramp(35, 0.25f, -2.f));
    bp_tensor_t* b = F(s, {7, 3}, Ramp(21, -0.5f, 1.f));
    Reset(s);
    return CallOn(s, "matmul", {T(a), T(b)});
  });
  SameOnBoth("topk (two results)", 40 * 4, 12 * 4 + 12 * 8, [&](const Side& s) {
    bp_tensor_t* x = F(s, {4, 10}, Ramp(40, 1.5f, -7.f));
    Reset(s);
    return CallOn(s, "topk", {T(x), bptest::I(3)}, 2);
  });
  SameOnBoth("cat (a tensor list)", (6 + 12) * 4, 18 * 4, [&](const Side& s) {
    bp_tensor_t* a = F(s, {2, 3}, Ramp(6, 1.f, 0.f));
    bp_tensor_t* b = F(s, {4, 3}, Ramp(12, -1.f, 0.f));
    std::vector<bp_tensor_t*> list = {a, b};
    Reset(s);
    return CallOn(s, "cat", {bp_box::TensorList<bp_value_t>(list), bptest::I(0)});
  });
  SameOnBoth("exp of a transposed view", 30 * 4, 30 * 4, [&](const Side& s) {
    bp_tensor_t* x = F(s, {6, 5}, Ramp(30, 0.2f, -2.f));
    bp_tensor_t* xt = CallOn(s, "transpose.int", {T(x), bptest::I(0), bptest::I(1)})[0];
    Reset(s);
    return CallOn(s, "exp", {T(xt)});
  });
}

// vendor_sim has no strided copy_: the core copies a transposed view itself.
// On the copying device it stages the view's span to the host and the
// result back; on the unified one it runs the strided loop on the memory.
TEST_F(FallbackUnifiedTest, AStridedCopyOnTheDeviceIsNotStaged) {
  SameOnBoth("contiguous of a transposed view", 6 * 5 * 4, 6 * 5 * 4, [&](const Side& s) {
    bp_tensor_t* x = F(s, {6, 5}, Ramp(30, 0.5f, -4.f));
    bp_tensor_t* xt = CallOn(s, "transpose.int", {T(x), bptest::I(0), bptest::I(1)})[0];
    Reset(s);
    return CallOn(s, "contiguous", {T(xt)});
  });
}

TEST_F(FallbackUnifiedTest, InPlaceAndOutWriteTheCallersTensor) {
  SameOnBoth("add_.Tensor", 2 * 10 * 4, 10 * 4, [&](const Side& s) {
    bp_tensor_t* x = F(s, {10}, Ramp(10, 1.f, 0.f));
    bp_tensor_t* y = F(s, {10}, Ramp(10, 0.5f, 3.f));
    Reset(s);
    std::vector<bp_tensor_t*> r = CallOn(s, "add_.Tensor", {T(x), T(y)});
    EXPECT_EQ(r.size() == 1 ? r[0] : nullptr, x) << "in-place returns self";
    return r;
  });
  SameOnBoth("add.out", 2 * 10 * 4, 10 * 4, [&](const Side& s) {
    bp_tensor_t* a = F(s, {10}, Ramp(10, 1.f, 0.f));
    bp_tensor_t* b = F(s, {10}, Ramp(10, 2.f, 1.f));
    bp_tensor_t* out = F(s, {10}, std::vector<float>(10, -1.f));
    Reset(s);
    std::vector<bp_tensor_t*> r = CallOn(s, "add.out", {T(a), T(b), D(2.0), T(out)});
    EXPECT_EQ(r.size() == 1 ? r[0] : nullptr, out) << "out= returns out";
    return r;
  });
  SameOnBoth("add.out into its own input", 2 * 10 * 4, 10 * 4, [&](const Side& s) {
    bp_tensor_t* a = F(s, {10}, Ramp(10, 1.f, 0.f));
    bp_tensor_t* b = F(s, {10}, Ramp(10, 2.f, 1.f));
    Reset(s);
    return CallOn(s, "add.out", {T(a), T(b), D(1.0), T(a)});
  });
  // Copying a result into a strided view reads the span it covers first
  // (WriteView keeps the elements between), hence a third 48-byte read.
  SameOnBoth("add_ on a transposed view", 3 * 12 * 4, 12 * 4, [&](const Side& s) {
    bp_tensor_t* x = F(s, {3, 4}, Ramp(12, 1.f, 0.f));
    bp_tensor_t* xt = CallOn(s, "transpose.int", {T(x), bptest::I(0), bptest::I(1)})[0];
    bp_tensor_t* y = F(s, {4, 3}, Ramp(12, -0.25f, 2.f));
    Reset(s);
    CallOn(s, "add_.Tensor", {T(xt), T(y)});
    return std::vector<bp_tensor_t*>{x};  // the base sees the write through its view
  });
}

// The unified route writes into the caller's tensors directly, so a call
// must fail before its kernel writes: the meta function's checks come first,
// and kernels check runtime values before writing (ops.yaml's kernel
// contract). Both devices keep their tensors as they were.
TEST_F(FallbackUnifiedTest, AFailingCallWritesNothingOnEitherDevice) {
  for (const Side* sp : {&copying_, &unified_}) {
    const Side& s = *sp;
    SCOPED_TRACE(s.unified ? "unified" : "copying");
    // A runtime error in the kernel: integer division by zero, in place.
    bp_tensor_t* x = I(s, {3}, {7, 8, 9});
    bp_tensor_t* y = I(s, {3}, {1, 0, 2});
    const std::vector<char> x_before = Bytes(x);
    Reset(s);
    CallOn(s, "div_.Tensor_mode", {T(x), T(y), S("trunc")}, 1, BP_STATUS_INVALID_ARGUMENT);
    EXPECT_THAT(LastError(), HasSubstr("ZeroDivisionError"));
    EXPECT_EQ(Bytes(x), x_before) << "self is untouched";
    EXPECT_EQ(Stats(s).host_to_device_bytes, 0u);

    // A meta error: out= of the wrong sizes.
    bp_tensor_t* a = F(s, {3}, {1, 2, 3});
    bp_tensor_t* out = F(s, {4}, {-1, -1, -1, -1});
    const std::vector<char> out_before = Bytes(out);
    Reset(s);
    CallOn(s, "add.out", {T(a), T(a), D(1.0), T(out)}, 1, BP_STATUS_INVALID_ARGUMENT);
    EXPECT_THAT(LastError(), HasSubstr("'out'"));
    EXPECT_EQ(Stats(s).host_to_device_bytes, 0u);
    EXPECT_EQ(Bytes(out), out_before) << "out= is untouched";

    // In place into a self that cannot hold the broadcast result.
    bp_tensor_t* small = F(s, {3}, {1, 2, 3});
    bp_tensor_t* big = F(s, {2, 3}, Ramp(6, 1.f, 0.f));
    const std::vector<char> small_before = Bytes(small);
    Reset(s);
    CallOn(s, "add_.Tensor", {T(small), T(big)}, 1, BP_STATUS_INVALID_ARGUMENT);
    EXPECT_THAT(LastError(), HasSubstr("add_.Tensor"));
    EXPECT_EQ(Stats(s).host_to_device_bytes, 0u);
    EXPECT_EQ(Bytes(small), small_before) << "self is untouched";
  }
}

TEST_F(FallbackUnifiedTest, ResultsOutliveTheirInputsAndTheCall) {
  // Fresh outputs are the device's own allocations, not views of host
  // memory: they stay valid and usable by the device's native kernels.
  bp_tensor_t* x = nullptr;
  const std::vector<float> v = {-1, 0, 2};
  ASSERT_EQ(bp_tensor_from_host(uctx_, unified_.dev, 1, std::vector<int64_t>{3}.data(), kF32, v.data(), 12, &x),
            BP_STATUS_OK);
  std::vector<bp_tensor_t*> e = CallOn(unified_, "exp", {T(x)});
  bp_tensor_release(x);
  ASSERT_EQ(e.size(), 1u);
  std::vector<bp_tensor_t*> r = CallOn(unified_, "relu", {T(e[0])});  // vendor_sim's native kernel
  ASSERT_EQ(r.size(), 1u);
  std::vector<char> got = Bytes(r[0]);
  float f[3];
  std::memcpy(f, got.data(), sizeof f);
  EXPECT_FLOAT_EQ(f[0], std::exp(-1.f));
  EXPECT_FLOAT_EQ(f[2], std::exp(2.f));
}

}  // namespace
