// Dispatcher overhead on the CPU backend, side by side with a plain function
// call doing the same work, in interleaved rounds (bench/interleaved.h):
//   - a no-op kernel through bp_op_call (the whole dispatch, no work);
//   - add.out of 1-element float32 tensors, through the C boxed call and the
//     C++ API (bp::add_out);
//   - add.Tensor of 1-element tensors with the output allocated (and
//     released), C and C++;
//   - add.out of [1, 1] + [1] (broadcasting: the generic meta path).
// Goals (ARCHITECTURE.md section 9 and issue 10): 20, 40, 40, 80, 80, 150 ns.
// Usage: bp_bench_dispatch [rounds] [iterations per round] [row filter: a substring of the row name]
#include <benchmark/benchmark.h>

#include <backplane/backplane.hpp>
#include <backplane/ops.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_context.h"
#include "interleaved.h"

namespace {

using bp_bench::Batch;
using bp_bench::Context;
using bp_bench::Op;
using bp_bench::TensorValue;

bp_status_t NoopKernel(const bp_kernel_call_t*) { return BP_STATUS_OK; }

// ---- anchors: plain calls through a function pointer the compiler cannot see through

void AddOne(const float* a, const float* b, float* out) { *out = *a + *b; }
void AddOneAllocated(const float* a, const float* b, float* out) {
  auto* r = static_cast<float*>(std::malloc(sizeof(float)));
  *r = *a + *b;
  benchmark::DoNotOptimize(r);
  *out = *r;
  std::free(r);
}
void (*volatile g_add_one)(const float*, const float*, float*) = AddOne;
void (*volatile g_add_one_allocated)(const float*, const float*, float*) = AddOneAllocated;
bp_status_t (*volatile g_noop)(const bp_kernel_call_t*) = NoopKernel;

struct Floats {
  float a = 1.5f, b = 2.25f, out = 0;
};

void AnchorNoop(void*, int64_t iters) {
  bp_kernel_call_t call{};
  call.struct_size = sizeof(call);
  for (int64_t i = 0; i < iters; ++i) benchmark::DoNotOptimize(g_noop(&call));
}
void AnchorAdd(void* s, int64_t iters) {
  auto* f = static_cast<Floats*>(s);
  for (int64_t i = 0; i < iters; ++i) {
    g_add_one(&f->a, &f->b, &f->out);
    benchmark::ClobberMemory();
  }
}
void AnchorAddAllocated(void* s, int64_t iters) {
  auto* f = static_cast<Floats*>(s);
  for (int64_t i = 0; i < iters; ++i) {
    g_add_one_allocated(&f->a, &f->b, &f->out);
    benchmark::ClobberMemory();
  }
}

// ---- ours

// One boxed call, run through bp_op_call or, with `plan` set, through the
// plan prepared for it (bp_op_prepare_for_args).
struct BoxedCall {
  bp_op_t* op = nullptr;
  std::vector<bp_value_t> args;
  bool want_result = false;
  bp_call_plan_t* plan = nullptr;
};

template <bool kPlan>
inline bp_status_t Invoke(const BoxedCall* c, int32_t n, bp_tensor_t** results, int32_t num_results) {
  return kPlan ? bp_plan_call(c->plan, c->args.data(), n, results, num_results)
               : bp_op_call(Context(), c->op, c->args.data(), n, results, num_results);
}

template <bool kPlan>
void RunCall(void* s, int64_t iters) {
  auto* c = static_cast<BoxedCall*>(s);
  const int32_t n = static_cast<int32_t>(c->args.size());
  for (int64_t i = 0; i < iters; ++i) {
    if (c->want_result) {
      bp_tensor_t* r = nullptr;
      Invoke<kPlan>(c, n, &r, 1);
      bp_tensor_release(r);
    } else {
      benchmark::DoNotOptimize(Invoke<kPlan>(c, n, nullptr, 0));
    }
  }
}
constexpr Batch RunBoxed = RunCall<false>;
constexpr Batch RunPlanned = RunCall<true>;

BoxedCall Planned(const BoxedCall& c) {
  BoxedCall p = c;
  if (bp_op_prepare_for_args(Context(), c.op, c.args.data(), static_cast<int32_t>(c.args.size()), &p.plan) !=
      BP_STATUS_OK) {
    std::fprintf(stderr, "bp_op_prepare_for_args: %s\n", bp_last_error_message());
    std::exit(1);
  }
  return p;
}

struct CppTensors {
  bp::Tensor a, b, out;
};

void RunCppAddOut(void* s, int64_t iters) {
  auto* t = static_cast<CppTensors*>(s);
  for (int64_t i = 0; i < iters; ++i) benchmark::DoNotOptimize(&bp::add_out(t->out, t->a, t->b));
}
void RunCppAdd(void* s, int64_t iters) {
  auto* t = static_cast<CppTensors*>(s);
  for (int64_t i = 0; i < iters; ++i) {
    bp::Tensor r = bp::add(t->a, t->b);
    benchmark::DoNotOptimize(r.get());
  }
}

bp_value_t Int(int64_t v) {
  bp_value_t x{};
  x.kind = BP_VALUE_INT;
  x.u.i = v;
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 21;
  const int64_t iters = argc > 2 ? std::atoll(argv[2]) : 20000;
  const std::string filter = argc > 3 ? argv[3] : "";
  const bp_device_t cpu{0, 0};

  bp_op_t* fill = Op("fill_.Scalar");
  bp_registration_t* reg = nullptr;
  if (bp_op_register_kernel(Context(), fill, 0, NoopKernel, nullptr, BP_REGISTER_OVERRIDE, &reg) != BP_STATUS_OK) {
    std::fprintf(stderr, "bp_op_register_kernel: %s\n", bp_last_error_message());
    return 1;
  }
  bp_tensor_t* one = bp_bench::Filled(cpu, {1});
  bp_tensor_t* a = bp_bench::Filled(cpu, {1});
  bp_tensor_t* b = bp_bench::Filled(cpu, {1});
  bp_tensor_t* out = bp_bench::Filled(cpu, {1});
  bp_tensor_t* a11 = bp_bench::Filled(cpu, {1, 1});
  bp_tensor_t* out11 = bp_bench::Filled(cpu, {1, 1});
  bp_value_t dbl{};
  dbl.kind = BP_VALUE_DOUBLE;
  dbl.u.d = 1.0;

  BoxedCall noop{fill, {TensorValue(one), dbl}, false};
  BoxedCall add_out{Op("add.out"), {TensorValue(a), TensorValue(b), Int(1), TensorValue(out)}, false};
  BoxedCall add_alloc{Op("add.Tensor"), {TensorValue(a), TensorValue(b)}, true};
  BoxedCall add_bcast{Op("add.out"), {TensorValue(a11), TensorValue(b), Int(1), TensorValue(out11)}, false};

  BoxedCall noop_plan = Planned(noop);
  BoxedCall add_out_plan = Planned(add_out);
  BoxedCall add_alloc_plan = Planned(add_alloc);

  bp::Context cxx;
  cxx.discover();
  CppTensors t{bp::Tensor::from_vector(cxx, std::vector<float>{1.5f}), bp::Tensor::from_vector(cxx, std::vector<float>{2.25f}),
               bp::Tensor::from_vector(cxx, std::vector<float>{0.0f})};
  Floats floats;

  struct Row {
    const char* name;
    Batch ours;
    void* state;
    Batch anchor;
    double goal_ns;
  };
  const Row rows[] = {
      {"no-op kernel, C boxed (fill_.Scalar)", RunBoxed, &noop, AnchorNoop, 25},
      {"no-op kernel, C plan (fill_.Scalar)", RunPlanned, &noop_plan, AnchorNoop, 20},
      {"add.out 1 element, C boxed", RunBoxed, &add_out, AnchorAdd, 40},
      {"add.out 1 element, C plan", RunPlanned, &add_out_plan, AnchorAdd, 30},
      {"add.out 1 element, C++ bp::add_out", RunCppAddOut, &t, AnchorAdd, 40},
      {"add.Tensor 1 element allocated, C boxed", RunBoxed, &add_alloc, AnchorAddAllocated, 70},
      {"add.Tensor 1 element allocated, C plan", RunPlanned, &add_alloc_plan, AnchorAddAllocated, 70},
      {"add.Tensor 1 element allocated, C++ bp::add", RunCppAdd, &t, AnchorAddAllocated, 70},
      {"add.out [1,1]+[1] broadcast, C boxed", RunBoxed, &add_bcast, AnchorAdd, 150},
  };
  std::printf("Dispatch overhead, %d interleaved rounds of %lld calls, load average %s\n", rounds,
              static_cast<long long>(iters), bp_bench::LoadAverage().c_str());
  std::printf("%-46s %10s %12s %16s %8s\n", "row", "ours ns", "anchor ns", "ratio (median)", "goal ns");
  for (const Row& r : rows) {
    if (std::string(r.name).find(filter) == std::string::npos) continue;
    bp_bench::RowResult res = bp_bench::Interleave(r.name, r.ours, r.state, r.anchor, &floats, rounds, iters);
    // The no-op anchor ignores its state.
    std::printf("%-46s %10.1f %12.1f %16.2f %8.0f\n", res.name.c_str(), res.ours_ns, res.anchor_ns, res.ratio,
                r.goal_ns);
  }

  for (BoxedCall* p : {&noop_plan, &add_out_plan, &add_alloc_plan}) bp_plan_release(p->plan);
  bp_registration_remove(Context(), reg);
  for (bp_tensor_t* x : {one, a, b, out, a11, out11}) bp_tensor_release(x);
  return 0;
}
