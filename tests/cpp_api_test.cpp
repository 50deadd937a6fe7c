// The header-only C++ API (backplane.hpp) and the generated typed operators
// (ops.hpp), through the exported C API only. No plugin is loaded: tensors
// live in host memory (backend 0), view operators run in the core, and meta
// functions reject bad arguments before any kernel is looked up.
// bp-test: public-api
#include <gtest/gtest.h>

#include <backplane/backplane.hpp>
#include <backplane/ops.hpp>

namespace {

TEST(CppApiTest, TensorRoundTripAndMetadata) {
  bp::Context ctx;
  bp::Tensor t = bp::Tensor::from_vector(ctx, std::vector<float>{1, 2, 3, 4, 5, 6}, std::vector<int64_t>{2, 3});
  EXPECT_TRUE(t.defined());
  EXPECT_EQ(t.dim(), 2);
  EXPECT_EQ(t.sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.strides(), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(t.size(-1), 3);
  EXPECT_EQ(t.numel(), 6);
  EXPECT_TRUE(bp::same_dtype(t.dtype(), bp::kFloat32));
  EXPECT_EQ(t.device(), bp::Device::cpu());
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_FALSE(t.is_constant());
  t.set_constant();
  EXPECT_TRUE(t.is_constant());
  EXPECT_EQ(t.to_host<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  bp::Tensor b = bp::Tensor::from_vector(ctx, std::vector<bool>{true, false, true});
  EXPECT_EQ(b.to_host<bool>(), (std::vector<bool>{true, false, true}));
  bp::Tensor e = bp::Tensor::empty(ctx, {0, 4}, bp::kInt64);
  EXPECT_EQ(e.numel(), 0);
}

TEST(CppApiTest, CopyMoveAndLifetime) {
  bp::Tensor kept;
  {
    bp::Context ctx;
    bp::Tensor a = bp::Tensor::from_vector(ctx, std::vector<int32_t>{7, 8});
    bp::Tensor copy = a;              // retain
    bp::Tensor moved = std::move(a);  // steal
    EXPECT_FALSE(a.defined());        // NOLINT: checking the moved-from state on purpose
    EXPECT_EQ(copy.get(), moved.get());
    kept = copy;
  }
  // The context's state outlives the Context object while a tensor holds it.
  EXPECT_EQ(kept.to_host<int32_t>(), (std::vector<int32_t>{7, 8}));
}

TEST(CppApiTest, ErrorsBecomeExceptions) {
  bp::Context ctx;
  bp::Tensor t = bp::Tensor::from_vector(ctx, std::vector<float>{1, 2});
  try {
    t.to_host<int32_t>();
    FAIL() << "expected bp::Error";
  } catch (const bp::Error& e) {
    EXPECT_EQ(e.status(), BP_STATUS_INVALID_ARGUMENT);
  }
  try {
    ctx.op("no_such_op");
    FAIL() << "expected bp::Error";
  } catch (const bp::Error& e) {
    EXPECT_EQ(e.status(), BP_STATUS_NOT_FOUND);
    EXPECT_NE(std::string(e.what()).find("NOT_FOUND"), std::string::npos);
  }
  EXPECT_THROW(bp::Tensor().numel(), bp::Error);
  EXPECT_THROW(bp::cat({}), bp::Error);
}

TEST(CppApiTest, ViewOperatorsThroughOpsHpp) {
  bp::Context ctx;
  bp::Tensor t = bp::Tensor::from_vector(ctx, std::vector<float>{0, 1, 2, 3, 4, 5}, std::vector<int64_t>{2, 3});
  bp::Tensor tt = bp::transpose(t, 0, 1);
  EXPECT_EQ(tt.sizes(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(tt.strides(), (std::vector<int64_t>{1, 3}));
  EXPECT_FALSE(tt.is_contiguous());
  EXPECT_EQ(tt.to_host<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  bp::Tensor v = bp::view(t, {3, -1});
  EXPECT_EQ(v.sizes(), (std::vector<int64_t>{3, 2}));
  bp::Tensor s = bp::select(t, 1, -1);
  EXPECT_EQ(s.to_host<float>(), (std::vector<float>{2, 5}));
  bp::Tensor sl = bp::slice(t, 1, 1, std::nullopt, 1);
  EXPECT_EQ(sl.to_host<float>(), (std::vector<float>{1, 2, 4, 5}));
  bp::Tensor u = bp::unsqueeze(t, 0);
  EXPECT_EQ(u.sizes(), (std::vector<int64_t>{1, 2, 3}));
  bp::Tensor x = bp::expand(bp::narrow(t, 0, 1, 1), {4, 3});
  EXPECT_EQ(x.strides()[0], 0);
  EXPECT_EQ(x.to_host<float>(), (std::vector<float>{3, 4, 5, 3, 4, 5, 3, 4, 5, 3, 4, 5}));
  // view of a transposed tensor fails; the message names the op and argument.
  try {
    bp::view(tt, {6});
    FAIL() << "expected bp::Error";
  } catch (const bp::Error& e) {
    EXPECT_EQ(e.status(), BP_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("view: argument 'size'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(bp::select(t, 0, 5), bp::Error);
}

// The status and message of an operator call that must fail.
template <class F>
bp::Error Failure(F&& f) {
  try {
    f();
  } catch (const bp::Error& e) {
    return e;
  }
  return bp::Error(BP_STATUS_OK, "no error");
}

TEST(CppApiTest, MetaErrorsReachTheCaller) {
  bp::Context ctx;
  bp::Tensor a = bp::Tensor::from_vector(ctx, std::vector<float>{1, 2, 3, 4}, std::vector<int64_t>{4, 1});
  bp::Tensor c = bp::Tensor::from_vector(ctx, std::vector<float>{1, 2}, std::vector<int64_t>{2, 1});
  bp::Tensor m = bp::Tensor::from_vector(ctx, std::vector<bool>{true, false});
  bp::Tensor i = bp::Tensor::from_vector(ctx, std::vector<int64_t>{1, 2});
  bp::Error e = Failure([&] { bp::add(a, c); });
  EXPECT_EQ(e.status(), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(e.what()).find("cannot broadcast"), std::string::npos) << e.what();
  e = Failure([&] { bp::sub(m, m); });
  EXPECT_EQ(e.status(), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(e.what()).find("sub.Tensor"), std::string::npos) << e.what();
  e = Failure([&] { bp::add(i, i, 0.5); });
  EXPECT_NE(std::string(e.what()).find("argument 'alpha'"), std::string::npos) << e.what();
  e = Failure([&] { bp::matmul(a, a); });
  EXPECT_NE(std::string(e.what()).find("matmul: argument 'other'"), std::string::npos) << e.what();
  e = Failure([&] { bp::div(a, a, std::string("round")); });
  EXPECT_NE(std::string(e.what()).find("rounding_mode"), std::string::npos) << e.what();
}

}  // namespace

namespace {

// Context::set_kernel_masked (bp_op_set_kernel_masked): the CPU backend
// refuses (its kernels are the fallback), an unknown backend id too; both
// surface as bp::Error with the C status.
TEST(CppApiTest, SetKernelMaskedReportsRefusalsAsErrors) {
  bp::Context ctx;
  const bp_op_t* add = ctx.op("add.Tensor");
  try {
    ctx.set_kernel_masked(add, 0, true);
    FAIL() << "expected bp::Error";
  } catch (const bp::Error& e) {
    EXPECT_EQ(e.status(), BP_STATUS_INVALID_ARGUMENT);
  }
  try {
    ctx.set_kernel_masked(add, 7, true);
    FAIL() << "expected bp::Error";
  } catch (const bp::Error& e) {
    EXPECT_EQ(e.status(), BP_STATUS_OUT_OF_RANGE);
  }
}

}  // namespace

TEST(CppApiTest, TupleReturnsThroughOpsHpp) {
  // topk returns (values, indices): ops.hpp gives a std::tuple in schema order.
  bp::Context ctx;
  ctx.load_plugin(BP_BUILD_PLUGIN_DIR "/libbackplane_cpu.so");
  bp::Tensor t = bp::Tensor::from_vector(ctx, std::vector<float>{3, 9, 1, 7}, std::vector<int64_t>{4});
  auto [values, indices] = bp::topk(t, 2);
  EXPECT_EQ(values.to_host<float>(), (std::vector<float>{9, 7}));
  EXPECT_EQ(indices.to_host<int64_t>(), (std::vector<int64_t>{1, 3}));
  auto [low, where] = bp::topk(t, 1, 0, false);
  EXPECT_EQ(low.to_host<float>(), (std::vector<float>{1}));
  EXPECT_EQ(where.to_host<int64_t>(), (std::vector<int64_t>{2}));
}

namespace {

// bp::Stream, bp::Event, bp::StreamGuard (stream.hpp) on the host device.
TEST(CppApiTest, StreamsEventsAndTheGuard) {
  bp::Context ctx;
  const bp::Device cpu = bp::Device::cpu();
  bp::Stream s = bp::Stream::create(ctx, cpu);
  EXPECT_EQ(s.device(), cpu);
  EXPECT_EQ(bp::Stream::current(ctx, cpu).get(), bp::Stream::default_of(ctx, cpu).get());
  bp::Event start(ctx, cpu), end(ctx, cpu);
  {
    bp::StreamGuard guard(ctx, s);
    EXPECT_EQ(bp::Stream::current(ctx, cpu).get(), s.get());
    start.record(s);
    bp::Tensor t = bp::Tensor::from_vector(ctx, std::vector<float>(1000, 1.0f));
    EXPECT_EQ(s.allocator_stats().allocated_bytes, 4096u);  // 4000 bytes, 512-byte classes
    end.record(s);
  }
  EXPECT_EQ(bp::Stream::current(ctx, cpu).get(), bp::Stream::default_of(ctx, cpu).get());
  bp::Stream::default_of(ctx, cpu).wait(end);
  end.synchronize();
  EXPECT_TRUE(end.query());
  EXPECT_GE(start.elapsed_ms(end), 0.0f);
  bp::Event never(ctx, cpu);
  try {
    never.elapsed_ms(end);
    FAIL() << "an unrecorded event has no time";
  } catch (const bp::Error& e) {
    EXPECT_EQ(e.status(), BP_STATUS_FAILED_PRECONDITION);
  }
}

}  // namespace
